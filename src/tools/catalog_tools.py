"""``list_sources`` and ``index_status``: what can be searched, and how healthy it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ListSourcesTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        parse_arguments(NoArgs, arguments)
        backend = self._context.backend
        capabilities = sorted(c.value for c in backend.capabilities())
        sources = [
            {"name": s.name, "chunks": s.chunks, "capabilities": capabilities}
            for s in await backend.sources()
            if caller.may_read(s.name)
        ]
        lines = [f"{len(sources)} sources:"] + [
            f"- {s['name']}: {s['chunks']} chunks" for s in sources
        ]
        return ToolOutput(data={"sources": sources}, text="\n".join(lines), steps_run=["sources"])


class IndexStatusTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        parse_arguments(NoArgs, arguments)
        ctx = self._context
        status = await ctx.backend.status()
        pipeline = ctx.pipeline.statistics()
        chunks, detail, stats = status.chunks, status.detail, dict(status.extra)
        reloads = ctx.hub.statistics()
        if caller.scoped:  # counts and store details of other sources are not its business
            in_scope = [s for s in await ctx.backend.sources() if caller.may_read(s.name)]
            chunks, detail, stats = sum(s.chunks for s in in_scope), "", {}
            reloads = {  # nor are the operator's file paths and errors
                part: {k: v for k, v in o.items() if k not in ("error", "detail")}
                for part, o in reloads.items()
            }
        data = {
            "ready": status.ready,
            "backend": status.backend,
            "chunks": chunks,
            "detail": detail,
            "capabilities": sorted(c.value for c in ctx.backend.capabilities()),
            "backend_stats": stats,
            "pipeline": pipeline,
            # Per reloadable part: ok / refused with the reason, when, what triggered it.
            "last_reload": reloads,
            "reloads_refused": ctx.hub.refused_total,
        }
        refused = sorted(part for part, o in reloads.items() if not o["ok"])
        text = (
            f"{status.backend}: {'ready' if status.ready else 'NOT ready'}, "
            f"{chunks} chunks; legs {', '.join(pipeline['legs_planned'])}."
            + (f" Last reload refused for: {', '.join(refused)}." if refused else "")
        )
        return ToolOutput(data=data, text=text, steps_run=["status"])
