"""Token administration: create, rotate, revoke and list named bearer tokens.

The ``token`` command (``cli/token_command.py``) is the operator's front end; the logic
lives here, next to the token file it edits, so tests and other entry points use it
without importing the command line. Every change is a read-modify-write of
``tokens.json`` under an exclusive lock, written atomically (see
``transport.bearer_tokens``). A running server picks the change up within
``auth.reload_poll_s`` seconds, or at once on SIGHUP.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from retrieval_mcp.errors import ConfigError
from retrieval_mcp.transport.bearer_tokens import (
    MAX_SECRETS,
    TOKEN_NAME,
    TokenFile,
    TokenRecord,
    TokenSecret,
    digest,
    ensure_state_dir,
    load_tokens,
    locked_token_file,
    new_secret,
    save_tokens,
)
from retrieval_mcp.transport.caller import MCP_SCOPE, TOKEN_SCOPES

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class TokenCommandError(ConfigError):
    """A token command that cannot be done as asked (unknown name, duplicate, bad scope)."""

    code = "token_error"
    remedy = "Run `latence-retrieval-mcp token list` to see the tokens that exist."


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``1h``, ``2d`` → seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise TokenCommandError(
            f"not a duration: {text!r}", remedy="Write seconds, or a number with s, m, h or d."
        )
    return float(match.group(1)) * _UNITS[match.group(2)]


def _check_name(name: str) -> str:
    if not TOKEN_NAME.match(name):
        raise TokenCommandError(
            f"invalid token name {name!r}",
            remedy="Use 1-64 lowercase letters, digits, '.', '_' or '-', starting with a "
            "letter or digit (e.g. desktop, cli, ci).",
        )
    return name


def _check_sources(sources: list[str] | None) -> tuple[str, ...] | None:
    if sources is None:
        return None
    cleaned = tuple(dict.fromkeys(s.strip() for s in sources if s.strip()))
    if not cleaned:
        raise TokenCommandError(
            "an empty scope would grant nothing",
            remedy="Name at least one source, or leave --sources out for every source.",
        )
    return cleaned


def _check_scopes(scopes: list[str] | None) -> tuple[str, ...] | None:
    if scopes is None:
        return None
    cleaned = tuple(dict.fromkeys(s.strip() for s in scopes if s.strip()))
    unknown = [s for s in cleaned if s not in TOKEN_SCOPES]
    if unknown or not cleaned:
        raise TokenCommandError(
            f"unknown or empty scope(s): {', '.join(unknown) or '(none)'}",
            remedy=f"Use one or more of: {', '.join(TOKEN_SCOPES)}.",
        )
    return None if cleaned == (MCP_SCOPE,) else cleaned


def _read(path: Path) -> TokenFile:
    return load_tokens(path) if path.exists() else TokenFile()


def _change(path: Path, edit: Callable[[TokenFile], TokenFile]) -> None:
    ensure_state_dir(path.parent)
    with locked_token_file(path):
        save_tokens(path, edit(_read(path)))


def _prune(record: TokenRecord, now: float) -> TokenRecord:
    return attrs.evolve(record, secrets=record.live_secrets(now))


def create_token(
    path: Path,
    name: str,
    sources: list[str] | None = None,
    *,
    scopes: list[str] | None = None,
    now: float | None = None,
) -> str:
    """Add a token; return its secret (shown once). Refuses a name that exists.
    ``scopes``: what it may do (default MCP only; ``metrics`` scrapes /metrics)."""
    _check_name(name)
    scope = _check_sources(sources)
    allowed = _check_scopes(scopes)
    at = time.time() if now is None else now
    secret = new_secret()

    def edit(tokens: TokenFile) -> TokenFile:
        if tokens.get(name) is not None:
            raise TokenCommandError(
                f"a token named {name!r} exists",
                remedy=f"Rotate it (token rotate {name}) or choose another name.",
            )
        record = TokenRecord(
            name=name,
            created=at,
            secrets=(TokenSecret(digest(secret), at),),
            sources=scope,
            scopes=allowed,
        )
        return TokenFile(tokens=(*tokens.tokens, record))

    _change(path, edit)
    return secret


def rotate_token(path: Path, name: str, grace_s: float, *, now: float | None = None) -> str:
    """Give ``name`` a new secret; its current secrets stay valid for ``grace_s`` more
    seconds (0: they stop now). Return the new secret (shown once)."""
    if grace_s < 0:
        raise TokenCommandError("the grace period cannot be negative")
    at = time.time() if now is None else now
    secret = new_secret()

    def edit(tokens: TokenFile) -> TokenFile:
        record = _existing(tokens, name)
        expiring = tuple(
            attrs.evolve(s, expires=min(s.expires or at + grace_s, at + grace_s))
            for s in record.live_secrets(at)
        )
        kept = (*expiring[-(MAX_SECRETS - 1) :], TokenSecret(digest(secret), at))
        rotated = attrs.evolve(record, secrets=kept)
        return TokenFile(tokens=tuple(rotated if r.name == name else r for r in tokens.tokens))

    _change(path, edit)
    return secret


def revoke_token(path: Path, name: str) -> None:
    """Remove ``name`` and every secret it has, at once (no grace period)."""

    def edit(tokens: TokenFile) -> TokenFile:
        _existing(tokens, name)
        return TokenFile(tokens=tuple(r for r in tokens.tokens if r.name != name))

    _change(path, edit)


def list_tokens(path: Path, *, now: float | None = None) -> list[dict[str, Any]]:
    """Names, scopes and ages; never digests or secrets."""
    at = time.time() if now is None else now
    rows = []
    for record in _read(path).tokens:
        live = _prune(record, at).secrets
        pending = [s.expires for s in live if s.expires is not None]
        rows.append(
            {
                "name": record.name,
                "sources": list(record.sources) if record.sources is not None else "all",
                "scopes": list(record.scopes or (MCP_SCOPE,)),
                "created": _iso(record.created),
                "secrets": len(live),
                "old_secret_expires": _iso(min(pending)) if pending else None,
            }
        )
    return rows


def _existing(tokens: TokenFile, name: str) -> TokenRecord:
    record = tokens.get(name)
    if record is None:
        names = ", ".join(r.name for r in tokens.tokens) or "none"
        raise TokenCommandError(f"no token named {name!r} (tokens: {names})")
    return record


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
