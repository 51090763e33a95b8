"""Bearer tokens: a 0600 file of SHA-256 digests, checked in constant time.

Only digests are stored, so reading the file does not yield a usable secret; a secret
is shown once, when it is created or rotated. The file holds named tokens, one per
client surface (``desktop``, ``cli``, ``ci``), each with an optional scope (the sources
it may read) and one or more secrets: rotation adds a new secret and gives the old one
an expiry (the grace period), after which it no longer verifies.

Format 2 (written)::

    {"format": 2, "tokens": [{"name": "ci", "created": 1.7e9, "sources": ["docs"],
      "secrets": [{"sha256": "<64 hex>", "created": 1.7e9, "expires": null}]}]}

Format 1 (foundation issue; read and migrated in memory, rewritten as format 2 by the
first ``token`` command that changes the file)::

    {"format": 1, "tokens": [{"name": "default", "sha256": "<64 hex>", "created": 1.7e9}]}

Writers (``token_commands``) hold an exclusive lock on ``tokens.json.lock`` and replace
the file atomically, so the server never reads half a file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import attrs
import cattrs
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval_mcp.errors import ConfigError
from retrieval_mcp.transport.caller import MCP_SCOPE, Caller

TOKEN_PREFIX = "lrm_"
FILE_FORMAT = 2
TOKEN_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
#: Secrets a token keeps at once (the current one and those still in their grace period).
MAX_SECRETS = 4
#: Far above any real file (a token with four secrets is ~600 bytes): a bigger one is
#: not ours, and reading it whole would let a bad write cost memory on every poll.
MAX_FILE_BYTES = 1024 * 1024


@attrs.frozen
class TokenSecret:
    sha256: str
    created: float
    expires: float | None = None  # set when rotated away: valid until then


@attrs.frozen
class TokenRecord:
    name: str
    created: float
    secrets: tuple[TokenSecret, ...]
    sources: tuple[str, ...] | None = None  # None: every source
    scopes: tuple[str, ...] | None = None  # None: MCP only (caller.TOKEN_SCOPES)

    def live_secrets(self, now: float) -> tuple[TokenSecret, ...]:
        return tuple(s for s in self.secrets if s.expires is None or s.expires > now)


@attrs.frozen
class TokenFile:
    tokens: tuple[TokenRecord, ...] = ()

    def get(self, name: str) -> TokenRecord | None:
        for record in self.tokens:
            if record.name == name:
                return record
        return None


_converter = cattrs.Converter(forbid_extra_keys=True)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> str:
    """A fresh 256-bit secret with the ``lrm_`` prefix (greppable by secret scanners)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _check_private_mode(mode: int, path: Path) -> None:
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{path} is accessible by group or others (mode {stat.S_IMODE(mode):04o})",
            remedy=f"chmod {'700' if stat.S_ISDIR(mode) else '600'} {path}",
        )


def check_private(path: Path) -> None:
    """Refuse a file or directory that group or others can read or write."""
    _check_private_mode(os.stat(path).st_mode, path)


def ensure_state_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_private(path)


def _unreadable(path: Path, why: object) -> ConfigError:
    return ConfigError(
        f"cannot read the token file {path}: {why}",
        remedy="Restore the file from a backup, or delete it and restart to create a new token.",
    )


# -- the file's shape, checked before anything walks it ------------------------------

_Finite = Annotated[float, Field(allow_inf_nan=False)]


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _SecretShape(_Shape):
    sha256: str
    created: _Finite
    expires: _Finite | None = None


class _TokenShape(_Shape):
    name: str
    created: _Finite
    secrets: list[_SecretShape]
    sources: list[str] | None = None
    scopes: list[str] | None = None


class _FormatTwo(_Shape):
    format: Literal[2]
    tokens: list[_TokenShape]


class _RowOne(_Shape):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)
    name: str
    sha256: str
    created: _Finite


class _FormatOne(_Shape):
    format: Literal[1]
    tokens: list[_RowOne]


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (dict, "an object"),
    (list, "an array"),
    (type(None), "null"),
)


def _json_type(value: object) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "a value")


