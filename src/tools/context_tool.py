"""L3 ``get_context``: grounded passages for a query or a set of ids, packed to a budget.

For a query it runs the full pipeline (fetch → fuse → guard → expand → rerank → pack)
and, unlike ``search``, drops hits below the guard and says how many. For ids it
fetches exactly those chunks (in the order given) and packs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, StrictBool, StrictInt, StrictStr

from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.pipeline.packing import PackResult
from retrieval_mcp.records import Hit, LegScore
from retrieval_mcp.screening import FAMILIES
from retrieval_mcp.screening.chunk_flags import chunk_flags
from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.hit_views import passage_view
from retrieval_mcp.tools.result_types import ContextData, PassageView
from retrieval_mcp.tools.retrieval_args import (
    ChunkId,
    ScopeArgs,
)
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller

MAX_IDS = 50


class ContextArgs(ScopeArgs):
    query: StrictStr | None = Field(default=None, min_length=1)
    ids: list[ChunkId] | None = Field(default=None, min_length=1, max_length=MAX_IDS)
    top_k: StrictInt | None = Field(default=None, ge=1)
    budget_tokens: StrictInt | None = Field(default=None, ge=16)
    include_flagged: StrictBool = False


def _passages(packed: PackResult, hits: list[Hit], caller: Caller) -> list[PassageView]:
    """Passage views the caller may read, with the union of their chunks' screen flags.

    A passage whose every chunk carries stored flags holds text our ingest sanitised,
    so it is wrapped without sanitising it again; any other (a foreign store's chunk)
    is sanitised on the way out, as before."""
    flags_by_id = {h.chunk.id: chunk_flags(h.chunk) for h in hits}
    stored = {h.chunk.id for h in hits if h.chunk.flags is not None}
    views = []
    for passage in packed.passages:
        if not caller.may_read(passage.source):
            continue
        found = {f for cid in passage.chunk_ids for f in flags_by_id.get(cid, ())}
        sanitised = all(cid in stored for cid in passage.chunk_ids)
        views.append(
            passage_view(passage, [f for f in FAMILIES if f in found], sanitised=sanitised)
        )
    return views


class GetContextTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        ctx = self._context
        args = parse_arguments(ContextArgs, arguments)
        if (args.query is None) == (args.ids is None):
            raise InvalidArgument(
                "pass exactly one of query or ids",
                remedy="Give a query to retrieve, or ids from earlier results.",
            )
        pack_settings = ctx.settings.pipeline.pack
        budget = args.budget_tokens or pack_settings.default_budget_tokens
        if budget > pack_settings.max_budget_tokens:
            raise InvalidArgument(
                f"budget_tokens={budget} exceeds {pack_settings.max_budget_tokens}",
                remedy=f"Pass budget_tokens up to {pack_settings.max_budget_tokens}.",
            )
        if args.ids is not None:
            return await self._by_ids(
                args.ids, budget, caller, include_flagged=args.include_flagged
            )
        assert args.query is not None
        query, requested, outcome = await ctx.retrieve(
            args.query,
            args.top_k,
            args,
            caller,
            ctx.settings.pipeline.get_context,
            budget_tokens=budget,
            withhold_flagged=not args.include_flagged,
        )
        if not outcome.guard.passed and not outcome.guard.rejected and requested:
            await ctx.check_sources(requested, caller)
        packed = outcome.packed
        assert packed is not None
        data: ContextData = {
            "query": query,
            "passages": _passages(packed, outcome.hits, caller),
            "tokens_used": packed.tokens_used,
            "budget_tokens": packed.budget_tokens,
            "rejected_by_guard": len(outcome.guard.rejected),
            "withheld_flagged": outcome.withheld,
            "chunks_over_budget": packed.chunks_over_budget,
        }
        return ToolOutput(
            data=data,
            text=_render(data),
            steps_run=outcome.steps_run,
            legs_used=outcome.legs_used,
            legs_dropped=outcome.legs_dropped,
            steps_skipped=outcome.steps_skipped,
        )

    async def _by_ids(
        self, ids: list[str], budget: int, caller: Caller, *, include_flagged: bool
    ) -> ToolOutput:
        ctx = self._context
        # An id outside the caller's scope is reported missing, like one that never existed.
        chunks = caller.readable(await ctx.backend.fetch(list(dict.fromkeys(ids))))
        missing = sorted(set(ids) - {c.id for c in chunks})
        withheld = 0
        if not include_flagged:
            kept = [c for c in chunks if not chunk_flags(c)]
            withheld, chunks = len(chunks) - len(kept), kept
        # Earlier ids rank higher: the agent listed them in the order it cares about.
        hits = [
            Hit(chunk=c, score=1.0 / rank, legs={"by_id": LegScore(rank=rank, score=1.0)})
            for rank, c in enumerate(chunks, start=1)
        ]
        packed, pack_skipped = await ctx.pipeline.pack(hits, budget, ranked=hits)
        data: ContextData = {
            "ids": ids,
            "missing_ids": missing,
            "passages": _passages(packed, hits, caller),
            "tokens_used": packed.tokens_used,
            "budget_tokens": packed.budget_tokens,
            "rejected_by_guard": 0,
            "withheld_flagged": withheld,
            "chunks_over_budget": packed.chunks_over_budget,
        }
        steps = ["fetch:by_id", *([] if include_flagged else ["quarantine"])]
        steps.append("pack" if pack_skipped is None else "pack:inline")
        return ToolOutput(
            data=data,
            text=_render(data),
            steps_run=steps,
            steps_skipped=[] if pack_skipped is None else [pack_skipped],
        )


def _render(data: ContextData) -> str:
    passages = data["passages"]
    head = (
        f"{len(passages)} passages, {data['tokens_used']}/{data['budget_tokens']} tokens"
        f"; {data['rejected_by_guard']} below the relevance guard"
        f"; {data['withheld_flagged']} withheld as flagged (include_flagged to see them)"
        f"; {data['chunks_over_budget']} chunks over budget."
    )
    missing = data.get("missing_ids")
    if missing:
        head += f" Unknown ids: {', '.join(missing)}."
    lines = [head]
    for i, p in enumerate(passages, start=1):
        prov = p["provenance"]
        lines += [
            "",
            f"[{i}] {prov['title'] or prov['doc_id']} — {prov['source']}:"
            f"{prov['doc_id']} chars {prov['char_start']}-{prov['char_end']}",
            p["text"],
        ]
    return "\n".join(lines)
