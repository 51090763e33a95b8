"""Bearer tokens: a 0600 file of SHA-256 digests, checked in constant time.

Only digests are stored, so reading the file does not yield a usable secret; a secret
is shown once, when it is created. The hardening issue adds named scopes, rotation
with a grace period and reload; this is the file format and the check they build on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import time
from pathlib import Path

import attrs

from retrieval_mcp.errors import ConfigError

TOKEN_PREFIX = "lrm_"
FILE_FORMAT = 1


@attrs.frozen
class TokenRecord:
    name: str
    sha256: str
    created: float


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_private(path: Path) -> None:
    """Refuse a file or directory that group or others can read or write."""
    mode = os.stat(path).st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{path} is accessible by group or others (mode {stat.S_IMODE(mode):04o})",
            remedy=f"chmod {'700' if stat.S_ISDIR(mode) else '600'} {path}",
        )


def ensure_state_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_private(path)


def load_tokens(path: Path) -> list[TokenRecord]:
    check_private(path)
    try:
        data = json.loads(path.read_text("utf-8"))
        return [TokenRecord(**row) for row in data["tokens"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"cannot read the token file {path}: {exc}",
            remedy="Restore the file, or delete it to create a new token.",
        ) from exc


def create_token_file(path: Path, name: str = "default") -> str:
    """Create the token file with one token; return its secret (shown once)."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = TokenRecord(name=name, sha256=_digest(secret), created=time.time())
    body = json.dumps({"format": FILE_FORMAT, "tokens": [attrs.asdict(record)]}, indent=2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(body)
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
    """Answers "is this a valid token, and whose?" without leaking timing."""

    def __init__(self, records: list[TokenRecord]) -> None:
        self._records = list(records)

    def verify(self, presented: str) -> str | None:
        digest = _digest(presented)
        match: str | None = None
        for record in self._records:  # no early exit: time does not depend on position
            if hmac.compare_digest(digest, record.sha256):
                match = record.name
        return match