def _shape_problem(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"]) or "the top level"
    if first["type"] == "extra_forbidden":
        problem = f"{field}: unknown field"
    elif first["type"] == "missing":
        problem = f"{field}: missing"
    else:
        problem = f"{field}: {first['msg']} (got {_json_type(first['input'])})"
    return problem + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


def _records(data: object, origin: Path) -> tuple[TokenRecord, ...]:
    if not isinstance(data, dict):
        raise _unreadable(origin, f"expected a JSON object, got {_json_type(data)}")
    version = data.get("format")
    try:
        if version == FILE_FORMAT and not isinstance(version, bool):
            two = _FormatTwo.model_validate(data)
            return tuple(
                TokenRecord(
                    name=t.name,
                    created=t.created,
                    secrets=tuple(TokenSecret(s.sha256, s.created, s.expires) for s in t.secrets),
                    sources=None if t.sources is None else tuple(t.sources),
                    scopes=None if t.scopes is None else tuple(t.scopes),
                )
                for t in two.tokens
            )
        if version == 1 and not isinstance(version, bool):
            one = _FormatOne.model_validate(data)
            return tuple(
                TokenRecord(
                    name=r.name, created=r.created, secrets=(TokenSecret(r.sha256, r.created),)
                )
                for r in one.tokens
            )
    except ValidationError as exc:
        raise _unreadable(origin, _shape_problem(exc)) from None
    shown = ascii(version)[:40] if version is not None else "missing"
    raise _unreadable(origin, f"format {shown} is not one this version reads (1 or {FILE_FORMAT})")


def parse_token_file(text: str, origin: Path) -> TokenFile:
    """Parse and validate either format; raise ConfigError naming what is wrong.
    Never raises anything else, whatever ``text`` holds."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _unreadable(origin, f"not valid JSON: {exc}") from None
    except RecursionError:
        raise _unreadable(origin, "not valid JSON: nested too deeply") from None
    parsed = TokenFile(tokens=_records(data, origin))
    names = [r.name for r in parsed.tokens]
    for record in parsed.tokens:
        if not TOKEN_NAME.match(record.name):
            raise _unreadable(origin, f"invalid token name {record.name[:80]!a}")
        if not record.secrets or any(not _DIGEST.match(s.sha256) for s in record.secrets):
            raise _unreadable(origin, f"token {record.name!r} has no valid SHA-256 digest")
        if record.sources is not None and not record.sources:
            raise _unreadable(origin, f"token {record.name!r} has an empty scope")
    if len(set(names)) != len(names):
        raise _unreadable(origin, "a token name appears twice")
    return parsed


def _read_private(path: Path) -> bytes:
    """The file's bytes through one descriptor: a symlink swapped in is refused
    (``O_NOFOLLOW``), a pipe cannot block the open (``O_NONBLOCK``), type and mode are
    checked on the descriptor itself, and the read stops past ``MAX_FILE_BYTES``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise _unreadable(path, why) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _unreadable(path, "not a regular file")
        _check_private_mode(info.st_mode, path)
        if info.st_size > MAX_FILE_BYTES:
            raise _unreadable(path, f"{info.st_size} bytes, more than {MAX_FILE_BYTES}")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _unreadable(path, exc.strerror) from None
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        raise _unreadable(path, f"grew past {MAX_FILE_BYTES} bytes while being read")
    return b"".join(chunks)


def load_tokens(path: Path) -> TokenFile:
    """Read the token file after checking that it and its directory are private.
    Raises ConfigError, and nothing else, for any file the server cannot use."""
    try:
        check_private(path.parent)
    except OSError as exc:
        raise _unreadable(path, exc.strerror) from None
    raw = _read_private(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _unreadable(path, f"not UTF-8 (byte {exc.start})") from None
    return parse_token_file(text, path)


def render_token_file(tokens: TokenFile) -> str:
    body: dict[str, Any] = {"format": FILE_FORMAT, "tokens": _converter.unstructure(tokens.tokens)}
    return json.dumps(body, indent=2) + "\n"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_tokens(path: Path, tokens: TokenFile) -> None:
    """Replace the token file atomically: a 0600 temp file, fsync, rename, fsync the dir.
    A reader sees the old file or the new one, never a mix."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(render_token_file(tokens))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _fsync_dir(path.parent)


@contextlib.contextmanager
def locked_token_file(path: Path) -> Iterator[None]:
    """Serialise writers (two ``token`` commands at once) with an flock beside the file."""
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def create_token_file(path: Path, name: str = "default") -> str:
    """Create the token file with one unscoped token; return its secret (shown once)."""
    secret = new_secret()
    now = time.time()
    record = TokenRecord(name=name, created=now, secrets=(TokenSecret(digest(secret), now),))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(render_token_file(TokenFile(tokens=(record,))))
        handle.flush()
        os.fsync(handle.fileno())
    return secret


def ensure_token_file(path: Path) -> str | None:
    """Create the token file if missing; return the new secret, or None if it existed."""
    if path.exists():
        load_tokens(path)  # validates permissions and format now, not at first request
        return None
    return create_token_file(path)


class TokenVerifier:
    """Answers "is this a valid token, and whose?" without leaking timing.

    Immutable: a reload builds a new verifier and swaps it in one assignment. The
    presented secret is hashed once and compared with ``hmac.compare_digest`` against
    every live digest without early exit, so the time taken does not depend on which
    record (if any) matched. Expiry is checked at each call, so a rotated secret stops
    working exactly when its grace period ends, reload or not.
    """

    def __init__(self, tokens: TokenFile) -> None:
        self._entries = [
            (
                bytes.fromhex(secret.sha256),
                secret.expires,
                Caller(
                    token_name=record.name,
                    sources=None if record.sources is None else frozenset(record.sources),
                    scopes=frozenset(record.scopes or (MCP_SCOPE,)),
                ),
            )
            for record in tokens.tokens
            for secret in record.secrets
        ]
        self.names = tuple(record.name for record in tokens.tokens)

    def __len__(self) -> int:
        return len(self.names)

    def verify(self, presented: str, now: float | None = None) -> Caller | None:
        """The caller whose token has ``presented`` as a live secret, else None.
        ``now`` is wall-clock time (expiries are stored as Unix timestamps)."""
        wall = time.time() if now is None else now
        presented_digest = hashlib.sha256(presented.encode("utf-8", "replace")).digest()
        match: Caller | None = None
        for stored, expires, caller in self._entries:  # no early exit
            same = hmac.compare_digest(presented_digest, stored)
            if same and (expires is None or expires > wall):
                match = caller
        return match
