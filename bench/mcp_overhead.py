"""What MCP costs the server per call: a bare SDK server vs ours, one ratio table.

One run, one long-chunk store (10,000 chunks of Cranfield abstracts joined six to a
document, ~820 characters each, embedded qdrant-edge), the same queries:

* (a) ``in-process``: ``QdrantEmbeddedBackend.search`` for the dense and BM25 legs
  (concurrently, in Trio, as the pipeline does) + RRF (k = 60), in this process.
  Also ``in-process-sync``: the same two engine queries + RRF as plain blocking calls,
  which is what the bare server runs in its worker thread (the engine's own work).
* (b) ``bare-sdk``: a server built with the MCP SDK's high-level ``MCPServer`` on its
  default transport (uvicorn, asyncio, Streamable HTTP, stateless, JSON responses),
  exposing the same hybrid search as one tool, with no auth, limits or screening. It
  runs as a subprocess of this script (``--serve-bare``), and loads the store with the
  engine's own search pool as a plain SDK server would (``--bare-pool server`` gives it
  ours, ADR 0055; ``in-process-sync-bare-pool`` is then its engine work).
* (c) ``ours``: ``latence-retrieval-mcp serve`` as a subprocess with everything on:
  bearer token, origin policy, per-address and per-token rate limiters (budget raised
  so they never refuse), WAL session records, the pipeline's actors, snippet
  wrapping and flags, the envelope, and per-call telemetry at ``info``. More of ours
  by settings overrides: ``--variant NAME:section.key=value``.

Cells per server and concurrency: ``cached`` (every query in the embedding cache; the
bare server is handed precomputed vectors), ``get_context`` at 1,500 tokens (ours),
and ``uncached`` (a fresh query string per call: both servers run the encoder; the
bare one on the shipped graph, ours on its int8-MatMul query graph unless a variant
sets ``encoder.query_graph=shipped``, ADR 0052).
The embedded store allows one opener, so the paths take turns.

Primary figure: the server process's CPU time per call, read from
``/proc/<pid>/stat`` (utime + stime, all threads) before and after N calls; also
p50/p99 latency and calls/s. The client (the MCP SDK's ``Client`` over loopback TCP,
one per worker, handshake and a warm-up call untimed) runs in this process, so its
CPU competes with the server's on the same cores: compare within one run.

    .venv/bin/python bench/mcp_overhead.py --json bench/out/mcp_overhead.json
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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
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
CONTEXT_BUDGET = 1500

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


@contextmanager
def engine_pool(store: Path) -> Iterator[None]:
    """Open the store inside with the engine's own search pool, as a plain SDK server
    would (``EdgeShard.load(path)``), not ours (ADR 0055): the pool our server persisted
    in ``edge_config.json`` is removed first, and the backend is told the store is not
    one it may pass a config to."""
    from retrieval_mcp.backends import qdrant_embedded

    config_path = store / "shard" / "edge_config.json"
    persisted = json.loads(config_path.read_text("utf-8"))
    if persisted.pop("max_search_threads", None) is not None:
        config_path.write_text(json.dumps(persisted), "utf-8")
    original = qdrant_embedded.load_config
    qdrant_embedded.load_config = lambda *args: None  # type: ignore[assignment]
    try:
        yield
    finally:
        qdrant_embedded.load_config = original


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
    if args.bare_pool == "engine":
        with engine_pool(settings.store_path):
            backend._open_sync()
    else:
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


async def ensure_ingested(settings: Settings, chunks: int, join: int) -> dict[str, Any]:
    from retrieval_mcp.backends.protocol import Capability, LegQuery
    from retrieval_mcp.services import ingest_path, open_backend

    settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    corpus = write_beir_corpus(
        settings.state_dir / "corpus",
        chunks,
        chunk_chars=settings.chunking.chunk_chars,
        overlap_chars=settings.chunking.overlap_chars,
        join=join,
    )
    async with open_backend(settings) as backend:
        started = time.perf_counter()
        report = await ingest_path(backend, settings, corpus.path, source=SOURCE, prune=True)
        took = time.perf_counter() - started
        stored = (await backend.status()).chunks
        sample = await backend.search(LegQuery(leg=Capability.BM25, text="flow", limit=200))
    mean_chars = float(np.mean([len(c.chunk.text) for c in sample])) if sample else 0.0
    print(
        f"store: {stored} chunks ({corpus.documents} documents); "
        f"{report.chunks_written} written, {report.documents_unchanged} unchanged, {took:.1f} s; "
        f"mean chunk {mean_chars:.0f} characters (200 BM25 hits for 'flow')",
        flush=True,
    )
    return {
        "chunks": stored,
        "written": report.chunks_written,
        "seconds": round(took, 1),
        "mean_chunk_chars": round(mean_chars),
    }


# -- measurement -------------------------------------------------------------------


@attrs.define
class Cell:
    path: str
    concurrency: int
    kind: str = "cached"  # cached | uncached | get_context
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
            "kind": self.kind,
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
        data = content.get("data") or {}
        return bool(content.get("ok")) and bool(data.get("hits") or data.get("passages"))
    inner = content.get("result", content)
    return bool(inner.get("hits"))


async def run_cell(
    path: str,
    callers: Sequence[Call],
    queries: Sequence[str],
    requests: int,
    *,
    server_pid: int,
    kind: str = "cached",
) -> Cell:
    """``requests`` calls over ``len(callers)`` workers, cycling through ``queries``."""
    import trio

    cell = Cell(path=path, concurrency=len(callers), kind=kind)
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
        f"  {path:11} {kind:11} c={cell.concurrency:<3} p50 {cell.pct(50):7.2f} ms  p99 "
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
    # The same queries on the int8-MatMul query graph our server uses (ADR 0052), in an
    # encoder of its own: the vectors above (the bare server's) stay the shipped graph's.
    int8 = MiniLMEncoder(threads=encoder._threads)
    int8.prepare_query_graph()
    for q in queries[:3]:
        int8.embed_queries([q + " warm-up"])
    latencies = []
    cpu_before = proc_cpu_s(me)
    for q in queries:
        started = time.perf_counter()
        int8.embed_queries([q])
        latencies.append((time.perf_counter() - started) * 1000)
    figures["int8_cpu_ms_per_query"] = round((proc_cpu_s(me) - cpu_before) * 1000 / len(queries), 3)
    figures["int8_p50_ms"] = round(float(np.percentile(latencies, 50)), 3)
    print(
        f"  encoder int8-matmul  p50 {figures['int8_p50_ms']:7.2f} ms"
        f"  CPU {figures['int8_cpu_ms_per_query']:.2f} ms/query",
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
    if args.bare_pool == "engine":  # the bare server's own engine work, on its pool
        with engine_pool(settings.store_path):
            bare_backend = await QdrantEmbeddedBackend.open(
                settings.store_path, encoder, hnsw_ef=settings.backend.qdrant_embedded.hnsw_ef
            )
        try:
            bare_shard, bare_bm25 = bare_backend._shard, bare_backend._bm25

            async def bare_direct(text: str) -> list[Hit]:
                return hybrid_sync(
                    bare_shard,
                    bare_bm25,
                    vectors[text],
                    text,
                    candidates=candidates,
                    top_k=args.top_k,
                )

            for q in queries[:20]:
                await bare_direct(q)
            cells.append(
                await run_cell(
                    "in-process-sync-bare-pool",
                    [bare_direct],
                    queries,
                    args.requests,
                    server_pid=os.getpid(),
                )
            )
        finally:
            await bare_backend.aclose()
    return cells


# -- (b) and (c) through the MCP SDK client ----------------------------------------


@asynccontextmanager
async def mcp_caller(
    url: str, token: str | None, tool: str, extra: dict[str, Any]
) -> AsyncIterator[Call]:
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
            return await client.call_tool(tool, {"query": query, **extra})

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
        "--bare-pool",
        args.bare_pool,
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


def write_config(state_dir: Path, variant: str, overrides: dict[str, list[str]]) -> Path:
    """Our server's settings for this run; also deletes the token file, so the server
    makes a fresh token and prints it. ``overrides[variant]``: ``section.key=value``
    lines (TOML values) that make a variant, e.g. one hot-path change turned off."""
    config = state_dir / f"bench-{variant}.toml"
    level = "warning" if variant == "ours-quiet" else "info"
    sections: dict[str, list[str]] = {
        "limits.per_address": ["per_minute = 1000000.0", "burst = 1000000"],
        "limits.per_token": ["per_minute = 1000000.0", "burst = 1000000"],
        "logging": [f'level = "{level}"', 'stderr = "never"'],
        # Opening 32 sessions one by one can leave the first idle past Hypercorn's 5 s
        # keep-alive on a loaded machine; an idle connection costs no CPU.
        "limits": ["idle_timeout_s = 120.0"],
    }
    for line in overrides.get(variant, []):
        dotted, value = line.split("=", 1)
        section, key = dotted.rsplit(".", 1)
        sections.setdefault(section, []).append(f"{key} = {value}")
    config.write_text(
        "# written by bench/mcp_overhead.py: rate limiters on, with budgets that never refuse\n"
        + "".join(
            f"[{name}]\n" + "".join(f"{x}\n" for x in lines) for name, lines in sections.items()
        ),
        "utf-8",
    )
    (state_dir / "tokens.json").unlink(missing_ok=True)
    return config


async def start_ours(args: argparse.Namespace, variant: str, log: Path) -> Started:
    config = write_config(args.state_dir, variant, args.overrides)
    return await start_serve(serve_command(config, args.state_dir), log, timeout_s=180)


def serve_command(config: Path, state_dir: Path, *extra: str) -> list[str]:
    """``serve`` on a loopback port chosen by the kernel, no socket, no demo corpus."""
    return [
        sys.executable,
        "-m",
        "retrieval_mcp",
        "serve",
        *extra,
        "--config",
        str(config),
        "--state-dir",
        str(state_dir),
        "--port",
        "0",
        "--socket",
        "none",
        "--no-demo",
    ]


async def start_serve(command: list[str], log: Path, *, timeout_s: float) -> Started:
    """Run ``command``; ready once it prints its token. Also for bench/workers.py."""
    started = time.perf_counter()
    proc = spawn(command, log)
    seen: list[str] = []
    while True:
        line = await _readline(proc, timeout_s)
        if not line:
            stop(proc)
            raise RuntimeError(f"the server did not start; see {log}: {''.join(seen)[-500:]}")
        seen.append(line)
        if "token is shown once" in line or "The token was shown" in line:
            break
    text = "".join(seen)
    url = re.search(r'"url": "(http://[^"]+)"', text) or re.search(r"MCP over HTTP : (\S+)", text)
    token = re.search(r"Bearer (lrm_[A-Za-z0-9_\-]+)", text)
    if not url or not token:
        stop(proc)
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


async def profile_calls(
    path: str,
    started: Started,
    queries: Sequence[str],
    args: argparse.Namespace,
    profile: tuple[Path, Path],
    tool: str,
    arguments: dict[str, Any],
) -> None:
    """py-spy (``--gil``: samples where a thread holds the GIL) over further calls of
    ``tool`` at c=1, untimed."""
    import trio

    py_spy, out_dir = profile
    suffix = "" if tool == "search" else f"-{tool}"
    out = out_dir / f"{path}{suffix}-r{args._round}.txt"
    spy = spawn_quiet(
        [
            str(py_spy),
            "record",
            "--pid",
            str(started.proc.pid),
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
    async with mcp_caller(started.url, started.token, tool, arguments) as call:
        for index in range(args.profile_requests):
            await call(queries[index % len(queries)])
    spy.send_signal(signal.SIGINT)
    try:
        spy.wait(timeout=60)
    except subprocess.TimeoutExpired:
        spy.kill()
    print(f"  profile ({args.profile_requests} {tool} calls at c=1, not timed): {out}", flush=True)


def fresh_queries(args: argparse.Namespace) -> list[str]:
    """``--requests`` query strings no server has seen in this run: every call of an
    uncached cell misses the embedding LRU and runs the encoder (both servers)."""
    queries = distinct_queries(args.requests, start=args._fresh)
    args._fresh += args.requests
    return queries


def cell_kinds(variant: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, tool, extra arguments) measured on ``variant``, in order: cached cells run
    while every query is still in the LRU, uncached ones last (they evict)."""
    kinds: list[tuple[str, str, dict[str, Any]]] = [("cached", "search", {})]
    if variant != "bare-sdk":
        kinds.append(("get_context", "get_context", {"budget_tokens": CONTEXT_BUDGET}))
    kinds.append(("uncached", "search", {}))
    return kinds


