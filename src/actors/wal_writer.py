"""The WAL writer actor: one task owns the log, producers wait on group commits.

Producers hand records to the actor through a bounded memory channel:

* ``append(*payloads)`` waits until the records are durable (their batch fsynced)
  and returns their sequence numbers — the acknowledgement;
* ``enqueue(payload)`` waits only for room in the queue (applied markers, session
  records: durable with the next batch, acknowledged to nobody);
* ``enqueue_nowait(payload)`` raises ``trio.WouldBlock`` instead of waiting;
* ``wait_flushed()`` returns once everything queued before it is durable.

Group commit: the actor takes the first queued request, then whatever else is queued
(waiting at most ``group_commit_max_delay_s`` after the first was queued) up to
``group_commit_max_records``, and writes the lot with one ``write`` and one ``fsync``.
Only then is any waiter of that batch woken. While a batch holds only records nobody
waits for (session records, applied markers) it stays open for up to
``unacknowledged_max_delay_s`` instead: a session record per tool call then costs no
``write``, ``fsync`` or thread hop of its own (design/decisions/0025); the first
acknowledged append to join shortens the wait back to its own ``max_delay``.

File I/O runs in a worker thread (``trio.to_thread.run_sync``, never abandoned): an
fsync can take tens of milliseconds on a busy disk, and the event loop also serves
searches. Tests under ``autojump_clock`` pass ``run_blocking=run_inline``, because a
worker thread is invisible to the virtual clock.

An I/O error is fatal for the writer: it fails that batch, every queued append and
every later one with ``WalFailed``; ``healthy`` turns False and ``failure`` says why
(for ``/readyz``). The task keeps running so the server keeps serving searches; a
restart recovers from what is on disk.

In the server the writer is a ``once`` child of the supervision tree
(design/decisions/0009): a crash of its own loop (a bug, or a chaos test's injected
fault) is not restarted, because what the crash left in the file is unknown. It turns
the writer failed exactly like an I/O error: ``healthy`` is False (``/readyz`` answers
503, ``index_status`` shows the reason) and every later append and session record is
refused with ``WalFailed`` instead of vanishing into a queue nobody reads.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Protocol, TypeVar

import attrs
import structlog
import trio

from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.errors import WalClosed, WalError, WalFailed
from retrieval_mcp.wal.filesystem import WalFileSystem
from retrieval_mcp.wal.recovery import RecoveryReport
from retrieval_mcp.wal.segment_log import EncodedRecord, LogStatistics, SegmentLog, encode_record
from retrieval_mcp.wal.wal_records import Payload, WalRecord
from retrieval_mcp.wal.wal_settings import WalSettings

log = structlog.get_logger(__name__)

T = TypeVar("T")


class BlockingRunner(Protocol):
    """Runs one blocking call to completion from Trio and returns its result."""

    def __call__(self, fn: Callable[[], T], /) -> Awaitable[T]: ...


async def run_in_worker_thread(fn: Callable[[], T]) -> T:
    # Not abandoned on cancel: a batch is written and fsynced (or fails) as a whole.
    return await trio.to_thread.run_sync(fn)


async def run_inline(fn: Callable[[], T]) -> T:
    """Run ``fn`` on the event loop: for tests under the virtual clock only."""
    return fn()


@attrs.define(eq=False)
class _AppendRequest:
    records: tuple[EncodedRecord, ...]
    queued_at: float
    done: trio.Event | None
    seqs: tuple[int, ...] = ()
    error: WalError | None = None
    finished: bool = False

    def finish(self, seqs: tuple[int, ...] = (), error: WalError | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        self.seqs = seqs
        self.error = error
        if self.done is not None:
            self.done.set()

    def result(self) -> tuple[int, ...]:
        if self.error is not None:
            # A fresh exception per waiter: one instance raised in many tasks would
            # collect their tracebacks.
            raise type(self.error)(self.error.message) from self.error
        return self.seqs


@attrs.frozen
class WalWriterStatistics:
    """A snapshot for logs, ``/readyz`` and ``index_status``."""

    healthy: bool
    failure: str | None
    queue_depth: int
    batches: int
    records: int
    fsyncs: int
    last_fsync_s: float | None
    max_fsync_s: float
    last_batch_records: int
    max_batch_records: int
    refused_nowait: int
    segments: int
    bytes_on_disk: int
    unapplied: int
    next_seq: int
    segments_retired: int
    recovery: RecoveryReport


class WalWriter:
    """Owns the appending side of one ``SegmentLog`` while ``run`` runs.

    The log itself (lock, files) belongs to whoever opened it and is closed by them
    after ``run`` has returned; ``open_wal_writer`` does both, ``open_segment_log``
    only the log (the server runs the writer in its supervision tree).
    """

    name = "wal-writer"

    def __init__(
        self,
        segment_log: SegmentLog,
        settings: WalSettings,
        *,
        run_blocking: BlockingRunner = run_in_worker_thread,
        wall_clock: Callable[[], float] = time.time,
        faults: FaultInjector | None = None,
    ) -> None:
        self.restarts = 0
        self.faults = faults or FaultInjector()
        self._stopped_event = trio.Event()
        self._log = segment_log
        self._max_records = settings.group_commit_max_records
        self._max_delay = settings.group_commit_max_delay_s
        self._unacknowledged_delay = max(
            settings.unacknowledged_max_delay_s, settings.group_commit_max_delay_s
        )
        self._run_blocking = run_blocking
        self._wall_clock = wall_clock
        self._send, self._receive = trio.open_memory_channel[_AppendRequest](settings.queue_size)
        self._in_hand: list[_AppendRequest] = []
        self._failure: str | None = segment_log.failure
        self._started = False
        self._stopped = False
        self._log_stats = segment_log.statistics()
        self._last_batch = 0
        self._max_batch = 0
        self._refused = 0

    # -- state -------------------------------------------------------------------

    @property
    def healthy(self) -> bool:
        """False once a write or fsync has failed (for good: see ``failure``)."""
        return self._failure is None

    @property
    def failure(self) -> str | None:
        return self._failure

    @property
    def recovery(self) -> RecoveryReport:
        return self._log.recovery

    def take_replay(self) -> list[WalRecord]:
        """The acknowledged records recovery found unapplied (once; then empty)."""
        return self._log.take_replay()

    def statistics(self) -> WalWriterStatistics:
        stats: LogStatistics = self._log_stats
        return WalWriterStatistics(
            healthy=self.healthy,
            failure=self._failure,
            queue_depth=self._receive.statistics().current_buffer_used,
            batches=stats.batches,
            records=stats.records,
            fsyncs=stats.fsyncs,
            last_fsync_s=stats.last_fsync_s,
            max_fsync_s=stats.max_fsync_s,
            last_batch_records=self._last_batch,
            max_batch_records=self._max_batch,
            refused_nowait=self._refused,
            segments=stats.segments,
            bytes_on_disk=stats.bytes_on_disk,
            unapplied=stats.unapplied,
            next_seq=stats.next_seq,
            segments_retired=stats.segments_retired,
            recovery=self._log.recovery,
        )

    # -- producers ---------------------------------------------------------------

    async def append(self, *payloads: Payload) -> tuple[int, ...]:
        """Append ``payloads`` as consecutive records; return their sequence numbers
        once they are durable. Raises ``WalFailed`` or ``WalClosed``.

        Cancelling the call does not withdraw the records: once queued they may still
        be written (durable but unacknowledged, like any write whose reply was lost).
        """
        request = self._request(payloads, waited=True)
        await self._submit(request)
        assert request.done is not None
        await request.done.wait()
        return request.result()

    async def enqueue(self, payload: Payload) -> None:
        """Queue ``payload`` without waiting for it to be durable."""
        await self._submit(self._request((payload,), waited=False))

    def enqueue_nowait(self, payload: Payload) -> None:
        """Like ``enqueue``; raises ``trio.WouldBlock`` when the queue is full."""
        request = self._request((payload,), waited=False)
        self._check_accepting()
        try:
            self._send.send_nowait(request)
        except trio.WouldBlock:
            self._refused += 1
            raise
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise WalClosed("the WAL writer has stopped") from None

    async def wait_flushed(self) -> None:
        """Return once every record queued before this call is durable."""
        request = self._request((), waited=True)
        await self._submit(request)
        assert request.done is not None
        await request.done.wait()
        request.result()

    def _request(self, payloads: tuple[Payload, ...], *, waited: bool) -> _AppendRequest:
        # Encoding here, in the producer, keeps a bad payload the producer's error.
        return _AppendRequest(
            records=tuple(encode_record(p) for p in payloads),
            queued_at=trio.current_time(),
            done=trio.Event() if waited else None,
        )

    def _check_accepting(self) -> None:
        if self._failure is not None:
            raise WalFailed(self._failure)
        if self._stopped:
            raise WalClosed("the WAL writer has stopped")

    async def _submit(self, request: _AppendRequest) -> None:
        self._check_accepting()
        try:
            await self._send.send(request)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise WalClosed("the WAL writer has stopped") from None

    async def aclose(self) -> None:
        """Stop accepting; ``run`` commits what is already queued, then returns."""
        await self._send.aclose()

    async def wait_stopped(self) -> None:
        """Return once ``run`` has returned (or raised); at once if it never started."""
        if self._started:
            await self._stopped_event.wait()
        else:
            await trio.lowlevel.checkpoint()

    # -- the actor ---------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Commit queued appends until ``aclose`` or cancellation.

        After ``aclose`` the queue is drained and committed, then this returns. On
        cancellation, whatever is queued and not yet being written fails with
        ``WalClosed`` (a batch already in its worker thread completes first). An I/O
        error does not end the task (see the module docstring); a crash of the loop
        itself does, and leaves the writer failed for good.
        """
        if self._started:
            raise RuntimeError("WalWriter.run may be started only once")
        self._started = True
        async with self._receive:
            try:
                task_status.started()
                while True:
                    try:
                        first = await self._receive.receive()
                    except trio.EndOfChannel:
                        return
                    self._in_hand = [first]
                    await self._gather(self._in_hand)
                    self.faults.checkpoint(self.name)
                    await self._commit(self._in_hand)
                    self._in_hand = []
                    self.faults.checkpoint(self.name)
            except Exception as exc:
                if self._failure is None:
                    self._failure = f"the WAL writer crashed: {exc!r}"
                log.error("wal_failed", reason=self._failure)
                raise
            finally:
                self._stopped = True
                self._fail_unfinished()
                self._stopped_event.set()

    async def _gather(self, batch: list[_AppendRequest]) -> None:
        first = batch[0]
        count = len(first.records)
        deadline = first.queued_at + (
            self._max_delay if first.done is not None else self._unacknowledged_delay
        )
        while count < self._max_records:
            request = await self._next_before(deadline)
            if request is None:
                return
            batch.append(request)
            count += len(request.records)
            if request.done is not None:  # someone waits: at most max_delay from now on
                deadline = min(deadline, request.queued_at + self._max_delay)

    async def _next_before(self, deadline: float) -> _AppendRequest | None:
        try:
            return self._receive.receive_nowait()
        except trio.WouldBlock:
            pass
        except trio.EndOfChannel:
            return None
        with trio.move_on_at(deadline):
            try:
                return await self._receive.receive()
            except trio.EndOfChannel:
                return None
        return None

    async def _commit(self, batch: list[_AppendRequest]) -> None:
        records = [record for request in batch for record in request.records]
        if self._failure is not None:
            self._fail(batch, WalFailed(self._failure))
            return
        if not records:
            # Only wait_flushed barriers: every earlier batch is already fsynced.
            for request in batch:
                request.finish()
            return
        write = partial(self._write, records, self._wall_clock())
        try:
            seqs, retire_error, self._log_stats = await self._run_blocking(write)
        except WalFailed as exc:
            self._failure = exc.message
            log.error("wal_failed", reason=exc.message)
            self._fail(batch, exc)
            return
        except Exception as exc:
            # A bug, not an I/O error; the file's state is unknown, so trust nothing.
            self._failure = f"unexpected error while writing the WAL: {exc!r}"
            log.exception("wal_failed", reason=self._failure)
            self._fail(batch, WalFailed(self._failure))
            return
        self._last_batch = len(records)
        self._max_batch = max(self._max_batch, len(records))
        offset = 0
        for request in batch:
            count = len(request.records)
            request.finish(seqs=seqs[offset : offset + count])
            offset += count
        if retire_error is not None:
            # This batch is durable and acknowledged; the next one is refused.
            self._failure = retire_error.message
            log.error("wal_failed", reason=retire_error.message)

    def _write(
        self, records: list[EncodedRecord], now: float
    ) -> tuple[tuple[int, ...], WalFailed | None, LogStatistics]:
        seqs = self._log.write_batch(records)
        retire_error = None
        try:
            self._log.retire(now)
        except WalFailed as exc:
            retire_error = exc
        return seqs, retire_error, self._log.statistics()

    def _fail(self, batch: list[_AppendRequest], error: WalError) -> None:
        for request in batch:
            request.finish(error=error)

    def _fail_unfinished(self) -> None:
        error: WalError = (
            WalFailed(self._failure)
            if self._failure is not None
            else WalClosed("the WAL writer stopped before writing this record")
        )
        self._fail(self._in_hand, error)
        self._in_hand = []
        while True:
            try:
                request = self._receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            request.finish(error=error)


