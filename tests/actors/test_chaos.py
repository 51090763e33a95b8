"""Chaos: every actor killed at every checkpoint, and held down through its backoff.

The whole tool surface runs through the real ``ToolDispatcher`` (one cancel scope per
call with the request deadline), the real tools and the real actors in one supervision
tree, over a scripted backend, under ``autojump_clock``. For each actor type — both
fetchers, the fuser, the expander, the reranker, the packer and the WAL writer — the
test kills it at each checkpoint a round of tool calls passes, then keeps it down (it
dies again at every restart) while every tool is called again. Every answer must
arrive no later than the request deadline (virtual time: a scheduler tick takes none),
be a success (degraded where a step was lost) or a clear error with a remedy, and
leave no task, queued job or open reply channel behind.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.actors.orchestrator import Pipeline
from retrieval_mcp.actors.reranker import CrossEncoderRerank, RerankStrategy
from retrieval_mcp.actors.supervisor import Child, Supervisor
from retrieval_mcp.actors.wal_writer import WalWriter, open_segment_log, run_inline
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.mcp_surface.copy_reload import render_registry
from retrieval_mcp.mcp_surface.dispatch import ToolDispatcher
from retrieval_mcp.mcp_surface.registry import RegistryHolder
from retrieval_mcp.mcp_surface.session_log import SessionRecorder
from retrieval_mcp.services import tool_handlers
from retrieval_mcp.settings import Settings, load_settings
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir
from retrieval_mcp.transport.caller import Caller
from tests.actors.scripted_backend import ScriptedBackend

D, B = Capability.DENSE, Capability.BM25
TIMEOUT = 5.0
CALLER = Caller(token_name="chaos")
TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "q", "top_k": 3}),
    ("get_context", {"query": "q", "top_k": 3, "budget_tokens": 200}),
    ("get_context", {"ids": ["a", "b"], "budget_tokens": 200}),
    ("more_like_this", {"chunk_id": "a", "top_k": 3}),
    ("expand_neighbors", {"chunk_id": "a"}),
    ("list_sources", {}),
    ("index_status", {}),
]
PIPELINE_ACTORS = ["fetcher:dense", "fetcher:bm25", "fuser", "expander", "reranker", "packer"]
#: The codes a tool may answer with while an actor is dead: each names what to do next.
CLEAR_ERRORS = {"actor_restarted", "no_legs_answered", "timeout"}


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


class ChannelRecorder:
    """Stands in for ``trio.open_memory_channel`` and keeps every pair it opens."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.pairs: list[tuple[Any, Any]] = []

    def __getitem__(self, _: object) -> ChannelRecorder:
        return self

    def __call__(self, size: float) -> Any:
        pair = self._real(size)
        self.pairs.append(pair)
        return pair

    def open_ends(self) -> int:
        return sum(
            send.statistics().open_send_channels + send.statistics().open_receive_channels
            for send, _ in self.pairs
        )


@attrs.define
class Rig:
    settings: Settings
    backend: ScriptedBackend
    faults: FaultInjector
    pipeline: Pipeline
    wal: WalWriter
    tree: Supervisor
    dispatcher: ToolDispatcher
    sessions: SessionRecorder

    def actor(self, name: str) -> RequestActor[Any, Any]:
        return next(a for a in self.pipeline.actors if a.name == name)

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], float]:
        start = trio.current_time()
        result = await self.dispatcher.call(name, arguments, CALLER)
        elapsed = trio.current_time() - start
        envelope = result.structured_content
        assert envelope is not None
        return envelope, elapsed

    async def every_tool(self) -> list[dict[str, Any]]:
        """Call every tool; each answer in time, and a success or a clear error."""
        answers = []
        for name, arguments in TOOLS:
            envelope, elapsed = await self.call(name, arguments)
            assert elapsed <= TIMEOUT, (name, elapsed)
            if not envelope["ok"]:
                error = envelope["error"]
                assert error["code"] in CLEAR_ERRORS, (name, error)
                assert error["remedy"] and error["message"], (name, error)
            answers.append(envelope)
        return answers

    def idle_actors(self) -> bool:
        return all(
            stats["in_flight"] == 0 and stats["queued"] == 0
            for stats in self.pipeline.statistics()["actors"].values()
        )


