"""The packer actor: hits → passages within a token budget, counted by the model's tokenizer."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.pipeline.packing import PackResult, TokenCounter, pack
from retrieval_mcp.records import Hit


@attrs.frozen
class PackRequest:
    hits: Sequence[Hit]
    budget_tokens: int
    ranked: Sequence[Hit] = ()  # the fused ranking, packed first in rank order


class Packer(RequestActor[PackRequest, PackResult]):
    def __init__(
        self,
        count_tokens: TokenCounter,
        *,
        floor: TokenCounter | None = None,
        faults: FaultInjector | None = None,
    ) -> None:
        super().__init__("packer", faults=faults)
        self._count = count_tokens
        self._floor = floor  # a lower bound on count_tokens, to skip counting (packing.py)

    async def handle(self, request: PackRequest) -> PackResult:
        result = pack(
            request.hits,
            budget_tokens=request.budget_tokens,
            count_tokens=self._count,
            ranked=request.ranked,
            floor=self._floor,
        )
        self.faults.checkpoint(self.name)
        return result
