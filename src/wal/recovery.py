"""Reading the log back: validate every segment, cut a torn tail, plan the replay.

Pure logic over a ``WalFileSystem`` (no Trio). The procedure, in order:

1. List ``*.wal`` segments and sort them by the first sequence number in their names.
2. Scan each segment frame by frame (``framing.scan_segment``). Damage in the last
   segment whose only intact successors belong to the damaged commit group is a torn
   tail: it is cut (truncate + fsync) and recovery goes on. Any other damage — in a
   segment that is not the last, or followed by intact records of a later commit
   group — raises ``WalCorrupt`` naming the segment and byte offset. Nothing is ever
   skipped.
3. Decode every intact record; a record that passed its checksum but does not decode
   (unknown version or kind, schema mismatch) is ``WalCorrupt`` too.
4. Check that sequence numbers run on by one within and across segments (the first
   retained segment may start anywhere: older ones were retired).
5. An empty last segment is removed (it was created but never written).
6. Replay plan: every ingest or delete record from the first one with no applied
   marker onwards, in log order — including marked ones after it, so the store ends
   as if the whole log had been applied in order (each operation writes a fixed set of
   chunk ids, so a redone suffix converges; see design/decisions/0008-wal.md).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path

import attrs

from retrieval_mcp.errors import WalCorrupt
from retrieval_mcp.wal.filesystem import WalFileSystem
from retrieval_mcp.wal.framing import Frame, SegmentScan, scan_segment
from retrieval_mcp.wal.segments import SegmentInfo, SegmentLedger, parse_segment_name
from retrieval_mcp.wal.wal_records import (
    Applied,
    Payload,
    RecordFormatError,
    SessionRecord,
    WalRecord,
    decode_payload,
    is_data_record,
)


@attrs.frozen
class TornTail:
    """A cut made at recovery: ``segment`` now ends at ``offset`` (``cut_bytes`` fewer)."""

    segment: Path
    offset: int
    cut_bytes: int
    reason: str


@attrs.frozen
class RecoveryReport:
    """What recovery found; logged at start-up and shown by ``statistics()``."""

    segments: int
    records: int
    unapplied: int
    replay: int
    next_seq: int
    torn_tail: TornTail | None = None
    removed_empty: tuple[Path, ...] = ()


@attrs.define
class RecoveredLog:
    """The state the writer starts from, and the records to redo against the store."""

    ledger: SegmentLedger
    next_seq: int
    replay: list[WalRecord]
    report: RecoveryReport


@attrs.frozen
class _SegmentRead:
    path: Path
    first_seq: int
    size: int
    scan: SegmentScan
    torn: bool
    after_vanished: bool = False  # a listed segment before this one was retired meanwhile


def segment_paths(directory: Path, fs: WalFileSystem) -> list[tuple[int, Path]]:
    """(first seq, path) of every segment in ``directory``, oldest first."""
    found = []
    for name in fs.list_directory(directory):
        first_seq = parse_segment_name(name)
        if first_seq is not None:
            found.append((first_seq, directory / name))
    return sorted(found)


def _read_segments(
    directory: Path, fs: WalFileSystem, *, skip_vanished: bool = False
) -> Iterator[_SegmentRead]:
    paths = segment_paths(directory, fs)
    vanished = False
    for index, (first_seq, path) in enumerate(paths):
        try:
            data = fs.read(path)
        except FileNotFoundError:
            if not skip_vanished:
                raise
            vanished = True  # retired by the running writer since it was listed
            continue
        scan = scan_segment(data)
        torn = False
        if scan.damage is not None:
            is_last = index == len(paths) - 1
            if not is_last:
                raise WalCorrupt(
                    path,
                    scan.damage.offset,
                    f"{scan.damage.reason}, in a segment that is not the last "
                    "(every record in it was fsynced before the next segment began)",
                )
            if not scan.torn_tail(first_seq):
                raise WalCorrupt(
                    path,
                    scan.damage.offset,
                    f"{scan.damage.reason}, and intact records of a later write follow it",
                )
            torn = True
        yield _SegmentRead(
            path=path,
            first_seq=first_seq,
            size=len(data),
            scan=scan,
            torn=torn,
            after_vanished=vanished,
        )
        vanished = False


def _decode(path: Path, frame: Frame) -> Payload:
    try:
        return decode_payload(frame.payload)
    except RecordFormatError as exc:
        raise WalCorrupt(path, frame.offset, f"record {frame.seq}: {exc}") from exc


def _check_sequence(segment: _SegmentRead, previous_last: int | None) -> None:
    if previous_last is not None and segment.first_seq != previous_last + 1:
        raise WalCorrupt(
            segment.path,
            0,
            f"the segment starts at record {segment.first_seq} but the previous segment "
            f"ends at record {previous_last}: records are missing",
        )
    expected = segment.first_seq
    for frame in segment.scan.frames:
        if frame.seq != expected:
            raise WalCorrupt(
                segment.path, frame.offset, f"record {frame.seq} where {expected} was expected"
            )
        expected += 1


def iter_log(directory: Path, fs: WalFileSystem) -> Iterator[WalRecord]:
    """Every record in the log, oldest first, without changing anything on disk.

    For readers such as a session export: a torn tail ends the iteration (it may be a
    write in progress); corruption raises ``WalCorrupt``. The writer may retire old
    segments meanwhile (it retires oldest first): one that vanished after it was listed
    is skipped, and the sequence check starts again after it.
    """
    previous_last: int | None = None
    for segment in _read_segments(directory, fs, skip_vanished=True):
        if segment.after_vanished:
            previous_last = None  # the chain starts again after the retired segment
        if segment.scan.frames:
            _check_sequence(segment, previous_last)
            previous_last = segment.scan.frames[-1].seq
        for frame in segment.scan.frames:
            yield WalRecord(seq=frame.seq, payload=_decode(segment.path, frame))


def recover_log(directory: Path, fs: WalFileSystem) -> RecoveredLog:
    """Validate the log in ``directory``, cut a torn tail, and plan the replay.

    Raises ``WalCorrupt`` (never skips) when a record that may have been acknowledged
    is damaged. The caller must hold the directory's lock.
    """
    ledger = SegmentLedger()
    candidates: deque[WalRecord] = deque()
    unmarked: set[int] = set()
    previous_last: int | None = None
    next_seq = 1
    records = 0
    torn_tail: TornTail | None = None
    removed: list[Path] = []
    segments = list(_read_segments(directory, fs))
    for index, segment in enumerate(segments):
        scan = segment.scan
        if not scan.frames:
            if index != len(segments) - 1:
                raise WalCorrupt(segment.path, 0, "an empty segment that is not the last")
            if segment.torn:
                torn_tail = _torn(segment)
            # Created but never written: remove it, so the next segment can take its name.
            fs.unlink(segment.path)
            fs.fsync_directory(directory)
            removed.append(segment.path)
            next_seq = max(next_seq, segment.first_seq)
            continue
        _check_sequence(segment, previous_last)
        info = SegmentInfo(path=segment.path, first_seq=segment.first_seq)
        ledger.add_segment(info)
        for frame in scan.frames:
            payload = _decode(segment.path, frame)
            records += 1
            data = is_data_record(payload)
            ledger.note_record(
                info,
                frame.seq,
                size=frame.end - frame.offset,
                data=data,
                session_at=payload.at if isinstance(payload, SessionRecord) else None,
                applies=payload.seqs if isinstance(payload, Applied) else (),
            )
            if data:
                candidates.append(WalRecord(seq=frame.seq, payload=payload))
                unmarked.add(frame.seq)
            elif isinstance(payload, Applied):
                unmarked.difference_update(payload.seqs)
                while candidates and candidates[0].seq not in unmarked:
                    candidates.popleft()
        previous_last = scan.frames[-1].seq
        next_seq = previous_last + 1
        if segment.torn:
            torn_tail = _torn(segment)
            fs.truncate(segment.path, scan.valid_length)
    replay = list(candidates)
    report = RecoveryReport(
        segments=len(ledger.segments),
        records=records,
        unapplied=ledger.unapplied_count,
        replay=len(replay),
        next_seq=next_seq,
        torn_tail=torn_tail,
        removed_empty=tuple(removed),
    )
    return RecoveredLog(ledger=ledger, next_seq=next_seq, replay=replay, report=report)


def _torn(segment: _SegmentRead) -> TornTail:
    damage = segment.scan.damage
    assert damage is not None
    return TornTail(
        segment=segment.path,
        offset=damage.offset,
        cut_bytes=segment.size - damage.offset,
        reason=damage.reason,
    )
