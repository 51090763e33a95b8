"""Open embedded shards and time what their payload indexes serve (ADR 0050).

Why a script of its own: memory-mapping the per-chunk id indexes trades the shard's
load time for reads that touch them, and both must be seen side by side on the same
store. For each shard path: the load (wall and CPU), then p50 / p99 ms of a dense
query alone, with the search's "not staged" filter, with a ``source`` filter, and of
the neighbour scan's filter (source, doc_id, doc_hash, ordinal range), plus the
``source`` facet that ``list_sources`` runs. Paths alternate for ``--rounds``.

    .venv/bin/python bench/shard_open.py /tmp/a/1000000/store/shard /tmp/b/1000000/store/shard
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def _timed(fn: Callable[[Any], object], items: Iterable[Any]) -> tuple[float, float]:
    lat = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        lat.append((time.perf_counter() - start) * 1e3)
    return float(np.percentile(lat, 50)), float(np.percentile(lat, 99))


def measure(path: Path, queries: int) -> str:
    import qdrant_edge as qe

    wall, cpu = time.perf_counter(), time.process_time()
    shard = qe.EdgeShard.load(str(path))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((queries, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records, _ = shard.scroll(qe.ScrollRequest(limit=2000, with_payload=True, with_vector=False))
    payloads = [r.payload for r in records][::13][:queries]
    not_staged = qe.Filter(must=[qe.IsEmptyCondition("staged")])
    one_source = qe.Filter(
        must=[qe.FieldCondition("source", match=qe.MatchAny([payloads[0]["source"]]))]
    )

    def dense(flt: Any) -> Callable[[Any], object]:
        return lambda v: shard.query(
            qe.QueryRequest(
                query=qe.Query.Nearest(v.tolist(), using="dense"),
                filter=flt,
                limit=50,
                with_payload=False,
                with_vector=False,
            )
        )

    def neighbours(p: dict[str, Any]) -> object:
        must = [
            qe.FieldCondition(k, match=qe.MatchValue(p[k]))
            for k in ("source", "doc_id", "doc_hash")
        ]
        must.append(
            qe.FieldCondition(
                "ordinal", range=qe.RangeFloat(gte=p["ordinal"] - 1, lte=p["ordinal"] + 1)
            )
        )
        return shard.scroll(
            qe.ScrollRequest(
                limit=3, filter=qe.Filter(must=must), with_payload=True, with_vector=False
            )
        )

    facet = qe.FacetRequest(key="source", limit=10_000, exact=True, filter=not_staged)
    figures = {
        "dense": _timed(dense(None), vectors),
        "dense+not-staged": _timed(dense(not_staged), vectors),
        "dense+source": _timed(dense(one_source), vectors),
        "neighbour scan": _timed(neighbours, payloads),
        "source facet": _timed(lambda _: shard.facet(facet), range(5)),
    }
    shard.close()
    cells = " | ".join(f"{a:.2f} / {b:.2f}" for a, b in figures.values())
    return f"| {path} | {wall:.2f} | {cpu:.2f} | {cells} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("shards", nargs="+", type=Path)
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(
        "| shard | load wall s | load CPU s | dense | dense + not staged | dense + source"
        " | neighbour scan | source facet |  (p50 / p99 ms)"
    )
    for _ in range(args.rounds):
        for path in args.shards:
            print(measure(path, args.queries), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
