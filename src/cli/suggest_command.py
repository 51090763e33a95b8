"""``latence-retrieval-mcp config suggest``: read the configured store's schema and print
the settings that would map it (TOML, or ``--json`` for the data)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import trio

from retrieval_mcp.backends.map_suggestions import suggest_maps
from retrieval_mcp.backends.schema_suggestion import render_toml
from retrieval_mcp.settings import Settings


def add_suggest_parser(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    suggest = actions.add_parser(
        "suggest",
        help="read the configured store's schema and print a settings snippet that maps it",
    )
    suggest.add_argument("--config", type=Path, help="settings file (TOML)")
    suggest.add_argument("--state-dir", type=Path)
    suggest.add_argument(
        "--target",
        help="the table/view, collection or index to look at (default: the configured one, "
        "or every candidate found)",
    )
    suggest.add_argument("--json", action="store_true", help="print the suggestions as JSON")


def run_suggest_command(args: argparse.Namespace, settings: Settings) -> int:
    suggestions = trio.run(lambda: suggest_maps(settings, target=args.target))
    if args.json:
        json.dump([s.to_json() for s in suggestions], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_toml(suggestions))
    return 0
