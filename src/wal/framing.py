"""Record framing: a fixed header (marker, length, sequence, commit group, CRC32), then
the payload. Pure functions over bytes, no I/O.

Frame layout, little-endian::

    offset size field
    0      4    marker   b"\\xa7WL1" (the 0xA7 byte never occurs in ASCII-only JSON)
    4      4    length   payload bytes, 1 .. MAX_PAYLOAD_BYTES
    8      8    seq      the record's sequence number: 1, 2, … contiguous across segments
    16     8    group    seq of the first record of the write (commit group) holding it
    24     4    crc      zlib.crc32 over bytes 4..24 and the payload
    28     …    payload  the encoded record (see ``records.py``)

The CRC covers the length, so a flipped length bit is caught like a flipped payload
bit. The commit group lets recovery tell a torn tail from corruption: only the last
write can be torn (every earlier one was fsynced before the next began), so damage
followed by intact frames of *another* commit group is corruption, never a tear.
"""

from __future__ import annotations

import struct
import zlib

import attrs

MARKER = b"\xa7WL1"
HEADER = struct.Struct("<4sIQQI")
HEADER_BYTES = HEADER.size
#: Bound on one payload: a frame whose length field says more is damage, not data.
MAX_PAYLOAD_BYTES = 64 * 1024 * 1024


@attrs.frozen
class Frame:
    """One intact record as found in a segment."""

    offset: int
    seq: int
    group: int
    payload: bytes

    @property
    def end(self) -> int:
        return self.offset + HEADER_BYTES + len(self.payload)


@attrs.frozen
class Damage:
    """The first bytes that are not an intact frame, and what follows them.

    ``later_groups`` holds the commit group of every intact frame found after the
    damage (by searching for the marker), in file order.
    """

    offset: int
    reason: str
    later_groups: tuple[int, ...]


@attrs.frozen
class SegmentScan:
    """What one segment's bytes hold: intact frames up to the first damage, if any."""

    frames: tuple[Frame, ...]
    valid_length: int
    damage: Damage | None

    def torn_tail(self, first_seq: int) -> bool:
        """True when the damage can only be an interrupted last write.

        That is when every intact frame after the damage belongs to the commit group
        the damaged bytes belong to: the group of the last intact frame (a group cut
        short) or the group that would start after it (``first_seq`` for a segment
        with no intact frame). Damage with nothing intact after it is a tear too.
        """
        if self.damage is None:
            return False
        groups = set(self.damage.later_groups)
        if not groups:
            return True
        if len(groups) > 1:
            return False
        (group,) = groups
        if self.frames:
            last = self.frames[-1]
            return group in (last.group, last.seq + 1)
        return group == first_seq


def _checksum(header_fields: bytes, payload: bytes) -> int:
    return zlib.crc32(payload, zlib.crc32(header_fields))


def encode_frame(seq: int, group: int, payload: bytes) -> bytes:
    """One frame holding ``payload`` as record ``seq`` of commit group ``group``."""
    if not 0 < len(payload) <= MAX_PAYLOAD_BYTES:
        raise ValueError(f"a WAL payload must be 1..{MAX_PAYLOAD_BYTES} bytes, not {len(payload)}")
    if not 0 < group <= seq:
        raise ValueError(f"commit group {group} must be in 1..seq ({seq})")
    fields = struct.pack("<IQQ", len(payload), seq, group)
    crc = _checksum(fields, payload)
    return HEADER.pack(MARKER, len(payload), seq, group, crc) + payload


def read_frame(data: bytes, offset: int) -> Frame | str:
    """The intact frame at ``offset``, or why there is none."""
    left = len(data) - offset
    if left < HEADER_BYTES:
        return f"incomplete header ({left} of {HEADER_BYTES} bytes)"
    marker, length, seq, group, crc = HEADER.unpack_from(data, offset)
    if marker != MARKER:
        return "no record marker"
    if not 0 < length <= MAX_PAYLOAD_BYTES:
        return f"implausible length {length}"
    if HEADER_BYTES + length > left:
        return f"record needs {HEADER_BYTES + length} bytes, {left} left in the segment"
    payload = data[offset + HEADER_BYTES : offset + HEADER_BYTES + length]
    if _checksum(data[offset + 4 : offset + 24], payload) != crc:
        return "checksum mismatch"
    if not 0 < group <= seq:
        return f"commit group {group} outside 1..{seq}"
    return Frame(offset=offset, seq=seq, group=group, payload=payload)


def scan_segment(data: bytes) -> SegmentScan:
    """Every intact frame from the start of ``data`` up to the first damage."""
    frames: list[Frame] = []
    offset = 0
    while offset < len(data):
        found = read_frame(data, offset)
        if isinstance(found, str):
            return SegmentScan(
                frames=tuple(frames),
                valid_length=offset,
                damage=Damage(offset, found, _intact_groups_after(data, offset)),
            )
        frames.append(found)
        offset = found.end
    return SegmentScan(frames=tuple(frames), valid_length=offset, damage=None)


def _intact_groups_after(data: bytes, offset: int) -> tuple[int, ...]:
    # Only reached on damage, so a marker search over the rest of the segment is fine.
    groups: list[int] = []
    position = data.find(MARKER, offset + 1)
    while position != -1:
        found = read_frame(data, position)
        if isinstance(found, Frame):
            groups.append(found.group)
            position = data.find(MARKER, found.end)
        else:
            position = data.find(MARKER, position + 1)
    return tuple(groups)
