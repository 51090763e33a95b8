"""Maximal marginal relevance: trade a little relevance for less redundancy.

Greedy MMR (Carbonell & Goldstein, 1998) over unit-length dense vectors: each step
picks the hit maximising ``λ·relevance − (1−λ)·max cosine to what is already picked``.
Relevance is the fused score rescaled to [0, 1] so λ means the same for any fusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_mcp.records import Hit


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=False))


def mmr_rerank(
    hits: Sequence[Hit],
    vectors: Mapping[str, Sequence[float]],
    *,
    lambda_: float = 0.7,
    limit: int | None = None,
) -> list[Hit]:
    """Reorder ``hits``; hits without a vector keep their relative order at the end."""
    with_vec = [h for h in hits if h.chunk.id in vectors]
    without = [h for h in hits if h.chunk.id not in vectors]
    if not with_vec:
        return list(hits)[:limit]
    top = max(h.score for h in with_vec)
    low = min(h.score for h in with_vec)
    span = top - low or 1.0
    relevance = {h.chunk.id: (h.score - low) / span for h in with_vec}
    chosen: list[Hit] = []
    remaining = list(with_vec)
    while remaining and (limit is None or len(chosen) < limit):

        def gain(hit: Hit) -> float:
            vec = vectors[hit.chunk.id]
            redundancy = max((_cosine(vec, vectors[c.chunk.id]) for c in chosen), default=0.0)
            return lambda_ * relevance[hit.chunk.id] - (1 - lambda_) * redundancy

        best = max(remaining, key=gain)
        chosen.append(best)
        remaining.remove(best)
    result = chosen + without
    return result[:limit] if limit is not None else result