async def server_phase(
    path: str,
    started: Started,
    queries: Sequence[str],
    args: argparse.Namespace,
    profile: tuple[Path, Path] | None,
) -> list[Cell]:
    """Prime (every query once, untimed), then one cell per (kind, concurrency)."""

    pid = started.proc.pid
    cells: list[Cell] = []
    search_args = {"top_k": args.top_k}
    async with mcp_caller(started.url, started.token, "search", search_args) as call:
        for q in queries:
            await call(q)
    for kind, tool, extra in cell_kinds(path):
        if kind not in args.kinds:
            continue
        arguments = {**search_args, **extra} if tool == "search" else extra
        for concurrency in args.concurrency:
            measured = fresh_queries(args) if kind == "uncached" else queries
            async with AsyncExitStack() as stack:
                callers: list[Call] = []
                for _ in range(concurrency):
                    call = await stack.enter_async_context(
                        mcp_caller(started.url, started.token, tool, arguments)
                    )
                    if not _ok(await call(queries[0])):  # cached: warms the path only
                        raise RuntimeError(f"{path}: the warm-up {tool} call failed")
                    callers.append(call)
                cell = await run_cell(
                    path, callers, measured, args.requests, server_pid=pid, kind=kind
                )
                cell.round = args._round
                cells.append(cell)
    if profile is not None:
        tools = [("search", search_args)]
        if path != "bare-sdk" and "get_context" in args.kinds:
            tools.append(("get_context", {"budget_tokens": CONTEXT_BUDGET}))
        for tool, arguments in tools:
            await profile_calls(path, started, queries, args, profile, tool, arguments)
    return cells


