"""``latence-retrieval-mcp config check|render|schema``: what agents will see, before they do."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from retrieval_mcp.agent_copy.model import copy_json_schema
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.cli.suggest_command import add_suggest_parser, run_suggest_command
from retrieval_mcp.mcp_surface.copy_reload import render_registry
from retrieval_mcp.mcp_surface.registry import registry_hash
from retrieval_mcp.settings import Settings

#: What the embedded default store declares; used when no --capabilities are given.
DEFAULT_CAPABILITIES = "dense,bm25,filter,neighbors,similar,vectors,ingest"


def add_config_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    config = sub.add_parser(
        "config", help="check or render the agent-facing copy; suggest a map of your store"
    )
    actions = config.add_subparsers(dest="config_command", required=True)
    for name, text in (
        ("check", "validate and lint a copy directory (exit 2 on error)"),
        ("render", "print the tools and instructions agents will see"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("dir", type=Path, help="the copy directory (holds copy.toml)")
        action.add_argument(
            "--capabilities",
            default=DEFAULT_CAPABILITIES,
            help=f"backend capabilities to render for (default {DEFAULT_CAPABILITIES})",
        )
        action.add_argument("--config", type=Path, help="operator settings file (TOML)")
        action.add_argument("--state-dir", type=Path)
    actions.add_parser("schema", help="print the JSON Schema of copy files")
    add_suggest_parser(actions)


def _capabilities(text: str) -> frozenset[Capability]:
    try:
        return frozenset(Capability(part.strip()) for part in text.split(",") if part.strip())
    except ValueError as exc:
        known = ", ".join(c.value for c in Capability)
        raise SystemExit(f"error: {exc}; known capabilities: {known}") from None


def run_config_command(args: argparse.Namespace, settings: Settings | None) -> int:
    if args.config_command == "schema":
        print(json.dumps(copy_json_schema(), indent=2))
        return 0
    assert settings is not None
    if args.config_command == "suggest":
        return run_suggest_command(args, settings)
    with_dir = settings.model_copy(
        update={"copy_text": settings.copy_text.model_copy(update={"dir": str(args.dir)})}
    )
    registry = render_registry(with_dir, _capabilities(args.capabilities))  # raises on error
    digest = registry_hash(registry)
    if args.config_command == "check":
        print(f"ok: {len(registry.tools)} tools, hash {digest}")
        return 0
    rendered = {
        "hash": digest,
        "instructions": registry.instructions,
        "tools": [
            spec.to_wire().model_dump(mode="json", exclude_none=True, by_alias=True)
            for spec in registry.tools
        ],
    }
    json.dump(rendered, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
