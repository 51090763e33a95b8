"""Framing: round trip, and every kind of damage found and classified."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from retrieval_mcp.wal.framing import (
    HEADER_BYTES,
    MARKER,
    Frame,
    encode_frame,
    read_frame,
    scan_segment,
)


def frames(*groups: list[bytes], first_seq: int = 1) -> tuple[bytes, list[int]]:
    """Encode commit groups back to back; return the bytes and each frame's offset."""
    data = b""
    offsets = []
    seq = first_seq
    for group in groups:
        start = seq
        for payload in group:
            offsets.append(len(data))
            data += encode_frame(seq, start, payload)
            seq += 1
    return data, offsets


def test_round_trip() -> None:
    data, offsets = frames([b'{"a":1}', b'{"b":2}'], [b'{"c":3}'], first_seq=7)
    scan = scan_segment(data)
    assert scan.damage is None and scan.valid_length == len(data)
    assert [(f.offset, f.seq, f.group, f.payload) for f in scan.frames] == [
        (offsets[0], 7, 7, b'{"a":1}'),
        (offsets[1], 8, 7, b'{"b":2}'),
        (offsets[2], 9, 9, b'{"c":3}'),
    ]
    assert scan.frames[0].end == offsets[1]


def test_empty_segment_is_clean() -> None:
    scan = scan_segment(b"")
    assert scan.frames == () and scan.damage is None and not scan.torn_tail(1)


def test_encode_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="payload"):
        encode_frame(1, 1, b"")
    with pytest.raises(ValueError, match="commit group"):
        encode_frame(3, 4, b"x")


@pytest.mark.parametrize("keep", [1, HEADER_BYTES - 1, HEADER_BYTES, HEADER_BYTES + 3])
def test_truncated_last_record_is_a_torn_tail(keep: int) -> None:
    data, offsets = frames([b"one"], [b"two-two-two"])
    torn = data[: offsets[1] + keep]
    scan = scan_segment(torn)
    assert [f.seq for f in scan.frames] == [1]
    assert scan.damage is not None and scan.damage.offset == offsets[1]
    assert scan.valid_length == offsets[1]
    assert scan.torn_tail(first_seq=1)


def test_flipped_byte_in_last_record_is_a_torn_tail() -> None:
    data, offsets = frames([b"one"], [b"two"], [b"three"])
    for position in range(offsets[2], len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x40
        scan = scan_segment(bytes(damaged))
        assert scan.damage is not None and scan.damage.offset == offsets[2], position
        assert scan.torn_tail(first_seq=1), position


def test_flipped_byte_in_middle_record_is_not_a_tear() -> None:
    data, offsets = frames([b"one"], [b"two"], [b"three"])
    for position in range(offsets[1], offsets[2]):
        damaged = bytearray(data)
        damaged[position] ^= 0x01
        scan = scan_segment(bytes(damaged))
        assert scan.damage is not None and scan.damage.offset == offsets[1], position
        assert scan.damage.later_groups == (3,), position
        assert not scan.torn_tail(first_seq=1), position


def test_damage_inside_the_last_commit_group_is_a_tear() -> None:
    # Pages of an unsynced write can reach the disk out of order: a hole in the last
    # group followed by the rest of that same group is still a torn write.
    data, offsets = frames([b"one"], [b"two", b"three", b"four"])
    damaged = bytearray(data)
    damaged[offsets[2] : offsets[3]] = bytes(offsets[3] - offsets[2])
    scan = scan_segment(bytes(damaged))
    assert scan.damage is not None and scan.damage.offset == offsets[2]
    assert scan.damage.later_groups == (2,)
    assert scan.torn_tail(first_seq=1)


def test_hole_at_the_start_of_a_new_group_is_a_tear() -> None:
    data, offsets = frames([b"one"], [b"two", b"three"])
    damaged = bytearray(data)
    damaged[offsets[1] : offsets[2]] = bytes(offsets[2] - offsets[1])
    scan = scan_segment(bytes(damaged))
    assert scan.torn_tail(first_seq=1)
    # …but not when a later group follows the hole.
    data, offsets = frames([b"one"], [b"two"], [b"three"])
    damaged = bytearray(data)
    damaged[offsets[1] : offsets[2]] = bytes(offsets[2] - offsets[1])
    assert not scan_segment(bytes(damaged)).torn_tail(first_seq=1)


def test_damage_in_first_record_classified_against_segment_first_seq() -> None:
    data, _ = frames([b"one", b"two"], first_seq=10)
    damaged = bytearray(data)
    damaged[5] ^= 0xFF  # length field of record 10
    scan = scan_segment(bytes(damaged))
    assert scan.frames == () and scan.damage is not None and scan.damage.offset == 0
    assert scan.torn_tail(first_seq=10)
    assert not scan.torn_tail(first_seq=3)


def test_zero_filled_tail_is_a_tear() -> None:
    data, _ = frames([b"one"])
    scan = scan_segment(data + bytes(4096))
    assert [f.seq for f in scan.frames] == [1]
    assert scan.damage is not None and scan.damage.reason == "no record marker"
    assert scan.torn_tail(first_seq=1)


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda b: b[:10], "incomplete header"),
        (lambda b: b"XXXX" + b[4:], "no record marker"),
        (lambda b: b[:4] + (0).to_bytes(4, "little") + b[8:], "implausible length"),
        (lambda b: b + b"", None),
        (lambda b: b[:-1], "record needs"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum mismatch"),
    ],
)
def test_read_frame_says_why(mutate: Callable[[bytes], bytes], reason: str | None) -> None:
    data = encode_frame(1, 1, b"payload")
    found = read_frame(mutate(data), 0)
    if reason is None:
        assert isinstance(found, Frame)
    else:
        assert isinstance(found, str) and found.startswith(reason)


def test_marker_never_occurs_in_ascii_payloads() -> None:
    assert any(b >= 0x80 for b in MARKER)
