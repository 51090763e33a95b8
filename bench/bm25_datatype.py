"""Does a quantised BM25 index (float16 or uint8 weights) make the keyword leg cheaper?

Issue 16 asks the BM25 leg to grow at most ×3 from 10k to 1M chunks; the engine's sparse
search walks every posting of every query term, and ways that skip postings lost the
ranking (ADR 0048). The engine can also store the inverted index's weights as float16
or uint8 instead of float32 (``EdgeSparseVectorParams(datatype=...)``): the same walk
over postings half or a quarter the size. This measures that walk, on stores
``bench/scale.py --sparse-datatype`` built from the same seed (so the same chunks under
the same ids), interleaved in one process, and how much of the float32 top 50 / top 10
each quantised index keeps.

    .venv/bin/python bench/bm25_datatype.py --sizes 100000 \\
        --dirs float32=/tmp/lrm-sdi-float32,uint8=/tmp/lrm-sdi-uint8

The datatype applies only to the immutable index of an optimised segment: a segment
still open for appends keeps an uncompressed in-memory index whatever the setting (its
``segment.json`` says ``MutableRam``). Build the stores with ``--segment-points`` below
the size (e.g. 40000 at 100k) so that most points sit in optimised segments, as they do
at 1M with the server's 500k segments.

The first ``--dirs`` entry is the reference. Prints one JSON line per size and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bm25_impact import CANDIDATES, open_store  # noqa: E402
from corpus import cranfield_queries  # noqa: E402


def _top(shard: Any, sparse: Any) -> list[str]:
    import qdrant_edge as qe

    if not sparse.indices:
        return []
    request = qe.QueryRequest(
        limit=CANDIDATES, query=qe.Query.Nearest(sparse, using="bm25"), with_payload=False
    )
    return [str(h.id) for h in shard.query(request)]


def _overlap(got: list[list[str]], truth: list[list[str]], k: int) -> float:
    shares = [
        len(set(g[:k]) & set(t[:k])) / len(t[:k]) for g, t in zip(got, truth, strict=True) if t
    ]
    return float(np.mean(shares))


def measure(size: int, dirs: dict[str, Path], queries: int) -> dict[str, Any]:
    stores = {name: open_store(d / str(size) / "store" / "shard") for name, d in dirs.items()}
    texts = cranfield_queries()
    # One query encoder for all: the stores were built from the same chunks, so their
    # manifests' BM25 parameters agree (checked, not assumed).
    encoders = {name: bm25 for name, (_, bm25) in stores.items()}
    sparse = [next(iter(encoders.values())).embed_query(t) for t in texts]
    for name, (_, bm25) in stores.items():
        if bm25.embed_query(texts[0]).indices != sparse[0].indices:
            raise SystemExit(f"{name}: the store's BM25 parameters differ from the reference")
    for i in range(20):
        for shard, _ in stores.values():
            _top(shard, sparse[i % len(sparse)])
    wall: dict[str, list[float]] = {name: [] for name in stores}
    cpu: dict[str, list[float]] = {name: [] for name in stores}
    answers: dict[str, list[list[str]]] = {name: [] for name in stores}
    for i in range(queries):
        for name, (shard, _) in stores.items():
            c0, t0 = time.process_time(), time.perf_counter()
            got = _top(shard, sparse[i % len(sparse)])
            wall[name].append((time.perf_counter() - t0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
            answers[name].append(got)
    reference = next(iter(stores))
    out: dict[str, Any] = {"size": size, "queries": queries}
    for name in stores:
        out[f"{name} p50_ms"] = round(float(np.percentile(wall[name], 50)), 3)
        out[f"{name} p99_ms"] = round(float(np.percentile(wall[name], 99)), 3)
        out[f"{name} cpu_ms"] = round(float(np.mean(cpu[name])), 3)
        out[f"{name} overlap50"] = round(_overlap(answers[name], answers[reference], 50), 4)
        out[f"{name} overlap10"] = round(_overlap(answers[name], answers[reference], 10), 4)
    for shard, _ in stores.values():
        shard.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dirs", required=True, help="name=dir,... (the first is the reference)")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=225)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    dirs = {k: Path(v) for k, v in (item.split("=", 1) for item in args.dirs.split(","))}
    if args.one:
        print(json.dumps(measure(args.one, dirs, args.queries)), flush=True)
        return
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"commit {commit}, load {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        # A child per size: the engine keeps what it loaded until the process ends.
        done = subprocess.run(
            [
                *(sys.executable, __file__, "--dirs", args.dirs),
                *("--queries", str(args.queries), "--one", str(size)),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        line = done.stdout.strip().splitlines()[-1]
        print(line, flush=True)
        rows.append(json.loads(line))
    print(
        "\n| index weights | "
        + " | ".join(f"{r['size']:,}: p50 / CPU ms (top-50 / top-10 kept)" for r in rows)
        + " | p50 growth |"
    )
    print("|---|" + "---:|" * (len(rows) + 1))
    for name in dirs:
        cells = [
            f"{r[name + ' p50_ms']} / {r[name + ' cpu_ms']} "
            f"({r[name + ' overlap50']:.3f} / {r[name + ' overlap10']:.3f})"
            for r in rows
        ]
        growth = rows[-1][name + " p50_ms"] / rows[0][name + " p50_ms"]
        print(f"| {name} | " + " | ".join(cells) + f" | ×{growth:.1f} |")


if __name__ == "__main__":
    main()
