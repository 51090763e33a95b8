"""The fuser actor: combine whatever legs arrived into one ranking (RRF or DBSF)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.pipeline.fusion import (
    distribution_based_score_fusion,
    reciprocal_rank_fusion,
)
from retrieval_mcp.records import Candidate, Hit


@attrs.frozen
class FuseRequest:
    legs: Mapping[str, Sequence[Candidate]]
    limit: int


class Fuser(RequestActor[FuseRequest, list[Hit]]):
    def __init__(
        self,
        *,
        method: str = "rrf",
        rrf_k: int = 60,
        weights: Mapping[str, float] | None = None,
        faults: FaultInjector | None = None,
    ) -> None:
        super().__init__("fuser", faults=faults)
        self.method = method
        self._k = rrf_k
        self._weights = dict(weights or {})

    async def handle(self, request: FuseRequest) -> list[Hit]:
        if self.method == "dbsf":
            return distribution_based_score_fusion(
                request.legs, weights=self._weights, limit=request.limit
            )
        return reciprocal_rank_fusion(
            request.legs, k=self._k, weights=self._weights, limit=request.limit
        )
