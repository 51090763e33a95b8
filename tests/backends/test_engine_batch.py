"""EngineBatcher: legs of one scheduler pass share one engine call; each is awaited alone."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest
import trio
import trio.testing

from retrieval_mcp.backends.engine_batch import EngineBatcher


class Engine:
    """Answers each query with its square; records every batch; can be held."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.release = threading.Event()
        self.release.set()
        self.fail: Exception | None = None

    def run(self, queries: Sequence[int]) -> list[int]:
        self.batches.append(list(queries))
        self.release.wait(10)
        if self.fail is not None:
            raise self.fail
        return [q * q for q in queries]


@pytest.mark.parametrize("inline", [False, True], ids=["thread", "inline"])
async def test_queries_of_one_pass_are_one_batch(inline: bool) -> None:
    engine = Engine()
    batcher = EngineBatcher(engine.run)
    answers: dict[int, int] = {}

    async def ask(q: int) -> None:
        answers[q] = await batcher.query(q, inline=inline)

    async with trio.open_nursery() as nursery:
        for q in (2, 3):
            nursery.start_soon(ask, q)
    assert answers == {2: 4, 3: 9}
    assert sorted(map(sorted, engine.batches)) == [[2, 3]]
    assert batcher.statistics()["batches"] == 1


async def test_queries_that_arrive_while_the_engine_is_busy_are_the_next_batch() -> None:
    engine = Engine()
    engine.release.clear()
    batcher = EngineBatcher(engine.run)
    answers: dict[int, int] = {}

    async def ask(q: int) -> None:
        answers[q] = await batcher.query(q)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, 1)
        await trio.testing.wait_all_tasks_blocked()
        assert batcher.statistics()["in_engine"]
        nursery.start_soon(ask, 2)
        nursery.start_soon(ask, 3)
        await trio.testing.wait_all_tasks_blocked()
        assert batcher.statistics()["pending"] == 2
        engine.release.set()
    assert answers == {1: 1, 2: 4, 3: 9}
    assert [sorted(b) for b in engine.batches] == [[1], [2, 3]]
    assert not batcher.statistics()["in_engine"]


async def test_a_caller_that_leaves_abandons_only_its_own_query() -> None:
    engine = Engine()
    engine.release.clear()
    batcher = EngineBatcher(engine.run)
    answers: dict[int, int] = {}

    async def ask(q: int) -> None:
        answers[q] = await batcher.query(q)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, 1)  # in the engine, held
        await trio.testing.wait_all_tasks_blocked()
        with trio.CancelScope() as late:
            nursery.start_soon(ask, 2)
            left = trio.CancelScope()

            async def leaves() -> None:
                with left:
                    answers[5] = await batcher.query(5)

            nursery.start_soon(leaves)
            await trio.testing.wait_all_tasks_blocked()
            left.cancel()  # its leg ran late: dropped before its batch starts
            await trio.testing.wait_all_tasks_blocked()
        assert not late.cancelled_caught
        engine.release.set()
    assert answers == {1: 1, 2: 4}
    assert [sorted(b) for b in engine.batches] == [[1], [2]]  # 5 never reached the engine


async def test_a_caller_cancelled_while_its_batch_is_in_the_engine_returns_at_once() -> None:
    engine = Engine()
    engine.release.clear()
    batcher = EngineBatcher(engine.run)
    with trio.move_on_after(0.01) as scope:  # real time: a thread is involved
        await batcher.query(4)
    assert scope.cancelled_caught
    engine.release.set()
    assert await batcher.query(6) == 36  # the abandoned batch ended; the next one runs
    assert [sorted(b) for b in engine.batches][-1] == [6]


@pytest.mark.parametrize(
    ("inline", "when_idle"),
    [(False, False), (True, False), (False, True)],
    ids=["thread", "inline", "idle-inline"],
)
async def test_an_engine_error_fails_every_query_of_its_batch(
    inline: bool, when_idle: bool
) -> None:
    engine = Engine()
    engine.fail = ValueError("engine broke")
    batcher = EngineBatcher(engine.run, inline_when_idle=when_idle)
    errors: list[str] = []

    async def ask(q: int) -> None:
        try:
            await batcher.query(q, inline=inline)
        except ValueError as exc:
            errors.append(str(exc))

    async with trio.open_nursery() as nursery:
        for q in (1, 2):
            nursery.start_soon(ask, q)
    assert errors == ["engine broke", "engine broke"]
    engine.fail = None
    assert await batcher.query(3, inline=inline) == 9  # the batcher keeps serving


async def test_a_short_answer_is_an_error_not_a_wrong_answer() -> None:
    batcher: EngineBatcher[int, int] = EngineBatcher(lambda queries: [0])
    results: list[BaseException | int] = []

    async def ask(q: int) -> None:
        try:
            results.append(await batcher.query(q))
        except RuntimeError as exc:
            results.append(exc)

    async with trio.open_nursery() as nursery:
        for q in (1, 2):
            nursery.start_soon(ask, q)
    assert all(isinstance(r, RuntimeError) for r in results) and len(results) == 2