def chaos_settings(tmp_path: Path, **pipeline: Any) -> Settings:
    settings = load_settings(
        state_dir=tmp_path / "state",
        overrides={
            "demo": {"ingest_on_first_start": False},
            "logging": {"level": "warning"},
            "pipeline": {"request_timeout_s": TIMEOUT, **pipeline},
        },
    )
    ensure_state_dir(settings.state_dir)
    return settings


def chaos_backend() -> ScriptedBackend:
    return ScriptedBackend(
        {D: (0.01, ["a", "b"]), B: (0.01, ["b", "c"])},
        extra=frozenset({Capability.NEIGHBORS, Capability.VECTORS, Capability.FILTER}),
    )


@asynccontextmanager
async def chaos_rig(
    settings: Settings,
    backend: ScriptedBackend | None = None,
    *,
    rerank_strategy: RerankStrategy | None = None,
) -> AsyncIterator[Rig]:
    backend = backend or chaos_backend()
    faults = FaultInjector()
    pipeline = Pipeline(
        backend,
        settings.pipeline,
        lambda text: len(text.split()),
        rerank_strategy=rerank_strategy,
        faults=faults,
    )
    async with open_segment_log(settings.wal_path, settings.wal) as segment_log:
        wal = WalWriter(segment_log, settings.wal, run_blocking=run_inline, faults=faults)
        tree = Supervisor([Child(wal, restart="once"), pipeline], name="server")
        context = ToolContext(
            backend=backend, pipeline=pipeline, settings=settings, wal=wal, tree=tree
        )
        sessions = SessionRecorder(wal)
        dispatcher = ToolDispatcher(
            RegistryHolder(render_registry(settings, backend.capabilities())),
            tool_handlers(context),
            sessions=sessions,
            request_timeout_s=settings.pipeline.request_timeout_s,
        )
        async with trio.open_nursery() as nursery:
            await nursery.start(tree.run)
            yield Rig(settings, backend, faults, pipeline, wal, tree, dispatcher, sessions)
            nursery.cancel_scope.cancel()


def reasons(envelope: dict[str, Any]) -> list[str]:
    meta = envelope["meta"]
    found = [d["reason"] for d in meta["legs"]["dropped"]]
    found += [s["reason"] for s in meta["steps_skipped"]]
    if not envelope["ok"]:
        found.append(envelope["error"]["code"])
    return found


async def settle(rig: Rig, recorder: ChannelRecorder, idle_tasks: int | None) -> None:
    """After a round: nothing in flight, no job queued, every reply channel closed, and
    (when the tree is whole again) exactly the tasks of an idle server."""
    await trio.testing.wait_all_tasks_blocked()
    assert rig.idle_actors()
    assert recorder.open_ends() == 0
    if idle_tasks is not None:
        assert live_tasks() == idle_tasks


