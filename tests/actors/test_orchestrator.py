"""Leg composition, deadlines and degradation through the real actors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalRequest
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import BackendUnavailable, InvalidArgument, NoLegsAnswered
from retrieval_mcp.settings import PipelineConfig
from tests.actors.scripted_backend import ScriptedBackend

D, B = Capability.DENSE, Capability.BM25


def config(**overrides: Any) -> PipelineConfig:
    base: dict[str, Any] = {
        "request_timeout_s": 5.0,
        "legs": {
            "dense": {"timeout_s": 1.0, "candidates": 20},
            "bm25": {"timeout_s": 1.0, "candidates": 20},
        },
    }
    base.update(overrides)
    return PipelineConfig.model_validate(base)


@asynccontextmanager
async def running(
    backend: ScriptedBackend, cfg: PipelineConfig | None = None
) -> AsyncIterator[Pipeline]:
    pipeline = Pipeline(backend, cfg or config(), lambda text: len(text.split()))
    async with trio.open_nursery() as nursery:
        await nursery.start(pipeline.run)
        yield pipeline
        nursery.cancel_scope.cancel()


async def test_plan_uses_declared_legs_in_preferred_order() -> None:
    backend = ScriptedBackend({B: (0, ["a"]), D: (0, ["b"])})
    async with running(backend) as pipeline:
        assert pipeline.planned == [D, B]
        outcome = await pipeline.retrieve(RetrievalRequest("q", top_k=5))
    assert outcome.legs_used == ["dense", "bm25"]
    assert outcome.steps_run == ["fetch:dense", "fetch:bm25", "fuse:rrf", "guard"]
    assert not outcome.degraded
    assert {q.leg for q in backend.queries} == {D, B}
    assert all(q.limit == 20 for q in backend.queries)


async def test_leg_modes_off_and_required_but_missing() -> None:
    backend = ScriptedBackend({B: (0, ["a"]), D: (0, ["b"])})
    cfg = config(legs={"bm25": {"mode": "off"}, "sparse": {"mode": "on"}})
    async with running(backend, cfg) as pipeline:
        outcome = await pipeline.retrieve(RetrievalRequest("q", top_k=5))
    assert outcome.legs_used == ["dense"]
    assert outcome.legs_dropped == [("sparse", "unsupported")]
    assert outcome.degraded


async def test_legs_run_concurrently(autojump_clock: trio.testing.MockClock) -> None:
    backend = ScriptedBackend({D: (0.6, ["a"]), B: (0.6, ["b"])})
    async with running(backend) as pipeline:
        start = trio.current_time()
        await pipeline.retrieve(RetrievalRequest("q", top_k=5))
        assert trio.current_time() - start == pytest.approx(0.6)


async def test_late_leg_is_dropped_on_time(autojump_clock: trio.testing.MockClock) -> None:
    backend = ScriptedBackend({D: (5.0, ["a"]), B: (0.1, ["b"])})
    async with running(backend) as pipeline:
        start = trio.current_time()
        outcome = await pipeline.retrieve(RetrievalRequest("q", top_k=5))
        assert trio.current_time() - start == pytest.approx(1.0)  # the leg's deadline only
        await trio.testing.wait_all_tasks_blocked()
    assert [h.chunk.id for h in outcome.hits] == ["b"]
    assert outcome.legs_dropped == [("dense", "timeout")]
    assert outcome.steps_run == ["fetch:bm25", "guard"]
    assert outcome.degraded
    assert backend.cancelled == [D]  # the late work was stopped, not left running


async def test_request_deadline_caps_every_leg(autojump_clock: trio.testing.MockClock) -> None:
    backend = ScriptedBackend({D: (9.0, ["a"]), B: (0.1, ["b"])})
    cfg = config()
    async with running(backend, cfg) as pipeline:
        start = trio.current_time()
        # The caller's deadline (the dispatcher's scope in the server) caps every leg;
        # the steps stop the answer reserve before it, so the answer is in time.
        with trio.CancelScope(deadline=start + 0.5):
            outcome = await pipeline.retrieve(RetrievalRequest("q", top_k=5))
        assert trio.current_time() - start == pytest.approx(0.5 - cfg.answer_reserve_s)
    assert outcome.legs_dropped == [("dense", "timeout")]


async def test_failing_leg_is_dropped_with_its_code() -> None:
    backend = ScriptedBackend({D: (0, BackendUnavailable("down")), B: (0, ["b", "c"])})
    async with running(backend) as pipeline:
        outcome = await pipeline.retrieve(RetrievalRequest("q", top_k=1))
    assert [h.chunk.id for h in outcome.hits] == ["b"]
    assert outcome.legs_dropped == [("dense", "error:backend_unavailable")]


async def test_crashing_adapter_does_not_fail_the_request() -> None:
    backend = ScriptedBackend({D: (0, ZeroDivisionError()), B: (0, ["b"])})
    async with running(backend) as pipeline:
        outcome = await pipeline.retrieve(RetrievalRequest("q", top_k=3))
        assert outcome.legs_dropped == [("dense", "error:internal_error")]
        assert pipeline.fetchers[D].restarts == 0  # one bad job is not an actor crash


async def test_no_leg_answering_is_a_clear_error_not_a_hang(
    autojump_clock: trio.testing.MockClock,
) -> None:
    backend = ScriptedBackend({D: (9, ["a"]), B: (0, OSError())})
    async with running(backend) as pipeline:
        start = trio.current_time()
        with pytest.raises(NoLegsAnswered, match=r"dense: timeout.*bm25: error:internal_error"):
            await pipeline.retrieve(RetrievalRequest("q", top_k=3))
        assert trio.current_time() - start == pytest.approx(1.0)


async def test_caller_fault_in_every_leg_is_reported_as_such() -> None:
    bad = InvalidArgument("bad filter")
    backend = ScriptedBackend({D: (0, bad), B: (0, bad)})
    async with running(backend) as pipeline:
        with pytest.raises(InvalidArgument, match="bad filter"):
            await pipeline.retrieve(RetrievalRequest("q", top_k=3))


async def test_cancelling_the_request_cancels_every_leg(
    autojump_clock: trio.testing.MockClock,
) -> None:
    backend = ScriptedBackend({D: (0.9, ["a"]), B: (0.9, ["b"])})
    async with running(backend) as pipeline:

        async def client_goes_away(scope: trio.CancelScope) -> None:
            await trio.sleep(0.5)
            scope.cancel()

        with trio.CancelScope() as request:  # cancelled, not timed out: no deadline
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client_goes_away, request)
                await pipeline.retrieve(RetrievalRequest("q", top_k=3))
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(backend.cancelled) == [B, D]
        assert all(f.in_flight == 0 for f in pipeline.fetchers.values())


async def test_full_pipeline_expands_reranks_and_packs() -> None:
    backend = ScriptedBackend(
        {D: (0, ["a", "b"]), B: (0, ["b", "c"])},
        extra=frozenset({Capability.NEIGHBORS, Capability.VECTORS}),
    )
    async with running(backend) as pipeline:
        outcome = await pipeline.retrieve(
            RetrievalRequest("q", top_k=3, expand=True, rerank=True, budget_tokens=100)
        )
    assert outcome.steps_run == [
        "fetch:dense",
        "fetch:bm25",
        "fuse:rrf",
        "guard",
        "expand",
        "rerank:mmr",
        "pack",
    ]
    assert outcome.packed is not None and outcome.packed.tokens_used <= 100
    ids = {cid for p in outcome.packed.passages for cid in p.chunk_ids}
    assert {"a", "b", "c", "b+1"} <= ids  # neighbours came in


async def test_expand_without_neighbour_support_is_reported() -> None:
    backend = ScriptedBackend({D: (0, ["a"])}, extra=frozenset())
    async with running(backend) as pipeline:
        outcome = await pipeline.retrieve(RetrievalRequest("q", top_k=3, expand=True))
    assert outcome.steps_skipped == [("expand", "unsupported")]


async def test_backend_without_legs_is_refused() -> None:
    async with running(ScriptedBackend({})) as pipeline:
        with pytest.raises(NoLegsAnswered, match="declares no enabled leg"):
            await pipeline.retrieve(RetrievalRequest("q", top_k=3))
