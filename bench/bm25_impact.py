"""Would an impact-ordered BM25 index stop the keyword leg growing with the store?

Issue 16 asks for the BM25 leg to grow at most ×3 from 10k to 1M chunks; the engine's
sparse search grows ×7–9 (ADR 0048) because it walks every posting of every query term
in every segment. This script measures, on the stores ``bench/scale.py`` built, the one
family of index that does not: postings kept per term in decreasing order of their
score contribution (idf × the document's BM25 term weight), read *score at a time*
under a fixed budget of postings per query (Anh & Moffat's impact ordering; Lin &
Trotman's "anytime ranking"). The budget caps the work whatever the store's size; what
it costs is exactness, so each budget is reported with its overlap with the exact top
50 (and top 10), the way the dense leg's HNSW is reported with its recall@50. The
simplest pruning is timed too: the engine's own query without its common terms
(``engine df≤f``: terms in more than a share f of the chunks dropped, the way a
stop-word list would, but measured per store).

Three ways are timed on the same queries (the 225 Cranfield queries, as text, the
tokenising included in each), one process, interleaved:

- ``engine``: the server's BM25 leg (qdrant-edge sparse query, IDF modifier, id-only);
- ``exact``: the same scores in numpy over whole posting lists (checks the formula:
  its top 50 must match the engine's);
- ``budget P``: the impact-ordered lists, the P highest contributions over all query
  terms, accumulated, top 50.

    .venv/bin/python bench/bm25_impact.py --dir /tmp/lrm-scale-cran --sizes 10000,100000,1000000

The stores are ``scale.py``'s (``<dir>/<size>/store/shard``); the index is built here in
memory from the shard's own sparse vectors, so both sides score the same documents.
Prints one JSON line per size and a table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from corpus import cranfield_queries  # noqa: E402

CANDIDATES = 50
BUDGETS = (2_000, 5_000, 20_000, 50_000)
#: ``engine df≤f``: the engine's query without the terms in more than f of the chunks
#: (the longest posting lists, the smallest idf), at least the rarest term kept.
DF_PRUNE = (0.02, 0.05, 0.1, 0.2)


class ImpactIndex:
    """Postings per term in decreasing contribution (idf × term weight) order."""

    def __init__(
        self, doc_ids: list[Any], terms: np.ndarray, docs: np.ndarray, weights: np.ndarray
    ) -> None:
        self.doc_ids = doc_ids
        n = len(doc_ids)
        self.vocab, tix = np.unique(terms, return_inverse=True)
        df = np.bincount(tix, minlength=len(self.vocab)).astype(np.float64)
        # The engine's IDF modifier (Qdrant): ln(1 + (N − n + 0.5) / (n + 0.5)).
        self.idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
        contrib = weights.astype(np.float32) * self.idf[tix]
        order = np.lexsort((-contrib, tix))
        self.docs = docs[order].astype(np.int32)
        self.contrib = contrib[order]
        self.offsets = np.zeros(len(self.vocab) + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=self.offsets[1:])
        self.scratch = np.zeros(n, dtype=np.float32)

    def df_share(self, indices: list[int]) -> list[float]:
        """The share of chunks holding each query term (0 for a term none holds)."""
        wanted = np.asarray(indices, dtype=self.vocab.dtype)
        at = np.minimum(np.searchsorted(self.vocab, wanted), len(self.vocab) - 1)
        df = (self.offsets[at + 1] - self.offsets[at]) * (self.vocab[at] == wanted)
        return [float(x) / len(self.doc_ids) for x in df]

    def term_slices(self, indices: list[int]) -> list[tuple[int, int]]:
        wanted = np.asarray(indices, dtype=self.vocab.dtype)
        at = np.minimum(np.searchsorted(self.vocab, wanted), len(self.vocab) - 1)
        at = at[self.vocab[at] == wanted]  # a term no document has matches nothing
        return [(int(self.offsets[t]), int(self.offsets[t + 1])) for t in at]

    def exact(self, indices: list[int], k: int = CANDIDATES) -> list[int]:
        spans = self.term_slices(indices)
        if not spans:
            return []
        docs = np.concatenate([self.docs[a:b] for a, b in spans])
        vals = np.concatenate([self.contrib[a:b] for a, b in spans])
        scores = np.bincount(docs, weights=vals, minlength=len(self.doc_ids))
        return _top(np.arange(len(scores)), scores, k)

    def budgeted(self, indices: list[int], budget: int, k: int = CANDIDATES) -> list[int]:
        spans = self.term_slices(indices)
        if not spans:
            return []
        heads = [self.contrib[a : min(b, a + budget)] for a, b in spans]
        pool = np.concatenate(heads)
        if len(pool) > budget:
            theta = np.partition(pool, len(pool) - budget)[len(pool) - budget]
            # contributions are sorted descending within a term: count those ≥ θ
            counts = [int(np.searchsorted(-h, -theta, side="right")) for h in heads]
        else:
            counts = [len(h) for h in heads]
        docs = np.concatenate(
            [self.docs[a : a + c] for (a, _), c in zip(spans, counts, strict=True)]
        )
        vals = np.concatenate(
            [self.contrib[a : a + c] for (a, _), c in zip(spans, counts, strict=True)]
        )
        scratch = self.scratch
        np.add.at(scratch, docs, vals)
        unique = np.unique(docs)
        scores = scratch[unique]
        scratch[unique] = 0.0
        return _top(unique, scores, k)


def _top(ids: np.ndarray, scores: np.ndarray, k: int) -> list[int]:
    part = np.argpartition(-scores, k)[:k] if len(scores) > k else np.arange(len(scores))
    part = part[np.argsort(-scores[part], kind="stable")]
    return [int(ids[i]) for i in part if scores[i] > 0]


def load_index(shard: Any, qe: Any) -> tuple[ImpactIndex, float]:
    t0 = time.perf_counter()
    ids: list[Any] = []
    terms: list[np.ndarray] = []
    values: list[np.ndarray] = []
    lengths: list[int] = []
    offset = None
    while True:
        records, offset = shard.scroll(
            qe.ScrollRequest(offset=offset, limit=5000, with_payload=False, with_vector=["bm25"])
        )
        for r in records:
            v = r.vector["bm25"]
            ids.append(r.id)
            terms.append(np.asarray(v.indices, dtype=np.uint32))
            values.append(np.asarray(v.values, dtype=np.float32))
            lengths.append(len(v.indices))
        if offset is None:
            break
    docs = np.repeat(np.arange(len(ids), dtype=np.int32), lengths)
    index = ImpactIndex(ids, np.concatenate(terms), docs, np.concatenate(values))
    return index, time.perf_counter() - t0


def open_store(shard_path: Path) -> tuple[Any, Any]:
    """A scale.py store's shard and the BM25 query encoder its manifest describes."""
    import qdrant_edge as qe

    shard = qe.EdgeShard.load(str(shard_path))
    manifest = json.loads((shard_path.parent / "manifest.json").read_text("utf-8"))["bm25"]
    config = qe.Bm25Config(
        k=manifest["k"], b=manifest["b"], avg_len=manifest["avg_len"], language=manifest["language"]
    )
    return shard, qe.Bm25(config)


