"""Scale of the embedded store: hybrid latency, build time, memory and disk at 10k–1M chunks.

Synthetic corpora, no embedding per chunk: 384-d vectors (seeded) and generated text
(words drawn from Cranfield's own word frequencies, about 1,000 characters per chunk
like ingest's chunks, plus a six-word title). ``--vectors random`` (the default, and
every figure before 2026-12-03) draws random unit vectors: HNSW's worst case, where at
100k its recall@50 at hnsw_ef 128 is ~0.15, so the dense leg times a search that finds
almost nothing. ``--vectors cranfield`` draws each chunk around the bundled encoder's
vector of a real Cranfield abstract, with noise shaped like those abstracts' own
covariance (cosine ≈ 0.85 to its abstract), and asks Cranfield's real queries (each
moved slightly): recall@50 ~0.98 at 100k, as with real embeddings. The shard is built
exactly as ``backends/qdrant_embedded.py`` builds it: named vectors ``dense`` (384,
cosine) and ``bm25`` (sparse, IDF modifier, ``qdrant_edge.Bm25`` English, k 1.2, b 0.75,
avg_len the corpus mean), keyword indexes on ``source`` and ``doc_id``, the server's
payload shape (``chunk_payload.to_payload``), and a ``manifest.json``, so the folder is
a state dir that ``latence-retrieval-mcp serve --state-dir <dir>/<N>`` can open.

Each size is built in its own subprocess (peak RSS = VmHWM of that process), then
queried in a fresh one (what a starting server pays: load time, RSS after load and after
the queries). Queries: the 225 Cranfield queries as BM25 text; for the dense leg, random
unit vectors or the moved real queries (``--vectors``). Hybrid = the two engine queries
the server makes for a ``search`` (ADR 0025): both legs id-only (50 candidates each,
hnsw_ef 128) in one ``query_batch``, RRF k 60 cut to the 32 chunks a collapsed
``search`` reads (top_k 8 × ``COLLAPSE_DEPTH``), then one ``retrieve`` of their
payloads. ``dense`` and ``BM25`` time each leg alone, id-only. ``--legs payloads`` times
the protocol of the figures before 2026-12-03 instead (each leg reading its 50 payloads,
hybrid = the two legs one after the other + RRF to 8): the payload reads, not the
posting lists, were most of that BM25 leg's time.

    .venv/bin/python bench/scale.py --sizes 10000,100000
    .venv/bin/python bench/scale.py --sizes 1000000 --segment-points 200000
    .venv/bin/python bench/scale.py --sizes 10000,100000,1000000 --segment-points 200000 \
        --vectors cranfield --dir /tmp/lrm-scale-cran

Up to 500k points the default build is the server's; past it the server caps segments
at ``backend.qdrant_embedded.max_segment_points`` (500k since ADR 0054, 200k before) and
ingest indexes each as it fills (ADR 0027), which ``--segment-points 500000`` reproduces.
Dense queries use the server's ef for the store (``effective_hnsw_ef``: 128 widened with
the largest graph) unless ``--hnsw-ef`` fixes it. Each build records its
CPU seconds as well as wall time: on a shared machine, only the former is comparable.

Built stores are kept under ``--dir`` and reused (``--rebuild`` to start over).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from corpus import CRAN_DOCS, cranfield_queries, parse_smart  # noqa: E402

DIM = 384
SEED = 20261130
SOURCE = "synthetic"
WORDS_PER_CHUNK = 150  # about 1,000 characters with Cranfield's words
BATCH = 2000
CANDIDATES = 50
HNSW_EF = 128
RRF_K = 60
RECALL_QUERIES = 30
FUSED_READ = 32  # top_k 8 x COLLAPSE_DEPTH 4: the chunks a collapsed search reads
ENCODER_NAME = "all-MiniLM-L6-v2-onnx-int8"  # the manifest names the bundled encoder


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def disk_bytes(path: Path) -> tuple[int, int]:
    """(allocated, apparent) bytes: the engine preallocates sparse mmap files."""
    files = [f.stat() for f in path.rglob("*") if f.is_file()]
    return sum(s.st_blocks * 512 for s in files), sum(s.st_size for s in files)


def vocabulary() -> tuple[np.ndarray, np.ndarray]:
    """Cranfield's words and their relative frequencies."""
    counts: Counter[str] = Counter()
    for record in parse_smart(CRAN_DOCS):
        counts.update(re.findall(r"[a-z]+", record.fields.get("W", "").lower()))
    words, freq = zip(*counts.most_common(), strict=True)
    p = np.array(freq, dtype=np.float64)
    return np.array(words, dtype=object), p / p.sum()