async def test_deferred_queries_answer_after_the_others_in_the_same_hop() -> None:
    """A slow query (negative here) is the hop's second engine call: the others have
    their answers while it is still being prepared, and it can still be abandoned."""
    prepared = threading.Event()
    calls: list[list[int]] = []

    def run(queries: Sequence[int]) -> list[int]:
        calls.append(list(queries))
        if queries and queries[0] < 0:
            prepared.wait(10)  # the slow preparation, held until the test lets it go
        return [q * q for q in queries]

    batcher = EngineBatcher(run, deferred=lambda q: q < 0)
    answers: dict[int, int] = {}
    early = trio.Event()

    async def ask(q: int) -> None:
        answers[q] = await batcher.query(q)
        if q > 0:
            early.set()

    async with trio.open_nursery() as nursery:
        for q in (2, -3, 4):
            nursery.start_soon(ask, q)
        with trio.fail_after(10):  # real time: a thread is involved
            await early.wait()
        assert answers.get(2) == 4 and answers.get(4) == 16 and -3 not in answers
        assert batcher.statistics()["in_engine"]
        prepared.set()
    assert answers == {2: 4, -3: 9, 4: 16}
    assert [sorted(c) for c in calls] == [[2, 4], [-3]]
    assert batcher.statistics()["batches"] == 1


async def test_a_deferred_query_whose_caller_left_is_not_prepared() -> None:
    engine = Engine()
    engine.release.clear()
    batcher = EngineBatcher(engine.run, deferred=lambda q: q < 0)
    answers: dict[int, int] = {}
    left = trio.CancelScope()

    async def ask(q: int) -> None:
        answers[q] = await batcher.query(q)

    async def leaves() -> None:
        with left:
            answers[-5] = await batcher.query(-5)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, 2)
        nursery.start_soon(leaves)
        await trio.testing.wait_all_tasks_blocked()  # the batch of 2 is in the engine
        left.cancel()  # the dense leg ran late while the first call was held
        await trio.testing.wait_all_tasks_blocked()
        engine.release.set()
    assert answers == {2: 4}
    assert engine.batches == [[2]]  # -5 never reached the engine
    assert await batcher.query(-6) == 36  # a deferred query alone is one call


class WhereEngine(Engine):
    """Also records which thread ran each batch."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[int] = []

    def run(self, queries: Sequence[int]) -> list[int]:
        self.threads.append(threading.get_ident())
        return super().run(queries)


async def test_a_lone_batch_runs_on_the_event_loop_when_idle_inline_is_on() -> None:
    engine = WhereEngine()
    batcher = EngineBatcher(engine.run, inline_when_idle=True)
    answers: dict[int, int] = {}

    async def ask(q: int) -> None:
        answers[q] = await batcher.query(q)

    async with trio.open_nursery() as nursery:
        for q in (2, 3):
            nursery.start_soon(ask, q)
    assert answers == {2: 4, 3: 9}
    assert engine.threads == [threading.get_ident()]
    assert batcher.statistics()["inline_batches"] == 1


async def test_idle_inline_off_keeps_the_worker_thread() -> None:
    engine = WhereEngine()
    batcher = EngineBatcher(engine.run)
    assert await batcher.query(4) == 16
    assert engine.threads != [threading.get_ident()]
    assert batcher.statistics()["inline_batches"] == 0


async def test_a_batch_takes_a_thread_while_other_tasks_are_runnable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another request's task ready to run: the engine call must not hold the loop.

    Trio shuffles each scheduler batch, so a real busy task is counted only when it
    sorts before the flush; the run's own statistic is therefore pinned here."""
    engine = WhereEngine()
    batcher = EngineBatcher(engine.run, inline_when_idle=True)
    real = trio.lowlevel.current_statistics

    def busy() -> object:
        stats = real()
        return type("Stats", (), {"tasks_runnable": stats.tasks_runnable + 1})()

    monkeypatch.setattr(trio.lowlevel, "current_statistics", busy)
    assert await batcher.query(5) == 25
    assert engine.threads and engine.threads[0] != threading.get_ident()
    assert batcher.statistics()["inline_batches"] == 0


async def test_a_batch_with_a_deferred_query_takes_a_thread_even_when_idle() -> None:
    """The deferred preparation (the encoder) releases the GIL: worth a thread."""
    engine = WhereEngine()
    batcher = EngineBatcher(engine.run, deferred=lambda q: q < 0, inline_when_idle=True)
    assert await batcher.query(-3) == 9
    assert engine.threads and engine.threads[0] != threading.get_ident()
    assert await batcher.query(3) == 9  # alone and not deferred: inline
    assert engine.threads[-1] == threading.get_ident()