def engine_top(shard: Any, sparse: Any, position: dict[str, int]) -> list[int]:
    """The engine's BM25 top ``CANDIDATES`` for a sparse query, as positions in ``position``."""
    import qdrant_edge as qe

    if not sparse.indices:
        return []
    request = qe.QueryRequest(
        limit=CANDIDATES,
        query=qe.Query.Nearest(sparse, using="bm25"),
        filter=None,
        with_payload=False,
    )
    return [position[str(h.id)] for h in shard.query(request)]


def measure(size: int, shard_path: Path, queries: int) -> dict[str, Any]:
    import qdrant_edge as qe

    shard, bm25 = open_store(shard_path)
    index, build_s = load_index(shard, qe)
    position = {str(d): i for i, d in enumerate(index.doc_ids)}
    texts = cranfield_queries()

    def engine(text: str) -> list[int]:
        return engine_top(shard, bm25.embed_query(text), position)

    def exact(text: str) -> list[int]:
        return index.exact(bm25.embed_query(text).indices)

    def pruned(text: str, share: float) -> list[int]:
        sparse = bm25.embed_query(text)
        if not sparse.indices:
            return []
        shares = index.df_share(sparse.indices)
        keep = [i for i, x in enumerate(shares) if x <= share] or [int(np.argmin(shares))]
        query = qe.SparseVector(
            indices=[sparse.indices[i] for i in keep], values=[sparse.values[i] for i in keep]
        )
        return engine_top(shard, query, position)

    ways: dict[str, Any] = {"engine": engine, "exact": exact}
    for f in DF_PRUNE:
        ways[f"engine df≤{f:g}"] = lambda text, f=f: pruned(text, f)
    for p in BUDGETS:
        ways[f"budget {p}"] = lambda text, p=p: index.budgeted(bm25.embed_query(text).indices, p)
    for i in range(20):
        for fn in ways.values():
            fn(texts[i % len(texts)])
    times: dict[str, list[float]] = {name: [] for name in ways}
    answers: dict[str, list[list[int]]] = {name: [] for name in ways}
    for i in range(queries):
        text = texts[i % len(texts)]
        for name, fn in ways.items():
            t0 = time.perf_counter()
            got = fn(text)
            times[name].append((time.perf_counter() - t0) * 1000)
            answers[name].append(got)
    out: dict[str, Any] = {
        "size": size,
        "postings": len(index.docs),
        "index_build_s": round(build_s, 1),
        "index_mib": round(
            (index.docs.nbytes + index.contrib.nbytes + index.scratch.nbytes) / 2**20, 1
        ),
    }
    truth = answers["exact"]
    for name in ways:
        out[f"{name} p50_ms"] = round(float(np.percentile(times[name], 50)), 3)
        out[f"{name} p99_ms"] = round(float(np.percentile(times[name], 99)), 3)
        out[f"{name} overlap50"] = round(_overlap(answers[name], truth, 50), 4)
        out[f"{name} overlap10"] = round(_overlap(answers[name], truth, 10), 4)
    shard.close()
    return out


