"""Segment names and the ledger of what each segment holds. Pure: no I/O.

A segment is named for the sequence number of its first record
(``00000000000000000042.wal``), so sorting names sorts the log. The ledger knows, per
segment, which of its ingest records are not yet applied and how recent its newest
session record is; from that it says which segments may be retired (deleted).

Segments retire oldest first and never out of order: an applied marker always lives
in the same or a later segment than its record, so deleting only a prefix of the log
can never leave a record behind without its marker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import attrs

SEGMENT_SUFFIX = ".wal"
_SEGMENT_NAME = re.compile(r"^(\d{20})\.wal$")
SECONDS_PER_DAY = 86_400.0


def segment_name(first_seq: int) -> str:
    return f"{first_seq:020d}{SEGMENT_SUFFIX}"


def parse_segment_name(name: str) -> int | None:
    """The first sequence number a segment file name promises, or None if not a segment."""
    match = _SEGMENT_NAME.match(name)
    return int(match.group(1)) if match else None


@attrs.define
class SegmentInfo:
    """What the ledger knows of one segment."""

    path: Path
    first_seq: int
    last_seq: int = 0  # 0 while empty
    size: int = 0
    unapplied: set[int] = attrs.field(factory=set)
    newest_session_at: float | None = None

    @property
    def empty(self) -> bool:
        return self.last_seq == 0


@attrs.frozen
class RetentionPolicy:
    session_max_age_s: float
    max_bytes: int


class SegmentLedger:
    """Segments oldest first; the last one is the one being appended to (if any)."""

    def __init__(self) -> None:
        self.segments: list[SegmentInfo] = []
        self._segment_of_unapplied: dict[int, SegmentInfo] = {}

    def add_segment(self, segment: SegmentInfo) -> None:
        self.segments.append(segment)

    def note_record(
        self,
        segment: SegmentInfo,
        seq: int,
        *,
        size: int,
        data: bool,
        session_at: float | None = None,
        applies: Iterable[int] = (),
    ) -> None:
        """Account for record ``seq`` (``size`` bytes framed) just written to ``segment``.

        ``data``: an ingest or delete record, unapplied until a marker names it.
        ``applies``: the sequence numbers an applied marker names.
        """
        segment.last_seq = seq
        segment.size += size
        if data:
            segment.unapplied.add(seq)
            self._segment_of_unapplied[seq] = segment
        if session_at is not None and (
            segment.newest_session_at is None or session_at > segment.newest_session_at
        ):
            segment.newest_session_at = session_at
        self.mark_applied(applies)

    def mark_applied(self, seqs: Iterable[int]) -> None:
        """Markers for records already retired (or never seen) are ignored."""
        for seq in seqs:
            segment = self._segment_of_unapplied.pop(seq, None)
            if segment is not None:
                segment.unapplied.discard(seq)

    @property
    def unapplied_count(self) -> int:
        return len(self._segment_of_unapplied)

    @property
    def total_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    def retirable(self, now: float, policy: RetentionPolicy) -> list[SegmentInfo]:
        """The oldest segments that may be deleted now, never the last (active) one.

        A segment may go when all its ingest records are applied and its session
        records are past retention: older than the age limit, or the log is over its
        size limit (then the oldest go first until it is under).
        """
        chosen: list[SegmentInfo] = []
        remaining = self.total_bytes
        for segment in self.segments[:-1]:
            if segment.unapplied:
                break
            expired = (
                segment.newest_session_at is None
                or now - segment.newest_session_at > policy.session_max_age_s
                or remaining > policy.max_bytes
            )
            if not expired:
                break
            chosen.append(segment)
            remaining -= segment.size
        return chosen

    def remove(self, retired: Iterable[SegmentInfo]) -> None:
        gone = {id(s) for s in retired}
        self.segments = [s for s in self.segments if id(s) not in gone]
