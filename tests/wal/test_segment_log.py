"""The log on disk: appends, rotation, retirement, and recovery from every kind of damage."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from retrieval_mcp.errors import WalCorrupt, WalFailed, WalLocked
from retrieval_mcp.records import Chunk, Provenance
from retrieval_mcp.wal.framing import encode_frame, scan_segment
from retrieval_mcp.wal.recovery import iter_log, segment_paths
from retrieval_mcp.wal.segment_log import SegmentLog, encode_record
from retrieval_mcp.wal.wal_records import (
    Applied,
    IngestBatch,
    Payload,
    delete_documents,
    ingest_batch,
    session_record,
)
from retrieval_mcp.wal.wal_settings import WalSettings
from tests.wal.faulty_fs import FaultyFileSystem

DAY = 86_400.0


def batch(i: int) -> IngestBatch:
    return ingest_batch(
        [
            Chunk(
                id=f"00000000-0000-0000-0000-{i:012d}",
                text=f"chunk {i} " * 8,
                provenance=Provenance("s", f"d{i}", "T", 0, 0, 10),
            )
        ]
    )


def session(at: float) -> Payload:
    return session_record(
        at=at,
        request_id="r",
        token_name="t",
        tool="search",
        arguments={"query": "q"},
        hit_ids=["a"],
        latency_ms=1.0,
        outcome="ok",
        log_content=False,
    )


def open_log(directory: Path, fs: Any = None, **settings: Any) -> SegmentLog:
    return SegmentLog.open(directory, WalSettings(**settings), fs=fs)


@pytest.fixture
def wal_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "wal"


def write(log: SegmentLog, *payloads: Payload, now: float = 0.0) -> tuple[int, ...]:
    seqs = log.write_batch([encode_record(p) for p in payloads])
    log.retire(now)
    return seqs


def segments(directory: Path) -> list[Path]:
    return [path for _, path in segment_paths(directory, FaultyFileSystem())]


def test_append_reopen_and_replay_plan(wal_dir: Path) -> None:
    with open_log(wal_dir) as log:
        assert write(log, batch(1), batch(2)) == (1, 2)
        assert write(log, delete_documents("s", ["d1"])) == (3,)
        assert write(log, Applied(seqs=(1,))) == (4,)
        assert log.statistics().unapplied == 2
    assert (wal_dir.stat().st_mode & 0o777) == 0o700
    with open_log(wal_dir) as log:
        assert log.next_seq == 5
        assert log.recovery.records == 4 and log.recovery.unapplied == 2
        assert [r.seq for r in log.take_replay()] == [2, 3]
        assert log.take_replay() == []
        assert write(log, batch(5)) == (5,)


def test_replay_starts_at_first_unapplied_and_keeps_log_order(wal_dir: Path) -> None:
    # 1 unapplied, 2 applied after it: redo must run 1 then 2, or 2's delete could be
    # undone by 1's upsert.
    with open_log(wal_dir) as log:
        write(log, batch(1))
        write(log, delete_documents("s", ["d1"]))
        write(log, Applied(seqs=(2,)))
    with open_log(wal_dir) as log:
        assert [r.seq for r in log.take_replay()] == [1, 2]


def test_rotation_keeps_sequence_contiguous_and_retires_applied_prefix(wal_dir: Path) -> None:
    with open_log(wal_dir, segment_bytes=4096) as log:
        for i in range(1, 61):
            write(log, batch(i))
        assert len(segments(wal_dir)) > 4
        # Apply everything except record 25: segments before it may go, none after.
        write(log, Applied(seqs=tuple(i for i in range(1, 61) if i != 25)))
        first = [int(p.name[:20]) for p in segments(wal_dir)]
        assert first[0] <= 25 < first[1]
        assert log.statistics().segments_retired > 0
        write(log, Applied(seqs=(25,)))
        # Only the active segment is left.
        assert len(segments(wal_dir)) == 1
    with open_log(wal_dir) as log:
        assert log.take_replay() == [] and log.next_seq == 63


def test_session_records_keep_segments_until_retention(wal_dir: Path) -> None:
    with open_log(wal_dir, segment_bytes=4096, session_retention_days=1.0) as log:
        for i in range(40):
            write(log, session(at=i), now=i)
        kept = len(segments(wal_dir))
        assert kept > 2
        write(log, session(at=DAY + 100), now=DAY + 100)
        # Segments whose newest session is more than a day old are gone.
        assert len(segments(wal_dir)) < kept
    with open_log(wal_dir, segment_bytes=4096, retention_bytes=0) as log:
        write(log, session(at=2 * DAY), now=2 * DAY)
        assert len(segments(wal_dir)) == 1


def test_torn_tail_is_cut_and_the_log_goes_on(wal_dir: Path) -> None:
    with open_log(wal_dir) as log:
        write(log, batch(1))
        write(log, batch(2))
    (path,) = segments(wal_dir)
    size = path.stat().st_size
    os.truncate(path, size - 7)
    with open_log(wal_dir) as log:
        torn = log.recovery.torn_tail
        assert torn is not None and torn.segment == path
        assert torn.cut_bytes == size - 7 - torn.offset
        assert path.stat().st_size == torn.offset
        assert [r.seq for r in log.take_replay()] == [1]
        assert write(log, batch(3)) == (2,)
    with open_log(wal_dir) as log:
        assert log.recovery.torn_tail is None
        assert [r.seq for r in log.take_replay()] == [1, 2]


def test_flipped_byte_in_last_record_is_cut(wal_dir: Path) -> None:
    with open_log(wal_dir) as log:
        write(log, batch(1))
        write(log, batch(2))
    (path,) = segments(wal_dir)
    data = bytearray(path.read_bytes())
    last = scan_segment(bytes(data)).frames[-1]
    data[last.offset + 40] ^= 0x20
    path.write_bytes(bytes(data))
    with open_log(wal_dir) as log:
        assert log.recovery.torn_tail is not None
        assert log.recovery.torn_tail.reason == "checksum mismatch"
        assert [r.seq for r in log.take_replay()] == [1]


def test_flipped_byte_in_middle_record_stops_recovery(wal_dir: Path) -> None:
    with open_log(wal_dir) as log:
        for i in range(1, 4):
            write(log, batch(i))
    (path,) = segments(wal_dir)
    data = bytearray(path.read_bytes())
    middle = scan_segment(bytes(data)).frames[1]
    data[middle.offset + 33] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(WalCorrupt) as caught:
        open_log(wal_dir)
    assert caught.value.segment == path and caught.value.offset == middle.offset
    assert str(path) in str(caught.value) and f"byte offset {middle.offset}" in str(caught.value)
    assert path.stat().st_size == len(data)  # nothing was cut
    # The lock was released: fixing the file lets the log open.
    os.truncate(path, middle.offset)
    with open_log(wal_dir) as log:
        assert [r.seq for r in log.take_replay()] == [1]


def test_damage_in_a_sealed_segment_stops_recovery(wal_dir: Path) -> None:
    with open_log(wal_dir, segment_bytes=4096) as log:
        for i in range(1, 20):
            write(log, batch(i))
    first = segments(wal_dir)[0]
    size = first.stat().st_size
    os.truncate(first, size - 3)
    with pytest.raises(WalCorrupt, match="not the last") as caught:
        open_log(wal_dir)
    assert caught.value.segment == first


def test_missing_segment_is_a_gap(wal_dir: Path) -> None:
    with open_log(wal_dir, segment_bytes=4096) as log:
        for i in range(1, 30):
            write(log, batch(i))
    paths = segments(wal_dir)
    assert len(paths) >= 3
    paths[1].unlink()
    with pytest.raises(WalCorrupt, match="records are missing") as caught:
        open_log(wal_dir)
    assert caught.value.segment == paths[2]


def test_checksummed_record_that_does_not_decode_stops_recovery(wal_dir: Path) -> None:
    with open_log(wal_dir) as log:
        write(log, batch(1))
    (path,) = segments(wal_dir)
    with path.open("ab") as handle:
        handle.write(encode_frame(2, 2, b'{"v":99,"kind":"applied","data":{}}'))
    with pytest.raises(WalCorrupt, match="version 99 is not supported"):
        open_log(wal_dir)
    with pytest.raises(WalCorrupt, match="record 2"):
        list(iter_log(wal_dir, FaultyFileSystem()))


def test_empty_last_segment_is_removed_and_its_number_kept(wal_dir: Path) -> None:
    with open_log(wal_dir) as log:
        write(log, batch(1))
    (wal_dir / "00000000000000000002.wal").touch()
    with open_log(wal_dir) as log:
        assert [p.name for p in log.recovery.removed_empty] == ["00000000000000000002.wal"]
        assert log.next_seq == 2
        assert write(log, batch(2)) == (2,)


def test_iter_log_reads_without_repairing(wal_dir: Path) -> None:
    with open_log(wal_dir) as log:
        write(log, batch(1), session(at=5.0))
        write(log, batch(2))
    (path,) = segments(wal_dir)
    os.truncate(path, path.stat().st_size - 1)
    size = path.stat().st_size
    assert [r.seq for r in iter_log(wal_dir, FaultyFileSystem())] == [1, 2]
    assert path.stat().st_size == size


def test_second_opener_is_refused(wal_dir: Path) -> None:
    with open_log(wal_dir), pytest.raises(WalLocked, match="in use"):
        open_log(wal_dir)


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_io_error_is_fatal_and_no_later_fsync_is_trusted(wal_dir: Path, fail_at: int) -> None:
    # Operations of the first batch: fsync of the new segment's directory, write, fsync.
    wal_dir.mkdir()
    fs = FaultyFileSystem(fail_at=fail_at, error=errno.EIO)
    with open_log(wal_dir, fs=fs) as log:
        with pytest.raises(WalFailed, match="Input/output error"):
            write(log, batch(1))
        assert log.failure is not None and fs.failed is not None
        done = fs.count
        with pytest.raises(WalFailed):
            write(log, batch(2))
        assert fs.count == done  # refused without touching the disk
    with open_log(wal_dir) as log:
        # A failed write or fsync acknowledged nothing; recovery reads what is there.
        assert log.recovery.records <= 1


class RetiringWhileRead(FaultyFileSystem):
    """A segment listed by the reader is retired (unlinked) before the reader opens it,
    as the running server's writer may do during a ``sessions`` export."""

    def __init__(self, victim: Path) -> None:
        super().__init__()
        self._victim = victim

    def read(self, path: Path) -> bytes:
        if path == self._victim:
            path.unlink()
        return super().read(path)


def test_iter_log_skips_a_segment_retired_while_it_reads(wal_dir: Path) -> None:
    with open_log(wal_dir, segment_bytes=4096) as log:
        for i in range(1, 61):
            write(log, batch(i))
    paths = segments(wal_dir)
    assert len(paths) >= 4
    later = [r.seq for r in iter_log(wal_dir, RetiringWhileRead(paths[0]))]
    assert later and later == list(range(later[0], 61))  # the rest, in order

    paths[2].unlink()  # a segment missing between two others is still corruption
    with pytest.raises(WalCorrupt):
        list(iter_log(wal_dir, FaultyFileSystem()))
