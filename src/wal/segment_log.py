"""The log on disk: recovery at open, then group-committed appends to rotating segments.

Synchronous and single-threaded by design: the writer actor calls it from one worker
thread at a time. Every write and fsync goes through a ``WalFileSystem`` so tests can
fail any one of them.

Durability rules (see design/decisions/0008-wal.md):

* a batch is written with one ``write`` (looping on short writes) and made durable
  with one ``fsync`` of its segment before anyone is told it is durable;
* a new segment is created, then its directory is fsynced, before any record is
  written to it; deleting retired segments is followed by a directory fsync;
* any I/O error is fatal: the log refuses every later batch, because after a failed
  fsync the kernel may have dropped the dirty pages and a later fsync proves nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

import attrs

from retrieval_mcp.errors import WalClosed, WalError, WalFailed, WalLocked
from retrieval_mcp.process_lock import ProcessLock
from retrieval_mcp.wal.filesystem import OsFileSystem, WalFileSystem, write_all
from retrieval_mcp.wal.framing import MAX_PAYLOAD_BYTES, encode_frame
from retrieval_mcp.wal.recovery import RecoveryReport, recover_log
from retrieval_mcp.wal.segments import (
    SECONDS_PER_DAY,
    RetentionPolicy,
    SegmentInfo,
    SegmentLedger,
    segment_name,
)
from retrieval_mcp.wal.wal_records import (
    Applied,
    Payload,
    SessionRecord,
    WalRecord,
    encode_payload,
    is_data_record,
)
from retrieval_mcp.wal.wal_settings import WalSettings

T = TypeVar("T")


@attrs.frozen
class EncodedRecord:
    """A payload and its serialised bytes (encoded by the producer, not the writer)."""

    payload: Payload
    raw: bytes


def encode_record(payload: Payload) -> EncodedRecord:
    """Serialise ``payload``; ValueError if it is too large for one frame."""
    raw = encode_payload(payload)
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise ValueError(
            f"a WAL record may hold at most {MAX_PAYLOAD_BYTES} bytes; this one is {len(raw)}"
        )
    return EncodedRecord(payload=payload, raw=raw)


@attrs.frozen
class LogStatistics:
    segments: int
    bytes_on_disk: int
    unapplied: int
    next_seq: int
    batches: int
    records: int
    bytes_written: int
    fsyncs: int
    last_fsync_s: float | None
    max_fsync_s: float
    segments_retired: int


class SegmentLog:
    """Owns the WAL directory's lock and its open segment from ``open`` to ``close``."""

    def __init__(
        self,
        directory: Path,
        settings: WalSettings,
        fs: WalFileSystem,
        lock: ProcessLock,
        ledger: SegmentLedger,
        next_seq: int,
        replay: list[WalRecord],
        report: RecoveryReport,
    ) -> None:
        self.directory = directory
        self.recovery = report
        self._settings = settings
        self._fs = fs
        self._lock = lock
        self._ledger = ledger
        self._next_seq = next_seq
        self._replay = replay
        self._policy = RetentionPolicy(
            session_max_age_s=settings.session_retention_days * SECONDS_PER_DAY,
            max_bytes=settings.retention_bytes,
        )
        self._fd: int | None = None
        self._active: SegmentInfo | None = None
        self._failure: str | None = None
        self._closed = False
        self._batches = 0
        self._records = 0
        self._bytes_written = 0
        self._fsyncs = 0
        self._last_fsync_s: float | None = None
        self._max_fsync_s = 0.0
        self._retired = 0

    @classmethod
    def open(
        cls, directory: Path, settings: WalSettings, *, fs: WalFileSystem | None = None
    ) -> SegmentLog:
        """Lock ``directory`` (creating it 0700), recover it, and return the log.

        Raises ``WalLocked`` if another process has it, ``WalCorrupt`` if a record
        that may have been acknowledged is damaged. Blocking: call from a thread.
        """
        fs = fs or OsFileSystem()
        lock = ProcessLock(directory, refused=WalLocked, what="WAL")
        try:
            if not directory.is_dir():
                directory.mkdir(parents=True, mode=0o700)
                fs.fsync_directory(directory.parent)
            lock.acquire()
        except OSError as exc:
            raise WalError(f"cannot open the WAL at {directory}: {exc}") from exc
        try:
            recovered = recover_log(directory, fs)
        except OSError as exc:
            lock.release()
            raise WalError(f"cannot recover the WAL at {directory}: {exc}") from exc
        except BaseException:
            lock.release()
            raise
        return cls(
            directory,
            settings,
            fs,
            lock,
            recovered.ledger,
            recovered.next_seq,
            recovered.replay,
            recovered.report,
        )

    # -- state -------------------------------------------------------------------

    @property
    def failure(self) -> str | None:
        """Why the log refuses writes (an I/O error), or None while healthy."""
        return self._failure

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def take_replay(self) -> list[WalRecord]:
        """The records recovery says must be redone against the store; empty after the
        first call (whoever takes them is responsible for applying them)."""
        replay, self._replay = self._replay, []
        return replay

    def statistics(self) -> LogStatistics:
        return LogStatistics(
            segments=len(self._ledger.segments),
            bytes_on_disk=self._ledger.total_bytes,
            unapplied=self._ledger.unapplied_count,
            next_seq=self._next_seq,
            batches=self._batches,
            records=self._records,
            bytes_written=self._bytes_written,
            fsyncs=self._fsyncs,
            last_fsync_s=self._last_fsync_s,
            max_fsync_s=self._max_fsync_s,
            segments_retired=self._retired,
        )

    # -- writing -----------------------------------------------------------------

    def write_batch(self, records: Sequence[EncodedRecord]) -> tuple[int, ...]:
        """Append ``records`` as one commit group; return their sequence numbers once the
        segment is fsynced.

        Raises ``WalFailed`` on any I/O error, and on every call after one.
        """
        if self._closed:
            raise WalClosed("the WAL is closed")
        if self._failure is not None:
            raise WalFailed(self._failure)
        if not records:
            return ()
        if self._active is None or self._active.size >= self._settings.segment_bytes:
            self._rotate()
        assert self._fd is not None and self._active is not None
        fd, active = self._fd, self._active
        group = self._next_seq
        seqs = tuple(range(group, group + len(records)))
        frames = [encode_frame(seq, group, r.raw) for seq, r in zip(seqs, records, strict=True)]
        data = b"".join(frames)
        self._io("write", active.path, lambda: write_all(self._fs, fd, data))
        started = time.perf_counter()
        self._io("fsync", active.path, lambda: self._fs.fsync(fd))
        took = time.perf_counter() - started
        # Durable from here on.
        self._next_seq += len(records)
        self._batches += 1
        self._records += len(records)
        self._bytes_written += len(data)
        self._fsyncs += 1
        self._last_fsync_s = took
        self._max_fsync_s = max(self._max_fsync_s, took)
        for seq, record, frame in zip(seqs, records, frames, strict=True):
            payload = record.payload
            self._ledger.note_record(
                active,
                seq,
                size=len(frame),
                data=is_data_record(payload),
                session_at=payload.at if isinstance(payload, SessionRecord) else None,
                applies=payload.seqs if isinstance(payload, Applied) else (),
            )
        return seqs

    def _rotate(self) -> None:
        if self._fd is not None and self._active is not None:
            fd, self._fd = self._fd, None
            self._io("close", self._active.path, lambda: self._fs.close(fd))
        path = self.directory / segment_name(self._next_seq)
        self._fd = self._io("create", path, lambda: self._fs.create(path))
        self._active = SegmentInfo(path=path, first_seq=self._next_seq)
        self._ledger.add_segment(self._active)
        self._io("fsync", self.directory, lambda: self._fs.fsync_directory(self.directory))

    def retire(self, now: float) -> int:
        """Delete the oldest segments that are fully applied and past session retention
        (``now`` is Unix time); return how many. Called after a batch, separately, so a
        failure here never un-acknowledges a batch that is already durable — but it is
        fatal for the batches after it, like any I/O error.
        """
        if self._failure is not None:
            raise WalFailed(self._failure)
        retired = self._ledger.retirable(now, self._policy)
        if not retired:
            return 0
        for segment in retired:
            self._io("unlink", segment.path, partial(self._fs.unlink, segment.path))
        self._io("fsync", self.directory, lambda: self._fs.fsync_directory(self.directory))
        self._ledger.remove(retired)
        self._retired += len(retired)
        return len(retired)

    def _io(self, action: str, path: Path, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except OSError as exc:
            self._failure = (
                f"{action} of {path} failed ({exc}); the WAL acknowledges nothing more "
                "until the server restarts and recovers"
            )
            raise WalFailed(self._failure) from exc

    # -- closing -----------------------------------------------------------------

    def close(self) -> None:
        """Close the open segment and release the lock. Safe to call twice.

        Every acknowledged batch was already fsynced, so closing flushes nothing.
        """
        if self._closed:
            return
        self._closed = True
        try:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                self._fs.close(fd)
        finally:
            self._lock.release()

    def __enter__(self) -> SegmentLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
