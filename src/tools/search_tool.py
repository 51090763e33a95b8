"""L1 ``search``: fused hits with short snippets, provenance and the guard's verdict.

By default one hit stands for each document (its best chunk, with ``other_chunks``
counting the rest, ``pipeline/collapse.py``): asked for ``top_k`` results, an agent gets
``top_k`` distinct sources. ``collapse: false`` returns the raw chunk ranking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, StrictBool, StrictInt, StrictStr

from retrieval_mcp.pipeline.collapse import COLLAPSE_DEPTH, Collapsed, collapse_by_document
from retrieval_mcp.screening.chunk_flags import clean_text
from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.hit_views import cite, hit_view, snippet
from retrieval_mcp.tools.result_types import HitView, SearchData
from retrieval_mcp.tools.retrieval_args import ScopeArgs, check_top_k
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller


class SearchArgs(ScopeArgs):
    query: StrictStr = Field(min_length=1)
    top_k: StrictInt | None = Field(default=None, ge=1)
    collapse: StrictBool = True  # one hit per document; False returns raw chunks


class SearchTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        ctx = self._context
        args = parse_arguments(SearchArgs, arguments)
        depth = COLLAPSE_DEPTH if args.collapse else 1
        steps = ctx.settings.pipeline.search
        query, requested, outcome = await ctx.retrieve(
            args.query, args.top_k, args, caller, steps, depth=depth
        )
        readable = [h for h in outcome.hits if caller.may_read(h.chunk.provenance.source)]
        if args.collapse:
            top_k = check_top_k(args.top_k, ctx.settings.search)
            found = collapse_by_document(readable, top_k)
            if len(found) < top_k and len(outcome.hits) >= top_k * depth:
                # One long document filled the ranking read: read once more, deeper.
                depth *= COLLAPSE_DEPTH
                query, requested, outcome = await ctx.retrieve(
                    args.query, args.top_k, args, caller, steps, depth=depth
                )
                readable = [h for h in outcome.hits if caller.may_read(h.chunk.provenance.source)]
                found = collapse_by_document(readable, top_k)
        else:
            found = [Collapsed(hit=h, other_chunks=0) for h in readable]
        if not found and requested:
            await ctx.check_sources(requested, caller)
        limit = ctx.settings.search.snippet_chars
        passed = {h.chunk.id for h in outcome.guard.passed}
        hits: list[HitView] = []
        for rank, item in enumerate(found, start=1):
            view = hit_view(
                rank,
                item.hit,
                text=snippet(clean_text(item.hit.chunk), query, limit),
                passed_guard=item.hit.chunk.id in passed,
            )
            if args.collapse:
                view["other_chunks"] = item.other_chunks
            hits.append(view)
        shape = "documents" if args.collapse else "hits"
        lines = [
            f'{len(hits)} {shape} for "{query}" (legs: {", ".join(outcome.legs_used)}); '
            "call get_context with ids for full text."
        ]
        for item, view in zip(found, hits, strict=True):
            chunk = item.hit.chunk
            title = chunk.provenance.title or chunk.provenance.doc_id
            more = f" (+{item.other_chunks} more chunks)" if item.other_chunks else ""
            lines += ["", f"[{view['rank']}] {title} — {cite(chunk)}{more}", view["text"]]
        if not hits:
            lines = [f'No passages matched "{query}". Try other terms or fewer filters.']
        data: SearchData = {
            "query": query,
            "hits": hits,
            "guard": {
                "threshold": round(outcome.guard.threshold, 6),
                # Of the hits shown: a deeper read for collapsing must not inflate it.
                "below_threshold": sum(not v.get("passed_guard", True) for v in hits),
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
