"""What a real agent sends: MCP messages per tool call, counted at the server.

The per-token budget (``limits.per_token``) counts every MCP message an authenticated
client sends, the protocol's own included. This script runs the real server
in-process over a tiny store, wraps its ASGI app with a counter of the JSON-RPC
methods that arrive on ``POST /mcp``, and drives it with the MCP SDK's own client
(``mcp.Client``) in each mode, in the two shapes agents use:

* ``session``: one client kept open, N ``call_tool`` calls (an agent host that holds
  the connection);
* ``fresh``: a new client per call (a script or a host that reconnects each time).

It prints, per mode and shape, the messages per call and which methods they were, and
the per-token budget a busy agent needs (``--calls-per-s`` from ``--tasks`` tasks, for
``--burst-s`` seconds), to size ``limits.per_token`` (ADR 0010 records the figures).

    .venv/bin/python bench/client_messages.py
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import platform
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import retrieval_mcp.server_run as server_run
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.server_run import run_server
from retrieval_mcp.services import ingest_path, open_backend
from retrieval_mcp.settings import load_settings

Counter = collections.Counter[str]
ASGI = Callable[[Any, Any, Any], Awaitable[None]]
MODES = ("legacy", "auto", "2026-07-28")
DOCS = {
    "boiler.md": "# Boiler\n\nError code E1234 means low pressure; refill to 1.5 bar.",
    "wing.md": "# Wings\n\nThe boundary layer becomes turbulent past the transition point.",
}


def counting(app: ASGI, seen: Counter) -> ASGI:
    """An ASGI wrapper that counts each POST /mcp body's JSON-RPC method."""

    async def wrapper(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/mcp" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        for item in parsed if isinstance(parsed, list) else [parsed]:
            method = item.get("method") if isinstance(item, dict) else None
            seen[method or "response-or-other"] += 1
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return wrapper


async def drive(url: str, token: str, mode: str, shape: str, calls: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}

    async def client_session(n: int) -> None:
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
        ):
            for i in range(n):
                result = await client.call_tool("search", {"query": f"boiler {i}"})
                assert not result.is_error, result

    if shape == "session":
        await client_session(calls)
    else:
        for _ in range(calls):
            await client_session(1)


async def main(args: argparse.Namespace) -> None:
    seen: Counter = collections.Counter()
    original = server_run.build_root_app

    def build_counted(*a: Any, **k: Any) -> Any:
        return counting(original(*a, **k), seen)

    server_run.build_root_app = build_counted  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="lrm-msgs-") as tmp:
        root = Path(tmp)
        docs = root / "docs"
        docs.mkdir()
        for name, text in DOCS.items():
            (docs / name).write_text(text)
        settings = load_settings(
            state_dir=root / "state",
            overrides={
                "server": {"port": 0},
                "demo": {"ingest_on_first_start": False},
                "logging": {"level": "warning"},
                "limits": {"per_token": {"per_minute": 1_000_000, "burst": 1_000_000}},
            },
        )
        backend = await open_backend(settings)
        try:
            await ingest_path(backend, settings, docs, source="docs")
        finally:
            await backend.aclose()
        shutdown = trio.Event()
        rows = []
        async with trio.open_nursery() as nursery:
            info = await nursery.start(
                lambda task_status: run_server(
                    settings, shutdown=shutdown, hub=ReloadHub(), task_status=task_status
                )
            )
            assert info.new_token is not None
            for mode in MODES:
                for shape in ("session", "fresh"):
                    seen.clear()
                    await drive(info.url, info.new_token, mode, shape, args.calls)
                    total = sum(seen.values())
                    rows.append((mode, shape, total / args.calls, dict(sorted(seen.items()))))
            shutdown.set()
    print(f"python {platform.python_version()}, {args.calls} search calls per row\n")
    print(f"{'mode':<11} {'shape':<8} {'msgs/call':>9}  methods seen")
    for mode, shape, per_call, methods in rows:
        print(f"{mode:<11} {shape:<8} {per_call:>9.2f}  {methods}")
    worst_session = max(r[2] for r in rows if r[1] == "session")
    worst_fresh = max(r[2] for r in rows if r[1] == "fresh")
    rate = args.calls_per_s * args.tasks
    print(
        f"\nA busy agent: {args.tasks} tasks × {args.calls_per_s:g} calls/s = {rate:g} calls/s"
        f" for {args.burst_s:g} s."
    )
    for label, per_call in (("held session", worst_session), ("fresh client", worst_fresh)):
        per_s = rate * per_call
        print(
            f"  {label:<13}: {per_s:g} messages/s = {per_s * 60:,.0f}/min; a burst of "
            f"{args.burst_s:g} s is {math.ceil(per_s * args.burst_s):,} messages"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--calls-per-s", type=float, default=20.0)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--burst-s", type=float, default=10.0)
    trio.run(main, parser.parse_args())
    sys.exit(0)
