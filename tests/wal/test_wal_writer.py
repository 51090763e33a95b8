"""The writer actor: group commit, acknowledgement after fsync, fatal I/O errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from retrieval_mcp.actors.wal_writer import WalWriter, open_wal_writer, run_inline
from retrieval_mcp.errors import WalClosed, WalFailed
from retrieval_mcp.wal.framing import scan_segment
from retrieval_mcp.wal.recovery import iter_log
from retrieval_mcp.wal.segment_log import SegmentLog
from retrieval_mcp.wal.wal_records import Applied, SessionRecord, session_record
from retrieval_mcp.wal.wal_settings import WalSettings
from tests.wal.faulty_fs import FaultyFileSystem


class WatchedFileSystem(FaultyFileSystem):
    """Remembers which sequence numbers each fsync made durable."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__(fail_at)
        self.durable: set[int] = set()
        self.fsyncs = 0

    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        self.fsyncs += 1
        path = self._paths[fd]
        self.durable |= {f.seq for f in scan_segment(path.read_bytes()).frames}


def open_existing(directory: Path, settings: WalSettings, fs: FaultyFileSystem) -> SegmentLog:
    directory.mkdir(exist_ok=True)  # so the first counted operation is the segment's
    return SegmentLog.open(directory, settings, fs=fs)


@asynccontextmanager
async def running_writer(
    directory: Path, fs: FaultyFileSystem, **settings: Any
) -> AsyncIterator[WalWriter]:
    wal_settings = WalSettings(**settings)
    log = open_existing(directory, wal_settings, fs)
    try:
        writer = WalWriter(log, wal_settings, run_blocking=run_inline)
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)
            yield writer
            await writer.aclose()
    finally:
        log.close()


