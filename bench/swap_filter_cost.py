"""What the document swap's search filter costs (ADR 0038).

Every search on the embedded store hides staged chunks (``must_not`` staged present),
and, mid-publish, the old versions of the documents being published. This measures the
engine alone on random unit vectors (no encoder), dense and sparse legs, three ways:
no filter, the steady-state filter, and the filter with 64 documents mid-publish.

    .venv/bin/python bench/swap_filter_cost.py [--points 20000] [--queries 300]

Figures are ratios within one run (medians of per-query latency).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np
import qdrant_edge as qe

from retrieval_mcp.backends.qdrant_embedded import STAGED, _swap_exclusions


def build(points: int, dim: int, rng: np.random.Generator) -> tuple[object, np.ndarray]:
    shard = qe.EdgeShard.create(
        tempfile.mkdtemp(prefix="swapbench-"),
        qe.EdgeConfig(
            vectors={"dense": qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
            sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        ),
    )
    for field in ("source", "doc_id", "doc_hash"):
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    shard.update(qe.UpdateOperation.create_field_index(STAGED, qe.PayloadSchemaType.Bool))
    vectors = rng.normal(size=(points, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for start in range(0, points, 1000):
        batch = []
        for i in range(start, min(points, start + 1000)):
            terms = sorted({int(t) for t in rng.integers(0, 5000, size=12)})
            payload = {"source": "bench", "doc_id": f"d{i // 4}", "doc_hash": "h1"}
            if i % 500 == 0:
                payload[STAGED] = True  # a few staged chunks, as mid-ingest
            batch.append(
                qe.Point(
                    i,
                    {
                        "dense": vectors[i].tolist(),
                        "bm25": qe.SparseVector(indices=terms, values=[1.0] * len(terms)),
                    },
                    payload,
                )
            )
        shard.update(qe.UpdateOperation.upsert_points(batch))
    shard.flush()
    shard.optimize()
    return shard, vectors


def timed(shard: object, requests: list[object]) -> float:
    took = []
    for request in requests:
        began = time.perf_counter()
        shard.query(request)  # type: ignore[attr-defined]
        took.append(time.perf_counter() - began)
    return statistics.median(took) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    shard, _ = build(args.points, 384, rng)
    source = qe.Filter(must=[qe.FieldCondition("source", match=qe.MatchAny(["bench"]))])
    steady = qe.Filter(must=[source], must_not=_swap_exclusions({}))
    publishing = qe.Filter(
        must=[source],
        must_not=_swap_exclusions({("bench", f"d{i}"): "h2" for i in range(64)}),
    )
    queries = rng.normal(size=(args.queries, 384))
    print(f"points={args.points} queries={args.queries}")
    for leg in ("dense", "bm25"):
        rows = {}
        for name, flt in (("source only", source), ("steady", steady), ("mid-publish", publishing)):
            requests = []
            for q in queries:
                if leg == "dense":
                    query = qe.Query.Nearest((q / np.linalg.norm(q)).tolist(), using="dense")
                else:
                    terms = sorted({int(t) for t in rng.integers(0, 5000, size=4)})
                    query = qe.Query.Nearest(
                        qe.SparseVector(indices=terms, values=[1.0] * len(terms)), using="bm25"
                    )
                requests.append(
                    qe.QueryRequest(limit=50, query=query, filter=flt, with_payload=True)
                )
            rows[name] = timed(shard, requests)
        base = rows["source only"]
        print(
            f"{leg:5}  " + "  ".join(f"{k}: {v:.3f} ms ({v / base:.2f}x)" for k, v in rows.items())
        )


if __name__ == "__main__":
    main()
