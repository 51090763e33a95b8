"""L1 ``search``: fused hits with short snippets, provenance and the guard's verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, StrictInt, StrictStr

from retrieval_mcp.screening.chunk_flags import clean_text
from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.hit_views import cite, hit_view, snippet
from retrieval_mcp.tools.result_types import SearchData
from retrieval_mcp.tools.retrieval_args import ScopeArgs
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller


class SearchArgs(ScopeArgs):
    query: StrictStr = Field(min_length=1)
    top_k: StrictInt | None = Field(default=None, ge=1)


class SearchTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        ctx = self._context
        args = parse_arguments(SearchArgs, arguments)
        query, requested, outcome = await ctx.retrieve(
            args.query, args.top_k, args, caller, ctx.settings.pipeline.search
        )
        found = [h for h in outcome.hits if caller.may_read(h.chunk.provenance.source)]
        if not found and requested:
            await ctx.check_sources(requested, caller)
        limit = ctx.settings.search.snippet_chars
        passed = {h.chunk.id for h in outcome.guard.passed}
        hits = [
            hit_view(
                rank,
                hit,
                text=snippet(clean_text(hit.chunk), query, limit),
                passed_guard=hit.chunk.id in passed,
            )
            for rank, hit in enumerate(found, start=1)
        ]
        lines = [
            f'{len(hits)} hits for "{query}" (legs: {", ".join(outcome.legs_used)}); '
            "call get_context with ids for full text."
        ]
        for rank, (hit, view) in enumerate(zip(found, hits, strict=True), start=1):
            title = hit.chunk.provenance.title or hit.chunk.provenance.doc_id
            lines += ["", f"[{rank}] {title} — {cite(hit.chunk)}", view["text"]]
        if not hits:
            lines = [f'No passages matched "{query}". Try other terms or fewer filters.']
        data: SearchData = {
            "query": query,
            "hits": hits,
            "guard": {
                "threshold": round(outcome.guard.threshold, 6),
                "below_threshold": len(outcome.guard.rejected),
            },
        }
        return ToolOutput(
            data=data,
            text="\n".join(lines),
            steps_run=outcome.steps_run,
            legs_used=outcome.legs_used,
            legs_dropped=outcome.legs_dropped,
            steps_skipped=outcome.steps_skipped,
        )
