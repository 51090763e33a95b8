"""Leg queries that arrive together go to the engine together: one batch, one thread hop.

Why: every leg of a request is its own fetcher actor (ADR 0009), so an embedded store
used to get one worker-thread hop per leg, and Trio's hand-offs were the largest cost
after the engine itself (ADR 0025). ``qdrant-edge`` holds the GIL while it searches,
so two engine threads never ran at once anyway. Here a query waits one scheduler pass
for the other legs of its pass to join, then the batch runs in one engine call
(``query_batch``: one pass over the segments) in one worker thread; while a batch is in
the engine, new queries gather for the next, so under load a batch holds many
requests' legs and at most one engine thread is busy per store.

What the leg actors see does not change: each query is awaited alone, a caller that
leaves (its leg ran late and was dropped, its request was cancelled) abandons only its
own query, which is skipped if its batch has not started, and an engine error fails
every query of that batch with the same mapped error.

Some queries need slow preparation before the engine can take them (a dense leg whose
query vector is not cached yet: the encoder runs first). ``deferred`` names them: they
ride in the same thread hop, but as a second engine call after the first call's
answers have been handed back, so a slow preparation delays only its own queries and
the other legs can still answer in time (a late dense leg is dropped, BM25 stays).

A batch runs on the event loop instead when the loop has nothing else to run
(``inline_when_idle``): ``qdrant-edge`` holds the GIL for the whole engine call, so a
worker thread never lets the loop run meanwhile; it only pays for the hand-off (two
wake-ups and the run-queue traffic). A thread is still taken whenever another task is
runnable or a batch is already in the engine (under load, where ADR 0025 measured that
the extra runnable thread wins the process more of a busy host), and for ``deferred``
queries, whose preparation (the encoder) does release the GIL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import outcome
import trio

Q = TypeVar("Q")
R = TypeVar("R")


class _Waiter(Generic[Q, R]):
    __slots__ = ("done", "left", "query", "result")

    def __init__(self, query: Q) -> None:
        self.query = query
        self.done = trio.Event()
        self.left = False
        self.result: outcome.Outcome[R] | None = None


class EngineBatcher(Generic[Q, R]):
    """Runs ``run_batch`` (queries → one answer per query, in order) for each batch.

    ``inline`` runs a batch on the event loop instead of a worker thread (a small
    store, ``inline_max_points``); there ``deferred`` queries are not split off, so a
    caller prepares them itself before an inline query. Must be used from one Trio run;
    an answer that comes back after that run has ended reaches nobody.
    """

    def __init__(
        self,
        run_batch: Callable[[Sequence[Q]], Sequence[R]],
        *,
        deferred: Callable[[Q], bool] | None = None,
        inline_when_idle: bool = False,
    ) -> None:
        self._run_batch = run_batch
        self._deferred = deferred
        self._inline_when_idle = inline_when_idle
        self._pending: list[_Waiter[Q, R]] = []
        self._in_engine = False
        self.batches = 0
        self.queries = 0
        self.inline_batches = 0  # of ``batches``: run on the event loop

    async def query(self, query: Q, *, inline: bool = False) -> R:
        """The answer to ``query``, from the batch it joins. Cancelling abandons it."""
        waiter: _Waiter[Q, R] = _Waiter(query)
        self._pending.append(waiter)
        if len(self._pending) == 1 and not self._in_engine:
            try:  # one pass for the other legs of this pass to join
                await trio.lowlevel.checkpoint()
            except BaseException:
                waiter.left = True
                raise
            finally:  # even if this caller was cancelled: the others still need it
                self._flush(inline=inline)
        try:
            await waiter.done.wait()
        except BaseException:
            waiter.left = True
            raise
        assert waiter.result is not None
        return waiter.result.unwrap()

    def _flush(self, *, inline: bool) -> None:
        batch = [w for w in self._pending if not w.left]
        self._pending = []
        if not batch:
            return
        self.batches += 1
        self.queries += len(batch)
        if inline or self._idle(batch):
            self.inline_batches += 1
            self._deliver(batch, outcome.capture(self._run_batch, [w.query for w in batch]))
            return
        self._in_engine = True
        token = trio.lowlevel.current_trio_token()
        deferred = self._deferred
        first = [w for w in batch if deferred is None or not deferred(w.query)]
        later = [w for w in batch if deferred is not None and deferred(w.query)]
        last = later or first  # the waiters the thread's return value answers

        def soon(fn: Callable[..., object], *args: object) -> None:
            # After the run has ended (the server is gone) nobody is waiting.
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(fn, *args)

        def work() -> Sequence[R]:
            if first and later:
                soon(
                    self._deliver, first, outcome.capture(self._run_batch, [w.query for w in first])
                )
            # A caller that left while the first call ran is skipped (a racy read of a
            # bool: at worst its query runs and nobody reads the answer).
            last[:] = [w for w in last if not w.left]
            return self._run_batch([w.query for w in last]) if last else []

        def done(result: outcome.Outcome[Sequence[R]]) -> None:
            soon(self._finished, last, result)

        trio.lowlevel.start_thread_soon(work, done)

    def _idle(self, batch: list[_Waiter[Q, R]]) -> bool:
        """Whether ``batch`` may run on the event loop: nothing else is runnable and no
        query needs a preparation that releases the GIL (see the module docstring)."""
        if not self._inline_when_idle or self._in_engine:
            return False
        deferred = self._deferred
        if deferred is not None and any(deferred(w.query) for w in batch):
            return False
        # Tasks still to run in the current scheduler batch are not counted: at worst one
        # of them waits one engine call, as it would behind the GIL anyway.
        return trio.lowlevel.current_statistics().tasks_runnable == 0

    def _finished(self, batch: list[_Waiter[Q, R]], result: outcome.Outcome[Sequence[R]]) -> None:
        self._in_engine = False
        if batch:
            self._deliver(batch, result)
        if self._pending:  # gathered while the engine was busy: the next batch, now
            self._flush(inline=False)

    @staticmethod
    def _deliver(batch: list[_Waiter[Q, R]], result: outcome.Outcome[Sequence[R]]) -> None:
        answers: Sequence[R] | None = None
        error: BaseException = RuntimeError("engine answered a batch short")
        if isinstance(result, outcome.Value):
            if len(result.value) == len(batch):
                answers = result.value
        elif isinstance(result, outcome.Error):
            error = result.error
        for index, waiter in enumerate(batch):
            waiter.result = (
                outcome.Value(answers[index]) if answers is not None else outcome.Error(error)
            )
            waiter.done.set()

    def statistics(self) -> dict[str, int | bool]:
        return {
            "batches": self.batches,
            "inline_batches": self.inline_batches,
            "queries": self.queries,
            "pending": len(self._pending),
            "in_engine": self._in_engine,
        }
