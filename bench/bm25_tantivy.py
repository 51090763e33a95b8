"""Would a BM25 index with dynamic pruning keep the keyword leg flat from 10k to 1M chunks?

Issue 16 asks for the BM25 leg to grow at most ×3 from 10k to 1M chunks. The engine's
sparse search walks every posting of every query term (×7–22 in ``bm25_impact.py``), and
a fixed postings budget bounds the time but loses the ranking, on independent and on
bursty text alike (ADR 0048). An inverted index that skips *exactly* — block-max WAND,
which keeps the true top k while skipping blocks that cannot reach it — is the remaining
family. Tantivy (a PyPI wheel, ``tantivy``, Rust, no network) implements it; this script
measures it on the stores ``bench/scale.py`` built, beside the engine's leg on the same
chunks and queries, one process, interleaved.

    PYTHONPATH=<dir with tantivy> .venv/bin/python bench/bm25_tantivy.py \\
        --dir /tmp/lrm-scale-topical --sizes 10000,1000000

Tantivy's English stemmer is not the engine's tokeniser, so the two rankings differ by
construction; ``overlap50`` says by how much, not which is right (``eval`` on Cranfield
is the judge of quality). Prints one JSON line per size and a table.
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
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bm25_impact import CANDIDATES, engine_top, open_store  # noqa: E402
from corpus import cranfield_queries  # noqa: E402

_QUERY_SYNTAX = re.compile(r"[^\w\s]")


def measure(size: int, shard_path: Path, queries: int, threads: int) -> dict[str, Any]:
    import qdrant_edge as qe
    import tantivy

    shard, bm25 = open_store(shard_path)
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("n", stored=True, fast=True)
    builder.add_text_field("text", stored=False, tokenizer_name="en_stem")
    schema = builder.build()
    folder = Path(tempfile.mkdtemp(prefix="lrm-tantivy-"))
    try:
        index = tantivy.Index(schema, path=str(folder))
        writer = index.writer(heap_size=512 * 2**20, num_threads=threads)
        ids: list[Any] = []
        started = time.perf_counter()
        offset = None
        text_bytes = 0
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(offset=offset, limit=5000, with_payload=True, with_vector=False)
            )
            for record in records:
                text = str(record.payload.get("text", ""))
                text_bytes += len(text)
                writer.add_document(tantivy.Document(n=len(ids), text=text))
                ids.append(record.id)
            if offset is None:
                break
        writer.commit()
        writer.wait_merging_threads()
        build_s = time.perf_counter() - started
        index.reload()
        searcher = index.searcher()
        position = {str(d): i for i, d in enumerate(ids)}
        texts = cranfield_queries()

        def engine(text: str) -> list[int]:
            return engine_top(shard, bm25.embed_query(text), position)

        def wand(text: str) -> list[int]:
            words = _QUERY_SYNTAX.sub(" ", text).split()
            if not words:
                return []
            query = index.parse_query(" ".join(words), ["text"])
            found = searcher.search(query, CANDIDATES)
            return [int(searcher.doc(address)["n"][0]) for _score, address in found.hits]

        ways = {"engine": engine, "tantivy": wand}
        for i in range(20):
            for fn in ways.values():
                fn(texts[i % len(texts)])
        times: dict[str, list[float]] = {name: [] for name in ways}
        answers: dict[str, list[list[int]]] = {name: [] for name in ways}
        cpu: dict[str, float] = dict.fromkeys(ways, 0.0)
        for i in range(queries):
            text = texts[i % len(texts)]
            for name, fn in ways.items():
                c0, t0 = time.process_time(), time.perf_counter()
                got = fn(text)
                times[name].append((time.perf_counter() - t0) * 1000)
                cpu[name] += time.process_time() - c0
                answers[name].append(got)
        disk = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shard.close()
    out: dict[str, Any] = {
        "size": size,
        "tantivy_build_s": round(build_s, 1),
        "tantivy_disk_mib": round(disk / 2**20, 1),
        "text_mib": round(text_bytes / 2**20, 1),
    }
    for name in ways:
        out[f"{name} p50_ms"] = round(float(np.percentile(times[name], 50)), 3)
        out[f"{name} p99_ms"] = round(float(np.percentile(times[name], 99)), 3)
        out[f"{name} cpu_ms"] = round(cpu[name] * 1000 / queries, 3)
    overlaps = [
        len(set(a) & set(b)) / max(1, min(len(a), len(b)))
        for a, b in zip(answers["tantivy"], answers["engine"], strict=True)
        if a and b
    ]
    out["overlap50 tantivy vs engine"] = round(float(np.mean(overlaps)), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/tmp/lrm-scale-topical")
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--queries", type=int, default=225)
    parser.add_argument("--threads", type=int, default=2, help="tantivy indexing threads")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        shard = Path(args.dir) / str(args.one) / "store" / "shard"
        print(json.dumps(measure(args.one, shard, args.queries, args.threads)), flush=True)
        return
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"commit {commit}, load {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        command = [sys.executable, __file__, "--dir", args.dir, "--queries", str(args.queries)]
        command += ["--threads", str(args.threads), "--one", str(size)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        line = done.stdout.strip().splitlines()[-1]
        print(line, flush=True)
        rows.append(json.loads(line))
    print("\n| way | " + " | ".join(f"{r['size']:,} p50 / CPU ms" for r in rows) + " | growth |")
    print("|---|" + "---:|" * (len(rows) + 1))
    for name in ("engine", "tantivy"):
        cells = [f"{r[name + ' p50_ms']} / {r[name + ' cpu_ms']}" for r in rows]
        growth = rows[-1][name + " p50_ms"] / rows[0][name + " p50_ms"]
        print(f"| {name} | " + " | ".join(cells) + f" | ×{growth:.1f} |")


if __name__ == "__main__":
    main()
