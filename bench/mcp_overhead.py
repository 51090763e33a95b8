"""What MCP costs the server per call: in-process search vs a bare SDK server vs ours.

One run, one 5,000-chunk store (Cranfield, embedded qdrant-edge), the same queries:

* (a) ``in-process``: ``QdrantEmbeddedBackend.search`` for the dense and BM25 legs
  (concurrently, in Trio, as the pipeline does) + RRF (k = 60), in this process.
  Also ``in-process-sync``: the same two engine queries + RRF as plain blocking calls,
  which is what the bare server runs in its worker thread.
* (b) ``bare-sdk``: a server built with the MCP SDK's high-level ``MCPServer`` on its
  default transport (uvicorn, asyncio, Streamable HTTP, stateless, JSON responses),
  exposing the same hybrid search as one tool, with no auth, limits or screening. It
  runs as a subprocess of this script (``--serve-bare``).
* (c) ``ours``: ``latence-retrieval-mcp serve`` as a subprocess with everything on:
  bearer token, origin policy, per-address and per-token rate limiters (budget raised
  so they never refuse), WAL session records, the pipeline's actors, snippet
  sanitising and untrusted-data markers, the envelope, and per-call telemetry
  (``ours`` logs at the shipped level, ``info``, to its JSON log file; ``ours-quiet``
  at ``warning``).

The embedded store allows one opener, so (a), (b) and (c) take turns.

The query encoder is kept out: (a) and (b) get precomputed query vectors, (c) has
every query in its embedding LRU (one untimed priming pass; the measured queries are
fewer than the LRU holds). The encoder's own per-query latency is measured apart.
BM25 query encoding stays in all three (it is part of the search).

Primary figure: the server process's CPU time per call, read from
``/proc/<pid>/stat`` (utime + stime, all threads) before and after N calls, and that
minus (a)'s CPU per call: the overhead beyond the search itself. Also p50/p99 latency
and calls/s at each concurrency. The client (the MCP SDK's ``Client`` over loopback
TCP, one per worker, handshake and a warm-up call untimed) runs in this process, so
its CPU competes with the server's on the same cores: compare within one run.

    .venv/bin/python bench/mcp_overhead.py --state-dir /tmp/lrm-overhead-5000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
SCRIPT = str(Path(__file__).resolve())
sys.path.insert(0, str(BENCH_DIR))

from corpus import distinct_queries, write_beir_corpus  # noqa: E402

import retrieval_mcp  # noqa: E402
from retrieval_mcp.backends.qdrant_embedded import (  # noqa: E402
    BM25,
    DENSE,
    QdrantEmbeddedBackend,
    _candidates,
)
from retrieval_mcp.encoders.minilm import MiniLMEncoder  # noqa: E402
from retrieval_mcp.pipeline.fusion import reciprocal_rank_fusion  # noqa: E402
from retrieval_mcp.records import Hit  # noqa: E402
from retrieval_mcp.settings import Settings, load_settings  # noqa: E402

SOURCE = "cranfield"
CLK_TCK = os.sysconf("SC_CLK_TCK")
RRF_K = 60
SNIPPET_CHARS = 320

Call = Callable[[str], Awaitable[Any]]


# -- process accounting ------------------------------------------------------------


def proc_cpu_s(pid: int) -> float:
    """utime + stime of every thread of ``pid``, in seconds (clock-tick resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load1() -> float:
    return os.getloadavg()[0]


# -- the search every path runs ----------------------------------------------------


def hybrid_sync(
    shard: Any, bm25: Any, vector: Sequence[float], text: str, *, candidates: int, top_k: int
) -> list[Hit]:
    """The two engine queries ``QdrantEmbeddedBackend.search`` makes, then RRF."""
    import qdrant_edge as qe

    dense = _candidates(
        shard.query(
            qe.QueryRequest(
                limit=candidates,
                query=qe.Query.Nearest(list(vector), using=DENSE),
                filter=None,
                with_payload=True,
                params=qe.SearchParams(hnsw_ef=max(128, candidates)),
            )
        )
    )
    sparse = bm25.embed_query(text)
    lexical = (
        _candidates(
            shard.query(
                qe.QueryRequest(
                    limit=candidates,
                    query=qe.Query.Nearest(sparse, using=BM25),
                    filter=None,
                    with_payload=True,
                )
            )
        )
        if sparse.indices
        else []
    )
    return reciprocal_rank_fusion({"dense": dense, "bm25": lexical}, k=RRF_K, limit=top_k)


def hit_view(rank: int, hit: Hit) -> dict[str, Any]:
    """What the bare server returns per hit: snippet, provenance, per-leg ranks."""
    chunk = hit.chunk
    return {
        "rank": rank,
        "id": chunk.id,
        "score": round(hit.score, 6),
        "text": chunk.text[:SNIPPET_CHARS],
        "provenance": attrs.asdict(chunk.provenance),
        "legs": {leg: {"rank": s.rank, "score": s.score} for leg, s in hit.legs.items()},
    }


# -- (b): the bare MCPServer, run as a subprocess ----------------------------------


def serve_bare(args: argparse.Namespace) -> None:
    """``--serve-bare``: MCPServer + uvicorn on a loopback port; prints ``PORT n``."""
    import socket

    import anyio
    from mcp.server.mcpserver import MCPServer

    settings = bench_settings(args.state_dir)
    encoder = MiniLMEncoder(
        max_tokens=settings.encoder.max_tokens,
        batch_size=settings.encoder.batch_size,
        threads=settings.encoder.threads,
    )
    backend = QdrantEmbeddedBackend(settings.store_path, encoder)
    backend._open_sync()
    shard, bm25 = backend._shard, backend._bm25
    vectors: dict[str, list[float]] = json.loads(Path(args.vectors).read_text("utf-8"))
    candidates = settings.pipeline.legs.dense.candidates

    # log_level also sets uvicorn's: WARNING turns off its per-request access log (ours
    # logs each call at info: compare ours-quiet).
    mcp = MCPServer("bare-search", log_level="WARNING")

    @mcp.tool()
    async def search(query: str, top_k: int = 8) -> dict[str, Any]:
        """Hybrid (dense + BM25, RRF) search over the store."""
        vector = vectors.get(query)
        if vector is None:
            vector = (await anyio.to_thread.run_sync(encoder.embed, [query]))[0].tolist()
        hits = await anyio.to_thread.run_sync(
            lambda: hybrid_sync(shard, bm25, vector, query, candidates=candidates, top_k=top_k)
        )
        return {"query": query, "hits": [hit_view(i, h) for i, h in enumerate(hits, 1)]}

    # Its own default transport, exactly: MCPServer.run -> uvicorn binds host:port. (A
    # socket bound here and handed to uvicorn would need IPPROTO_TCP spelled out, or
    # asyncio skips TCP_NODELAY and every keep-alive call waits ~40 ms for an ACK.)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    print(f"PORT {port}", flush=True)
    try:
        mcp.run(
            "streamable-http",
            host="127.0.0.1",
            port=port,
            stateless_http=True,
            json_response=True,
        )
    finally:
        backend._close_sync(shard)


# -- settings and ingest -----------------------------------------------------------


def bench_settings(state_dir: Path, **extra: Any) -> Settings:
    overrides: dict[str, Any] = {
        "demo": {"ingest_on_first_start": False},
        "server": {"port": 0},
        "logging": {"level": "warning"},
        **extra,
    }
    return load_settings(state_dir=state_dir, overrides=overrides)


async def ensure_ingested(settings: Settings, chunks: int) -> dict[str, Any]:
    from retrieval_mcp.services import ingest_path, open_backend

    settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    corpus = write_beir_corpus(
        settings.state_dir / "corpus",
        chunks,
        chunk_chars=settings.chunking.chunk_chars,
        overlap_chars=settings.chunking.overlap_chars,
    )
    async with open_backend(settings) as backend:
        started = time.perf_counter()
        report = await ingest_path(backend, settings, corpus.path, source=SOURCE, prune=True)
        took = time.perf_counter() - started
        stored = (await backend.status()).chunks
    print(
        f"store: {stored} chunks ({corpus.documents} documents); "
        f"{report.chunks_written} written, {report.documents_unchanged} unchanged, {took:.1f} s",
        flush=True,
    )
    return {"chunks": stored, "written": report.chunks_written, "seconds": round(took, 1)}


# -- measurement -------------------------------------------------------------------


@attrs.define
class Cell:
    path: str
    concurrency: int
    latencies_ms: list[float] = attrs.field(factory=list)
    wall_s: float = 0.0
    server_cpu_s: float = float("nan")
    client_cpu_s: float = float("nan")
    load_start: float = 0.0
    load_end: float = 0.0
    errors: int = 0
    server_rss_mib: float = float("nan")
    round: int = 0

    def pct(self, q: float) -> float:
        return float(np.percentile(self.latencies_ms, q)) if self.latencies_ms else float("nan")

    @property
    def calls(self) -> int:
        return len(self.latencies_ms)

    @property
    def rate(self) -> float:
        return self.calls / self.wall_s if self.wall_s else float("nan")

    @property
    def server_cpu_ms(self) -> float:
        return self.server_cpu_s * 1000 / self.calls if self.calls else float("nan")

    @property
    def client_cpu_ms(self) -> float:
        return self.client_cpu_s * 1000 / self.calls if self.calls else float("nan")

    def summary(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "round": self.round,
            "concurrency": self.concurrency,
            "calls": self.calls,
            "wall_s": round(self.wall_s, 3),
            "calls_per_s": round(self.rate, 1),
            "p50_ms": round(self.pct(50), 3),
            "p99_ms": round(self.pct(99), 3),
            "server_cpu_ms_per_call": round(self.server_cpu_ms, 3),
            "client_cpu_ms_per_call": round(self.client_cpu_ms, 3),
            "server_rss_mib": round(self.server_rss_mib, 1),
            "load1_start": round(self.load_start, 2),
            "load1_end": round(self.load_end, 2),
            "errors": self.errors,
        }


def _ok(result: Any) -> bool:
    """A call counts if it succeeded and returned hits (bare: data; ours: envelope)."""
    if getattr(result, "is_error", False):
        return False
    content = getattr(result, "structured_content", None)
    if content is None:
        return isinstance(result, list) and bool(result)
    if "ok" in content:
        return bool(content.get("ok")) and bool(content["data"]["hits"])
    inner = content.get("result", content)
    return bool(inner.get("hits"))


async def run_cell(
    path: str,
    callers: Sequence[Call],
    queries: Sequence[str],
    requests: int,
    *,
    server_pid: int,
) -> Cell:
    """``requests`` calls over ``len(callers)`` workers, cycling through ``queries``."""
    import trio

    cell = Cell(path=path, concurrency=len(callers))
    cursor = iter(range(requests))
    me = os.getpid()

    async def worker(call: Call) -> None:
        for index in cursor:
            started = time.perf_counter()
            result = await call(queries[index % len(queries)])
            cell.latencies_ms.append((time.perf_counter() - started) * 1000)
            if not _ok(result):
                cell.errors += 1
                if cell.errors == 1:
                    print(f"  first error: {getattr(result, 'content', result)!r:.300}", flush=True)

    cell.load_start = load1()
    server_before, client_before = proc_cpu_s(server_pid), proc_cpu_s(me)
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for call in callers:
            nursery.start_soon(worker, call)
    cell.wall_s = time.perf_counter() - started
    server_after, client_after = proc_cpu_s(server_pid), proc_cpu_s(me)
    cell.server_cpu_s = server_after - server_before
    cell.client_cpu_s = client_after - client_before
    cell.load_end = load1()
    cell.server_rss_mib = proc_rss_mib(server_pid)
    print(
        f"  {path:16} c={cell.concurrency:<3} p50 {cell.pct(50):7.2f} ms  p99 "
        f"{cell.pct(99):7.2f}  {cell.rate:7.1f} calls/s  server CPU {cell.server_cpu_ms:6.2f} "
        f"ms/call  client CPU {cell.client_cpu_ms:6.2f}  load {cell.load_start:.1f}"
        f"  errors {cell.errors}",
        flush=True,
    )
    return cell


def query_tokens(queries: Sequence[str]) -> list[int]:
    """Word pieces per query with [CLS]/[SEP]. Not ``MiniLMEncoder.count_tokens``: its
    tokenizer keeps tokenizer.json's fixed 128-token padding and truncation."""
    from tokenizers import Tokenizer

    from retrieval_mcp.encoders.minilm import model_files

    tokenizer = Tokenizer.from_file(str(model_files()[1]))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return [len(e.ids) for e in tokenizer.encode_batch(list(queries))]


def encoder_phase(
    encoder: MiniLMEncoder, queries: Sequence[str]
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Embed every query once, alone (as a cache miss does): per-query latency and CPU."""
    for q in queries[:3]:
        encoder.embed([q + " warm-up"])
    vectors: dict[str, list[float]] = {}
    latencies: list[float] = []
    me = os.getpid()
    cpu_before, load_start = proc_cpu_s(me), load1()
    for q in queries:
        started = time.perf_counter()
        vectors[q] = encoder.embed([q])[0].tolist()
        latencies.append((time.perf_counter() - started) * 1000)
    cpu_ms = (proc_cpu_s(me) - cpu_before) * 1000 / len(queries)
    tokens = query_tokens(queries)
    figures = {
        "queries": len(queries),
        "mean_tokens": round(float(np.mean(tokens)), 1),
        "p50_ms": round(float(np.percentile(latencies, 50)), 3),
        "p99_ms": round(float(np.percentile(latencies, 99)), 3),
        "cpu_ms_per_query": round(cpu_ms, 3),
        "load1_start": round(load_start, 2),
    }
    print(
        f"  encoder          c=1   p50 {figures['p50_ms']:7.2f} ms  p99 {figures['p99_ms']:7.2f}"
        f"  CPU {cpu_ms:.2f} ms/query  ({figures['mean_tokens']} tokens/query mean)",
        flush=True,
    )
    return vectors, figures


async def inprocess_phase(
    settings: Settings,
    encoder: MiniLMEncoder,
    vectors: dict[str, list[float]],
    queries: Sequence[str],
    args: argparse.Namespace,
) -> list[Cell]:
    import trio

    from retrieval_mcp.backends.protocol import Capability, LegQuery

    backend = await QdrantEmbeddedBackend.open(
        settings.store_path,
        encoder,
        hnsw_ef=settings.backend.qdrant_embedded.hnsw_ef,
        query_cache_size=settings.encoder.query_cache_size,
    )
    candidates = settings.pipeline.legs.dense.candidates
    cells: list[Cell] = []
    try:
        for q, v in vectors.items():  # the LRU answers every measured query
            backend._query_vectors.put(q, v)

        async def hybrid(text: str) -> list[Hit]:
            legs: dict[str, Any] = {}

            async def leg(name: str, capability: Capability) -> None:
                legs[name] = await backend.search(
                    LegQuery(leg=capability, text=text, limit=candidates)
                )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(leg, "dense", Capability.DENSE)
                nursery.start_soon(leg, "bm25", Capability.BM25)
            return reciprocal_rank_fusion(
                {"dense": legs["dense"], "bm25": legs["bm25"]}, k=RRF_K, limit=args.top_k
            )

        for q in queries[:20]:
            await hybrid(q)
        for concurrency in args.concurrency:
            cells.append(
                await run_cell(
                    "in-process",
                    [hybrid] * concurrency,
                    queries,
                    args.requests,
                    server_pid=os.getpid(),
                )
            )
        shard, bm25 = backend._shard, backend._bm25

        async def direct(text: str) -> list[Hit]:
            return hybrid_sync(
                shard, bm25, vectors[text], text, candidates=candidates, top_k=args.top_k
            )

        cells.append(
            await run_cell(
                "in-process-sync", [direct], queries, args.requests, server_pid=os.getpid()
            )
        )
    finally:
        await backend.aclose()
    return cells


# -- (b) and (c) through the MCP SDK client ----------------------------------------


@asynccontextmanager
async def mcp_caller(url: str, token: str | None, top_k: int) -> AsyncIterator[Call]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(30.0, read=120.0), trust_env=False
    )
    async with (
        http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):

        async def call(query: str) -> Any:
            return await client.call_tool("search", {"query": query, "top_k": top_k})

        yield call


async def _readline(proc: subprocess.Popen[str], deadline_s: float) -> str | None:
    import trio

    assert proc.stdout is not None
    with trio.move_on_after(deadline_s):
        line: str = await trio.to_thread.run_sync(proc.stdout.readline, abandon_on_cancel=True)
        return line
    return None


def spawn(command: list[str], log: Path) -> subprocess.Popen[str]:
    """The child's stdout comes back through a pipe; its stderr goes to ``log``."""
    with log.open("a") as err:
        return subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=err, text=True, env=_child_env()
        )


@attrs.define
class Started:
    proc: subprocess.Popen[str]
    url: str
    token: str | None
    startup_s: float


async def start_bare(args: argparse.Namespace, vectors_file: Path, log: Path) -> Started:
    command = [
        sys.executable,
        SCRIPT,
        "--serve-bare",
        "--state-dir",
        str(args.state_dir),
        "--vectors",
        str(vectors_file),
    ]
    started = time.perf_counter()
    proc = spawn(command, log)
    while True:
        line = await _readline(proc, 120)
        if not line:
            proc.kill()
            raise RuntimeError(f"the bare server did not start; see {log}")
        if line.startswith("PORT "):
            port = int(line.split()[1])
            break
    import socket

    import trio

    while time.perf_counter() - started < 120 and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            await trio.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError(f"the bare server never listened; see {log}")
    return Started(proc, f"http://127.0.0.1:{port}/mcp", None, time.perf_counter() - started)


def write_config(state_dir: Path, variant: str) -> Path:
    """Our server's settings for this run; also deletes the token file, so the server
    makes a fresh token and prints it."""
    config = state_dir / f"bench-{variant}.toml"
    level = "warning" if variant == "ours-quiet" else "info"
    config.write_text(
        "# written by bench/mcp_overhead.py: rate limiters on, with budgets that never refuse\n"
        "[limits.per_address]\nper_minute = 1000000.0\nburst = 1000000\n"
        "[limits.per_token]\nper_minute = 1000000.0\nburst = 1000000\n"
        f'[logging]\nlevel = "{level}"\nstderr = "never"\n',
        "utf-8",
    )
    (state_dir / "tokens.json").unlink(missing_ok=True)
    return config


async def start_ours(args: argparse.Namespace, variant: str, log: Path) -> Started:
    config = write_config(args.state_dir, variant)
    command = [
        sys.executable,
        "-m",
        "retrieval_mcp",
        "serve",
        "--config",
        str(config),
        "--state-dir",
        str(args.state_dir),
        "--port",
        "0",
        "--socket",
        "none",
        "--no-demo",
    ]
    started = time.perf_counter()
    proc = spawn(command, log)
    seen: list[str] = []
    while True:
        line = await _readline(proc, 180)
        if not line:
            proc.kill()
            raise RuntimeError(f"our server did not start; see {log}: {''.join(seen)[-500:]}")
        seen.append(line)
        if "token is shown once" in line or "The token was shown" in line:
            break
    text = "".join(seen)
    url = re.search(r'"url": "(http://[^"]+)"', text)
    token = re.search(r"Bearer (lrm_[^\"\s]+)", text)
    if not url or not token:
        proc.kill()
        raise RuntimeError(f"cannot read the URL or token from: {text[-800:]}")
    return Started(proc, url.group(1), token.group(1), time.perf_counter() - started)


def spawn_quiet(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # The child imports the same retrieval_mcp as this process (a pinned copy, if any).
    code_root = str(Path(retrieval_mcp.__file__).resolve().parent.parent)
    if Path(code_root, "retrieval_mcp").is_dir():
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [code_root, env.get("PYTHONPATH")]))
    return env


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