async def test_group_commit_acks_after_fsync_with_fewer_fsyncs(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    acked: dict[int, float] = {}
    async with running_writer(
        tmp_path / "wal", fs, group_commit_max_records=16, group_commit_max_delay_s=0.005
    ) as writer:

        async def one(i: int) -> None:
            (seq,) = await writer.append(Applied(seqs=(i,)))
            assert seq in fs.durable  # acknowledged only once its fsync is done
            acked[seq] = trio.current_time()

        async with trio.open_nursery() as producers:
            for i in range(100):
                producers.start_soon(one, i)
        stats = writer.statistics()
    assert sorted(acked) == list(range(1, 101))
    assert stats.records == 100 and stats.max_batch_records <= 16
    assert 100 // 16 <= fs.fsyncs < 100 and stats.fsyncs == fs.fsyncs
    assert max(acked.values()) <= 0.005 * (fs.fsyncs + 1)


async def test_latency_bound_with_staggered_arrivals(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    delay = 0.005
    waits: list[float] = []
    async with running_writer(
        tmp_path / "wal", fs, group_commit_max_records=1000, group_commit_max_delay_s=delay
    ) as writer:

        async def one(i: int) -> None:
            await trio.sleep(i * 0.001)  # arrivals spread over time, on the virtual clock
            queued = trio.current_time()
            await writer.append(Applied(seqs=(i,)))
            waits.append(trio.current_time() - queued)

        async with trio.open_nursery() as producers:
            for i in range(60):
                producers.start_soon(one, i)
    assert len(waits) == 60
    assert max(waits) <= delay + 1e-9
    assert 1 < fs.fsyncs <= 60 // 4  # batches of about delay / 1 ms records


async def test_zero_delay_commits_what_is_queued(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    async with running_writer(tmp_path / "wal", fs, group_commit_max_delay_s=0.0) as writer:
        (seq,) = await writer.append(Applied(seqs=(1,)))
        assert seq == 1 and trio.current_time() == 0.0


async def test_enqueue_and_wait_flushed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    async with running_writer(tmp_path / "wal", fs, queue_size=4) as writer:
        for i in range(3):
            await writer.enqueue(Applied(seqs=(i,)))
        await writer.wait_flushed()
        assert fs.durable == {1, 2, 3}
        assert writer.statistics().queue_depth == 0


async def test_enqueue_nowait_refuses_when_full(tmp_path: Path) -> None:
    fs = WatchedFileSystem()
    settings = WalSettings(queue_size=2)
    log = SegmentLog.open(tmp_path / "wal", settings, fs=fs)
    writer = WalWriter(log, settings, run_blocking=run_inline)
    # Not running yet, so nothing drains the queue.
    writer.enqueue_nowait(Applied(seqs=(1,)))
    writer.enqueue_nowait(Applied(seqs=(2,)))
    with pytest.raises(trio.WouldBlock):
        writer.enqueue_nowait(Applied(seqs=(3,)))
    assert writer.statistics().refused_nowait == 1
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.wait_flushed()
        await writer.aclose()
    log.close()
    assert fs.durable == {1, 2}


@pytest.mark.parametrize("failing", ["fsync", "write"])
async def test_io_error_is_fatal_for_the_writer(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, failing: str
) -> None:
    # Operations: fsync of the directory (new segment), then write + fsync per batch.
    # Batch 1 succeeds; batch 2 fails at its write (op 4) or its fsync (op 5).
    fs = WatchedFileSystem(fail_at=4 if failing == "write" else 5)
    async with running_writer(tmp_path / "wal", fs, group_commit_max_delay_s=0.001) as writer:
        assert await writer.append(Applied(seqs=(1,))) == (1,)
        assert writer.healthy
        outcomes: list[BaseException | tuple[int, ...]] = []

        async def one(i: int) -> None:
            try:
                outcomes.append(await writer.append(Applied(seqs=(i,))))
            except WalFailed as exc:
                outcomes.append(exc)

        async with trio.open_nursery() as producers:
            for i in range(5):
                producers.start_soon(one, i)
        assert all(isinstance(o, WalFailed) for o in outcomes) and len(outcomes) == 5
        assert not writer.healthy
        assert writer.failure is not None
        assert f"{failing} of" in writer.failure and "Input/output error" in writer.failure
        assert fs.failed is not None and fs.failed.startswith(failing)
        operations = fs.count
        with pytest.raises(WalFailed, match="Input/output error"):
            await writer.append(Applied(seqs=(9,)))
        with pytest.raises(WalFailed):
            writer.enqueue_nowait(Applied(seqs=(9,)))
        with pytest.raises(WalFailed):
            await writer.wait_flushed()
        stats = writer.statistics()
        assert not stats.healthy and stats.failure == writer.failure
        assert fs.count == operations  # no later write, and no later fsync trusted
    # What was acknowledged survives; the failed batch was never acknowledged.
    assert [r.seq for r in iter_log(tmp_path / "wal", FaultyFileSystem())][:1] == [1]


async def test_aclose_drains_the_queue_then_refuses(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    settings = WalSettings()
    log = SegmentLog.open(tmp_path / "wal", settings, fs=fs)
    writer = WalWriter(log, settings, run_blocking=run_inline)
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        for i in range(5):
            await writer.enqueue(Applied(seqs=(i,)))
        await writer.aclose()
    assert fs.durable == {1, 2, 3, 4, 5}
    with pytest.raises(WalClosed):
        await writer.append(Applied(seqs=(6,)))
    log.close()


async def test_cancelled_writer_fails_what_is_queued_and_leaves_no_partial_record(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    settings = WalSettings(group_commit_max_delay_s=1.0, group_commit_max_records=1000)
    log = SegmentLog.open(tmp_path / "wal", settings, fs=fs)
    writer = WalWriter(log, settings, run_blocking=run_inline)
    errors: list[BaseException] = []

    async def one(i: int) -> None:
        try:
            await writer.append(Applied(seqs=(i,)))
        except WalClosed as exc:
            errors.append(exc)

    writer_scope = trio.CancelScope()
    async with trio.open_nursery() as outer:
        outer.start_soon(_run_in, writer_scope, writer)
        await trio.testing.wait_all_tasks_blocked()
        for i in range(5):
            outer.start_soon(one, i)
        # The writer holds the batch open for up to 1 s waiting for more.
        await trio.testing.wait_all_tasks_blocked()
        writer_scope.cancel()
    assert len(errors) == 5 and fs.durable == set()
    log.close()
    assert list(iter_log(tmp_path / "wal", FaultyFileSystem())) == []
    with pytest.raises(WalClosed):
        await writer.append(Applied(seqs=(1,)))


async def _run_in(scope: trio.CancelScope, writer: WalWriter) -> None:
    with scope:
        await writer.run()


async def test_open_wal_writer_uses_threads_and_hands_back_plain_errors(
    tmp_path: Path,
) -> None:
    async with open_wal_writer(tmp_path / "wal", WalSettings()) as writer:
        assert await writer.append(Applied(seqs=(1,)), Applied(seqs=(2,))) == (1, 2)
        assert writer.statistics().last_fsync_s is not None
    with pytest.raises(ValueError, match="boom"):
        async with open_wal_writer(tmp_path / "wal", WalSettings()) as writer:
            assert writer.recovery.records == 2
            raise ValueError("boom")
    # The lock was released both times.
    async with open_wal_writer(tmp_path / "wal", WalSettings()) as writer:
        assert writer.statistics().next_seq == 3


async def test_failed_write_does_not_raise_out_of_the_actor(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem(fail_at=2)
    async with running_writer(tmp_path / "wal", fs) as writer:
        with pytest.raises(WalFailed):
            await writer.append(Applied(seqs=(1,)))
        assert not writer.healthy
    # The nursery exited normally: the actor survived its own I/O error.


async def test_session_records_through_the_writer_keep_no_text(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    async with running_writer(tmp_path / "wal", fs) as writer:
        writer.enqueue_nowait(
            session_record(
                at=1.0,
                request_id="req-1",
                token_name="alice",
                tool="search",
                arguments={"query": "boiler pressure E1234", "top_k": 3},
                hit_ids=["h1", "h2"],
                hit_texts=["secret text"],
                legs_used=["dense", "bm25"],
                legs_dropped=[],
                latency_ms=4.5,
                outcome="ok",
                log_content=False,
            )
        )
        await writer.wait_flushed()
    (record,) = list(iter_log(tmp_path / "wal", FaultyFileSystem()))
    assert isinstance(record.payload, SessionRecord)
    assert (record.payload.token_name, record.payload.hit_ids) == ("alice", ("h1", "h2"))
    raw = b"".join(p.read_bytes() for p in (tmp_path / "wal").glob("*.wal"))
    assert b"E1234" not in raw and b"secret" not in raw


async def test_unacknowledged_records_share_one_fsync_per_interval(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    async with running_writer(
        tmp_path / "wal", fs, group_commit_max_delay_s=0.002, unacknowledged_max_delay_s=0.5
    ) as writer:
        for i in range(40):  # one session record every 10 ms: 0.4 s in all
            writer.enqueue_nowait(session_record(**_SESSION, request_id=f"r{i}"))
            await trio.sleep(0.01)
        assert fs.fsyncs == 0  # none yet: the batch is still open
        await trio.sleep(0.5)
        assert fs.durable == set(range(1, 41)) and fs.fsyncs == 1


async def test_an_acknowledged_append_does_not_wait_for_the_unacknowledged_interval(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    fs = WatchedFileSystem()
    async with running_writer(
        tmp_path / "wal", fs, group_commit_max_delay_s=0.002, unacknowledged_max_delay_s=5.0
    ) as writer:
        writer.enqueue_nowait(session_record(**_SESSION, request_id="r0"))
        await trio.sleep(1.0)
        queued = trio.current_time()
        (seq,) = await writer.append(Applied(seqs=(1,)))
        assert trio.current_time() - queued <= 0.002 + 1e-9
        assert fs.durable == {1, 2} and seq == 2


_SESSION: dict[str, Any] = {
    "at": 0.0,
    "token_name": "t",
    "tool": "search",
    "arguments": {"query": "q"},
    "hit_ids": [],
    "hit_texts": (),
    "legs_used": ("bm25",),
    "legs_dropped": (),
    "latency_ms": 1.0,
    "outcome": "ok",
    "log_content": False,
}