@pytest.mark.parametrize("name", PIPELINE_ACTORS)
async def test_every_tool_answers_in_time_whatever_actor_dies(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with chaos_rig(chaos_settings(tmp_path)) as rig:
        actor = rig.actor(name)
        recorder = ChannelRecorder(trio.open_memory_channel)
        monkeypatch.setattr(trio, "open_memory_channel", recorder)
        await trio.testing.wait_all_tasks_blocked()
        idle_tasks = live_tasks()
        rig.faults.counts.clear()
        clean = await rig.every_tool()
        assert all(e["ok"] and not e["meta"]["degraded"] for e in clean)
        checkpoints = rig.faults.counts[name]
        assert checkpoints >= 3  # loop, job start, job end (and more inside some actors)
        await settle(rig, recorder, idle_tasks)

        for nth in range(1, checkpoints + 1):
            await actor.wait_running()
            restarts = actor.restarts
            rig.faults.crash_at(name, nth)
            answers = await rig.every_tool()
            await trio.testing.wait_all_tasks_blocked()  # the supervisor has seen it
            assert actor.restarts == restarts + 1, (name, nth)
            assert any("actor_restarted" in reasons(e) for e in answers), (name, nth)
            await actor.wait_running()
            await settle(rig, recorder, idle_tasks)

        # Held down: it dies at every checkpoint, including right after each restart,
        # so it spends the rounds below in its growing restart backoff.
        rig.faults.hold_down(name)
        for _ in range(3):
            answers = await rig.every_tool()
            assert any("actor_restarted" in reasons(e) for e in answers), name
            assert actor.down
            await trio.sleep(1.0)  # virtual: through more restarts, each dying again
        await settle(rig, recorder, None)
        rig.faults.release(name)
        await actor.wait_running()
        whole = await rig.every_tool()
        assert all(e["ok"] and not e["meta"]["degraded"] for e in whole), name
        await settle(rig, recorder, idle_tasks)


async def test_every_tool_answers_in_time_when_the_wal_writer_dies(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    settings = chaos_settings(tmp_path)
    async with chaos_rig(settings) as rig:
        rig.faults.counts.clear()
        await rig.every_tool()
        await rig.wal.wait_flushed()
        checkpoints = rig.faults.counts["wal-writer"]
        assert checkpoints >= 2
    for nth in range(1, checkpoints + 1):
        async with chaos_rig(settings) as rig:
            rig.faults.crash_at("wal-writer", nth)
            answers = await rig.every_tool()
            # Session records wait up to wal.unacknowledged_max_delay_s for their
            # batch: the writer meets its crash once that batch is due.
            await rig.wal.wait_stopped()
            await trio.testing.wait_all_tasks_blocked()
            later = await rig.every_tool()  # the writer is down for good: still answered
            assert all(e["ok"] for e in answers + later), nth
            assert not rig.wal.healthy and "crashed" in (rig.wal.failure or "")
            assert rig.tree.failed() == ["wal-writer"]
            assert rig.sessions.dropped >= 1
            status, _ = await rig.call("index_status", {})
            assert status["data"]["ready"] is False
            assert status["data"]["supervision"]["wal-writer"]["state"] == "failed"
            await trio.testing.wait_all_tasks_blocked()
            assert rig.idle_actors()


async def test_crash_loop_backs_off(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    async with chaos_rig(chaos_settings(tmp_path)) as rig:
        actor = rig.actor("fuser")
        start = trio.current_time()
        for _ in range(5):
            await trio.testing.wait_all_tasks_blocked()  # the last crash is seen
            await actor.wait_running()
            rig.faults.crash_at("fuser", 1)
            envelope, _ = await rig.call("search", {"query": "q"})
            skipped = {(s["step"], s["reason"]) for s in envelope["meta"]["steps_skipped"]}
            assert ("fuse:rrf", "actor_restarted") in skipped
        await trio.testing.wait_all_tasks_blocked()
        assert actor.restarts == 5
        # Backoff doubles: 0.05 + 0.1 + 0.2 + 0.4 of waiting before the fifth run.
        assert trio.current_time() - start >= 0.75


class SlowBackend(ScriptedBackend):
    """Direct backend calls that take ``delay`` (virtual) seconds."""

    def __init__(self, delay: float, slow: Sequence[str]) -> None:
        super().__init__(
            {D: (0.01, ["a", "b"]), B: (0.01, ["b", "c"])},
            extra=frozenset({Capability.NEIGHBORS, Capability.VECTORS, Capability.FILTER}),
        )
        self.delay = delay
        self.slow = set(slow)

    async def _maybe_wait(self, what: str) -> None:
        if what in self.slow:
            await trio.sleep(self.delay)

    async def fetch(self, ids: Sequence[str]) -> Any:
        await self._maybe_wait("fetch")
        return await super().fetch(ids)

    async def neighbors(self, chunk: Any, *, before: int, after: int) -> Any:
        await self._maybe_wait("neighbors")
        return await super().neighbors(chunk, before=before, after=after)

    async def sources(self) -> Any:
        await self._maybe_wait("sources")
        return await super().sources()

    async def status(self) -> Any:
        await self._maybe_wait("status")
        return await super().status()


@pytest.mark.parametrize(
    ("slow", "tool", "arguments"),
    [
        ("fetch", "expand_neighbors", {"chunk_id": "a"}),
        ("neighbors", "expand_neighbors", {"chunk_id": "a"}),
        ("fetch", "more_like_this", {"chunk_id": "a"}),
        ("fetch", "get_context", {"ids": ["a"]}),
        ("sources", "list_sources", {}),
        ("status", "index_status", {}),
    ],
)
async def test_a_tool_with_nothing_to_degrade_to_times_out_at_the_deadline(
    slow: str,
    tool: str,
    arguments: dict[str, Any],
    tmp_path: Path,
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with chaos_rig(chaos_settings(tmp_path), SlowBackend(60.0, [slow])) as rig:
        envelope, elapsed = await rig.call(tool, arguments)
        assert elapsed == pytest.approx(TIMEOUT)
        assert not envelope["ok"] and envelope["error"]["code"] == "timeout"
        assert "deadline" in envelope["error"]["message"] and envelope["error"]["remedy"]
        await trio.testing.wait_all_tasks_blocked()
        assert rig.idle_actors()


async def test_a_slow_optional_step_degrades_inside_the_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    settings = chaos_settings(tmp_path)
    async with chaos_rig(settings, SlowBackend(60.0, ["neighbors"])) as rig:
        envelope, elapsed = await rig.call(
            "get_context", {"query": "q", "top_k": 3, "budget_tokens": 200}
        )
        assert envelope["ok"] and envelope["meta"]["degraded"]
        assert {"step": "expand", "reason": "timeout"} in envelope["meta"]["steps_skipped"]
        assert envelope["data"]["passages"]  # the fused hits, packed
        assert elapsed == pytest.approx(TIMEOUT - settings.pipeline.answer_reserve_s)
        await trio.testing.wait_all_tasks_blocked()
        assert rig.idle_actors()


class BlockingModel:
    """A cross-encoder whose prediction blocks its thread until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def predict(self, pairs: list[tuple[str, str]]) -> list[float]:
        self.calls += 1
        self.release.wait(30)
        return [0.0] * len(pairs)


async def test_an_uncancellable_reranker_thread_is_abandoned_at_the_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    settings = chaos_settings(tmp_path, rerank={"kind": "cross-encoder", "timeout_s": 60})
    model = BlockingModel()
    strategy = CrossEncoderRerank("", model=model)
    try:
        async with chaos_rig(settings, rerank_strategy=strategy) as rig:
            for _ in range(2):  # the second waits for the model behind the first's thread
                envelope, elapsed = await rig.call(
                    "get_context", {"query": "q", "top_k": 3, "budget_tokens": 200}
                )
                assert elapsed <= TIMEOUT
                assert envelope["ok"] and envelope["meta"]["degraded"]
                skipped = envelope["meta"]["steps_skipped"]
                assert {"step": "rerank:cross-encoder", "reason": "timeout"} in skipped
                assert envelope["data"]["passages"]
            assert model.calls == 1  # one prediction at a time: no pile-up of threads
    finally:
        model.release.set()


async def test_mmr_without_stored_vectors_is_reported_unsupported(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    backend = ScriptedBackend(
        {D: (0.01, ["a", "b"]), B: (0.01, ["b", "c"])},
        extra=frozenset({Capability.NEIGHBORS, Capability.FILTER}),
    )
    async with chaos_rig(chaos_settings(tmp_path), backend) as rig:
        envelope, _ = await rig.call(
            "get_context", {"query": "q", "top_k": 3, "budget_tokens": 200}
        )
        assert envelope["ok"] and envelope["meta"]["degraded"]
        assert {"step": "rerank:mmr", "reason": "unsupported"} in envelope["meta"]["steps_skipped"]
        assert not any(s.startswith("rerank") for s in envelope["meta"]["steps_run"])
