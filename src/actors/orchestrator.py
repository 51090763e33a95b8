"""The orchestrator: plan a request from capabilities and config, drive it through the actors.

``Pipeline.retrieve`` runs under the caller's deadline (the dispatcher's one cancel
scope per tool call; ``trio.current_effective_deadline()``). It fans out to one fetcher
actor per planned leg, each bounded at the call site by ``move_on_at(min(leg limit,
steps deadline))``, then asks the fuser, the expander, the reranker and the packer in
turn, each bounded the same way. The steps deadline is the request deadline less
``pipeline.answer_reserve_s``: optional work stops that much early, so a degraded
answer is assembled inside the request deadline instead of being cancelled with it.
Any leg or step that fails, runs late, or finds its actor down is dropped and reported,
and its fallback is the previous step's output (the packer's: packing inline); the
request degrades instead of failing while at least one leg answers. ``Pipeline.run``
owns the actors through a Supervisor; the pipeline is itself one child of the server's
supervision tree (``services.open_services``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

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
    UnsupportedRerank,
)
from retrieval_mcp.actors.supervisor import Supervisor
from retrieval_mcp.backends.protocol import (
    LEGS,
    Capability,
    LegQuery,
    RetrievalBackend,
    SearchFilter,
    late_payloads,
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
from retrieval_mcp.pipeline.packing import PackResult, TokenCounter, pack
from retrieval_mcp.records import Candidate, Hit, LegScore
from retrieval_mcp.screening.chunk_flags import chunk_flags
from retrieval_mcp.settings import PipelineConfig

log = structlog.get_logger(__name__)

Req = TypeVar("Req")
Rep = TypeVar("Rep")


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


async def ask_by(actor: RequestActor[Req, Rep], request: Req, deadline: float) -> Rep:
    """``actor.ask(request)`` bounded at the call site: StepTimeout once ``deadline``
    passes (the job is cancelled with the scope)."""
    with trio.move_on_at(deadline):
        return await actor.ask(request)
    raise StepTimeout(f"{actor.name} ran past its deadline")


def _reason(exc: RetrievalMCPError) -> str:
    if isinstance(exc, ActorRestarted):
        return "actor_restarted"
    if isinstance(exc, StepTimeout):
        return "timeout"
    return f"error:{exc.code}"


def build_rerank_strategy(backend: RetrievalBackend, config: PipelineConfig) -> RerankStrategy:
    """The configured strategy, or ``UnsupportedRerank`` when this backend cannot serve it
    (MMR needs stored vectors): reported as skipped ``unsupported``, never silently
    turned into no rerank."""
    rerank = config.rerank
    if rerank.kind == "mmr":
        if Capability.VECTORS in backend.capabilities():
            return MMRRerank(backend, lambda_=rerank.mmr_lambda)
        return UnsupportedRerank("mmr", f"backend {backend.name} stores no vectors")
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
        token_floor: TokenCounter | None = None,
        rerank_strategy: RerankStrategy | None = None,
        faults: FaultInjector | None = None,
        observe_leg: Callable[[str, float], None] | None = None,
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
        self.packer = Packer(count_tokens, floor=token_floor, faults=self.faults)
        self._count_tokens = count_tokens
        self._token_floor = token_floor
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
        # Legs return ids and ranks only; payloads are read for the fused top-k.
        self.late_payloads = late_payloads(backend)
        #: Told each leg's first-stage latency (seconds), answered or not: /metrics.
        # Called with (leg, seconds) after every fetch, whatever its outcome (metrics).
        self.observe_leg = observe_leg

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await self.supervisor.run(task_status=task_status)
        finally:
            if self._owns_strategy:
                with trio.CancelScope(shield=True), trio.move_on_after(2):
                    await self.reranker.strategy.aclose()

    def states(self) -> dict[str, dict[str, Any]]:
        return self.supervisor.states()

    def steps_deadline(self) -> float:
        """When optional work must stop: the caller's deadline less the answer reserve
        (infinite when the caller set none; legs and rerank keep their own limits)."""
        return trio.current_effective_deadline() - self.config.answer_reserve_s

    async def pack(
        self, hits: list[Hit], budget_tokens: int, ranked: Sequence[Hit] = ()
    ) -> tuple[PackResult, tuple[str, str] | None]:
        """Pack ``ranked`` in rank order, then ``hits``, by the packer actor; if it is
        down, fails or runs late, pack inline (pure and bounded by the budget) and
        return the skipped step too."""
        try:
            packed = await ask_by(
                self.packer,
                PackRequest(hits=hits, budget_tokens=budget_tokens, ranked=ranked),
                self.steps_deadline(),
            )
        except RetrievalMCPError as exc:
            log.warning("pack_inline", reason=_reason(exc))
            inline = pack(
                hits,
                budget_tokens=budget_tokens,
                count_tokens=self._count_tokens,
                ranked=ranked,
                floor=self._token_floor,
            )
            return inline, ("pack", _reason(exc))
        return packed, None

    def statistics(self) -> dict[str, Any]:
        return {
            "legs_planned": [leg.value for leg in self.planned],
            "actors": {actor.name: actor.statistics() for actor in self.actors},
        }

    async def retrieve(self, request: RetrievalRequest) -> RetrievalOutcome:
        """Run one request under the caller's deadline (see the module docstring)."""
        config = self.config
        deadline = self.steps_deadline()
        if not self.planned:
            raise NoLegsAnswered(f"backend {self.backend.name} declares no enabled leg")
        arrived, dropped = await self._fetch(request, deadline)
        dropped = [(leg.value, "unsupported") for leg in self.unsupported] + dropped
        steps = [f"fetch:{leg}" for leg in arrived]
        skipped: list[tuple[str, str]] = []
        packing = request.budget_tokens is not None
        # A pack reads the ranking deeper than top_k: its rank-order fill needs enough
        # chunks to fill the budget (packing.py); expansion and rerank see only top_k.
        keep = max(request.top_k, config.pack.rank_depth) if packing else request.top_k
        limit = keep + len(request.exclude_ids)

        hits: list[Hit]
        try:
            hits = await ask_by(self.fuser, FuseRequest(legs=arrived, limit=limit), deadline)
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
            hits = [h for h in hits if h.chunk.id not in request.exclude_ids][:keep]
        if self.late_payloads and hits:
            hits = await self._with_payloads(hits)

        verdict = apply_guard(hits, self.guard)
        steps.append("guard")
        ranked: list[Hit] = []
        if packing:
            ranked = list(verdict.passed)  # get_context filters; search only annotates
            hits = ranked[: request.top_k]

        if request.expand:
            if self.expander is None:
                skipped.append(("expand", "unsupported"))
            elif config.expand.window > 0 and hits:
                try:
                    hits = await ask_by(
                        self.expander,
                        ExpandRequest(hits=hits, window=config.expand.window),
                        deadline,
                    )
                    steps.append("expand")
                except RetrievalMCPError as exc:
                    skipped.append(("expand", _reason(exc)))

        strategy = self.reranker.strategy
        if request.rerank and strategy.name != "none" and hits:
            name = f"rerank:{strategy.name}"
            if isinstance(strategy, UnsupportedRerank):
                skipped.append((name, "unsupported"))
            else:
                try:
                    hits = await ask_by(
                        self.reranker,
                        RerankRequest(query=request.text, hits=hits, limit=len(hits)),
                        min(deadline, trio.current_time() + config.rerank.timeout_s),
                    )
                    steps.append(name)
                except RetrievalMCPError as exc:
                    skipped.append((name, _reason(exc)))

        withheld = 0
        if request.withhold_flagged:
            flagged = {h.chunk.id for h in (*hits, *ranked) if chunk_flags(h.chunk)}
            withheld = len(flagged)
            hits = [h for h in hits if h.chunk.id not in flagged]
            ranked = [h for h in ranked if h.chunk.id not in flagged]
            steps.append("quarantine")

        packed = None
        if packing:
            assert request.budget_tokens is not None
            packed, pack_skipped = await self.pack(hits, request.budget_tokens, ranked)
            if pack_skipped is None:
                steps.append("pack")
            else:
                skipped.append(pack_skipped)
                steps.append("pack:inline")
        if packing:  # every chunk the pack may hold, so its passages keep their flags
            listed = {h.chunk.id for h in hits}
            hits = hits + [h for h in ranked if h.chunk.id not in listed]
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

    async def _with_payloads(self, hits: list[Hit]) -> list[Hit]:
        """The fused hits with their chunks read by id (the legs returned ids only); a
        chunk deleted since its leg ran is left out."""
        chunks = {c.id: c for c in await self.backend.fetch([h.chunk.id for h in hits])}
        return [attrs.evolve(h, chunk=chunks[h.chunk.id]) for h in hits if h.chunk.id in chunks]

    async def _fetch(
        self, request: RetrievalRequest, deadline: float
    ) -> tuple[dict[str, list[Candidate]], list[tuple[str, str]]]:
        results: dict[Capability, list[Candidate] | RetrievalMCPError] = {}

        async def fetch(leg: Capability) -> None:
            leg_config = getattr(self.config.legs, leg.value)
            query = LegQuery(
                leg=leg,
                text=request.text,
                limit=max(leg_config.candidates, request.top_k + len(request.exclude_ids)),
                sources=request.sources,
                filter=request.filter,
                payloads=not self.late_payloads,
            )
            leg_deadline = min(deadline, trio.current_time() + leg_config.timeout_s)
            started = trio.current_time()
            try:
                candidates = await ask_by(self.fetchers[leg], query, leg_deadline)
            except RetrievalMCPError as exc:
                results[leg] = exc
            else:
                results[leg] = candidates
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