async def server_phase(
    path: str,
    started: Started,
    queries: Sequence[str],
    args: argparse.Namespace,
    profile: tuple[Path, Path] | None,
) -> list[Cell]:
    """Prime (every query once, untimed), then one cell per concurrency."""
    import trio

    pid = started.proc.pid
    cells: list[Cell] = []
    async with mcp_caller(started.url, started.token, args.top_k) as call:
        for q in queries:
            await call(q)
    for concurrency in args.concurrency:
        async with AsyncExitStack() as stack:
            callers: list[Call] = []
            for _ in range(concurrency):
                call = await stack.enter_async_context(
                    mcp_caller(started.url, started.token, args.top_k)
                )
                if not _ok(await call(queries[0])):
                    raise RuntimeError(f"{path}: the warm-up call failed")
                callers.append(call)
            cell = await run_cell(path, callers, queries, args.requests, server_pid=pid)
            cell.round = args._round
            cells.append(cell)
    if profile is not None:
        py_spy, out_dir = profile
        out = out_dir / f"{path}-r{args._round}.txt"
        spy = spawn_quiet(
            [
                str(py_spy),
                "record",
                "--pid",
                str(pid),
                "--rate",
                "200",
                "--format",
                "raw",
                "--output",
                str(out),
                "--nonblocking",
                "--full-filenames",
                "--gil",
            ],
        )
        await trio.sleep(1.0)
        async with mcp_caller(started.url, started.token, args.top_k) as call:
            for index in range(args.profile_requests):
                await call(queries[index % len(queries)])
        spy.send_signal(signal.SIGINT)
        try:
            spy.wait(timeout=60)
        except subprocess.TimeoutExpired:
            spy.kill()
        print(f"  profile ({args.profile_requests} calls at c=1, not timed): {out}", flush=True)
    return cells


