"""Token buckets that every worker process sees: a small mmap'd table under an fcntl lock.

With ``serve --workers N`` each process admits its own requests, but a budget is the
operator's promise for the *server*, not for one process: dividing it by N would
refuse a client that happens to land on a busy worker while others sit idle, and
N private tables would let a client spend N× its budget. So the buckets live in one
file that the parent creates and every worker maps (ADR 0045).

Layout: a fixed table of ``SLOTS`` slots of ``SLOT.size`` bytes. A slot holds the
first 16 bytes of the key's BLAKE2b digest, the level (tokens, as-of time) and the
rate it was filled at, so that any worker can tell whether a slot's bucket has
refilled completely (a full bucket is the same as no bucket) and reuse it. A key
probes ``PROBE`` consecutive slots: its own, else the first empty or refilled one,
else the one nearest to full is taken over (that caller gets a fresh bucket: bounded,
and only reachable with more than ``PROBE`` busy keys hashing together).

The arithmetic is ``token_bucket.take``, unchanged. Time is ``time.monotonic()``,
which on Linux is one clock for every process (Trio's clock carries a per-process
offset, so it cannot be shared). The whole read-modify-write runs under an exclusive
``lockf`` on the file: a few microseconds, held by a synchronous call, and released
by the kernel if its holder is killed. A slot torn by a kill is clamped on read.
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import struct
from pathlib import Path

from retrieval_mcp.transport.token_bucket import BucketLevel, BucketRate, is_full, take

#: 16-byte key digest, tokens, at, burst, per_minute.
SLOT = struct.Struct("<16sdddd")
SLOTS = 4096
PROBE = 16
_EMPTY = bytes(16)


def table_size() -> int:
    return SLOT.size * SLOTS


def create_table(path: Path) -> None:
    """Create (or reset) the table at ``path``, 0600: every bucket starts full."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.ftruncate(fd, table_size())
    finally:
        os.close(fd)


def _digest(key: tuple[str, str]) -> bytes:
    digest = hashlib.blake2b(f"{key[0]}\x00{key[1]}".encode(), digest_size=16).digest()
    return digest if digest != _EMPTY else b"\x01" + digest[1:]


class SharedBuckets:
    """The table at ``path`` (made by ``create_table``), mapped until ``close``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        if os.fstat(self._fd).st_size != table_size():
            os.close(self._fd)
            raise ValueError(f"{path} is not a bucket table of this version")
        self._map = mmap.mmap(self._fd, table_size(), mmap.MAP_SHARED)

    def take(self, key: tuple[str, str], rate: BucketRate, now: float) -> float:
        """Take one token from ``key``'s bucket (created full); 0.0 when admitted, else
        the seconds to wait. Atomic across every process mapping the table."""
        digest = _digest(key)
        start = int.from_bytes(digest[:4], "little") % SLOTS
        fcntl.lockf(self._fd, fcntl.LOCK_EX)
        try:
            slot, level = self._find(digest, start, rate, now)
            level, wait = take(level, rate, now)
            SLOT.pack_into(
                self._map,
                slot * SLOT.size,
                digest,
                level.tokens,
                level.at,
                rate.burst,
                rate.per_minute,
            )
            return wait
        finally:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)

    def _find(
        self, digest: bytes, start: int, rate: BucketRate, now: float
    ) -> tuple[int, BucketLevel]:
        reusable: int | None = None
        nearest_full, best_ratio = start, -1.0
        for i in range(PROBE):
            slot = (start + i) % SLOTS
            held, tokens, at, burst, per_minute = SLOT.unpack_from(self._map, slot * SLOT.size)
            if held == digest:
                if burst != rate.burst or per_minute != rate.per_minute:
                    return slot, BucketLevel(tokens=rate.burst, at=now)  # the rate changed
                return slot, BucketLevel(tokens=min(max(tokens, 0.0), rate.burst), at=at)
            if reusable is not None:
                continue
            if held == _EMPTY:
                reusable = slot
                continue
            other = BucketRate(per_minute=per_minute, burst=burst)
            if burst <= 0 or per_minute <= 0:
                reusable = slot  # torn or foreign: nothing worth keeping
                continue
            level = BucketLevel(tokens=min(max(tokens, 0.0), burst), at=at)
            if is_full(level, other, now):
                reusable = slot
                continue
            ratio = level.tokens / burst
            if ratio > best_ratio:
                nearest_full, best_ratio = slot, ratio
        chosen = reusable if reusable is not None else nearest_full
        return chosen, BucketLevel(tokens=rate.burst, at=now)

    def occupied(self, now: float) -> int:
        """Slots holding a bucket that has not refilled yet (statistics only)."""
        count = 0
        for slot in range(SLOTS):
            held, tokens, at, burst, per_minute = SLOT.unpack_from(self._map, slot * SLOT.size)
            if held == _EMPTY or burst <= 0 or per_minute <= 0:
                continue
            level = BucketLevel(tokens=min(max(tokens, 0.0), burst), at=at)
            if not is_full(level, BucketRate(per_minute=per_minute, burst=burst), now):
                count += 1
        return count

    def close(self) -> None:
        """Unmap and close; safe to call twice."""
        if self._fd == -1:
            return
        self._map.close()
        os.close(self._fd)
        self._fd = -1