#: Build knobs (``--ef-construct``, ``--m``, ``--segment-points``): None = the engine's
#: defaults, which is what ``backends/qdrant_embedded.py`` builds; ``legs`` picks the
#: query protocol (None = the server's). Set by ``main``.
KNOBS: dict[str, Any] = {
    "ef_construct": None,
    "m": None,
    "segment_points": None,
    "legs": None,
    "vectors": None,
    "text": None,
    "sparse_memory": None,
    "sparse_datatype": None,
    "prewarm": None,
    "hnsw_ef": None,
    "search_threads": None,
    "cache": None,
}
#: ``--sparse-datatype``: the engine's names for the BM25 index's weight types.
SPARSE_DATATYPES = {"float16": "Float16", "uint8": "Uint8"}
KIB_PER_VECTOR = DIM * 4 / 1024  # the engine sizes segments in KiB of vector data


#: ``--vectors cranfield``: how far a synthetic chunk lies from the real abstract it is
#: drawn around (noise shaped like the corpus's own spread; cosine to it ≈ 0.85, to a
#: sibling ≈ 0.7, as chunks on one topic are) and how far a query from a real query.
CHUNK_SPREAD = 0.75
QUERY_SPREAD = 0.1


def _unit(m: np.ndarray) -> np.ndarray:
    out: np.ndarray = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    return out


def cranfield_vectors(cache: Path) -> dict[str, np.ndarray]:
    """The bundled encoder's vectors of Cranfield's 1,400 abstracts and 225 queries
    (computed once, ~2 min, cached under ``--dir``), and the abstracts' covariance
    factor that shapes the noise."""
    if not cache.exists():
        from retrieval_mcp.encoders.minilm import MiniLMEncoder

        encoder = MiniLMEncoder()
        docs = [
            f"{r.fields.get('T', '')}\n{r.fields.get('W', '')}".strip()
            for r in parse_smart(CRAN_DOCS)
        ]
        np.savez(cache, docs=encoder.embed(docs), queries=encoder.embed(cranfield_queries()))
    loaded = np.load(cache)
    docs = loaded["docs"].astype(np.float64)
    values, vectors = np.linalg.eigh(np.cov(docs, rowvar=False))
    factor = vectors * np.sqrt(np.clip(values, 0, None))  # noise = z @ factor.T
    return {"docs": docs, "queries": loaded["queries"].astype(np.float64), "factor": factor}


_REAL: dict[str, np.ndarray] = {}


def _real() -> dict[str, np.ndarray]:
    if not _REAL:
        _REAL.update(cranfield_vectors(Path(KNOBS["cache"])))
    return _REAL