@asynccontextmanager
async def open_segment_log(
    directory: Path, settings: WalSettings, *, fs: WalFileSystem | None = None
) -> AsyncIterator[SegmentLog]:
    """Open and recover the log in ``directory`` (its lock held), yield it, close it.

    The close (files, lock) is shielded, so it also happens when the caller is
    cancelled. Raises ``WalLocked`` or ``WalCorrupt`` from recovery before yielding.
    """
    segment_log = await trio.to_thread.run_sync(
        partial(SegmentLog.open, directory, settings, fs=fs)
    )
    report = segment_log.recovery
    log.info(
        "wal_recovered",
        directory=str(directory),
        segments=report.segments,
        records=report.records,
        replay=report.replay,
        torn_tail=None if report.torn_tail is None else str(report.torn_tail),
    )
    try:
        yield segment_log
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(segment_log.close)


@asynccontextmanager
async def open_wal_writer(
    directory: Path,
    settings: WalSettings,
    *,
    fs: WalFileSystem | None = None,
    run_blocking: BlockingRunner = run_in_worker_thread,
    wall_clock: Callable[[], float] = time.time,
) -> AsyncIterator[WalWriter]:
    """Open and recover the log in ``directory``, run its writer, yield the writer.

    For one-shot commands (``ingest``); the server runs its writer in its supervision
    tree instead. On exit the writer stops accepting, commits what is queued, and the
    log is closed and its lock released — shielded, so this also happens when the
    caller is cancelled (queued records then fail with ``WalClosed``). Raises
    ``WalLocked`` or ``WalCorrupt`` from recovery before yielding.
    """
    async with open_segment_log(directory, settings, fs=fs) as segment_log:
        writer = WalWriter(segment_log, settings, run_blocking=run_blocking, wall_clock=wall_clock)
        single: BaseException | None = None
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(writer.run)
                try:
                    yield writer
                finally:
                    with trio.CancelScope(shield=True):
                        await writer.aclose()
        except BaseExceptionGroup as group:
            # The nursery wraps the body's exception in a group; hand a lone one back as
            # itself, so callers catch WalFailed (or their own errors) as they raised them.
            if len(group.exceptions) != 1:
                raise
            single = group.exceptions[0]
        if single is not None:
            raise single
