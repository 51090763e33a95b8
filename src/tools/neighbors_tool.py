"""L2 ``expand_neighbors``: the chunks around a chunk, in reading order, full text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from retrieval_mcp.backends.protocol import NeighborsBackend
from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.tools.arguments import parse_arguments
from retrieval_mcp.tools.hit_views import chunk_view, cite
from retrieval_mcp.tools.result_types import NeighborsData, NeighborView
from retrieval_mcp.tools.retrieval_args import ChunkId
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller

MAX_WINDOW = 5


class ExpandArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_id: ChunkId
    before: StrictInt = Field(default=1, ge=0, le=MAX_WINDOW)
    after: StrictInt = Field(default=1, ge=0, le=MAX_WINDOW)


class ExpandNeighborsTool:
    def __init__(self, context: ToolContext) -> None:
        self._context = context

    async def __call__(self, arguments: Mapping[str, Any], caller: Caller) -> ToolOutput:
        args = parse_arguments(ExpandArgs, arguments)
        backend = self._context.backend
        # Out of scope reads exactly like "no such chunk": ids cannot probe other sources.
        found = caller.readable(await backend.fetch([args.chunk_id]))
        if not found:
            raise InvalidArgument(
                f"no chunk with id {args.chunk_id!r}",
                remedy="Use an id from a search, more_like_this or get_context result.",
            )
        chunk = found[0]
        around = caller.readable(
            await cast(NeighborsBackend, backend).neighbors(
                chunk, before=args.before, after=args.after
            )
        )
        ordered = sorted([chunk, *around], key=lambda c: c.provenance.ordinal)
        views: list[NeighborView] = [
            {**chunk_view(c), "is_anchor": c.id == chunk.id} for c in ordered
        ]
        lines = [
            f"{len(ordered)} chunks of {chunk.provenance.source}:{chunk.provenance.doc_id} "
            f"around chunk {chunk.provenance.ordinal + 1}:"
        ]
        for c, view in zip(ordered, views, strict=True):
            flags = f" flags: {', '.join(view['flags'])}" if view["flags"] else ""
            lines += ["", f"{'>' if c.id == chunk.id else ' '} {cite(c)}{flags}", view["text"]]
        data: NeighborsData = {"anchor_id": chunk.id, "chunks": views}
        return ToolOutput(
            data=data,
            text="\n".join(lines),
            steps_run=["fetch:by_id", "neighbors"],
        )