# -- report ------------------------------------------------------------------------


def report(cells: Sequence[Cell], encoder: dict[str, Any], startup: dict[str, float]) -> str:
    def mean(values: Sequence[float]) -> float:
        return float(np.mean(values)) if values else float("nan")

    paths = list(dict.fromkeys(c.path for c in cells))
    conc = sorted({c.concurrency for c in cells})
    baseline = {
        k: mean([c.server_cpu_ms for c in cells if c.path == "in-process" and c.concurrency == k])
        for k in conc
    }
    sync_base = mean([c.server_cpu_ms for c in cells if c.path == "in-process-sync"])
    lines = [
        "| path | round | c | calls | calls/s | p50 ms | p99 ms | server CPU ms/call | "
        "beyond (a) ms/call | client CPU ms/call | server RSS MiB | load 1m |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in cells:
        base = baseline.get(c.concurrency, float("nan"))
        beyond = "—" if c.path.startswith("in-process") else f"{c.server_cpu_ms - base:.2f}"
        client = "—" if c.path.startswith("in-process") else f"{c.client_cpu_ms:.2f}"
        lines.append(
            f"| {c.path} | {c.round or '—'} | {c.concurrency} | {c.calls} | {c.rate:.1f} | "
            f"{c.pct(50):.2f} | {c.pct(99):.2f} | {c.server_cpu_ms:.2f} | {beyond} | {client} | "
            f"{c.server_rss_mib:.0f} | {c.load_start:.1f}→{c.load_end:.1f} |"
        )
    lines += [
        "",
        "Means over rounds; ratios against bare-sdk (target: ours ≤ 1.00 in CPU and p50, "
        "≥ 1.00 in calls/s; stretch: ours' CPU beyond (a) ≤ 0.5 × bare's):",
        "",
        "| path | c | server CPU ms/call | beyond (a) | beyond (a-sync) | calls/s | p50 ms | "
        "CPU ÷ bare | beyond (a) ÷ bare | calls/s ÷ bare | p50 ÷ bare |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k in conc:
        bare = [c for c in cells if c.path == "bare-sdk" and c.concurrency == k]
        b_cpu = mean([c.server_cpu_ms for c in bare])
        b_rate = mean([c.rate for c in bare])
        b_p50 = mean([c.pct(50) for c in bare])
        for path in paths:
            mine = [c for c in cells if c.path == path and c.concurrency == k]
            if not mine:
                continue
            cpu, rate = mean([c.server_cpu_ms for c in mine]), mean([c.rate for c in mine])
            p50 = mean([c.pct(50) for c in mine])
            inproc = path.startswith("in-process")
            beyond = cpu - baseline[k]
            lines.append(
                f"| {path} | {k} | {cpu:.2f} | {'—' if inproc else f'{beyond:.2f}'} | "
                f"{'—' if inproc else f'{cpu - sync_base:.2f}'} | "
                f"{rate:.1f} | {p50:.2f} | {cpu / b_cpu:.2f} | "
                f"{'—' if inproc else f'{beyond / (b_cpu - baseline[k]):.2f}'} | "
                f"{rate / b_rate:.2f} | {p50 / b_p50:.2f} |"
            )
    lines += [
        "",
        f"Query encoder alone (cache miss, one query per call, c=1, {encoder['queries']} "
        f"queries, {encoder['mean_tokens']} tokens mean): p50 {encoder['p50_ms']:.2f} ms, "
        f"p99 {encoder['p99_ms']:.2f} ms, CPU {encoder['cpu_ms_per_query']:.2f} ms per query "
        f"(load {encoder['load1_start']}).",
        "Start-up to first answer (process start → ready line): "
        + ", ".join(f"{k} {v:.1f} s" for k, v in startup.items())
        + ".",
    ]
    return "\n".join(lines)


def environment() -> dict[str, str]:
    repo = BENCH_DIR.parent

    def git(*argv: str) -> str:
        out = subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, text=True)
        return out.stdout.strip()

    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": git("rev-parse", "--short", "HEAD"),
        "working_tree_dirty": "yes"
        if git("status", "--porcelain", "--", "src", "config")
        else "no",
        "server_code": str(Path(retrieval_mcp.__file__).resolve().parent),
        "nproc": str(os.cpu_count()),
        "python": platform.python_version(),
        "loadavg_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


# -- main --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument(
        "--state-dir", type=Path, default=None, help="default <tmp>/lrm-overhead-<chunks>"
    )
    parser.add_argument("--requests", type=int, default=1000, help="timed calls per cell")
    parser.add_argument("--queries", type=int, default=200, help="distinct query strings")
    parser.add_argument(
        "--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 32]
    )
    parser.add_argument("--rounds", type=int, default=2, help="bare, ours, ours-quiet, repeated")
    parser.add_argument("--variants", default="bare-sdk,ours,ours-quiet")
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--py-spy", type=Path, help="py-spy binary: profile each server after")
    parser.add_argument("--profile-dir", type=Path, default=Path("bench/out/profiles"))
    parser.add_argument("--profile-requests", type=int, default=1500)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve-bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.state_dir = (
        args.state_dir or Path(tempfile.gettempdir()) / f"lrm-overhead-{args.chunks}"
    ).resolve()
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    return args


