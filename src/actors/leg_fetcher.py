"""One fetcher actor per retrieval leg: first-stage search for one modality.

The adapter encodes the query for its leg (design/decisions/0006), so the cost of
encoding is charged to the leg that needs it and a slow encoder drops only that leg.
"""

from __future__ import annotations

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.backends.protocol import Capability, LegQuery, RetrievalBackend
from retrieval_mcp.records import Candidate


class LegFetcher(RequestActor[LegQuery, list[Candidate]]):
    def __init__(
        self, leg: Capability, backend: RetrievalBackend, *, faults: FaultInjector | None = None
    ) -> None:
        super().__init__(f"fetcher:{leg.value}", faults=faults)
        self.leg = leg
        self._backend = backend

    async def handle(self, request: LegQuery) -> list[Candidate]:
        candidates = await self._backend.search(request)
        self.faults.checkpoint(self.name)
        return candidates
