"""``latence-retrieval-mcp stdio [--embedded]``: MCP on stdin/stdout for subprocess clients.

By default it bridges to the running server's Unix socket (``mcp_surface/stdio_bridge.py``)
and authenticates with a token from an environment variable the client's config sets
(``LATENCE_TOKEN``, or the one ``--token-env`` names) or from a 0600 file
(``--token-file``): never from a command-line argument, which every local user can read
in ``ps``. With no server running it says so in one line on stderr and exits 1.
``--embedded`` opens the store in this process instead (only when no server holds it)
and serves the client as the operator's own process (every source).

Stdout carries protocol messages only; logs go to ``<state dir>/logs/stdio.log``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import trio
from mcp.server.stdio import stdio_server

from retrieval_mcp.errors import ConfigError
from retrieval_mcp.logs import configure_logging, log_file
from retrieval_mcp.mcp_surface.stdio_bridge import (
    ServerNotRunning,
    StdioBridge,
    check_server,
    socket_client,
)
from retrieval_mcp.services import ingest_demo_if_empty, open_services
from retrieval_mcp.settings import SecretRef, Settings
from retrieval_mcp.transport.caller import Caller

TOKEN_ENV = "LATENCE_TOKEN"
#: Who the embedded transport's calls run as (logged and recorded like a token name).
EMBEDDED_CALLER = Caller(token_name="stdio-embedded")


def add_stdio_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    stdio = sub.add_parser(
        "stdio", help="speak MCP on stdin/stdout (for clients that launch a subprocess)"
    )
    stdio.add_argument("--config", type=Path, help="operator settings file (TOML)")
    stdio.add_argument("--state-dir", type=Path, help="where the store, socket and tokens live")
    stdio.add_argument(
        "--embedded",
        action="store_true",
        help="open the store in this process instead of bridging to a running server",
    )
    stdio.add_argument(
        "--token-env",
        default=TOKEN_ENV,
        help=f"environment variable holding the token (default {TOKEN_ENV})",
    )
    stdio.add_argument("--token-file", type=Path, help="a 0600 file holding the token")


def bridge_token(args: argparse.Namespace) -> str:
    where = (
        SecretRef(file=str(args.token_file)) if args.token_file else SecretRef(env=args.token_env)
    )
    token = where.read("the stdio bridge's token")
    if not token:
        raise ConfigError("the stdio bridge has no token", remedy=f"Set {TOKEN_ENV}.")
    return token


def run_stdio_command(args: argparse.Namespace, settings: Settings) -> int:
    configure_logging(settings.logging.level, stderr="never")
    path = settings.state_dir / "logs" / "stdio.log"
    logs = settings.logging
    if args.embedded:
        with log_file(path, level=logs.level, log_content=logs.log_content):
            trio.run(_serve_embedded, settings)
        return 0
    socket_path = settings.socket_path
    if socket_path is None:
        sys.stderr.write(
            "latence-retrieval-mcp stdio: server.unix_socket is 'none'; the bridge needs "
            "the server's socket (or pass --embedded)\n"
        )
        return 1
    token = bridge_token(args)
    with log_file(path, level=logs.level, log_content=logs.log_content):
        try:
            trio.run(_bridge, socket_path, token)
        except ServerNotRunning as exc:
            sys.stderr.write(f"latence-retrieval-mcp stdio: {exc}\n")
            return 1
    return 0


async def _bridge(socket_path: Path, token: str) -> None:
    stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    stdout = trio.lowlevel.FdStream(os.dup(sys.stdout.fileno()))
    async with stdin, stdout, socket_client(socket_path) as http:
        await check_server(http, socket_path)
        await StdioBridge(http, token, stdout).run(stdin)


async def _serve_embedded(settings: Settings) -> None:
    async with open_services(settings, local_caller=EMBEDDED_CALLER) as services:
        await ingest_demo_if_empty(services)
        server = services.mcp_server
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
