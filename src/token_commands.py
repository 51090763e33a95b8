"""``latence-retrieval-mcp token create|rotate|revoke|list``: manage the bearer tokens.

Every change is a read-modify-write of ``tokens.json`` under an exclusive lock, written
atomically (see ``transport.bearer_tokens``). A running server picks the change up within
``auth.reload_poll_s`` seconds, or at once on SIGHUP. Secrets are printed once, here,
and never stored or logged; ``list`` shows names, scopes and ages, never digests.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import Settings
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


def _read(path: Path) -> TokenFile:
    return load_tokens(path) if path.exists() else TokenFile()


def _change(path: Path, edit: Callable[[TokenFile], TokenFile]) -> None:
    ensure_state_dir(path.parent)
    with locked_token_file(path):
        save_tokens(path, edit(_read(path)))


def _prune(record: TokenRecord, now: float) -> TokenRecord:
    return attrs.evolve(record, secrets=record.live_secrets(now))


def create_token(
    path: Path, name: str, sources: list[str] | None = None, *, now: float | None = None
) -> str:
    """Add a token; return its secret (shown once). Refuses a name that exists."""
    _check_name(name)
    scope = _check_sources(sources)
    at = time.time() if now is None else now
    secret = new_secret()

    def edit(tokens: TokenFile) -> TokenFile:
        if tokens.get(name) is not None:
            raise TokenCommandError(
                f"a token named {name!r} exists",
                remedy=f"Rotate it (token rotate {name}) or choose another name.",
            )
        record = TokenRecord(
            name=name, created=at, secrets=(TokenSecret(digest(secret), at),), sources=scope
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


# -- the command line ---------------------------------------------------------------


def add_token_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = sub.add_parser("token", help="create, rotate, revoke or list bearer tokens")
    actions = token.add_subparsers(dest="token_command", required=True)

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--config", type=Path, help="operator settings file (TOML)")
        parser.add_argument("--state-dir", type=Path, help="where tokens.json lives")

    create = actions.add_parser("create", help="add a named token; prints its secret once")
    create.add_argument("name", help="one per client surface, e.g. desktop, cli, ci")
    create.add_argument(
        "--sources",
        help="comma-separated sources this token may read (default: every source)",
    )
    common(create)
    rotate = actions.add_parser(
        "rotate", help="issue a new secret; the old one works for the grace period"
    )
    rotate.add_argument("name")
    rotate.add_argument(
        "--grace",
        help="how long the old secret stays valid: 0, 90s, 15m, 1h, 2d "
        "(default: auth.rotate_grace_s)",
    )
    common(rotate)
    revoke = actions.add_parser("revoke", help="remove a token now, every secret of it")
    revoke.add_argument("name")
    common(revoke)
    listing = actions.add_parser("list", help="names, scopes and ages (never secrets)")
    common(listing)


def run_token_command(args: argparse.Namespace, settings: Settings) -> int:
    path = settings.token_path
    command = args.token_command
    if command == "list":
        print(json.dumps({"token_file": str(path), "tokens": list_tokens(path)}, indent=2))
        return 0
    if command == "revoke":
        revoke_token(path, args.name)
        print(
            f"revoked {args.name!r}; a running server refuses it within "
            f"{settings.auth.reload_poll_s:g}s (or at once on SIGHUP)."
        )
        return 0
    if command == "create":
        sources = args.sources.split(",") if args.sources else None
        secret = create_token(path, args.name, sources)
        note = f"created {args.name!r}"
    else:
        grace = (
            parse_duration(args.grace) if args.grace is not None else settings.auth.rotate_grace_s
        )
        secret = rotate_token(path, args.name, grace)
        note = f"rotated {args.name!r}; the previous secret stays valid for {grace:g}s"
    sys.stdout.write(
        f"{note}.\n\n  Authorization: Bearer {secret}\n\n"
        f"This secret is shown once; only its digest is stored in {path}.\n"
    )
    return 0
