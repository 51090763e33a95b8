"""Load operator copy from a sandboxed directory and merge it over the shipped defaults.

The copy is operator-trusted and never agent-writable, because tool descriptions and
the operating policy are what an agent obeys: a writable copy file would be a
prompt-injection surface. So the loader only reads ``copy.toml`` (and the files it
``include``s) from the configured directory, and refuses — naming the file and the
reason — a path that escapes it (``..``, absolute paths, symlinks leading out), a
file or directory that group or others can write, a non-regular file, or one larger
than 256 KiB. Overrides merge field by field: a field left out keeps the default.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from retrieval_mcp.agent_copy.model import CopyConfig, load_shipped_copy
from retrieval_mcp.config_merge import deep_merge
from retrieval_mcp.errors import ConfigError

MAIN_FILE = "copy.toml"
MAX_FILE_BYTES = 256 * 1024
MAX_INCLUDES = 32


class CopyRejected(ConfigError):
    """An operator copy file was refused; the message names the file, field and reason."""

    code = "copy_rejected"
    remedy = "Fix the named file and field, then reload (SIGHUP) or restart."


def _check_not_writable_by_others(path: Path, what: str) -> None:
    mode = os.stat(path).st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CopyRejected(
            f"{path}: {what} is writable by group or others (mode {stat.S_IMODE(mode):04o})",
            remedy=f"chmod go-w {path}",
        )


def _resolve_inside(root: Path, relative: str, origin: str) -> Path:
    pure = PurePosixPath(relative)
    if pure.is_absolute() or relative.startswith("~"):
        raise CopyRejected(f"{origin}: include {relative!r} is absolute; use a path inside {root}")
    if ".." in pure.parts:
        raise CopyRejected(f"{origin}: include {relative!r} climbs out with '..'")
    target = (root / pure).resolve()
    if not target.is_relative_to(root):
        raise CopyRejected(f"{origin}: {relative!r} leads outside {root} (through a symlink)")
    return target


def _read(path: Path, root: Path) -> dict[str, Any]:
    if not path.exists():
        raise CopyRejected(f"{path}: no such file")
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise CopyRejected(f"{path}: not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise CopyRejected(f"{path}: {info.st_size} bytes, more than {MAX_FILE_BYTES}")
    _check_not_writable_by_others(path, "the file")
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CopyRejected(f"{path}: not valid UTF-8 TOML: {exc}") from exc


def read_operator_copy(directory: Path) -> tuple[dict[str, Any], list[Path]]:
    """The merged operator overrides under ``directory`` and the files they came from."""
    if not directory.is_dir():
        raise CopyRejected(f"{directory}: the copy directory does not exist")
    root = directory.resolve()
    _check_not_writable_by_others(root, "the copy directory")
    main = _resolve_inside(root, MAIN_FILE, str(root))
    data = _read(main, root)
    files = [main]
    includes = data.pop("include", [])
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise CopyRejected(f"{main}: include must be a list of relative paths")
    if len(includes) > MAX_INCLUDES:
        raise CopyRejected(f"{main}: more than {MAX_INCLUDES} includes")
    for relative in includes:
        path = _resolve_inside(root, relative, str(main))
        included = _read(path, root)
        if "include" in included:
            raise CopyRejected(f"{path}: includes may not include further files")
        data = deep_merge(data, included)
        files.append(path)
    return data, files


def merge_copy(shipped: CopyConfig, overrides: dict[str, Any], origin: str) -> CopyConfig:
    """Apply overrides field by field; unknown tools or parameters are errors."""
    unknown_tools = set(overrides.get("tools", {})) - set(shipped.tools)
    if unknown_tools:
        raise CopyRejected(
            f"{origin}: unknown tool(s) {sorted(unknown_tools)}; known: {sorted(shipped.tools)}"
        )
    for key, tool in overrides.get("tools", {}).items():
        params = tool.get("params", {}) if isinstance(tool, dict) else {}
        unknown = set(params) - set(shipped.tools[key].params)
        if unknown:
            raise CopyRejected(
                f"{origin}: tools.{key}.params: unknown parameter(s) {sorted(unknown)}"
            )
    merged = deep_merge(shipped.model_dump(), overrides)
    try:
        return CopyConfig.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise CopyRejected(f"{origin}: {problems}") from exc


def load_copy(directory: Path | None) -> CopyConfig:
    """Shipped defaults, with the operator's overrides from ``directory`` if given."""
    shipped = load_shipped_copy()
    if directory is None:
        return shipped
    overrides, files = read_operator_copy(directory)
    return merge_copy(shipped, overrides, ", ".join(str(f) for f in files))