# -- report ------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def report(
    cells: Sequence[Cell], encoder: dict[str, Any], startup: dict[str, float], store: str
) -> str:
    """The one ratio table: each of our variants against bare-sdk, same kind and c,
    means over rounds; then get_context against our own search, and the engine's share."""

    def pick(path: str, kind: str, c: int) -> list[Cell]:
        return [x for x in cells if x.path == path and x.kind == kind and x.concurrency == c]

    def fig(group: list[Cell], what: str) -> float:
        if what == "cpu":
            return _mean([x.server_cpu_ms for x in group])
        if what == "rate":
            return _mean([x.rate for x in group])
        return _mean([x.pct(50 if what == "p50" else 99) for x in group])

    def ratio(a: float, b: float) -> str:
        return f"**{a / b:.2f}**" if b and b == b and a == a else "—"

    ours = [p for p in dict.fromkeys(x.path for x in cells) if p not in ("bare-sdk",)]
    ours = [p for p in ours if not p.startswith("in-process")]
    conc = sorted({x.concurrency for x in cells if not x.path.startswith("in-process")})
    engine = _mean([x.server_cpu_ms for x in cells if x.path == "in-process-sync"])
    # The bare server's engine work on its own pool (--bare-pool engine), else ours.
    bare_engine = (
        _mean([x.server_cpu_ms for x in cells if x.path == "in-process-sync-bare-pool"])
        if any(x.path == "in-process-sync-bare-pool" for x in cells)
        else engine
    )
    rounds = max((x.round for x in cells), default=0)
    lines = [
        f"{store}; means over {rounds} round(s); server CPU = utime + stime of the server "
        "process per call; targets: CPU ÷ bare ≤ 1.00, calls/s ÷ bare ≥ 1.00 at c = 32, "
        "get_context ÷ search ≤ 2.00.",
        "",
        "| server, call | c | CPU ms/call | **CPU ÷ bare** | p50 ms | p50 ÷ bare | p99 ms | "
        "calls/s | **calls/s ÷ bare** |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    labels = {
        "cached": "search, cached query",
        "uncached": "search, uncached query",
        "get_context": f"get_context {CONTEXT_BUDGET:,} tokens, cached",
    }
    for kind in ("cached", "uncached", "get_context"):
        for k in conc:
            bare = pick("bare-sdk", kind, k)
            if bare:
                lines.append(
                    f"| bare-sdk, {labels[kind]} | {k} | {fig(bare, 'cpu'):.2f} | 1 | "
                    f"{fig(bare, 'p50'):.2f} | 1 | {fig(bare, 'p99'):.2f} | "
                    f"{fig(bare, 'rate'):.1f} | 1 |"
                )
            for path in ours:
                mine = pick(path, kind, k)
                if not mine:
                    continue
                # get_context has no bare twin: compare with the bare server's search.
                twin = bare or pick("bare-sdk", "cached", k)
                lines.append(
                    f"| {path}, {labels[kind]} | {k} | {fig(mine, 'cpu'):.2f} | "
                    f"{ratio(fig(mine, 'cpu'), fig(twin, 'cpu'))} | {fig(mine, 'p50'):.2f} | "
                    f"{ratio(fig(mine, 'p50'), fig(twin, 'p50')).strip('*')} | "
                    f"{fig(mine, 'p99'):.2f} | {fig(mine, 'rate'):.1f} | "
                    f"{ratio(fig(mine, 'rate'), fig(twin, 'rate'))} |"
                )
    lines.append("")
    for path in ours:
        for k in conc:
            ctx, search = pick(path, "get_context", k), pick(path, "cached", k)
            bare = pick("bare-sdk", "cached", k)
            if ctx and search:
                lines.append(
                    f"- {path} c={k}: get_context ÷ search CPU "
                    f"{fig(ctx, 'cpu') / fig(search, 'cpu'):.2f} (target ≤ 2.00)."
                )
            if search and bare and engine == engine:
                beyond_ours = fig(search, "cpu") - engine
                beyond_bare = fig(bare, "cpu") - bare_engine
                lines.append(
                    f"- {path} c={k}, cached: CPU beyond the engine's own work "
                    f"(in-process-sync, {engine:.2f} ms; the bare server's pool "
                    f"{bare_engine:.2f} ms) {beyond_ours:.2f} ms vs bare "
                    f"{beyond_bare:.2f} ms: ÷ bare {beyond_ours / beyond_bare:.2f} "
                    "(stretch ≤ 0.50)."
                )
    lines += [
        "",
        f"Query encoder alone, in the benchmark process (cache miss, one query per call, "
        f"c=1, {encoder['queries']} queries, {encoder['mean_tokens']} tokens mean): "
        f"p50 {encoder['p50_ms']:.2f} ms, p99 {encoder['p99_ms']:.2f} ms, CPU "
        f"{encoder['cpu_ms_per_query']:.2f} ms per query; on the int8-MatMul query graph "
        f"(ADR 0052, ours by default; the bare server uses the shipped graph): p50 "
        f"{encoder['int8_p50_ms']:.2f} ms, CPU {encoder['int8_cpu_ms_per_query']:.2f} ms.",
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
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument(
        "--join",
        type=int,
        default=6,
        help="Cranfield abstracts per document (1: as is; 6: ~1,000-character chunks)",
    )
    parser.add_argument(
        "--state-dir", type=Path, default=None, help="default <tmp>/lrm-overhead-<chunks>-j<join>"
    )
    parser.add_argument("--requests", type=int, default=500, help="timed calls per cell")
    parser.add_argument(
        "--kinds",
        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
        default=["cached", "get_context", "uncached"],
    )
    parser.add_argument("--queries", type=int, default=200, help="distinct query strings")
    parser.add_argument(
        "--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 32]
    )
    parser.add_argument("--rounds", type=int, default=2, help="bare, ours, repeated")
    parser.add_argument("--variants", default="bare-sdk,ours", help="also: ours-quiet")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:SECTION.KEY=VALUE[,...]",
        help="define one of our variants by settings overrides (then list NAME in "
        "--variants), e.g. threaded:backend.qdrant_embedded.inline_max_points=0",
    )
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--py-spy", type=Path, help="py-spy binary: profile each server after")
    parser.add_argument("--profile-dir", type=Path, default=Path("bench/out/profiles"))
    parser.add_argument("--profile-requests", type=int, default=1500)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve-bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--bare-pool",
        choices=("engine", "server"),
        default="engine",
        help="the bare server's engine search pool: the engine's own default, as a plain "
        "SDK server loads the store (default), or ours (ADR 0055), to compare what MCP "
        "and the hardening add alone",
    )
    args = parser.parse_args(argv)
    args.state_dir = (
        args.state_dir or Path(tempfile.gettempdir()) / f"lrm-overhead-{args.chunks}-j{args.join}"
    ).resolve()
    args._fresh = 100_000  # uncached cells' query strings start here (fresh_queries)
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    args.overrides = {}
    for spec in args.variant:
        name, _, lines = spec.partition(":")
        args.overrides[name] = [x for x in lines.split(",") if x]
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
    ingest = await ensure_ingested(settings, args.chunks, args.join)
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
    store = (
        f"{ingest['chunks']:,}-chunk store (Cranfield, {args.join} abstracts per document, "
        f"mean chunk {ingest['mean_chunk_chars']:,} characters), {len(queries)} cached queries "
        f"cycled, {args.requests} calls per cell, top_k {args.top_k}"
    )
    table = report(cells, encoder_figures, startup, store)
    print(table)
    if profile is not None:
        from profile_summary import summarise

        for file in sorted(args.profile_dir.glob("*-r1.txt")):
            if not any(file.name.startswith(v) for v in args.variants):
                continue
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
