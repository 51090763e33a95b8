"""``list_sources`` and ``index_status``: what can be searched, and how healthy it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from retrieval_mcp.backends.protocol import RetrievalBackend, unavailable_legs
from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.result_types import (
    SourcesData,
    SourceView,
    StatusData,
    UnavailableLegView,
)
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def unavailable_views(backend: RetrievalBackend) -> list[UnavailableLegView]:
    return [
        {"leg": u.leg.value, "reason": u.reason, "remedy": u.remedy}
        for u in unavailable_legs(backend)
    ]


def _unavailable_lines(unavailable: list[UnavailableLegView]) -> list[str]:
    return [f"{u['leg']} leg unavailable: {u['reason']} Fix: {u['remedy']}" for u in unavailable]


class ListSourcesTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        parse_arguments(NoArgs, arguments)
        backend = self._context.backend
        capabilities = sorted(c.value for c in backend.capabilities())
        sources: list[SourceView] = [
            {"name": s.name, "chunks": s.chunks, "capabilities": capabilities}
            for s in await backend.sources()
            if caller.may_read(s.name)
        ]
        data: SourcesData = {"sources": sources, "unavailable": unavailable_views(backend)}
        lines = [f"{len(sources)} sources:"] + [
            f"- {s['name']}: {s['chunks']} chunks" for s in sources
        ]
        lines += _unavailable_lines(data["unavailable"])
        return ToolOutput(data=data, text="\n".join(lines), steps_run=["sources"])


class IndexStatusTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        parse_arguments(NoArgs, arguments)
        ctx = self._context
        status = await ctx.backend.status()
        pipeline = ctx.pipeline.statistics()
        wal = ctx.wal.statistics() if ctx.wal is not None else None
        failed = ctx.tree.failed() if ctx.tree is not None else []
        ready = status.ready and (wal is None or wal.healthy) and not failed
        chunks, detail, stats = status.chunks, status.detail, dict(status.extra)
        reloads = ctx.hub.statistics()
        supervision = ctx.tree.states() if ctx.tree is not None else {}
        ingest = ctx.desk.statistics() if ctx.desk is not None else {}
        wal_view: dict[str, Any] | None = None
        if wal is not None:
            wal_view = {"healthy": wal.healthy, "failure": wal.failure, "queue": wal.queue_depth}
        if caller.scoped:  # counts and store details of other sources are not its business
            in_scope = [s for s in await ctx.backend.sources() if caller.may_read(s.name)]
            chunks, detail, stats = sum(s.chunks for s in in_scope), "", {}
            supervision = _states_only(supervision)
            ingest = {
                source: {k: v for k, v in view.items() if k != "errors"}
                for source, view in ingest.items()
                if caller.may_read(source)
            }
            if wal_view is not None:
                wal_view = {"healthy": wal_view["healthy"]}
            reloads = {  # nor are the operator's file paths and errors
                part: {k: v for k, v in o.items() if k not in ("error", "detail")}
                for part, o in reloads.items()
            }
        data: StatusData = {
            "ready": ready,
            "backend": status.backend,
            "chunks": chunks,
            "detail": detail,
            "capabilities": sorted(c.value for c in ctx.backend.capabilities()),
            "unavailable": unavailable_views(ctx.backend),
            "backend_stats": stats,
            "pipeline": pipeline,
            # Per reloadable part: ok / refused with the reason, when, what triggered it.
            "last_reload": reloads,
            "reloads_refused": ctx.hub.refused_total,
            "wal": wal_view,
            "supervision": supervision,
            "ingest": ingest,
        }
        refused = sorted(part for part, o in reloads.items() if not o["ok"])
        text = (
            f"{status.backend}: {'ready' if ready else 'NOT ready'}, "
            f"{chunks} chunks; legs {', '.join(pipeline['legs_planned'])}."
            + (f" Last reload refused for: {', '.join(refused)}." if refused else "")
        )
        if wal is not None and not wal.healthy:
            text += " The write-ahead log has failed: nothing more is recorded."
        if failed:
            text += f" Down: {', '.join(failed)}."
        failing = sorted(s for s, v in ingest.items() if v["error_count"])
        if failing:
            text += f" Files that failed to ingest in: {', '.join(failing)}."
        text = "\n".join([text, *_unavailable_lines(data["unavailable"])])
        return ToolOutput(data=data, text=text, steps_run=["status"])


def _states_only(states: Mapping[str, Any]) -> dict[str, Any]:
    """The tree without error texts (they may name paths and data of other sources)."""
    return {
        name: {
            "state": entry["state"],
            "restarts": entry["restarts"],
            **({"children": _states_only(entry["children"])} if "children" in entry else {}),
        }
        for name, entry in states.items()
    }