def draw_vectors(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Chunk vectors, and for ``cranfield`` the abstract each was drawn around: random
    unit vectors (``--vectors random``, HNSW's worst case: at 100k its recall@50 at
    hnsw_ef 128 is ~0.15, so the dense leg times a search that finds little), or drawn
    around real abstracts' vectors with the corpus's own anisotropic spread
    (``cranfield``), which keeps the neighbourhood structure of real embeddings at any
    size."""
    if KNOBS["vectors"] != "cranfield":
        return _unit(rng.standard_normal((n, DIM))), None
    real = _real()
    picked = rng.integers(0, len(real["docs"]), n)
    noise = rng.standard_normal((n, DIM)) @ real["factor"].T
    return _unit(real["docs"][picked] + CHUNK_SPREAD * noise), picked


#: ``--text topical``: the share of a chunk's words drawn from its own abstract's words
#: (the rest from the whole corpus's frequencies), so a word is frequent in the chunks
#: of the abstracts that use it, as in real text, not spread evenly over every chunk.
TOPICAL_SHARE = 0.8


def abstracts() -> list[tuple[np.ndarray, np.ndarray]]:
    """Each Cranfield abstract's title words and text words, in ``parse_smart`` order
    (the order of the cached vectors)."""
    out = []
    for record in parse_smart(CRAN_DOCS):
        text = re.findall(r"[a-z]+", record.fields.get("W", "").lower()) or ["flow"]
        title = re.findall(r"[a-z]+", record.fields.get("T", "").lower()) or text[:6]
        out.append((np.array(title, dtype=object), np.array(text, dtype=object)))
    return out


def topical_words(
    rng: np.random.Generator, drawn: np.ndarray, picked: np.ndarray, by_abstract: list[Any]
) -> np.ndarray:
    """``drawn`` (corpus-frequency words) with TOPICAL_SHARE of each row replaced by
    words of that row's abstract: the title from its title, the text from its text."""
    out = drawn.copy()
    for i, j in enumerate(picked):
        title, text = by_abstract[j]
        mask = rng.random(drawn.shape[1] - 6) < TOPICAL_SHARE
        out[i, :6] = rng.choice(title, 6)
        out[i, 6:][mask] = rng.choice(text, int(mask.sum()))
    return out


def query_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """Query vectors: random, or Cranfield's real queries, each call slightly moved so
    that no two measured calls ask the same."""
    if KNOBS["vectors"] != "cranfield":
        return _unit(rng.standard_normal((n, DIM)))
    real = _real()
    base = real["queries"][np.arange(n) % len(real["queries"])]
    noise = rng.standard_normal((n, DIM)) @ real["factor"].T
    return _unit(base + QUERY_SPREAD * noise)


def edge_config(qe: Any) -> Any:
    hnsw = None
    if KNOBS["ef_construct"] or KNOBS["m"]:
        hnsw = qe.HnswIndexConfig(
            m=KNOBS["m"] or 16, ef_construct=KNOBS["ef_construct"] or 100, full_scan_threshold=10000
        )
    optimizers = None
    if KNOBS["segment_points"]:
        # Incremental: each optimize() indexes the segment just filled and merges no
        # further than this size, so a later batch never re-indexes earlier points.
        kib = int(KNOBS["segment_points"] * KIB_PER_VECTOR)
        optimizers = qe.EdgeOptimizersConfig(max_segment_size=kib, indexing_threshold=kib // 4)
    return qe.EdgeConfig(
        vectors={
            "dense": qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine, hnsw_config=hnsw)
        },
        sparse_vectors={
            "bm25": qe.EdgeSparseVectorParams(
                modifier=qe.Modifier.Idf,
                memory=qe.Memory.Cached if KNOBS["sparse_memory"] == "cached" else None,
                datatype=getattr(
                    qe.VectorStorageDatatype, SPARSE_DATATYPES[KNOBS["sparse_datatype"]]
                )
                if KNOBS["sparse_datatype"]
                else None,
            )
        },
        optimizers=optimizers,
    )


def cpu_s() -> float:
    """This process's CPU seconds (user + system, all threads): unlike wall time, it
    does not grow with other tenants' load on a shared machine."""
    t = os.times()
    return t.user + t.system


# -- build (subprocess) --------------------------------------------------------------


def build(size: int, state_dir: Path) -> dict[str, Any]:
    import qdrant_edge as qe

    from retrieval_mcp.backends.chunk_payload import to_payload
    from retrieval_mcp.backends.qdrant_embedded import payload_index_operations
    from retrieval_mcp.records import Chunk, Provenance

    store = state_dir / "store"
    if state_dir.exists():
        shutil.rmtree(state_dir)
    store.mkdir(parents=True, mode=0o700)
    os.chmod(state_dir, 0o700)
    words, p = vocabulary()
    by_abstract = abstracts() if KNOBS["text"] == "topical" else []
    rng = np.random.default_rng(SEED + size)
    avg_len = float(WORDS_PER_CHUNK + 6)
    manifest = {
        "format": 1,
        "encoder": ENCODER_NAME,
        "dimension": DIM,
        "bm25": {"language": "english", "k": 1.2, "b": 0.75, "avg_len": avg_len},
    }
    (store / "manifest.json").write_text(json.dumps(manifest, indent=2), "utf-8")
    bm25 = qe.Bm25(qe.Bm25Config(k=1.2, b=0.75, avg_len=avg_len, language="english"))
    shard = qe.EdgeShard.create(str(store / "shard"), edge_config(qe))
    for operation in payload_index_operations():  # the server's (ADR 0050)
        shard.update(operation)

    generate_s = embed_s = engine_s = segment_opt_s = 0.0
    segment_opt_cpu = 0.0
    started = time.perf_counter()
    cpu_started = cpu_s()
    for start in range(0, size, BATCH):
        n = min(BATCH, size - start)
        t0 = time.perf_counter()
        drawn = rng.choice(words, size=(n, WORDS_PER_CHUNK + 6), p=p)
        vectors, picked = draw_vectors(rng, n)
        if KNOBS["text"] == "topical":
            if picked is None:
                picked = rng.integers(0, len(by_abstract), n)
            drawn = topical_words(rng, drawn, picked, by_abstract)
        ids = [str(uuid.UUID(bytes=rng.bytes(16), version=4)) for _ in range(n)]
        chunks = []
        for i in range(n):
            doc = start + i
            title = " ".join(drawn[i, :6]).capitalize()
            chunks.append(
                Chunk(
                    id=ids[i],
                    text=" ".join(drawn[i, 6:]),
                    provenance=Provenance(
                        source=SOURCE,
                        doc_id=f"doc-{doc // 2}",
                        title=title,
                        ordinal=doc % 2,
                        char_start=0,
                        char_end=1000,
                        doc_chunks=2,
                        uri=f"synthetic://{doc // 2}",
                    ),
                    doc_hash="0" * 32,
                    flags=(),
                )
            )
        t1 = time.perf_counter()
        points = [
            qe.Point(
                c.id,
                {
                    "dense": vectors[i].tolist(),
                    "bm25": bm25.embed_document(f"{c.provenance.title}\n{c.text}"),
                },
                to_payload(c),
            )
            for i, c in enumerate(chunks)
        ]
        t2 = time.perf_counter()
        shard.update(qe.UpdateOperation.upsert_points(points))
        t3 = time.perf_counter()
        generate_s += t1 - t0
        embed_s += t2 - t1
        engine_s += t3 - t2
        every = KNOBS["segment_points"]
        if every and (start + n) % every == 0 and start + n < size:
            c0, t4 = cpu_s(), time.perf_counter()
            shard.optimize()
            segment_opt_s += time.perf_counter() - t4
            segment_opt_cpu += cpu_s() - c0
        if (start // BATCH) % 50 == 49:
            print(f"  {start + n} points, {time.perf_counter() - started:.0f} s", flush=True)
    upsert_s = time.perf_counter() - started
    upsert_cpu = cpu_s() - cpu_started
    print(
        f"  upserted in {upsert_s:.0f} s (RssAnon {status_kib('RssAnon') / 1024:.0f} MiB, "
        f"RssFile {status_kib('RssFile') / 1024:.0f} MiB); flush + optimize",
        flush=True,
    )
    t0, c0 = time.perf_counter(), cpu_s()
    shard.flush()
    shard.optimize()
    optimise_s = time.perf_counter() - t0
    optimise_cpu = cpu_s() - c0
    info = shard.info()
    result = {
        "size": size,
        "points": int(info.points_count),
        "segments": int(info.segments_count),
        "indexed_vectors": int(info.indexed_vectors_count),
        "build_total_s": round(upsert_s, 1),
        "build_generate_s": round(generate_s, 1),
        "build_points_s": round(embed_s, 1),
        "build_engine_upsert_s": round(engine_s, 1),
        "optimise_s": round(optimise_s, 1),
        "upsert_cpu_s": round(upsert_cpu - segment_opt_cpu, 1),
        "segment_optimise_s": round(segment_opt_s, 1),  # incremental optimize()s, wall
        "optimise_cpu_s": round(optimise_cpu + segment_opt_cpu, 1),  # every optimize()
        "knobs": dict(KNOBS),
        "build_peak_rss_mib": round(status_kib("VmHWM") / 1024, 1),
    }
    shard.close()
    allocated, apparent = disk_bytes(store)
    result["disk_mib"] = round(allocated / 2**20, 1)
    result["disk_apparent_mib"] = round(apparent / 2**20, 1)
    return result


# -- query (subprocess) --------------------------------------------------------------


def query(size: int, state_dir: Path, count: int) -> dict[str, Any]:
    import qdrant_edge as qe

    from retrieval_mcp.backends.chunk_payload import from_payload
    from retrieval_mcp.backends.qdrant_embedded import (
        _candidates,
        _ranked,
        effective_hnsw_ef,
        segment_cap_points,
    )
    from retrieval_mcp.pipeline.fusion import reciprocal_rank_fusion

    store = state_dir / "store"
    # The server widens ef with the largest graph (ADR 0054); --hnsw-ef fixes it instead.
    hnsw_ef = KNOBS["hnsw_ef"] or effective_hnsw_ef(
        HNSW_EF, size, segment_cap_points(store / "shard")
    )
    rss_start = status_kib("VmRSS")
    # The engine's search pool as the server sizes it (ADR 0055), or --search-threads
    # engine: its own default (a pool a previous run persisted is forgotten first).
    threads: int | None = None
    config = None
    if KNOBS["search_threads"] == "engine":
        persisted_path = store / "shard" / "edge_config.json"
        persisted = json.loads(persisted_path.read_text("utf-8"))
        if persisted.pop("max_search_threads", None) is not None:
            persisted_path.write_text(json.dumps(persisted), "utf-8")
    else:
        from retrieval_mcp.backends.search_pool import load_config, search_threads

        fixed = int(KNOBS["search_threads"] or 0)  # --search-threads N
        threads = search_threads(store / "shard", fixed)
        config = load_config(store / "shard", "dense", "bm25", threads)
        threads = threads if config is not None else None
    t0 = time.perf_counter()
    if config is None:
        shard = qe.EdgeShard.load(str(store / "shard"))
    else:
        shard = qe.EdgeShard.load(str(store / "shard"), config)
    load_s = time.perf_counter() - t0
    rss_loaded = status_kib("VmRSS")
    prewarm: dict[str, Any] = {"prewarm": "off"}
    if KNOBS["prewarm"] != "off":
        # What a starting server does beside serving (ADR 0053), done here before timing.
        import trio

        from retrieval_mcp.backends.page_prewarm import read_into_page_cache, shard_cold_files
        from retrieval_mcp.settings import QdrantEmbeddedSettings

        budget = QdrantEmbeddedSettings().prewarm_max_mib * 2**20
        report = trio.run(
            lambda: read_into_page_cache(shard_cold_files(store / "shard"), max_bytes=budget)
        )
        prewarm = {
            "prewarm": "server",
            "prewarm_mib": round(report.bytes_read / 2**20, 1),
            "prewarm_s": round(report.seconds, 2),
        }
    params = json.loads((store / "manifest.json").read_text("utf-8"))["bm25"]
    bm25 = qe.Bm25(
        qe.Bm25Config(
            k=params["k"], b=params["b"], avg_len=params["avg_len"], language=params["language"]
        )
    )
    rng = np.random.default_rng(SEED)
    texts = cranfield_queries()
    vectors = query_vectors(rng, 2 * count + 21)

    payload_legs = KNOBS["legs"] == "payloads"
    read = _candidates if payload_legs else _ranked

    def dense_request(i: int) -> Any:
        return qe.QueryRequest(
            limit=CANDIDATES,
            query=qe.Query.Nearest(vectors[i].tolist(), using="dense"),
            filter=None,
            with_payload=payload_legs,
            params=qe.SearchParams(hnsw_ef=hnsw_ef),
        )

    def lexical_request(i: int) -> Any | None:
        sparse = bm25.embed_query(texts[i % len(texts)])
        if not sparse.indices:
            return None
        return qe.QueryRequest(
            limit=CANDIDATES,
            query=qe.Query.Nearest(sparse, using="bm25"),
            filter=None,
            with_payload=payload_legs,
        )

    def dense(i: int) -> list[Any]:
        return read(shard.query(dense_request(i)))

    def lexical(i: int) -> list[Any]:
        request = lexical_request(i)
        return [] if request is None else read(shard.query(request))

    def hybrid(i: int) -> list[Any]:
        if payload_legs:
            legs = {"dense": dense(i), "bm25": lexical(i)}
            return reciprocal_rank_fusion(legs, k=RRF_K, limit=8)
        requests = [dense_request(i)]
        lexical_query = lexical_request(i)
        if lexical_query is not None:
            requests.append(lexical_query)
        answers = shard.query_batch(qe.QueryBatchRequest(requests))
        legs = dict(zip(("dense", "bm25"), (_ranked(a) for a in answers), strict=False))
        hits = reciprocal_rank_fusion(legs, k=RRF_K, limit=FUSED_READ)
        records = shard.retrieve([h.chunk.id for h in hits], with_payload=True, with_vector=False)
        return [from_payload(str(r.id), r.payload or {}) for r in records]

    # Query numbers: 0-20 warm-up, then each leg alone gets 21 + i and the hybrid gets
    # 21 + count + i, so no measured call repeats the query just before it.
    t0 = time.perf_counter()
    hybrid(0)
    first_ms = (time.perf_counter() - t0) * 1000
    for i in range(1, 21):
        hybrid(i)
    out: dict[str, Any] = {
        "size": size,
        "load_s": round(load_s, 2),
        "search_threads": threads or "engine",
        "rss_loaded_mib": round(rss_loaded / 1024, 1),
        "rss_python_baseline_mib": round(rss_start / 1024, 1),
        "first_hybrid_ms": round(first_ms, 2),
        "load1": round(os.getloadavg()[0], 2),
        "hnsw_ef": hnsw_ef,
        **prewarm,
    }
    # Interleaved, so a page cache still warming up (the store is memory-mapped) or a
    # burst of outside load hits every leg alike.
    legs = (("dense", dense), ("bm25", lexical), ("hybrid", hybrid))
    latencies: dict[str, list[float]] = {name: [] for name, _ in legs}
    for i in range(count):
        for name, fn in legs:
            number = 21 + i + (count if name == "hybrid" else 0)
            t0 = time.perf_counter()
            fn(number)
            latencies[name].append((time.perf_counter() - t0) * 1000)
    for name, values in latencies.items():
        out[f"{name}_p50_ms"] = round(float(np.percentile(values, 50)), 3)
        out[f"{name}_p99_ms"] = round(float(np.percentile(values, 99)), 3)
    # What the dense leg's time buys: its top 50 against an exact scan's, on the first
    # RECALL_QUERIES measured query vectors (an exact scan of 1M points is ~0.2 s).
    recalls = []
    for i in range(21, 21 + min(RECALL_QUERIES, count)):
        exact = qe.QueryRequest(
            limit=CANDIDATES,
            query=qe.Query.Nearest(vectors[i].tolist(), using="dense"),
            filter=None,
            with_payload=False,
            params=qe.SearchParams(exact=True),
        )
        truth = {str(p.id) for p in shard.query(exact)}
        found = {c.chunk.id for c in _ranked(shard.query(dense_request(i)))}
        recalls.append(len(truth & found) / max(1, len(truth)))
    out["dense_recall50"] = round(float(np.mean(recalls)), 3)
    out["rss_after_queries_mib"] = round(status_kib("VmRSS") / 1024, 1)
    out["rss_anon_after_queries_mib"] = round(status_kib("RssAnon") / 1024, 1)
    out["rss_file_after_queries_mib"] = round(status_kib("RssFile") / 1024, 1)
    out["peak_rss_mib"] = round(status_kib("VmHWM") / 1024, 1)
    shard.close()
    return out


# -- driver ----------------------------------------------------------------------------


def _mem_available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("inf")


def _watch(
    proc: subprocess.Popen[str],
    stop: threading.Event,
    why: list[str],
    limits: tuple[float, float, float],
    peaks: dict[str, float],
) -> None:
    """Kill the child past ``max_anon_mib`` of anonymous memory (its own heap, not the
    memory-mapped store files, which the kernel can drop), under ``min_available_mib``
    of MemAvailable (the machine is shared), or after ``max_s``; record peaks."""
    max_anon_mib, min_available_mib, max_s = limits
    started = time.monotonic()
    while not stop.wait(1.0):
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            return
        fields = {
            line.split(":")[0]: int(line.split()[1]) / 1024
            for line in status.splitlines()
            if line.startswith(("VmRSS", "RssAnon", "RssFile"))
        }
        for key, value in fields.items():
            peaks[key] = max(peaks.get(key, 0.0), value)
        available = _mem_available_mib()
        peaks["MemAvailable_min"] = min(peaks.get("MemAvailable_min", available), available)
        reason = ""
        if fields.get("RssAnon", 0) > max_anon_mib:
            reason = f"RssAnon {fields['RssAnon']:.0f} MiB > {max_anon_mib:.0f}"
        elif available < min_available_mib:
            reason = f"MemAvailable {available:.0f} MiB < {min_available_mib:.0f}"
        elif time.monotonic() - started > max_s:
            reason = f"still running after {max_s:.0f} s"
        if reason:
            why.append(f"{reason} (peaks MiB: {json.dumps(peaks)})")
            proc.kill()
            return


def child(
    mode: str,
    size: int,
    state_dir: Path,
    count: int,
    limits: tuple[float, float, float] = (14 * 1024, 3 * 1024, 1800),
) -> dict[str, Any]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        f"--{mode}-one",
        str(size),
        "--dir",
        str(state_dir.parent),
        "--queries",
        str(count),
        *[f"--{k.replace('_', '-')}={v}" for k, v in KNOBS.items() if v],
    ]
    last = ""
    stop = threading.Event()
    why: list[str] = []
    peaks: dict[str, float] = {}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        watchdog = threading.Thread(
            target=_watch, args=(proc, stop, why, limits, peaks), daemon=True
        )
        watchdog.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip():
                if last:
                    print(last, flush=True)
                last = line.rstrip("\n")
        stop.set()
    if why:
        raise SystemExit(f"{mode} of {size} stopped by the watchdog: {why[0]}")
    if proc.returncode != 0 or not last.startswith("{"):
        raise SystemExit(f"{mode} of {size} failed (exit {proc.returncode}): {last}")
    result: dict[str, Any] = json.loads(last)
    result[f"{mode}_peak_mib"] = {k: round(v, 1) for k, v in peaks.items()}
    return result


def environment() -> dict[str, str]:
    repo = BENCH_DIR.parent

    def git(*argv: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *argv], capture_output=True, text=True
        ).stdout.strip()

    from importlib.metadata import version

    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": "yes" if git("status", "--porcelain", "--", "src", "config") else "no",
        "qdrant_edge": version("qdrant-edge-py"),
        "loadavg_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| chunks | build s (generate / points / engine) | optimise s (CPU s) | segments "
        "| HNSW-indexed "
        "| disk MiB (apparent) | build peak RSS MiB | load s | RSS loaded MiB "
        "| RSS after queries MiB "
        "| dense p50/p99 ms | dense recall@50 | BM25 p50/p99 ms | hybrid p50 ms "
        "| hybrid p99 ms | load 1m |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        anon_peak = r.get("build_peak_mib", {}).get("RssAnon", "?")
        pre = f" + {r['prewarm_s']} pre-read" if "prewarm_s" in r else " (no pre-read)"
        pre += f", pool {r.get('search_threads', 'engine')}"
        lines.append(
            f"| {r['size']:,} | {r['build_total_s']} ({r['build_generate_s']} / "
            f"{r['build_points_s']} / {r['build_engine_upsert_s']}) | {r['optimise_s']} "
            f"(cpu {r.get('optimise_cpu_s', '?')}) | "
            f"{r['segments']} | {r['indexed_vectors']:,} | {r['disk_mib']:,} "
            f"({r.get('disk_apparent_mib', '?'):,}) | "
            f"{r['build_peak_rss_mib']:,} (anon {anon_peak}) | {r['load_s']}{pre} | "
            f"{r['rss_loaded_mib']:,} | {r['rss_after_queries_mib']:,} (anon "
            f"{r.get('rss_anon_after_queries_mib', '?')}) | "
            f"{r['dense_p50_ms']} / {r['dense_p99_ms']} | {r.get('dense_recall50', '?')} | "
            f"{r['bm25_p50_ms']} / {r['bm25_p99_ms']} | {r['hybrid_p50_ms']} | "
            f"{r['hybrid_p99_ms']} | {r['load1']} |"
        )
    if len(rows) > 1:
        base = rows[0]
        lines.append("")
        for r in rows[1:]:
            lines.append(
                f"{r['size']:,} / {base['size']:,}: hybrid p50 × "
                f"{r['hybrid_p50_ms'] / base['hybrid_p50_ms']:.2f}, dense p50 × "
                f"{r['dense_p50_ms'] / base['dense_p50_ms']:.2f}, BM25 p50 × "
                f"{r['bm25_p50_ms'] / base['bm25_p50_ms']:.2f} (target for 1M / 10k: ≤ 3)"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--sizes", default="10000,100000", help="comma-separated chunk counts (e.g. 1000000)"
    )
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "lrm-scale")
    parser.add_argument("--queries", type=int, default=300, help="timed queries per leg")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--max-anon-mib", type=float, default=14 * 1024)
    parser.add_argument(
        "--min-available-mib", type=float, default=3 * 1024, help="the machine is shared"
    )
    parser.add_argument("--max-build-s", type=float, default=1800)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--ef-construct", type=int, help="HNSW ef_construct (engine: 100)")
    parser.add_argument("--m", type=int, help="HNSW m (engine: 16)")
    parser.add_argument(
        "--segment-points",
        type=int,
        help="optimize() after every N points upserted, segments capped at N points",
    )
    parser.add_argument(
        "--legs",
        choices=("server", "payloads"),
        help="query protocol: the server's (default) or the pre-2026-12-03 payload legs",
    )
    parser.add_argument(
        "--vectors",
        choices=("random", "cranfield"),
        default="random",
        help="chunk and query vectors: random unit (worst case) or around real Cranfield ones",
    )
    parser.add_argument(
        "--text",
        choices=("iid", "topical"),
        default="iid",
        help="chunk words: drawn independently from corpus frequencies, or mostly from "
        "one abstract's words (real term burstiness)",
    )
    parser.add_argument(
        "--sparse-memory",
        choices=("pinned", "cached"),
        default="pinned",
        help="the BM25 inverted index in RAM (the engine's default) or memory-mapped",
    )
    parser.add_argument(
        "--sparse-datatype",
        choices=("float32", "float16", "uint8"),
        default="float32",
        help="the BM25 index's weights: as stored by the engine's default (float32) or "
        "quantised (smaller postings; the ranking compared in bench/RESULTS.md)",
    )
    parser.add_argument(
        "--prewarm",
        choices=("server", "off"),
        default="server",
        help="read the payload files after load as the server does (ADR 0053), or time "
        "them cold (every figure before 2026-12-04)",
    )
    parser.add_argument(
        "--hnsw-ef",
        type=int,
        help="search breadth (default: the server's, 128 widened with the largest graph)",
    )
    parser.add_argument(
        "--search-threads",
        default="server",
        help="the engine's search pool: as the server sizes it (ADR 0055, the default), "
        "'engine' for the engine's own (every figure before it), or a thread count",
    )
    parser.add_argument("--cache", help=argparse.SUPPRESS)  # the parent's, for its children
    parser.add_argument("--build-one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--query-one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    KNOBS.update(
        ef_construct=args.ef_construct,
        m=args.m,
        segment_points=args.segment_points,
        legs=None if args.legs == "server" else args.legs,
        vectors=None if args.vectors == "random" else args.vectors,
        text=None if args.text == "iid" else args.text,
        sparse_memory=None if args.sparse_memory == "pinned" else args.sparse_memory,
        sparse_datatype=None if args.sparse_datatype == "float32" else args.sparse_datatype,
        prewarm=None if args.prewarm == "server" else args.prewarm,
        hnsw_ef=args.hnsw_ef,
        search_threads=None if args.search_threads == "server" else args.search_threads,
        cache=args.cache or str(args.dir / "cranfield_vectors.npz"),
    )
    if args.build_one:
        print(json.dumps(build(args.build_one, args.dir / str(args.build_one))), flush=True)
        return
    if args.query_one:
        print(json.dumps(query(args.query_one, args.dir / str(args.query_one), args.queries)))
        return
    env = environment()
    print(
        f"{env['date_utc']} commit {env['commit']} (src dirty: {env['dirty']}), "
        f"qdrant-edge {env['qdrant_edge']}, load {env['loadavg_at_start']}",
        flush=True,
    )
    args.dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        state_dir = args.dir / str(size)
        done = state_dir / "build.json"
        if done.exists() and not args.rebuild:
            built = json.loads(done.read_text("utf-8"))
            print(f"{size}: reusing the store built {built.get('date_utc')}", flush=True)
        else:
            print(f"{size}: building (load {os.getloadavg()[0]:.2f})", flush=True)
            limits = (args.max_anon_mib, args.min_available_mib, args.max_build_s)
            built = child("build", size, state_dir, args.queries, limits)
            built["date_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            built["load1_after"] = round(os.getloadavg()[0], 2)
            done.write_text(json.dumps(built, indent=2), "utf-8")
        print(f"  build: {json.dumps(built)}", flush=True)
        measured = child("query", size, state_dir, args.queries)
        print(f"  query: {json.dumps(measured)}", flush=True)
        rows.append({**built, **measured})
    print()
    print(table(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"environment": env, "rows": rows}, indent=2), "utf-8")


if __name__ == "__main__":
    main()