def _overlap(got: list[list[int]], truth: list[list[int]], k: int) -> float:
    scores = []
    for g, t in zip(got, truth, strict=True):
        if not t:
            continue
        # Ties at the cut make "the" top k ambiguous: count a hit when its exact score
        # position is within the top k of the truth list of the same length.
        scores.append(len(set(g[:k]) & set(t[:k])) / len(t[:k]))
    return float(np.mean(scores)) if scores else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/tmp/lrm-scale-cran")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=225)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        result = measure(args.one, Path(args.dir) / str(args.one) / "store" / "shard", args.queries)
        print(json.dumps(result), flush=True)
        return
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"commit {commit}, load {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--dir",
                args.dir,
                "--queries",
                str(args.queries),
                "--one",
                str(size),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        line = done.stdout.strip().splitlines()[-1]
        print(line, flush=True)
        rows.append(json.loads(line))
    names = [k[: -len(" p50_ms")] for k in rows[0] if k.endswith(" p50_ms")]
    print(
        "\n| way | "
        + " | ".join(f"{r['size']:,} p50 ms (top-50 / top-10 overlap)" for r in rows)
        + " | growth |"
    )
    print("|---|" + "---:|" * (len(rows) + 1))
    for name in names:
        cells = [
            f"{r[name + ' p50_ms']} ({r[name + ' overlap50']:.3f} / {r[name + ' overlap10']:.3f})"
            for r in rows
        ]
        growth = rows[-1][name + " p50_ms"] / rows[0][name + " p50_ms"]
        print(f"| {name} | " + " | ".join(cells) + f" | ×{growth:.1f} |")


if __name__ == "__main__":
    main()
