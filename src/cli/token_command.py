"""``latence-retrieval-mcp token create|rotate|revoke|list``: the operator's front end.

Secrets are printed once, here, and never stored or logged; ``list`` shows names,
scopes and ages, never digests. The file operations are ``transport.token_admin``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.token_admin import (
    create_token,
    list_tokens,
    parse_duration,
    revoke_token,
    rotate_token,
)


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
    create.add_argument(
        "--scopes",
        help="what it may do: mcp (default), metrics (scrape /metrics), ingest (write "
        "into a running server over its Unix socket), or a comma-separated mix",
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
        scopes = args.scopes.split(",") if args.scopes else None
        secret = create_token(path, args.name, sources, scopes=scopes)
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
