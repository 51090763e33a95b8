"""An exclusive, process-wide lock on an embedded store directory.

The engine itself refuses a second opener, but with an opaque error; this lock
comes first and names the process that holds the store. ``flock`` locks die with
their process, so a crash never leaves the store locked.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from retrieval_mcp.errors import StoreLocked


class StoreLock:
    """Held from ``acquire`` until ``release`` (or process exit)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "LOCK"
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StoreLocked(
                f"the store at {self.path.parent} is in use by another process (pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
