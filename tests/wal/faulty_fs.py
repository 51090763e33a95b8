"""A ``WalFileSystem`` for tests: fails the Nth write/fsync and can model a crash.

Counts ``write``, ``fsync`` and ``fsync_directory`` calls together (1-based). The call
numbered ``fail_at`` raises ``OSError(errno)``; a failing ``write`` first writes half
of its data, as an interrupted write would. It also remembers how much of each file
was fsynced and which created files were made durable by a directory fsync, so
``crash(lose_unsynced=True)`` can leave the directory as a power cut would.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from retrieval_mcp.wal.filesystem import OsFileSystem


class FaultyFileSystem(OsFileSystem):
    def __init__(self, fail_at: int | None = None, *, error: int = errno.EIO) -> None:
        self.fail_at = fail_at
        self.error = error
        self.operations: list[str] = []
        self.failed: str | None = None
        self._paths: dict[int, Path] = {}
        self._synced: dict[Path, int] = {}
        self._created_not_durable: set[Path] = set()
        self._unlinked_not_durable: dict[Path, bytes] = {}

    @property
    def count(self) -> int:
        return len(self.operations)

    def _tick(self, what: str) -> None:
        self.operations.append(what)
        if self.fail_at is not None and len(self.operations) == self.fail_at:
            self.failed = what
            raise OSError(self.error, os.strerror(self.error))

    def create(self, path: Path) -> int:
        fd = super().create(path)
        self._paths[fd] = path
        self._synced[path] = 0
        self._created_not_durable.add(path)
        return fd

    def write(self, fd: int, data: bytes) -> int:
        path = self._paths[fd]
        try:
            self._tick(f"write {path.name}")
        except OSError:
            super().write(fd, data[: len(data) // 2])
            raise
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        path = self._paths[fd]
        self._tick(f"fsync {path.name}")
        super().fsync(fd)
        self._synced[path] = os.fstat(fd).st_size

    def fsync_directory(self, path: Path) -> None:
        self._tick(f"fsync {path.name}/")
        super().fsync_directory(path)
        self._created_not_durable = {p for p in self._created_not_durable if p.parent != path}
        self._unlinked_not_durable = {
            p: data for p, data in self._unlinked_not_durable.items() if p.parent != path
        }

    def close(self, fd: int) -> None:
        self._paths.pop(fd, None)
        super().close(fd)

    def unlink(self, path: Path) -> None:
        synced = self._synced.pop(path, None)
        if path not in self._created_not_durable:
            data = path.read_bytes()
            self._unlinked_not_durable[path] = data if synced is None else data[:synced]
        self._created_not_durable.discard(path)
        super().unlink(path)

    def crash(self, *, lose_unsynced: bool) -> None:
        """Leave the files as a crash would. A killed process loses nothing the kernel
        already has (``lose_unsynced=False``); a power cut loses every byte not
        fsynced, every file whose creation no directory fsync made durable, and every
        deletion no directory fsync made durable (the file comes back)."""
        if not lose_unsynced:
            return
        for path, data in self._unlinked_not_durable.items():
            path.write_bytes(data)
        for path, synced in self._synced.items():
            if not path.exists():
                continue
            if path in self._created_not_durable:
                path.unlink()
            else:
                os.truncate(path, synced)
