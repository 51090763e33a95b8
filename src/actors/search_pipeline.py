"""Search pipeline v0: every declared leg concurrently, each under its own deadline, then RRF.

One nursery per request: a leg that raises or runs past ``leg_timeout_s`` is dropped
and reported, the others still answer. Cancelling the request (the client went away)
cancels every leg. The actor-pipeline issue replaces the body with supervised actors
behind the same ``SearchPipeline.run`` seam.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import attrs
import structlog
import trio

from retrieval_mcp.backends.protocol import (
    LEGS,
    Capability,
    LegQuery,
    RetrievalBackend,
    SearchFilter,
)
from retrieval_mcp.errors import InvalidArgument, NoLegsAnswered, RetrievalMCPError
from retrieval_mcp.pipeline.fusion import reciprocal_rank_fusion
from retrieval_mcp.records import Candidate, Hit

log = structlog.get_logger(__name__)


@attrs.frozen
class SearchRequest:
    text: str
    top_k: int
    sources: tuple[str, ...] = ()
    filter: SearchFilter | None = None


@attrs.frozen
class LegOutcome:
    leg: Capability
    candidates: tuple[Candidate, ...] = ()
    dropped_reason: str | None = None
    error: RetrievalMCPError | None = None
    took_ms: float = 0.0


@attrs.frozen
class SearchOutcome:
    hits: list[Hit]
    steps_run: list[str]
    legs_used: list[str]
    legs_dropped: list[tuple[str, str]]


@attrs.frozen
class PipelineSettings:
    candidates_per_leg: int = 50
    leg_timeout_s: float = 2.0
    rrf_k: int = 60
    weights: Mapping[str, float] | None = None


class SearchPipeline:
    """Plans legs from the backend's declaration and runs them for each request."""

    def __init__(self, backend: RetrievalBackend, settings: PipelineSettings) -> None:
        self._backend = backend
        self._settings = settings

    def plan(self) -> tuple[Capability, ...]:
        declared = self._backend.capabilities()
        return tuple(leg for leg in LEGS if leg in declared)

    async def run(self, request: SearchRequest) -> SearchOutcome:
        legs = self.plan()
        if not legs:
            raise NoLegsAnswered(f"backend {self._backend.name} declares no retrieval leg")
        outcomes: dict[Capability, LegOutcome] = {}
        async with trio.open_nursery() as nursery:
            for leg in legs:
                nursery.start_soon(self._run_leg, leg, request, outcomes)
        # Report in plan order, not completion order, so metadata is deterministic.
        ordered = [outcomes[leg] for leg in legs]
        arrived = {o.leg.value: o.candidates for o in ordered if o.dropped_reason is None}
        dropped = [(o.leg.value, o.dropped_reason) for o in ordered if o.dropped_reason is not None]
        if not arrived:
            errors = [o.error for o in outcomes.values() if o.error is not None]
            caller_faults = [e for e in errors if isinstance(e, InvalidArgument)]
            if caller_faults and len(caller_faults) == len(outcomes):
                raise caller_faults[0]
            reasons = ", ".join(f"{leg}: {why}" for leg, why in dropped)
            raise NoLegsAnswered(f"no retrieval leg answered ({reasons})")
        steps = [f"fetch:{leg}" for leg in arrived]
        if len(arrived) > 1:
            steps.append("fuse:rrf")
        hits = reciprocal_rank_fusion(
            arrived,
            k=self._settings.rrf_k,
            weights=self._settings.weights,
            limit=request.top_k,
        )
        return SearchOutcome(
            hits=hits,
            steps_run=steps,
            legs_used=list(arrived),
            legs_dropped=dropped,
        )

    async def _run_leg(
        self, leg: Capability, request: SearchRequest, outcomes: dict[Capability, LegOutcome]
    ) -> None:
        started = time.perf_counter()
        query = LegQuery(
            leg=leg,
            text=request.text,
            limit=max(self._settings.candidates_per_leg, request.top_k),
            sources=request.sources,
            filter=request.filter,
        )
        outcome = LegOutcome(leg=leg, dropped_reason="timeout")
        with trio.move_on_after(self._settings.leg_timeout_s):
            try:
                candidates = await self._backend.search(query)
            except RetrievalMCPError as exc:
                log.warning("leg_failed", leg=leg.value, code=exc.code, error=exc.message)
                outcome = LegOutcome(leg=leg, dropped_reason=f"error:{exc.code}", error=exc)
            except Exception as exc:  # a bug in an adapter must not fail the request
                log.exception("leg_crashed", leg=leg.value)
                error = RetrievalMCPError(f"{leg.value} leg crashed: {type(exc).__name__}")
                outcome = LegOutcome(leg=leg, dropped_reason="error:internal_error", error=error)
            else:
                outcome = LegOutcome(leg=leg, candidates=tuple(candidates))
        took = (time.perf_counter() - started) * 1000
        outcomes[leg] = attrs.evolve(outcome, took_ms=took)
        if outcome.dropped_reason == "timeout":
            log.warning("leg_timeout", leg=leg.value, timeout_s=self._settings.leg_timeout_s)
