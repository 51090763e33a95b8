"""Per-tool session records: "what did this agent see?", through the WAL writer.

One record per tool call — request id, token name, tool, a digest of the arguments,
the ids of what was returned, legs, latency, outcome — appended without waiting for
the fsync (a session record is an audit trail, not an acknowledged write, and must
never slow a search). Query and retrieved text are kept only when
``wal.log_content`` is on. A full queue or a failed WAL drops the record and counts
it; it never fails the call.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import structlog
import trio

from retrieval_mcp.actors.wal_writer import WalWriter
from retrieval_mcp.errors import WalError
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.wal.wal_records import session_record

log = structlog.get_logger(__name__)


def returned_items(output: ToolOutput | None) -> list[Mapping[str, Any]]:
    data = output.data if output is not None and isinstance(output.data, Mapping) else {}
    for key in ("hits", "passages", "chunks"):
        items = data.get(key)
        if isinstance(items, list):
            return [item for item in items if isinstance(item, Mapping)]
    return []


def _ids(items: Sequence[Mapping[str, Any]]) -> list[str]:
    ids: list[str] = []
    for item in items:
        if "id" in item:
            ids.append(str(item["id"]))
        else:  # a passage: every chunk it packs
            ids.extend(str(i) for i in item.get("provenance", {}).get("chunk_ids", []))
    return ids


class SessionRecorder:
    def __init__(self, wal: WalWriter, *, log_content: bool = False) -> None:
        self._wal = wal
        self._log_content = log_content
        self.recorded = 0
        self.dropped = 0

    def record(
        self,
        *,
        request_id: str,
        token_name: str,
        tool: str,
        arguments: Mapping[str, Any],
        output: ToolOutput | None,
        latency_ms: float,
        outcome: str,
    ) -> None:
        items = returned_items(output)
        payload = session_record(
            at=time.time(),
            request_id=request_id,
            token_name=token_name,
            tool=tool,
            arguments=arguments,
            hit_ids=_ids(items),
            hit_texts=[str(item.get("text", "")) for item in items] if self._log_content else (),
            legs_used=output.legs_used if output else (),
            legs_dropped=output.legs_dropped if output else (),
            latency_ms=latency_ms,
            outcome=outcome,
            log_content=self._log_content,
        )
        try:
            self._wal.enqueue_nowait(payload)
        except (trio.WouldBlock, WalError) as exc:
            self.dropped += 1
            log.warning("session_record_dropped", request_id=request_id, reason=type(exc).__name__)
        else:
            self.recorded += 1
