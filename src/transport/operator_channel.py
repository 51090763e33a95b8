"""``POST /operator/ingest``: the operator's write channel into a running server.

Only on the Unix socket (ADR 0037): the socket is 0600 in a 0700 state directory, so a
request there comes from the server's own user, and a TCP request (from any local
process, or a browser tricked into it) is answered 404 as if the route did not exist.
It is never an MCP tool: agents stay read-only. The bearer token must carry the
``ingest`` scope, which no agent token has unless the operator gives it.

The request names a path the *server* reads (the same user as the operator)::

    {"path": "/abs/folder", "source": "docs", "prune": false}

The answer streams NDJSON, one event per line, while the ingest runs through the WAL::

    {"event": "progress", "chunks_written": 64, "documents_unchanged": 3, "chunks_pending": 0}
    {"event": "published", "doc_ids": ["a.md", "b.md"]}   durable and searchable
    {"event": "done", "ingested": {...the summary ``ingest`` prints...}}
    {"event": "error", "error": {"code": ..., "message": ..., "remedy": ...}}

A client that goes away does not stop the ingest it started.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

import structlog
import trio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval_mcp.errors import RetrievalMCPError
from retrieval_mcp.ingest.formats.format_settings import ColumnMapping
from retrieval_mcp.ingest.live_ingest import IngestDesk
from retrieval_mcp.ingest.runner import IngestReport
from retrieval_mcp.transport.asgi_types import Send

log = structlog.get_logger(__name__)

INGEST_PATH = "/operator/ingest"
NDJSON = b"application/x-ndjson"


class IngestRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1, max_length=4096)
    source: str = Field(min_length=1, max_length=128)
    prune: bool = False
    #: ``ingest --columns`` for this run; the server's ``[formats.columns]`` otherwise.
    columns: ColumnMapping | None = None


def summary(report: IngestReport) -> dict[str, Any]:
    """What ``latence-retrieval-mcp ingest`` prints, direct or through a server."""
    return {
        "source": report.source,
        "documents_seen": report.documents_seen,
        "documents_written": report.documents_written,
        "documents_unchanged": report.documents_unchanged,
        "documents_replaced": report.documents_replaced,
        "documents_pruned": report.documents_pruned,
        "chunks_written": report.chunks_written,
        "errors": [{"path": e.path, "reason": e.reason} for e in report.errors],
    }


def on_unix_socket(scope: dict[str, Any] | Any) -> bool:
    """True for a request that came over the Unix socket: Hypercorn gives TCP requests
    a peer and a local address, and Unix-socket requests neither."""
    return not scope.get("client") and not scope.get("server")


def parse_request(body: bytes) -> IngestRequest | str:
    """The request, or why it is not one (one line, for a 400)."""
    try:
        request = IngestRequest.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        return f"{where}: {first['msg']}"
    if not Path(request.path).is_absolute():
        return "path: must be absolute (the server resolves nothing against its own cwd)"
    return request


async def stream_ingest(desk: IngestDesk, request: IngestRequest, send: Send) -> None:
    """Run the ingest and stream its events; the response is already 200 when it fails,
    so a failure is the last event, never a status."""
    sender, receiver = trio.open_memory_channel[dict[str, Any]](math.inf)
    gone = False

    async def emit(event: dict[str, Any]) -> None:
        nonlocal gone
        if gone:
            return
        try:
            line = json.dumps(event, separators=(",", ":")).encode("utf-8") + b"\n"
            await send({"type": "http.response.body", "body": line, "more_body": True})
        except Exception:  # the client left; the ingest goes on
            gone = True

    async def work() -> None:
        async with sender:

            def progress(report: IngestReport, pending: int) -> None:
                sender.send_nowait(
                    {
                        "event": "progress",
                        "chunks_written": report.chunks_written,
                        "documents_seen": report.documents_seen,
                        "documents_unchanged": report.documents_unchanged,
                        "chunks_pending": pending,
                    }
                )

            def published(doc_ids: list[str]) -> None:
                sender.send_nowait({"event": "published", "doc_ids": doc_ids})

            try:
                report = await desk.ingest_path(
                    Path(request.path),
                    source=request.source,
                    prune=request.prune,
                    progress=progress,
                    published=published,
                    columns=request.columns,
                )
            except RetrievalMCPError as exc:
                sender.send_nowait(
                    {
                        "event": "error",
                        "error": {"code": exc.code, "message": exc.message, "remedy": exc.remedy},
                    }
                )
                return
            except Exception as exc:
                log.error("operator_ingest_failed", exc_info=exc)
                sender.send_nowait(
                    {
                        "event": "error",
                        "error": {
                            "code": "internal_error",
                            "message": f"unexpected {type(exc).__name__} during ingest",
                            "remedy": "See the server log.",
                        },
                    }
                )
                return
            sender.send_nowait({"event": "done", "ingested": summary(report)})

    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", NDJSON), (b"cache-control", b"no-store")],
        }
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(work)
        async with receiver:
            async for event in receiver:
                await emit(event)
    if not gone:
        with contextlib.suppress(Exception):  # the client left at the last moment
            await send({"type": "http.response.body", "body": b"", "more_body": False})
