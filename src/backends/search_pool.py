"""How many threads the embedded engine searches with: one per indexed segment, at most
one per usable core.

Why: ``qdrant-edge`` searches the segments of one query in a pool of its own threads,
sized by default from the machine (eight on these two-core hosts). Idle pool threads
spin in ``sched_yield`` before they sleep, so after every query up to eight threads
burn CPU that no query uses: on a 10k-chunk store a hybrid call cost 1.1–1.3 ms of
process CPU with the default pool and 0.85–0.91 ms with one thread, and at 1M chunks
(two 500k-point segments) two threads cut both CPU (12.5 → 11.0 ms) and p50 (6.8 →
5.9 ms) against the default, where one thread doubled p50 (bench/RESULTS.md, "Scale",
search pool). A segment is searched by one thread, so a pool wider than the indexed
segments buys nothing; the appendable segment that takes new writes is small.

The pool is sized when the shard is loaded: a store that grows past another segment
while the server runs keeps its pool until the next start.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from retrieval_mcp.encoders.minilm import DIMENSION

#: The vectors every store this server creates holds, as ``edge_config.json`` spells
#: them. A shard loaded with a config is checked against its segments; only these
#: known forms are passed back, anything else loads as it is (the engine's pool).
DENSE_CONFIG = {"size": DIMENSION, "distance": "Cosine"}
BM25_CONFIG = {"modifier": "idf"}


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def indexed_segments(shard: Path) -> int:
    """Segments of ``shard`` that carry a built index (an HNSW graph or an immutable
    sparse index), read from each ``segment.json``; unreadable ones count as none."""
    count = 0
    try:
        segments = list((shard / "segments").iterdir())
    except OSError:
        return 0
    for segment in segments:
        try:
            config = json.loads((segment / "segment.json").read_text("utf-8"))["config"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _is_indexed(config):
            count += 1
    return count


def _is_indexed(config: Any) -> bool:
    if not isinstance(config, dict):
        return False
    for key, kind_key, unbuilt in (
        ("vector_data", "type", ("plain",)),
        ("sparse_vector_data", "index_type", ("MutableRam",)),
    ):
        vectors = config.get(key)
        if not isinstance(vectors, dict):
            continue
        for params in vectors.values():
            index = params.get("index") if isinstance(params, dict) else None
            kind = index.get(kind_key) if isinstance(index, dict) else None
            if isinstance(kind, str) and kind not in unbuilt:
                return True
    return False


def search_threads(shard: Path, configured: int = 0, cores: int | None = None) -> int:
    """``configured`` when set (> 0), else one per indexed segment of ``shard``,
    between 1 and the usable cores."""
    if configured > 0:
        return configured
    return pool_size(indexed_segments(shard), cores or usable_cores())


def pool_size(indexed: int, cores: int) -> int:
    return max(1, min(cores, indexed))


def load_config(shard: Path, dense: str, bm25: str, threads: int) -> Any | None:
    """An ``EdgeConfig`` that loads ``shard`` as it is, with a search pool of
    ``threads``; None when its ``edge_config.json`` is missing, unreadable or holds
    vectors this server does not write (then the shard loads with the engine's pool)."""
    try:
        persisted = json.loads((shard / "edge_config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(persisted, dict):
        return None
    if persisted.get("vectors") != {dense: DENSE_CONFIG}:
        return None
    if persisted.get("sparse_vectors") != {bm25: BM25_CONFIG}:
        return None
    return qe.EdgeConfig(
        vectors={dense: qe.EdgeVectorParams(size=DIMENSION, distance=qe.Distance.Cosine)},
        sparse_vectors={bm25: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        max_search_threads=threads,
    )
