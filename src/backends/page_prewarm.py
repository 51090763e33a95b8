"""Read a store's files into the page cache before the engine or a search needs them.

Why: qdrant-edge's ``close`` drops the shard's pages from the page cache, and ``load``
reads the vectors and graphs back but not the payload storage or the payload indexes.
Every search reads the fused top-k's payloads, so on a freshly started 1M-chunk store
each of them was a disk read: 6.9 ms per call against 1.1 ms once the files had been
read (ADR 0053). ``posix_fadvise(WILLNEED)`` brought in about a third of the files, so
this reads them.

The read runs in worker threads one file at a time, after the server is ready (it
never delays readiness) and cancellable between files; a file that disappears
mid-way (the optimiser replaced its segment) is skipped. Nothing read is kept: the
pages stay in the kernel's cache, shared with the engine's memory maps.

The same ``close`` leaves the files ``load`` reads cold too (1.5 GiB of dense vectors
at 1M chunks), so ``serve`` starts reading those in a plain thread before it imports
the rest of the server (``launch.py``): the disk works while Python imports (ADR 0053).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

#: One thread hop reads this much; small enough that cancellation waits at most a few ms.
CHUNK_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PrewarmReport:
    """What a pre-read did: for the log line and the tests."""

    files: int
    bytes_read: int
    seconds: float
    #: The reads stopped because ``max_bytes`` was spent (whether or not more was left).
    budget_spent: bool


def files_under(roots: Iterable[Path]) -> list[Path]:
    """Every regular file below ``roots``, in a stable order (roots first-to-last)."""
    found: list[Path] = []
    for root in roots:
        if root.is_dir():
            found.extend(sorted(p for p in root.rglob("*") if p.is_file()))
        elif root.is_file():
            found.append(root)
    return found


def shard_cold_files(shard: Path) -> list[Path]:
    """The qdrant-edge shard's files that ``load`` leaves out of the page cache and
    searches read: payload storage (the fused top-k's payloads) first, then the payload
    indexes (every search's filters)."""
    segments = sorted((shard / "segments").glob("*"))
    return files_under(
        [s / "payload_storage" for s in segments] + [s / "payload_index" for s in segments]
    )


def shard_load_files(shard: Path) -> list[Path]:
    """The shard's files that ``load`` reads whole: dense vectors, their HNSW graphs and
    the id trackers (what a 1M shard's load spends its wall time waiting for)."""
    roots: list[Path] = []
    for segment in sorted((shard / "segments").glob("*")):
        roots += sorted(segment.glob("vector_storage-dense*")) + sorted(
            segment.glob("vector_index-dense*")
        )
        roots += sorted(segment.glob("id_tracker*"))
    return files_under(roots)


def read_files(
    paths: Sequence[Path], *, max_bytes: int, chunk_bytes: int = CHUNK_BYTES
) -> PrewarmReport:
    """Read ``paths`` in order, at most ``max_bytes`` in all, and discard the bytes."""
    started = time.perf_counter()
    buffer = memoryview(bytearray(chunk_bytes))
    total = 0
    files = 0
    for path in paths:
        if total >= max_bytes:
            break
        files += 1
        total += _read_file(path, buffer, max_bytes - total)
    return PrewarmReport(files, total, time.perf_counter() - started, total >= max_bytes)


def start_read_ahead(paths: Sequence[Path], *, max_bytes: int) -> threading.Thread:
    """Read ``paths`` in a daemon thread (the process may exit before it is done)."""
    thread = threading.Thread(
        target=read_files,
        args=(paths,),
        kwargs={"max_bytes": max_bytes},
        daemon=True,
        name="store-read-ahead",
    )
    thread.start()
    return thread


def _read_file(path: Path, buffer: memoryview, limit: int) -> int:
    """Bytes of ``path`` read, at most ``limit``; what was read before an error when the
    file is gone or unreadable (its segment was replaced: nothing left to warm)."""
    done = 0
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return 0
    try:
        while done < limit:
            count = os.preadv(fd, [buffer[: min(len(buffer), limit - done)]], done)
            if count <= 0:
                break
            done += count
    except OSError:
        pass
    finally:
        os.close(fd)
    return done


async def read_into_page_cache(
    paths: Sequence[Path], *, max_bytes: int, chunk_bytes: int = CHUNK_BYTES
) -> PrewarmReport:
    """``read_files`` one file per worker-thread hop, so that a cancelled read stops
    after the file in hand (the engine's payload pages are 32 MiB at most)."""
    started = time.perf_counter()
    total = 0
    files = 0
    for path in paths:
        if total >= max_bytes:
            break
        one = await trio.to_thread.run_sync(
            functools.partial(
                read_files, [path], max_bytes=max_bytes - total, chunk_bytes=chunk_bytes
            )
        )
        files += one.files
        total += one.bytes_read
    return PrewarmReport(files, total, time.perf_counter() - started, total >= max_bytes)
