"""The orchestrator: plan a request from capabilities and config, drive it through the actors.

``Pipeline.retrieve`` fans out to one fetcher actor per planned leg (each under its own
deadline, capped by the request's), then asks the fuser, the expander, the reranker
and the packer in turn. Any leg or optional step that fails, runs late or loses its
actor is dropped and reported; the request degrades instead of failing while at least
one leg answers. ``Pipeline.run`` owns the actors through a Supervisor; the pipeline is
itself one child of the server's supervision tree (``services.open_services``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import structlog
import trio

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.actors.fuser import Fuser, FuseRequest
from retrieval_mcp.actors.graph_expander import ExpandRequest, GraphExpander
from retrieval_mcp.actors.leg_fetcher import LegFetcher
from retrieval_mcp.actors.packer import Packer, PackRequest
from retrieval_mcp.actors.reranker import (
    CrossEncoderRerank,
    HttpRerank,
    MMRRerank,
    NoRerank,
    Reranker,
    RerankRequest,
    RerankStrategy,
)
from retrieval_mcp.actors.supervisor import Supervisor
from retrieval_mcp.backends.protocol import (
    LEGS,
    Capability,
    LegQuery,
    RetrievalBackend,
    SearchFilter,
    unavailable_legs,
)
from retrieval_mcp.errors import (
    ActorRestarted,
    InvalidArgument,
    NoLegsAnswered,
    RetrievalMCPError,
    StepTimeout,
)
from retrieval_mcp.pipeline.guard import GuardSettings, GuardVerdict, apply_guard
from retrieval_mcp.pipeline.packing import PackResult, TokenCounter
from retrieval_mcp.records import Candidate, Hit, LegScore
from retrieval_mcp.screening.chunk_flags import chunk_flags
from retrieval_mcp.settings import PipelineConfig

log = structlog.get_logger(__name__)


@attrs.frozen
class RetrievalRequest:
    text: str
    top_k: int
    sources: tuple[str, ...] = ()
    filter: SearchFilter | None = None
    expand: bool = False
    rerank: bool = False
    budget_tokens: int | None = None  # pack into passages when set
    exclude_ids: frozenset[str] = frozenset()
    withhold_flagged: bool = False  # quarantine chunks the injection screen flagged


@attrs.frozen
class RetrievalOutcome:
    hits: list[Hit]
    guard: GuardVerdict
    steps_run: list[str]
    legs_used: list[str]
    legs_dropped: list[tuple[str, str]]
    steps_skipped: list[tuple[str, str]]
    packed: PackResult | None = None
    withheld: int = 0

    @property
    def degraded(self) -> bool:
        return bool(self.legs_dropped or self.steps_skipped)


def _reason(exc: RetrievalMCPError) -> str:
    if isinstance(exc, ActorRestarted):
        return "actor_restarted"
    if isinstance(exc, StepTimeout):
        return "timeout"
    return f"error:{exc.code}"


def build_rerank_strategy(backend: RetrievalBackend, config: PipelineConfig) -> RerankStrategy:
    rerank = config.rerank
    if rerank.kind == "mmr" and Capability.VECTORS in backend.capabilities():
        return MMRRerank(backend, lambda_=rerank.mmr_lambda)
    if rerank.kind == "http":
        return HttpRerank(rerank.http_url, api=rerank.http_api, model=rerank.http_model)
    if rerank.kind == "cross-encoder":
        return CrossEncoderRerank(rerank.cross_encoder_path)
    return NoRerank()


class Pipeline:
    """Owns the actors; ``run`` must be started (``nursery.start``) before ``retrieve``.

    A ``rerank_strategy`` passed in belongs to the caller (the composition root closes
    it); one the pipeline builds from config is closed when ``run`` ends.
    """

    name = "pipeline"

    def __init__(
        self,
        backend: RetrievalBackend,
        config: PipelineConfig,
        count_tokens: TokenCounter,
        *,
        rerank_strategy: RerankStrategy | None = None,
        faults: FaultInjector | None = None,
    ) -> None:
        self.backend = backend
        self.config = config
        self.faults = faults or FaultInjector()
        declared = backend.capabilities()
        legs_config = config.legs
        self.planned: list[Capability] = []
        self.unsupported: list[Capability] = []
        for leg in LEGS:
            mode = getattr(legs_config, leg.value).mode
            if mode == "off":
                continue
            if leg in declared:
                self.planned.append(leg)
            elif mode == "on":
                self.unsupported.append(leg)
        for gap in unavailable_legs(backend):  # e.g. the dense model is not installed
            mode = getattr(legs_config, gap.leg.value).mode
            if mode != "off" and gap.leg not in self.unsupported:
                self.unsupported.append(gap.leg)
        self.fetchers = {leg: LegFetcher(leg, backend, faults=self.faults) for leg in self.planned}
        weights = {leg.value: getattr(legs_config, leg.value).weight for leg in LEGS}
        self.fuser = Fuser(
            method=config.fusion, rrf_k=config.rrf_k, weights=weights, faults=self.faults
        )
        self.expander = (
            GraphExpander(backend, decay=config.expand.decay, faults=self.faults)
            if Capability.NEIGHBORS in declared
            else None
        )
        self.restarts = 0
        self._owns_strategy = rerank_strategy is None
        strategy = rerank_strategy or build_rerank_strategy(backend, config)
        self.reranker = Reranker(strategy, faults=self.faults)
        self.packer = Packer(count_tokens, faults=self.faults)
        actors: list[RequestActor[Any, Any]] = [
            *self.fetchers.values(),
            self.fuser,
            self.reranker,
            self.packer,
        ]
        if self.expander is not None:
            actors.append(self.expander)
        self.actors = actors
        self.supervisor = Supervisor(actors, name="pipeline")
        self.guard = GuardSettings(min_score=config.guard.min_score, alpha=config.guard.alpha)
        #: Told each leg's first-stage latency (seconds), answered or not: /metrics.
        self.observe_leg: Callable[[str, float], None] | None = None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await self.supervisor.run(task_status=task_status)
        finally:
            if self._owns_strategy:
                with trio.CancelScope(shield=True), trio.move_on_after(2):
                    await self.reranker.strategy.aclose()

    def states(self) -> dict[str, dict[str, Any]]:
        return self.supervisor.states()

    def deadline_from_now(self) -> float:
        return trio.current_time() + self.config.request_timeout_s

    def statistics(self) -> dict[str, Any]:
        return {
            "legs_planned": [leg.value for leg in self.planned],
            "actors": {actor.name: actor.statistics() for actor in self.actors},
        }

    async def retrieve(self, request: RetrievalRequest) -> RetrievalOutcome:
        config = self.config
        deadline = self.deadline_from_now()
        if not self.planned:
            raise NoLegsAnswered(f"backend {self.backend.name} declares no enabled leg")
        arrived, dropped = await self._fetch(request, deadline)
        dropped = [(leg.value, "unsupported") for leg in self.unsupported] + dropped
        steps = [f"fetch:{leg}" for leg in arrived]
        skipped: list[tuple[str, str]] = []
        limit = request.top_k + len(request.exclude_ids)

        hits: list[Hit]
        try:
            hits = await self.fuser.ask(FuseRequest(legs=arrived, limit=limit), deadline=deadline)
            if len(arrived) > 1:
                steps.append(f"fuse:{config.fusion}")
        except RetrievalMCPError as exc:
            # Fall back on the first leg that answered, in plan order.
            skipped.append((f"fuse:{config.fusion}", _reason(exc)))
            first = next(iter(arrived.values()))
            hits = [
                Hit(
                    chunk=c.chunk,
                    score=1.0 / (config.rrf_k + c.rank),
                    legs={next(iter(arrived)): _leg_score(c)},
                )
                for c in first[:limit]
            ]
        if request.exclude_ids:
            hits = [h for h in hits if h.chunk.id not in request.exclude_ids][: request.top_k]

        verdict = apply_guard(hits, self.guard)
        steps.append("guard")
        packing = request.budget_tokens is not None
        if packing:
            hits = list(verdict.passed)  # get_context filters; search only annotates

        if request.expand:
            if self.expander is None:
                skipped.append(("expand", "unsupported"))
            elif config.expand.window > 0 and hits:
                try:
                    hits = await self.expander.ask(
                        ExpandRequest(hits=hits, window=config.expand.window), deadline=deadline
                    )
                    steps.append("expand")
                except RetrievalMCPError as exc:
                    skipped.append(("expand", _reason(exc)))

        if request.rerank and self.reranker.strategy.name != "none" and hits:
            name = f"rerank:{self.reranker.strategy.name}"
            try:
                hits = await self.reranker.ask(
                    RerankRequest(query=request.text, hits=hits, limit=len(hits)),
                    deadline=min(deadline, trio.current_time() + config.rerank.timeout_s),
                )
                steps.append(name)
            except RetrievalMCPError as exc:
                skipped.append((name, _reason(exc)))

        withheld = 0
        if request.withhold_flagged:
            kept = [h for h in hits if not chunk_flags(h.chunk)]
            withheld = len(hits) - len(kept)
            hits = kept
            steps.append("quarantine")

        packed = None
        if packing:
            assert request.budget_tokens is not None
            packed = await self.packer.ask(
                PackRequest(hits=hits, budget_tokens=request.budget_tokens), deadline=deadline
            )
            steps.append("pack")
        return RetrievalOutcome(
            hits=hits,
            guard=verdict,
            steps_run=steps,
            legs_used=list(arrived),
            legs_dropped=dropped,
            steps_skipped=skipped,
            packed=packed,
            withheld=withheld,
        )

    async def _fetch(
        self, request: RetrievalRequest, deadline: float
    ) -> tuple[dict[str, list[Candidate]], list[tuple[str, str]]]:
        results: dict[Capability, list[Candidate] | RetrievalMCPError] = {}

        async def fetch(leg: Capability) -> None:
            leg_config = getattr(self.config.legs, leg.value)
            leg_deadline = min(deadline, trio.current_time() + leg_config.timeout_s)
            query = LegQuery(
                leg=leg,
                text=request.text,
                limit=max(leg_config.candidates, request.top_k + len(request.exclude_ids)),
                sources=request.sources,
                filter=request.filter,
            )
            started = trio.current_time()
            try:
                with trio.move_on_at(leg_deadline):
                    try:
                        results[leg] = await self.fetchers[leg].ask(query, deadline=leg_deadline)
                    except RetrievalMCPError as exc:
                        results[leg] = exc
                    return
                results[leg] = StepTimeout(f"{leg.value} leg ran past its deadline")
            finally:
                if self.observe_leg is not None:
                    self.observe_leg(leg.value, trio.current_time() - started)

        async with trio.open_nursery() as nursery:
            for leg in self.planned:
                nursery.start_soon(fetch, leg, name=f"fetch:{leg.value}")

        arrived: dict[str, list[Candidate]] = {}
        dropped: list[tuple[str, str]] = []
        errors: list[RetrievalMCPError] = []
        for leg in self.planned:  # report in plan order, not completion order
            result = results[leg]
            if isinstance(result, RetrievalMCPError):
                dropped.append((leg.value, _reason(result)))
                errors.append(result)
                log.warning("leg_dropped", leg=leg.value, reason=_reason(result))
            else:
                arrived[leg.value] = result
        if not arrived:
            caller_faults = [e for e in errors if isinstance(e, InvalidArgument)]
            if caller_faults and len(caller_faults) == len(errors):
                raise caller_faults[0]
            reasons = ", ".join(f"{leg}: {why}" for leg, why in dropped)
            raise NoLegsAnswered(f"no retrieval leg answered ({reasons})")
        return arrived, dropped


def _leg_score(candidate: Candidate) -> LegScore:
    return LegScore(rank=candidate.rank, score=candidate.score)
