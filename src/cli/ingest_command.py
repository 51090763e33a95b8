"""``latence-retrieval-mcp ingest PATH``: directly, or through the running server.

With no server holding the store, the CLI opens it and ingests through the WAL
itself. When a server holds it (``StoreLocked``), the CLI hands the work to that
server over its Unix socket (``POST /operator/ingest``, ADR 0037) with a token of
scope ``ingest`` and prints the server's progress as it streams, then the same
summary. The token comes from ``$LATENCE_INGEST_TOKEN`` or ``--token-file`` (a
private file holding the secret), never from the command line, where other users'
``ps`` and the shell history would see it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from retrieval_mcp.errors import RetrievalMCPError, StoreLocked, Unauthenticated
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.operator_channel import INGEST_PATH

ENV_INGEST_TOKEN = "LATENCE_INGEST_TOKEN"
_MINT = "latence-retrieval-mcp token create operator --scopes ingest"


class OperatorIngestFailed(RetrievalMCPError):
    """The running server refused or failed the ingest it was handed."""

    code = "operator_ingest_failed"
    remedy = "See the message; the server log has the details."


def ingest_token(token_file: Path | None) -> str:
    """The operator's ingest secret, from ``token_file`` or the environment."""
    if token_file is not None:
        try:
            mode = os.stat(token_file).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise Unauthenticated(
                    f"{token_file} is readable by group or others",
                    remedy=f"chmod 600 {token_file}",
                )
            return token_file.read_text("utf-8").strip()
        except OSError as exc:
            raise Unauthenticated(
                f"cannot read the token file {token_file}: {exc.strerror}",
                remedy="Pass a file that holds only the secret of a token with scope ingest.",
            ) from exc
    secret = os.environ.get(ENV_INGEST_TOKEN, "").strip()
    if not secret:
        raise Unauthenticated(
            "a server holds the store, and handing it the ingest needs a token with "
            f"scope ingest (none in ${ENV_INGEST_TOKEN} or --token-file)",
            remedy=f"Run `{_MINT}`, then export {ENV_INGEST_TOKEN}=<the secret> "
            "(or stop the server and ingest directly).",
        )
    return secret


def ingest_via_server(
    settings: Settings,
    path: Path,
    *,
    source: str,
    prune: bool,
    token: str,
    columns: dict[str, object] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> dict[str, Any]:
    """Stream the ingest through the server's operator channel; return the summary."""
    socket_path = settings.socket_path
    if transport is None:
        if socket_path is None or not socket_path.exists():
            raise StoreLocked(
                "a server holds the store but serves no Unix socket to hand the ingest to",
                remedy="Stop the server and ingest directly, or run it with a Unix socket "
                "(server.unix_socket).",
            )
        transport = httpx.HTTPTransport(uds=str(socket_path))
    body: dict[str, Any] = {"path": str(path.resolve()), "source": source, "prune": prune}
    if columns:
        body["columns"] = columns
    headers = {"authorization": f"Bearer {token}"}
    timeout = httpx.Timeout(10.0, read=None)  # a long ingest may be quiet for a while
    with (
        httpx.Client(transport=transport, timeout=timeout) as client,
        client.stream(
            "POST", f"http://localhost{INGEST_PATH}", json=body, headers=headers
        ) as response,
    ):
        if response.status_code != 200:
            response.read()
            raise _refusal(response)
        for line in response.iter_lines():
            if not line.strip():
                continue
            event: dict[str, Any] = json.loads(line)
            if on_event is not None:
                on_event(event)
            if event.get("event") == "done":
                summary: dict[str, Any] = event["ingested"]
                return summary
            if event.get("event") == "error":
                error = event.get("error") or {}
                raise OperatorIngestFailed(
                    f"the server's ingest failed: [{error.get('code')}] {error.get('message')}",
                    remedy=str(error.get("remedy") or OperatorIngestFailed.remedy),
                )
    raise OperatorIngestFailed(
        "the server closed the stream before the ingest finished (was it stopped?)",
        remedy="Run the same ingest again: documents already acknowledged are skipped.",
    )


def _refusal(response: httpx.Response) -> RetrievalMCPError:
    try:
        detail = response.json()
        message = str(detail.get("message", ""))
    except ValueError:
        message = response.text[:200]
    if response.status_code in (401, 403):
        return Unauthenticated(
            f"the server refused the ingest token ({response.status_code}: {message})",
            remedy=f"Use a token with scope ingest: `{_MINT}`.",
        )
    return OperatorIngestFailed(
        f"the server refused the ingest ({response.status_code}: {message})"
    )


def progress_line(event: dict[str, Any]) -> None:
    """Live progress on a terminal's stderr (nothing when stderr is not a terminal)."""
    if not sys.stderr.isatty():
        return
    if event.get("event") == "progress":
        sys.stderr.write(
            f"\r{event.get('chunks_written', 0)} chunks written, "
            f"{event.get('documents_unchanged', 0)} documents unchanged   "
        )
        sys.stderr.flush()
