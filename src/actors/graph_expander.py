"""The graph expander actor: add the chunks around each hit (same document, ±window).

A neighbour scores ``decay ** distance × its hit's score`` and carries a ``graph``
leg entry (rank = distance), so a reader can tell retrieved chunks from context.
Hits keep their own score when they are also someone's neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import attrs

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.backends.protocol import NeighborsBackend, RetrievalBackend, neighbors_many
from retrieval_mcp.records import Hit, LegScore


@attrs.frozen
class ExpandRequest:
    hits: Sequence[Hit]
    window: int


class GraphExpander(RequestActor[ExpandRequest, list[Hit]]):
    def __init__(
        self, backend: RetrievalBackend, *, decay: float = 0.5, faults: FaultInjector | None = None
    ) -> None:
        super().__init__("expander", faults=faults)
        self._backend = cast(NeighborsBackend, backend)
        self._decay = decay

    async def handle(self, request: ExpandRequest) -> list[Hit]:
        # One engine call for every hit where the adapter batches (ADR 0025).
        found = await neighbors_many(
            self._backend,
            [h.chunk for h in request.hits],
            before=request.window,
            after=request.window,
        )
        self.faults.checkpoint(self.name)
        by_id: dict[str, Hit] = {h.chunk.id: h for h in request.hits}
        for hit, around in zip(request.hits, found, strict=True):
            for chunk in around:
                distance = abs(chunk.provenance.ordinal - hit.chunk.provenance.ordinal) or 1
                score = hit.score * self._decay**distance
                current = by_id.get(chunk.id)
                if current is None or (current.score < score and "graph" in current.legs):
                    by_id[chunk.id] = Hit(
                        chunk=chunk,
                        score=score,
                        legs={"graph": LegScore(rank=distance, score=score)},
                    )
        return sorted(by_id.values(), key=lambda h: (-h.score, h.chunk.id))
