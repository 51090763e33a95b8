"""Maximal marginal relevance: trade a little relevance for less redundancy.

Greedy MMR (Carbonell & Goldstein, 1998) over unit-length dense vectors: each step
picks the hit maximising ``λ·relevance − (1−λ)·max cosine to what is already picked``.
Relevance is the fused score rescaled to [0, 1] so λ means the same for any fusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from retrieval_mcp.records import Hit


def mmr_rerank(
    hits: Sequence[Hit],
    vectors: Mapping[str, Sequence[float]],
    *,
    lambda_: float = 0.7,
    limit: int | None = None,
) -> list[Hit]:
    """Reorder ``hits``; hits without a vector keep their relative order at the end.

    Vectorised: the running "closest already-picked" similarity of every candidate is
    updated once per pick, so the cost is O(picks × candidates × dimension) in numpy.
    """
    with_vec = [h for h in hits if h.chunk.id in vectors]
    without = [h for h in hits if h.chunk.id not in vectors]
    if not with_vec:
        return list(hits)[:limit]
    matrix = np.asarray([vectors[h.chunk.id] for h in with_vec], dtype=np.float64)
    scores = np.asarray([h.score for h in with_vec], dtype=np.float64)
    span = float(scores.max() - scores.min()) or 1.0
    relevance = (scores - scores.min()) / span
    closest = np.full(len(with_vec), -np.inf)
    available = np.ones(len(with_vec), dtype=bool)
    picks = len(with_vec) if limit is None else min(limit, len(with_vec))
    chosen: list[Hit] = []
    for _ in range(picks):
        redundancy = np.where(np.isfinite(closest), closest, 0.0)
        gain = lambda_ * relevance - (1 - lambda_) * redundancy
        gain[~available] = -np.inf
        best = int(np.argmax(gain))  # first maximum: ties keep the input order
        chosen.append(with_vec[best])
        available[best] = False
        closest = np.maximum(closest, matrix @ matrix[best])
    result = chosen + without
    return result[:limit] if limit is not None else result
