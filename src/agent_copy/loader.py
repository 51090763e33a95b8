"""Load operator copy from a sandboxed directory and merge it over the shipped defaults.

The copy is operator-trusted and never agent-writable, because tool descriptions and
the operating policy are what an agent obeys: a writable copy file would be a
prompt-injection surface. So the loader only reads ``copy.toml`` (and the files it
``include``s) from the configured directory, and refuses — naming the file and the
reason — a path that escapes it (``..``, absolute paths, symlinks leading out), a
file or directory that group or others can write, a non-regular file (a directory, a
pipe, a symlink swapped in after the check), one larger than 256 KiB, one that is not
UTF-8 TOML, and one whose values have the wrong types (``overlay.py`` checks each
file's shape before anything walks it). Overrides merge field by field: a field left
out keeps the default. Every failure is a ``CopyRejected``; nothing else escapes.
"""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from retrieval_mcp.agent_copy.model import CopyConfig, load_shipped_copy
from retrieval_mcp.agent_copy.overlay import (
    MAX_PROBLEMS,
    CopyOverlay,
    check_shape,
    describe_shape_errors,
    dotted,
)
from retrieval_mcp.config_merge import deep_merge
from retrieval_mcp.errors import ConfigError

MAIN_FILE = "copy.toml"
MAX_FILE_BYTES = 256 * 1024
MAX_INCLUDES = 32


class CopyRejected(ConfigError):
    """An operator copy file was refused; the message names the file, field and reason."""

    code = "copy_rejected"
    remedy = "Fix the named file and field, then reload (SIGHUP) or restart."


def _check_not_writable_by_others(mode: int, path: Path, what: str) -> None:
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CopyRejected(
            f"{path}: {what} is writable by group or others (mode {stat.S_IMODE(mode):04o})",
            remedy=f"chmod go-w {path}",
        )


def _resolve_inside(root: Path, relative: str, origin: str) -> Path:
    if not relative or any(ord(ch) < 32 for ch in relative) or len(relative) > 1024:
        raise CopyRejected(f"{origin}: include {relative[:60]!a} is not a usable path")
    pure = PurePosixPath(relative)
    if pure.is_absolute() or relative.startswith("~"):
        raise CopyRejected(f"{origin}: include {relative!r} is absolute; use a path inside {root}")
    if ".." in pure.parts:
        raise CopyRejected(f"{origin}: include {relative!r} climbs out with '..'")
    try:
        target = (root / pure).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop is RuntimeError on 3.11
        raise CopyRejected(f"{origin}: {relative!r} cannot be resolved: {exc}") from exc
    if not target.is_relative_to(root):
        raise CopyRejected(f"{origin}: {relative!r} leads outside {root} (through a symlink)")
    return target


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, read through one descriptor so nothing can be swapped in
    between the checks and the read: ``O_NOFOLLOW`` refuses a symlink put in place
    after the path was resolved, ``O_NONBLOCK`` keeps a named pipe from blocking the
    open, and the type, mode and size checks are on that descriptor (``fstat``). The
    read is bounded, so a file that grows after the check is still refused."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise CopyRejected(f"{path}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CopyRejected(f"{path}: is a symlink (not allowed here)") from None
        raise CopyRejected(f"{path}: cannot open: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CopyRejected(f"{path}: not a regular file ({_kind(info.st_mode)})")
        if info.st_size > MAX_FILE_BYTES:
            raise CopyRejected(f"{path}: {info.st_size} bytes, more than {MAX_FILE_BYTES}")
        _check_not_writable_by_others(info.st_mode, path, "the file")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise CopyRejected(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        raise CopyRejected(f"{path}: grew past {MAX_FILE_BYTES} bytes while being read")
    return b"".join(chunks)


def _read(path: Path) -> CopyOverlay:
    """One file, parsed and shape-checked; CopyRejected names what is wrong."""
    raw = _read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CopyRejected(
            f"{path}: not UTF-8 (byte {exc.start} is {raw[exc.start]:#04x})"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CopyRejected(f"{path}: not valid UTF-8 TOML: {exc}") from None
    except RecursionError:
        raise CopyRejected(f"{path}: arrays or inline tables nested too deeply") from None
    try:
        return check_shape(data)
    except ValidationError as exc:
        raise CopyRejected(f"{path}: {describe_shape_errors(exc)}") from None


def read_operator_copy(directory: Path) -> tuple[dict[str, Any], list[Path]]:
    """The merged operator overrides under ``directory`` and the files they came from.

    Every file is shape-checked on its own (so a refusal names the file) before the
    overrides are merged; the result is safe for ``merge_copy`` to walk."""
    try:
        info = os.stat(directory)
        root = directory.resolve()
    except FileNotFoundError:
        raise CopyRejected(f"{directory}: the copy directory does not exist") from None
    except (OSError, RuntimeError) as exc:
        raise CopyRejected(f"{directory}: cannot open the copy directory: {exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise CopyRejected(f"{directory}: the copy directory does not exist (it is a file)")
    _check_not_writable_by_others(info.st_mode, root, "the copy directory")
    main = _resolve_inside(root, MAIN_FILE, str(root))
    overlay = _read(main)
    data = overlay.overrides()
    files = [main]
    if len(overlay.include) > MAX_INCLUDES:
        raise CopyRejected(f"{main}: more than {MAX_INCLUDES} includes")
    for relative in overlay.include:
        path = _resolve_inside(root, relative, str(main))
        included = _read(path)
        if "include" in included.model_fields_set:
            raise CopyRejected(f"{path}: includes may not include further files")
        data = deep_merge(data, included.overrides())
        files.append(path)
    return data, files


def merge_copy(shipped: CopyConfig, overrides: dict[str, Any], origin: str) -> CopyConfig:
    """Apply overrides field by field; unknown tools or parameters are errors.

    ``overrides`` must come from ``read_operator_copy`` (or ``CopyOverlay.overrides``):
    its shape is checked here again, so a caller that skipped that still gets a
    CopyRejected and never a TypeError."""
    try:
        checked = check_shape(overrides).overrides()
    except ValidationError as exc:
        raise CopyRejected(f"{origin}: {describe_shape_errors(exc)}") from None
    tools: dict[str, Any] = checked.get("tools", {})
    unknown_tools = set(tools) - set(shipped.tools)
    if unknown_tools:
        raise CopyRejected(
            f"{origin}: unknown tool(s) {sorted(unknown_tools)}; known: {sorted(shipped.tools)}"
        )
    for key, tool in tools.items():
        unknown = set(tool.get("params", {})) - set(shipped.tools[key].params)
        if unknown:
            raise CopyRejected(
                f"{origin}: tools.{key}.params: unknown parameter(s) {sorted(unknown)}"
            )
    merged = deep_merge(shipped.model_dump(), checked)
    try:
        return CopyConfig.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{dotted(err['loc'])}: {err['msg']}" for err in exc.errors()[:MAX_PROBLEMS]
        )
        raise CopyRejected(f"{origin}: {problems}") from None


def load_copy(directory: Path | None) -> CopyConfig:
    """Shipped defaults, with the operator's overrides from ``directory`` if given."""
    shipped = load_shipped_copy()
    if directory is None:
        return shipped
    overrides, files = read_operator_copy(directory)
    return merge_copy(shipped, overrides, ", ".join(str(f) for f in files))
