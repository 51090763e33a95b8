"""Chaos: kill each actor type at every checkpoint of a request, in turn.

After each kill: the request ends within its deadline with a degraded answer or a
clear error, the supervisor restarts the actor, the next request is whole again, and
no job task or reply channel is left behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalOutcome, RetrievalRequest
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import RetrievalMCPError
from retrieval_mcp.settings import PipelineConfig
from tests.actors.scripted_backend import ScriptedBackend

D, B = Capability.DENSE, Capability.BM25
REQUEST = RetrievalRequest("q", top_k=3, expand=True, rerank=True, budget_tokens=200)
TIMEOUT = 5.0


def live_tasks() -> int:
    count = 0

    def walk(task: trio.lowlevel.Task) -> None:
        nonlocal count
        for nursery in task.child_nurseries:
            for child in nursery.child_tasks:
                count += 1
                walk(child)

    root = trio.lowlevel.current_root_task()
    assert root is not None
    walk(root)
    return count


@asynccontextmanager
async def chaos_pipeline() -> AsyncIterator[tuple[Pipeline, FaultInjector]]:
    backend = ScriptedBackend(
        {D: (0.01, ["a", "b"]), B: (0.01, ["b", "c"])},
        extra=frozenset({Capability.NEIGHBORS, Capability.VECTORS}),
    )
    faults = FaultInjector()
    cfg = PipelineConfig.model_validate({"request_timeout_s": TIMEOUT})
    pipeline = Pipeline(backend, cfg, lambda text: len(text.split()), faults=faults)
    async with trio.open_nursery() as nursery:
        await nursery.start(pipeline.run)
        yield pipeline, faults
        nursery.cancel_scope.cancel()


def actor_named(pipeline: Pipeline, name: str) -> RequestActor[Any, Any]:
    return next(a for a in pipeline.actors if a.name == name)


ACTORS = ["fetcher:dense", "fetcher:bm25", "fuser", "expander", "reranker", "packer"]


@pytest.mark.parametrize("name", ACTORS)
async def test_killing_an_actor_at_every_checkpoint(
    name: str, autojump_clock: trio.testing.MockClock
) -> None:
    async with chaos_pipeline() as (pipeline, faults):
        await trio.testing.wait_all_tasks_blocked()
        idle_tasks = live_tasks()
        faults.counts.clear()
        clean = await pipeline.retrieve(REQUEST)
        assert not clean.degraded
        checkpoints = faults.counts[name]
        assert checkpoints >= 3  # loop, job start, job end (and more inside some actors)
        actor = actor_named(pipeline, name)

        for nth in range(1, checkpoints + 1):
            restarts_before = actor.restarts
            faults.crash_at(name, nth)
            start = trio.current_time()
            result: RetrievalOutcome | RetrievalMCPError
            try:
                result = await pipeline.retrieve(REQUEST)
            except RetrievalMCPError as exc:
                result = exc
            assert trio.current_time() - start <= TIMEOUT, (name, nth)
            if isinstance(result, RetrievalOutcome):
                assert result.degraded, (name, nth)
                reasons = [r for _, r in result.legs_dropped + result.steps_skipped]
                assert "actor_restarted" in reasons, (name, nth, reasons)
            else:
                assert result.code == "actor_restarted", (name, nth, result)
            await trio.testing.wait_all_tasks_blocked()
            assert actor.restarts == restarts_before + 1
            await actor.wait_running()  # asked while down, it fails fast instead

            again = await pipeline.retrieve(REQUEST)  # served by the restarted actor
            assert not again.degraded, (name, nth)
            await trio.testing.wait_all_tasks_blocked()
            assert live_tasks() == idle_tasks, (name, nth)  # no job or reply left behind
            for stats in pipeline.statistics()["actors"].values():
                assert stats["in_flight"] == 0 and stats["queued"] == 0


async def test_crash_loop_backs_off(autojump_clock: trio.testing.MockClock) -> None:
    async with chaos_pipeline() as (pipeline, faults):
        actor = actor_named(pipeline, "fuser")
        start = trio.current_time()
        for _ in range(5):
            await actor.wait_running()
            faults.crash_at("fuser", 1)
            outcome = await pipeline.retrieve(REQUEST)
            assert ("fuse:rrf", "actor_restarted") in outcome.steps_skipped
        assert actor.restarts == 5
        # Backoff doubles: 0.05 + 0.1 + 0.2 + 0.4 (+0.8 pending) of waiting before restarts.
        assert trio.current_time() - start >= 0.75
