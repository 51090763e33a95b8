"""Search latency and throughput: in-process pipeline vs MCP over loopback TCP vs Unix socket.

Why three paths: the in-process dispatcher call is the floor the server can reach;
MCP over TCP is what an agent pays; the Unix socket is the local alternative. The
ratios tell how much of a request is transport and SDK rather than retrieval.

Each path runs in its own phase with a freshly opened store (only one opener may
hold it), so every phase starts with an empty query-embedding cache and sees the
same queries in the same order:

* distinct queries: every request a new string (Cranfield's 225, then numbered
  variants), so every request embeds its query;
* repeated queries: the same 10 queries, primed once, so the embedding LRU answers.

The server runs in this process (``run_server`` on port 0 plus its Unix socket),
so client and server share one interpreter and the machine's cores: the MCP
figures include the client's own CPU cost. All traffic stays on loopback.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx2
import mcp_types as types
import numpy as np
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import distinct_queries, repeated_queries, write_beir_corpus

import retrieval_mcp
from retrieval_mcp.logs import configure_logging
from retrieval_mcp.server_run import ServerInfo, run_server
from retrieval_mcp.services import ingest_path, open_backend, open_services
from retrieval_mcp.settings import Settings, load_settings

SOURCE = "cranfield"
REPEATED_DISTINCT = 10
# Warm-up strings sit far past any measured position of the distinct sequence.
WARMUP_START = 1_000_000

Call = Callable[[str], Awaitable[types.CallToolResult]]
CallerFactory = Callable[[], AbstractAsyncContextManager[Call]]


@attrs.define
class Run:
    """One measured load: ``requests`` calls by ``concurrency`` workers."""

    path: str
    queries: str
    concurrency: int
    latencies_ms: list[float] = attrs.field(factory=list)
    wall_s: float = 0.0
    errors: int = 0
    empty: int = 0
    dropped_legs: dict[str, int] = attrs.field(factory=dict)

    def pct(self, q: float) -> float:
        return float(np.percentile(self.latencies_ms, q)) if self.latencies_ms else float("nan")

    @property
    def throughput(self) -> float:
        return len(self.latencies_ms) / self.wall_s if self.wall_s else float("nan")

    def summary(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "queries": self.queries,
            "concurrency": self.concurrency,
            "requests": len(self.latencies_ms),
            "wall_s": round(self.wall_s, 3),
            "req_per_s": round(self.throughput, 2),
            "p50_ms": round(self.pct(50), 2),
            "p95_ms": round(self.pct(95), 2),
            "p99_ms": round(self.pct(99), 2),
            "max_ms": round(max(self.latencies_ms), 2),
            "errors": self.errors,
            "empty": self.empty,
            "dropped_legs": self.dropped_legs,
        }


def bench_settings(state_dir: Path, log_level: str, encoder_threads: int | None = None) -> Settings:
    """The shipped defaults, except: no demo corpus, any free port, quiet logs."""
    overrides: dict[str, Any] = {
        "demo": {"ingest_on_first_start": False},
        "server": {"port": 0},
        "logging": {"level": log_level},
    }
    if encoder_threads is not None:
        overrides["encoder"] = {"threads": encoder_threads}
    return load_settings(state_dir=state_dir, overrides=overrides)


# -- ingest ------------------------------------------------------------------------


async def ensure_ingested(settings: Settings, chunks: int) -> dict[str, Any]:
    """Write the corpus and ingest it. The runner skips documents already stored whole,
    so a reused state dir costs a scan, not a re-embed; ``prune`` drops anything else."""
    # The server refuses a state dir that group or others can read: create it private.
    settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    corpus = write_beir_corpus(
        settings.state_dir / "corpus",
        chunks,
        chunk_chars=settings.chunking.chunk_chars,
        overlap_chars=settings.chunking.overlap_chars,
    )
    print(
        f"corpus: {corpus.documents} documents, {corpus.chunks} chunks "
        f"({corpus.rounds} round(s) of Cranfield)",
        flush=True,
    )
    last = [time.perf_counter()]

    def progress(report: Any, pending: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= 30:
            last[0] = now
            print(f"  ingest: {report.chunks_written} chunks written", flush=True)

    async with open_backend(settings) as backend:
        started = time.perf_counter()
        report = await ingest_path(
            backend, settings, corpus.path, source=SOURCE, prune=True, progress=progress
        )
        took = time.perf_counter() - started
        stored = (await backend.status()).chunks
    result = {
        "documents": corpus.documents,
        "chunks_in_corpus": corpus.chunks,
        "chunks_stored": stored,
        "chunks_written": report.chunks_written,
        "documents_unchanged": report.documents_unchanged,
        "seconds": round(took, 2),
    }
    if report.chunks_written:
        rate = report.chunks_written / took
        result["chunks_per_s"] = round(rate, 2)
        print(
            f"ingest: {report.chunks_written} chunks in {took:.1f} s "
            f"({rate:.1f} chunks/s); store holds {stored} chunks",
            flush=True,
        )
    else:
        print(
            f"ingest: reused; {report.documents_unchanged} documents unchanged, "
            f"checked in {took:.1f} s; store holds {stored} chunks",
            flush=True,
        )
    return result


# -- callers -----------------------------------------------------------------------


def _arguments(query: str, top_k: int) -> dict[str, Any]:
    return {"query": query, "top_k": top_k}


def inprocess_factory(dispatcher: Any, top_k: int) -> CallerFactory:
    @asynccontextmanager
    async def open_caller() -> AsyncIterator[Call]:
        async def call(query: str) -> types.CallToolResult:
            result: types.CallToolResult = await dispatcher.call("search", _arguments(query, top_k))
            return result

        yield call

    return open_caller


def mcp_factory(info: ServerInfo, token: str, *, unix: bool, top_k: int) -> CallerFactory:
    """Each worker its own SDK Client over its own httpx2 client (one connection pool)."""
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(30.0, read=120.0)

    @asynccontextmanager
    async def open_caller() -> AsyncIterator[Call]:
        if unix:
            assert info.socket_path is not None
            http = httpx2.AsyncClient(
                transport=httpx2.AsyncHTTPTransport(uds=str(info.socket_path)),
                headers=headers,
                timeout=timeout,
                trust_env=False,
            )
            url = "http://localhost/mcp"
        else:
            # trust_env=False: no HTTP(S)_PROXY from the environment, loopback only.
            http = httpx2.AsyncClient(headers=headers, timeout=timeout, trust_env=False)
            url = info.url
        async with (
            http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):

            async def call(query: str) -> types.CallToolResult:
                return await client.call_tool("search", _arguments(query, top_k))

            yield call

    return open_caller


# -- load --------------------------------------------------------------------------


def _check(run: Run, result: types.CallToolResult) -> None:
    envelope = result.structured_content or {}
    if result.is_error or not envelope.get("ok"):
        run.errors += 1
        if run.errors == 1:
            print(f"  first error: {envelope.get('error') or result.content}", flush=True)
        return
    if not envelope["data"]["hits"]:
        run.empty += 1
    for dropped in envelope["meta"]["legs"]["dropped"]:
        key = f"{dropped['leg']}:{dropped['reason']}"
        run.dropped_legs[key] = run.dropped_legs.get(key, 0) + 1


async def measure(
    factory: CallerFactory, queries: Sequence[str], concurrency: int, *, path: str, kind: str
) -> Run:
    """Open ``concurrency`` callers (handshake and one warm-up call each, untimed),
    then let them drain the shared, bounded list of queries."""
    run = Run(path=path, queries=kind, concurrency=concurrency)
    async with AsyncExitStack() as stack:
        callers: list[Call] = []
        for slot in range(concurrency):
            call = await stack.enter_async_context(factory())
            warmup = await call(distinct_queries(1, start=WARMUP_START + slot)[0])
            if warmup.is_error:
                raise RuntimeError(f"{path}: the warm-up call failed: {warmup.content}")
            callers.append(call)
        cursor = iter(range(len(queries)))

        async def worker(call: Call) -> None:
            for index in cursor:
                started = time.perf_counter()
                result = await call(queries[index])
                run.latencies_ms.append((time.perf_counter() - started) * 1000)
                _check(run, result)

        started = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for call in callers:
                nursery.start_soon(worker, call)
        run.wall_s = time.perf_counter() - started
    line = run.summary()
    print(
        f"  {path:10} {kind:8} c={concurrency:<3} p50 {line['p50_ms']:8.2f} ms  "
        f"p95 {line['p95_ms']:8.2f}  p99 {line['p99_ms']:8.2f}  "
        f"{line['req_per_s']:7.1f} req/s  errors {run.errors}  dropped {run.dropped_legs}",
        flush=True,
    )
    return run


async def measure_path(factory: CallerFactory, path: str, args: argparse.Namespace) -> list[Run]:
    """The fixed sequence every path runs: distinct at each concurrency (disjoint query
    ranges, so no cache hit), then prime the 10 repeated queries and run them."""
    runs: list[Run] = []
    offset = 0
    for concurrency in args.concurrency:
        queries = distinct_queries(args.requests, start=offset)
        offset += args.requests
        runs.append(await measure(factory, queries, concurrency, path=path, kind="distinct"))
    repeated = repeated_queries(args.requests, distinct=REPEATED_DISTINCT)
    async with factory() as call:
        for query in repeated[:REPEATED_DISTINCT]:
            await call(query)
    for concurrency in args.concurrency:
        runs.append(await measure(factory, repeated, concurrency, path=path, kind="repeated"))
    return runs


async def inprocess_phase(settings: Settings, args: argparse.Namespace) -> list[Run]:
    async with open_services(settings) as services:
        return await measure_path(
            inprocess_factory(services.dispatcher, args.top_k), "in-process", args
        )


async def server_phase(settings: Settings, args: argparse.Namespace, *, unix: bool) -> list[Run]:
    """Start the real server; a fresh token file each time so we hold its secret."""
    settings.token_path.unlink(missing_ok=True)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        info: ServerInfo = await nursery.start(
            lambda task_status: run_server(settings, shutdown=shutdown, task_status=task_status)
        )
        try:
            assert info.new_token is not None, "the token file was not freshly created"
            name = "mcp-uds" if unix else "mcp-tcp"
            return await measure_path(
                mcp_factory(info, info.new_token, unix=unix, top_k=args.top_k), name, args
            )
        finally:
            shutdown.set()


# -- report ------------------------------------------------------------------------


def _by(runs: Sequence[Run], path: str, kind: str, concurrency: int) -> Run | None:
    for run in runs:
        if (run.path, run.queries, run.concurrency) == (path, kind, concurrency):
            return run
    return None


def markdown(runs: Sequence[Run], concurrency: Sequence[int]) -> str:
    low, high = min(concurrency), max(concurrency)
    lines = [
        f"| queries | path | c={low} p50 ms | c={low} p95 ms | c={low} p99 ms | "
        f"c={high} req/s | c={high} p50 ms | c={high} p99 ms | errors | dropped legs |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    paths = list(dict.fromkeys(r.path for r in runs))
    for kind in ("distinct", "repeated"):
        for path in paths:
            a, b = _by(runs, path, kind, low), _by(runs, path, kind, high)
            if a is None or b is None:
                continue
            both = (a,) if a is b else (a, b)
            dropped = {
                k: sum(r.dropped_legs.get(k, 0) for r in both)
                for k in sorted({k for r in both for k in r.dropped_legs})
            }
            lines.append(
                f"| {kind} | {path} | {a.pct(50):.2f} | {a.pct(95):.2f} | {a.pct(99):.2f} | "
                f"{b.throughput:.1f} | {b.pct(50):.2f} | {b.pct(99):.2f} | "
                f"{sum(r.errors for r in both)} | {dropped or '-'} |"
            )
    lines += [
        "",
        f"| queries | ratio | c={low} p50 | c={low} p99 | c={high} req/s |",
        "|---|---|---:|---:|---:|",
    ]
    for kind in ("distinct", "repeated"):
        for num, den, label in (
            ("mcp-tcp", "in-process", "MCP-TCP / in-process"),
            ("mcp-uds", "mcp-tcp", "UDS / TCP"),
        ):
            a1, b1 = _by(runs, num, kind, low), _by(runs, den, kind, low)
            a2, b2 = _by(runs, num, kind, high), _by(runs, den, kind, high)
            if None in (a1, b1, a2, b2):
                continue
            assert a1 and b1 and a2 and b2
            lines.append(
                f"| {kind} | {label} | {a1.pct(50) / b1.pct(50):.2f} | "
                f"{a1.pct(99) / b1.pct(99):.2f} | "
                f"{a2.throughput / b2.throughput:.2f} |"
            )
    return "\n".join(lines)


def environment() -> dict[str, str]:
    """What a figure depends on. ``server_code`` says which ``retrieval_mcp`` was
    imported: the repo's ``src`` (then commit and dirty apply) or another copy, such
    as a ``git archive`` of a pinned commit put first on PYTHONPATH."""
    repo = Path(__file__).resolve().parent.parent
    server_code = Path(retrieval_mcp.__file__).resolve().parent

    def git(*argv: str) -> str:
        out = subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, text=True)
        return out.stdout.strip()

    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": "yes" if git("status", "--porcelain", "--", "src", "config") else "no",
        "server_code": str(server_code),
        "nproc": str(os.cpu_count()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        # Other work on a small machine moves every figure: record how busy it was.
        "loadavg_1m_at_start": f"{os.getloadavg()[0]:.2f}",
    }


# -- main --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else "")
    parser.add_argument("--chunks", type=int, default=5000, help="chunks in the store")
    parser.add_argument(
        "--requests",
        type=int,
        default=200,
        help="measured requests per (path, queries, concurrency) run",
    )
    parser.add_argument(
        "--concurrency",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 32],
        help="comma-separated worker counts",
    )
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="default: <tmp>/lrm-bench-<chunks> (kept, so reruns reuse it)",
    )
    parser.add_argument(
        "--paths",
        default="in-process,mcp-tcp,mcp-uds",
        help="which of in-process, mcp-tcp, mcp-uds to run",
    )
    parser.add_argument("--ingest-only", action="store_true")
    parser.add_argument(
        "--log-level", default="warning", choices=("debug", "info", "warning", "error")
    )
    parser.add_argument(
        "--encoder-threads",
        type=int,
        default=None,
        help="override encoder.threads (default: the shipped setting, 0 = one per core)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    args = parser.parse_args(argv)
    args.state_dir = args.state_dir or Path(tempfile.gettempdir()) / f"lrm-bench-{args.chunks}"
    args.paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    return args


async def main(args: argparse.Namespace) -> dict[str, Any]:
    settings = bench_settings(args.state_dir, args.log_level, args.encoder_threads)
    configure_logging(args.log_level)
    env = environment()
    print(
        f"state dir {settings.state_dir}; commit {env['commit']} (src dirty: "
        f"{env['dirty']}); server code {env['server_code']}; {env['nproc']} cpus; "
        f"load {env['loadavg_1m_at_start']}; python {env['python']}",
        flush=True,
    )
    ingest = await ensure_ingested(settings, args.chunks)
    runs: list[Run] = []
    if not args.ingest_only:
        for path in args.paths:
            started = time.perf_counter()
            if path == "in-process":
                runs += await inprocess_phase(settings, args)
            elif path in ("mcp-tcp", "mcp-uds"):
                runs += await server_phase(settings, args, unix=path == "mcp-uds")
            else:
                raise SystemExit(f"unknown path {path!r}")
            print(f"  ({path} phase took {time.perf_counter() - started:.1f} s)", flush=True)
        print()
        print(markdown(runs, args.concurrency))
    return {
        "environment": env,
        "args": {k: str(v) for k, v in vars(args).items()},
        "ingest": ingest,
        "runs": [r.summary() for r in runs],
    }


def leaf_errors(exc: BaseException) -> list[BaseException]:
    """The exceptions inside nested groups: SDK clients nest nurseries deeper than
    the traceback printer's depth limit, which hides the actual cause."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaf_errors(inner)]
    return [exc]


if __name__ == "__main__":
    arguments = parse_args()
    try:
        report = trio.run(main, arguments)
    except BaseExceptionGroup as group:
        leaves = leaf_errors(group)
        for leaf in leaves[:5]:
            print(f"error: {type(leaf).__module__}.{type(leaf).__qualname__}: {leaf!r}")
            if leaf.__cause__ is not None:
                print(f"  caused by {leaf.__cause__!r}")
        print(f"({len(leaves)} leaf exception(s))")
        raise SystemExit(1) from None
    if arguments.json:
        arguments.json.parent.mkdir(parents=True, exist_ok=True)
        arguments.json.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