async def main(args: argparse.Namespace) -> dict[str, Any]:
    from retrieval_mcp.logs import configure_logging

    configure_logging("warning")
    env = environment()
    print(
        f"{env['date_utc']} commit {env['commit']} (src/config dirty: "
        f"{env['working_tree_dirty']}), server code {env['server_code']}, "
        f"load {env['loadavg_at_start']}",
        flush=True,
    )
    settings = bench_settings(args.state_dir)
    ingest = await ensure_ingested(settings, args.chunks)
    queries = distinct_queries(args.queries)
    if len(queries) > settings.encoder.query_cache_size:
        raise SystemExit("--queries must fit in the query LRU")
    encoder = MiniLMEncoder(
        max_tokens=settings.encoder.max_tokens,
        batch_size=settings.encoder.batch_size,
        threads=settings.encoder.threads,
    )
    vectors, encoder_figures = encoder_phase(encoder, queries)
    vectors_file = args.state_dir / "bench-query-vectors.json"
    vectors_file.write_text(json.dumps(vectors), "utf-8")
    cells = await inprocess_phase(settings, encoder, vectors, queries, args)
    del encoder
    log = args.state_dir / "bench-servers.log"
    startup: dict[str, float] = {}
    profile = None
    if args.py_spy:
        args.profile_dir.mkdir(parents=True, exist_ok=True)
        profile = (args.py_spy, args.profile_dir)
    for round_no in range(1, args.rounds + 1):
        args._round = round_no
        for variant in args.variants:
            if variant == "bare-sdk":
                started = await start_bare(args, vectors_file, log)
            else:
                started = await start_ours(args, variant, log)
            startup[f"{variant}#{round_no}"] = started.startup_s
            try:
                cells += await server_phase(variant, started, queries, args, profile)
            finally:
                stop(started.proc)
    print()
    table = report(cells, encoder_figures, startup)
    print(table)
    if profile is not None:
        from profile_summary import summarise

        for file in sorted(args.profile_dir.glob("*-r1.txt")):
            print(f"\n### py-spy: {file.name}\n")
            print(summarise(file))
    return {
        "environment": env,
        "args": {k: str(v) for k, v in vars(args).items()},
        "ingest": ingest,
        "encoder": encoder_figures,
        "startup_s": startup,
        "cells": [c.summary() for c in cells],
        "table": table,
    }


if __name__ == "__main__":
    arguments = parse_args()
    if arguments.serve_bare:
        serve_bare(arguments)
        raise SystemExit(0)
    import trio

    result = trio.run(main, arguments)
    if arguments.json:
        arguments.json.parent.mkdir(parents=True, exist_ok=True)
        arguments.json.write_text(json.dumps(result, indent=2) + "\n", "utf-8")
