"""The L1 ``search`` tool: validate arguments, run the pipeline, shape hits for agents."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from retrieval_mcp.actors.search_pipeline import SearchPipeline, SearchRequest
from retrieval_mcp.backends.protocol import Capability, RetrievalBackend, SearchFilter
from retrieval_mcp.errors import InvalidArgument, UnknownSource
from retrieval_mcp.records import Hit, unstructure
from retrieval_mcp.settings import SearchSettings
from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.registry import ToolOutput

FilterScalar = Annotated[StrictStr, Field(max_length=256)] | StrictInt | StrictBool
_FILTER_KEY = re.compile(r"^[A-Za-z0-9_]{1,64}(\.[A-Za-z0-9_]{1,64}){0,3}$")
_EXCERPT_CHARS = 600


class SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: StrictStr = Field(min_length=1)
    top_k: StrictInt | None = Field(default=None, ge=1)
    sources: list[Annotated[StrictStr, Field(min_length=1, max_length=256)]] | None = Field(
        default=None, max_length=32
    )
    filter: dict[str, FilterScalar | list[FilterScalar]] | None = Field(default=None, max_length=16)


class SearchTool:
    def __init__(
        self, backend: RetrievalBackend, pipeline: SearchPipeline, settings: SearchSettings
    ) -> None:
        self._backend = backend
        self._pipeline = pipeline
        self._settings = settings

    async def __call__(self, arguments: Mapping[str, Any]) -> ToolOutput:
        args = parse_arguments(SearchArgs, arguments)
        request = self._request(args)
        outcome = await self._pipeline.run(request)
        if not outcome.hits and request.sources:
            await self._check_sources(request.sources)
        hits = [_hit_data(rank, hit) for rank, hit in enumerate(outcome.hits, start=1)]
        data = {"query": request.text, "hits": hits}
        return ToolOutput(
            data=data,
            text=_render(request.text, outcome.hits, outcome.legs_used),
            steps_run=outcome.steps_run,
            legs_used=outcome.legs_used,
            legs_dropped=outcome.legs_dropped,
        )

    def _request(self, args: SearchArgs) -> SearchRequest:
        settings = self._settings
        query = args.query.strip()
        if not query:
            raise InvalidArgument("query is blank", remedy="Pass a non-empty query string.")
        if len(query) > settings.max_query_chars:
            raise InvalidArgument(
                f"query is {len(query)} characters; the limit is {settings.max_query_chars}",
                remedy="Shorten the query to its key terms or question.",
            )
        top_k = settings.default_top_k if args.top_k is None else args.top_k
        if top_k > settings.max_top_k:
            raise InvalidArgument(
                f"top_k={top_k} exceeds the limit of {settings.max_top_k}",
                remedy=f"Pass top_k between 1 and {settings.max_top_k}.",
            )
        search_filter = None
        if args.filter:
            if Capability.FILTER not in self._backend.capabilities():
                raise InvalidArgument(
                    "this server's backend does not support metadata filters",
                    remedy="Call search without the filter argument.",
                )
            equals: dict[str, tuple[str | int | bool, ...]] = {}
            for key, value in args.filter.items():
                if not _FILTER_KEY.match(key):
                    raise InvalidArgument(
                        f"filter key {key!r} is not a valid field name",
                        remedy="Use letters, digits and underscores, dotted for nesting.",
                    )
                values = tuple(value) if isinstance(value, list) else (value,)
                if not values:
                    raise InvalidArgument(
                        f"filter[{key!r}] is an empty list",
                        remedy="Give at least one allowed value.",
                    )
                equals[key] = values
            search_filter = SearchFilter(equals=equals)
        sources = tuple(dict.fromkeys(args.sources or ()))
        return SearchRequest(text=query, top_k=top_k, sources=sources, filter=search_filter)

    async def _check_sources(self, requested: tuple[str, ...]) -> None:
        known = {s.name for s in await self._backend.sources()}
        unknown = [s for s in requested if s not in known]
        if unknown:
            raise UnknownSource(
                f"unknown source(s): {', '.join(unknown)}",
                remedy=(
                    f"Use one of: {', '.join(sorted(known))}."
                    if known
                    else "The index is empty; ask the operator to ingest documents."
                ),
            )


def _hit_data(rank: int, hit: Hit) -> dict[str, Any]:
    chunk = hit.chunk
    return {
        "rank": rank,
        "id": chunk.id,
        "score": round(hit.score, 6),
        "text": chunk.text,
        "provenance": unstructure(chunk.provenance),
        "metadata": chunk.metadata,
        "legs": {leg: unstructure(score) for leg, score in hit.legs.items()},
    }


def _render(query: str, hits: list[Hit], legs: list[str]) -> str:
    if not hits:
        return f'No passages matched "{query}". Try other terms or fewer filters.'
    lines = [f'{len(hits)} passages for "{query}" (legs: {", ".join(legs)})']
    for rank, hit in enumerate(hits, start=1):
        p = hit.chunk.provenance
        excerpt = hit.chunk.text
        if len(excerpt) > _EXCERPT_CHARS:
            excerpt = excerpt[:_EXCERPT_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append("")
        lines.append(
            f"[{rank}] {p.title or p.doc_id} — {p.source}:{p.doc_id} "
            f"chunk {p.ordinal + 1}/{p.doc_chunks or '?'} chars {p.char_start}-{p.char_end} "
            f"(id {hit.chunk.id})"
        )
        lines.append(excerpt)
    return "\n".join(lines)
