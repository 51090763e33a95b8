"""The engine's search pool (ADR 0055): latency and process CPU of one hybrid engine call
(both legs in one ``query_batch``) for several pool sizes, alternating, on one store.

    .venv/bin/python bench/search_pool.py --store /tmp/lrm-overhead-q/store \
        [--pools engine,1,2] [--gap-ms 4,0] [--calls 600] [--rounds 2] [--ef 128]

Each (pool, gap) cell runs in a fresh process that loads the store with that pool;
``engine`` is the engine's own default (the persisted value is removed first, so a pool
an earlier cell left in ``edge_config.json`` does not leak into it). ``--gap-ms`` sleeps
between calls: 4 ms is a server answering one client at a time (the pool's threads go
idle between queries), 0 is back-to-back as under load. CPU is the process's user +
system time per call, every thread included. Dense query vectors are random, BM25
queries Cranfield's; the store is one this server (or bench/scale.py) wrote.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def cell(store: Path, pool: str, gap_s: float, calls: int, ef: int) -> dict[str, float]:
    import qdrant_edge as qe
    from corpus import cranfield_queries

    from retrieval_mcp.backends.search_pool import load_config

    shard_path = store / "shard"
    if pool == "engine":
        persisted_path = shard_path / "edge_config.json"
        persisted = json.loads(persisted_path.read_text("utf-8"))
        if persisted.pop("max_search_threads", None) is not None:
            persisted_path.write_text(json.dumps(persisted), "utf-8")
        shard = qe.EdgeShard.load(str(shard_path))
    else:
        config = load_config(shard_path, "dense", "bm25", int(pool))
        if config is None:
            raise SystemExit(f"{store}: not a store this server wrote")
        shard = qe.EdgeShard.load(str(shard_path), config)
    params = json.loads((store / "manifest.json").read_text("utf-8"))["bm25"]
    bm25 = qe.Bm25(
        qe.Bm25Config(
            k=params["k"], b=params["b"], avg_len=params["avg_len"], language=params["language"]
        )
    )
    texts = cranfield_queries()
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((300, 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    batches = [
        qe.QueryBatchRequest(
            [
                qe.QueryRequest(
                    limit=50,
                    query=qe.Query.Nearest(vectors[i].tolist(), using="dense"),
                    with_payload=False,
                    params=qe.SearchParams(hnsw_ef=ef),
                ),
                qe.QueryRequest(
                    limit=50,
                    query=qe.Query.Nearest(bm25.embed_query(texts[i % len(texts)]), using="bm25"),
                    with_payload=False,
                ),
            ]
        )
        for i in range(300)
    ]
    for i in range(50):  # warm the graph and the pool
        shard.query_batch(batches[i])
    latencies = []
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    for i in range(calls):
        started = time.perf_counter()
        shard.query_batch(batches[i % len(batches)])
        latencies.append(time.perf_counter() - started)
        if gap_s:
            time.sleep(gap_s)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (usage.ru_utime + usage.ru_stime - cpu0) / calls
    shard.close()
    return {
        "p50_ms": round(float(np.median(latencies)) * 1000, 3),
        "p99_ms": round(float(np.percentile(latencies, 99)) * 1000, 3),
        "cpu_ms": round(cpu * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--pools", default="engine,1,2")
    parser.add_argument("--gap-ms", default="4,0")
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ef", type=int, default=128, help="the server's: 320 at 1M (ADR 0054)")
    parser.add_argument("--cell", help=argparse.SUPPRESS)  # pool:gap_s, in a child
    args = parser.parse_args()
    if args.cell:
        pool, gap = args.cell.split(":")
        print(json.dumps(cell(args.store, pool, float(gap), args.calls, args.ef)))
        return
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for gap in args.gap_ms.split(","):
            for pool in args.pools.split(","):
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--store",
                        str(args.store),
                        "--calls",
                        str(args.calls),
                        "--ef",
                        str(args.ef),
                        "--cell",
                        f"{pool}:{float(gap) / 1000}",
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                result = json.loads(out.strip().splitlines()[-1])
                rows.setdefault((gap, pool), []).append(result)
                print(f"gap {gap} ms, pool {pool}: {result}", flush=True)
    print("\n| gap ms | pool | p50 ms | p99 ms | CPU ms per call |\n|---:|---|---|---|---|")
    for (gap, pool), results in rows.items():
        cols = [" / ".join(f"{r[k]:.2f}" for r in results) for k in ("p50_ms", "p99_ms", "cpu_ms")]
        print(f"| {gap} | {pool} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()
