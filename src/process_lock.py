"""An exclusive, process-wide lock on a directory (the store, the WAL).

``flock`` locks die with their process, so a crash never leaves a directory locked,
and the file holds the owner's pid so the refusal can name who has it. Two opens in
one process conflict too (separate open file descriptions), so a second server in
the same test process is refused like a second process would be.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

from retrieval_mcp.errors import RetrievalMCPError

LOCK_NAME = "LOCK"


class ProcessLock:
    """Held from ``acquire`` until ``release`` (or process exit)."""

    def __init__(
        self, directory: Path, *, refused: Callable[[str], RetrievalMCPError], what: str
    ) -> None:
        self.path = directory / LOCK_NAME
        self._refused = refused
        self._what = what
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise self._refused(
                f"the {self._what} at {self.path.parent} is in use by another process "
                f"(pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Release the lock; safe to call twice."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
