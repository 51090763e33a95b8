"""L2 ``more_like_this``: chunks similar to a chunk the agent already has.

Backends that declare ``similar`` answer nearest-by-id from the stored vector; others
are re-queried through the full pipeline with the chunk's text, excluding the chunk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import Field, StrictInt

from retrieval_mcp.actors.orchestrator import RetrievalRequest
from retrieval_mcp.backends.protocol import Capability, SimilarBackend
from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.records import Hit, LegScore
from retrieval_mcp.screening.chunk_flags import clean_text
from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.hit_views import cite, hit_view, snippet
from retrieval_mcp.tools.result_types import SimilarData
from retrieval_mcp.tools.retrieval_args import ChunkId, ScopeArgs, check_top_k, scope_of
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller


class SimilarArgs(ScopeArgs):
    chunk_id: ChunkId
    top_k: StrictInt | None = Field(default=None, ge=1)


class MoreLikeThisTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        ctx = self._context
        args = parse_arguments(SimilarArgs, arguments)
        top_k = check_top_k(args.top_k, ctx.settings.search)
        requested, search_filter = scope_of(args, ctx.backend.capabilities())
        sources = caller.scope_sources(requested)
        # Out of scope reads exactly like "no such chunk": ids cannot probe other sources.
        found = caller.readable(await ctx.backend.fetch([args.chunk_id]))
        if not found:
            raise InvalidArgument(
                f"no chunk with id {args.chunk_id!r}",
                remedy="Use an id from a search, expand_neighbors or get_context result.",
            )
        anchor = found[0]
        legs_used: list[str]
        dropped: list[tuple[str, str]] = []
        skipped: list[tuple[str, str]] = []
        if Capability.SIMILAR in ctx.backend.capabilities():
            candidates = await cast(SimilarBackend, ctx.backend).similar(
                anchor.id, limit=top_k, sources=sources, filter=search_filter
            )
            hits = [
                Hit(
                    chunk=c.chunk,
                    score=c.score,
                    legs={"similar": LegScore(rank=c.rank, score=c.score)},
                )
                for c in candidates
            ]
            steps, legs_used = ["fetch:by_id", "similar"], ["similar"]
        else:
            outcome = await ctx.pipeline.retrieve(
                RetrievalRequest(
                    text=anchor.text[: ctx.settings.search.max_query_chars],
                    top_k=top_k,
                    sources=sources,
                    filter=search_filter,
                    exclude_ids=frozenset({anchor.id}),
                )
            )
            hits = outcome.hits
            steps = ["fetch:by_id", *outcome.steps_run]
            legs_used, dropped, skipped = (
                outcome.legs_used,
                outcome.legs_dropped,
                outcome.steps_skipped,
            )
        hits = [h for h in hits if caller.may_read(h.chunk.provenance.source)]
        limit = ctx.settings.search.snippet_chars
        views = [
            hit_view(rank, h, text=snippet(clean_text(h.chunk), "", limit))
            for rank, h in enumerate(hits, start=1)
        ]
        lines = [f"{len(views)} chunks like {cite(anchor)}:"]
        for rank, (hit, view) in enumerate(zip(hits, views, strict=True), start=1):
            lines += [
                "",
                f"[{rank}] {hit.chunk.provenance.title} — {cite(hit.chunk)}",
                view["text"],
            ]
        data: SimilarData = {"anchor_id": anchor.id, "hits": views}
        return ToolOutput(
            data=data,
            text="\n".join(lines),
            steps_run=steps,
            legs_used=legs_used,
            legs_dropped=dropped,
            steps_skipped=skipped,
        )
