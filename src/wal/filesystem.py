"""The file operations the log performs, behind one small seam.

``OsFileSystem`` is the real thing. Tests pass a wrapper that fails the Nth ``write``
or ``fsync`` (or keeps only what was fsynced, to model a crash), so every failure
path runs deterministically without touching the real disk's behaviour.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol


class WalFileSystem(Protocol):
    """What the log needs from the filesystem. File handles are OS descriptors."""

    def create(self, path: Path) -> int:
        """Create ``path`` (it must not exist) for appending; return its descriptor."""
        ...

    def write(self, fd: int, data: bytes) -> int:
        """Write some prefix of ``data``; return how many bytes (like ``os.write``)."""
        ...

    def fsync(self, fd: int) -> None: ...

    def close(self, fd: int) -> None: ...

    def fsync_directory(self, path: Path) -> None:
        """Make creations, renames and deletions in directory ``path`` durable."""
        ...

    def read(self, path: Path) -> bytes: ...

    def truncate(self, path: Path, length: int) -> None:
        """Cut ``path`` to ``length`` bytes and make that durable (fsync)."""
        ...

    def unlink(self, path: Path) -> None: ...

    def list_directory(self, path: Path) -> list[str]: ...


class OsFileSystem:
    """``WalFileSystem`` over ``os``: O_APPEND files, mode 0600, real fsyncs."""

    def create(self, path: Path) -> int:
        return os.open(
            path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
        )

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def close(self, fd: int) -> None:
        os.close(fd)

    def fsync_directory(self, path: Path) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self, path: Path) -> bytes:
        return path.read_bytes()

    def truncate(self, path: Path, length: int) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.ftruncate(fd, length)
            os.fsync(fd)
        finally:
            os.close(fd)

    def unlink(self, path: Path) -> None:
        path.unlink()

    def list_directory(self, path: Path) -> list[str]:
        return os.listdir(path)


def write_all(fs: WalFileSystem, fd: int, data: bytes) -> None:
    """Write every byte of ``data``: ``write`` may write less than asked."""
    offset = 0
    while offset < len(data):
        written = fs.write(fd, data[offset:] if offset else data)
        if written <= 0:
            raise OSError(f"write returned {written}")
        offset += written
