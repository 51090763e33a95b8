"""A scriptable in-memory backend: each leg answers fixed ids after a delay, or raises."""

from __future__ import annotations

from collections.abc import Sequence

import trio
import trio.lowlevel

from retrieval_mcp.backends.protocol import (
    BackendStatus,
    Capability,
    LegQuery,
    SearchFilter,
    SourceInfo,
)
from retrieval_mcp.records import Candidate, Chunk, Provenance


def make_chunk(cid: str, ordinal: int = 0) -> Chunk:
    text = f"text of {cid}"
    return Chunk(
        id=cid, text=text, provenance=Provenance("s", f"doc-{cid[0]}", "T", ordinal, 0, len(text))
    )


class ScriptedBackend:
    name = "scripted"

    def __init__(
        self,
        legs: dict[Capability, tuple[float, list[str] | Exception]],
        extra: frozenset[Capability] = frozenset({Capability.FILTER}),
    ) -> None:
        self.legs = legs
        self.extra = extra
        self.cancelled: list[Capability] = []
        self.queries: list[LegQuery] = []

    def capabilities(self) -> frozenset[Capability]:
        return frozenset(self.legs) | self.extra

    async def search(self, query: LegQuery) -> list[Candidate]:
        self.queries.append(query)
        delay, result = self.legs[query.leg]
        try:
            await trio.sleep(delay)
        except trio.Cancelled:
            self.cancelled.append(query.leg)
            raise
        if isinstance(result, Exception):
            raise result
        return [Candidate(make_chunk(i), 1.0 / r, r) for r, i in enumerate(result, 1)]

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        return [make_chunk(i) for i in ids]

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        await trio.lowlevel.checkpoint()
        return [make_chunk(f"{chunk.id}+1", chunk.provenance.ordinal + 1)]

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        await trio.lowlevel.checkpoint()
        return {i: [1.0, 0.0] if n % 2 else [0.0, 1.0] for n, i in enumerate(ids)}

    async def similar(
        self,
        chunk_id: str,
        *,
        limit: int,
        sources: tuple[str, ...] = (),
        filter: SearchFilter | None = None,
    ) -> list[Candidate]:
        return []

    async def sources(self) -> list[SourceInfo]:
        return [SourceInfo("s", 3)]

    async def status(self) -> BackendStatus:
        return BackendStatus(ready=True, backend=self.name, chunks=3)

    async def aclose(self) -> None:
        return None
