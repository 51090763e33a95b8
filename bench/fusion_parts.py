"""The Python work around one hybrid call's engine query, in isolation: turning both legs'
points into candidates (``_ranked``), RRF over them, and building the fused chunks from
their payloads. Each part is timed alone over real engine answers, so a change to one of
them can be compared with its parent commit on the same store and minute.

    .venv/bin/python bench/fusion_parts.py [--store /tmp/lrm-overhead-q/store] [--repeat 2000]

The store is any this server wrote (``bench/mcp_overhead.py`` leaves one at
``<tmp>/lrm-overhead-10000-j6/store``); queries are Cranfield's, dense vectors random.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import qdrant_edge as qe
from corpus import cranfield_queries

from retrieval_mcp.backends.chunk_payload import from_payload
from retrieval_mcp.backends.qdrant_embedded import _ranked
from retrieval_mcp.pipeline.fusion import reciprocal_rank_fusion


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/lrm-overhead-q/store"))
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--fused", type=int, default=32, help="top_k 8 x collapse depth 4")
    args = parser.parse_args()
    shard = qe.EdgeShard.load(str(args.store / "shard"))
    bm25 = json.loads((args.store / "manifest.json").read_text("utf-8"))["bm25"]
    encoder = qe.Bm25(
        qe.Bm25Config(k=bm25["k"], b=bm25["b"], avg_len=bm25["avg_len"], language=bm25["language"])
    )
    rng = np.random.default_rng(7)
    texts = cranfield_queries()
    answers = []
    for i in range(100):
        vector = rng.standard_normal(384)
        vector /= np.linalg.norm(vector)
        requests = [
            qe.QueryRequest(
                limit=args.candidates,
                query=qe.Query.Nearest(vector.tolist(), using="dense"),
                with_payload=False,
            ),
            qe.QueryRequest(
                limit=args.candidates,
                query=qe.Query.Nearest(encoder.embed_query(texts[i % len(texts)]), using="bm25"),
                with_payload=False,
            ),
        ]
        answers.append(shard.query_batch(qe.QueryBatchRequest(requests)))
    fused_ids = []
    times: dict[str, list[float]] = {"ranked": [], "rrf": [], "from_payload": []}
    for round_ in range(args.repeat):
        dense, bm25_points = answers[round_ % len(answers)]
        t0 = time.perf_counter()
        legs = {"dense": _ranked(dense), "bm25": _ranked(bm25_points)}
        t1 = time.perf_counter()
        hits = reciprocal_rank_fusion(legs, k=60, limit=args.fused)
        t2 = time.perf_counter()
        times["ranked"].append(t1 - t0)
        times["rrf"].append(t2 - t1)
        if round_ < len(answers):
            fused_ids.append([h.chunk.id for h in hits])
    records = [shard.retrieve(ids, with_payload=True, with_vector=False) for ids in fused_ids]
    for round_ in range(args.repeat):
        batch = records[round_ % len(records)]
        t0 = time.perf_counter()
        [from_payload(str(r.id), r.payload or {}) for r in batch]
        times["from_payload"].append(time.perf_counter() - t0)
    shard.close()
    print(
        f"{args.candidates} candidates per leg, {args.fused} fused, {args.repeat} rounds: "
        + ", ".join(f"{k} {np.median(v) * 1e6:.1f} µs" for k, v in times.items())
    )


if __name__ == "__main__":
    main()
