"""Reciprocal rank fusion: combine ranked lists from several legs without score calibration.

RRF (Cormack et al., 2009) scores a document ``sum(w_leg / (k + rank_leg))`` over the
legs that returned it. It needs only ranks, so it works for legs whose scores live on
different scales (cosine vs BM25), and with whatever legs arrived in time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_mcp.records import Candidate, Chunk, Hit, LegScore


def reciprocal_rank_fusion(
    legs: Mapping[str, Sequence[Candidate]],
    *,
    k: int = 60,
    weights: Mapping[str, float] | None = None,
    limit: int | None = None,
) -> list[Hit]:
    """Fuse per-leg candidates into hits, best first.

    Ties break on the best single-leg rank, then on chunk id, so the order is
    deterministic for a given input.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    seen: dict[str, list[tuple[str, Candidate]]] = {}
    for leg, candidates in legs.items():
        weight = 1.0 if weights is None else weights.get(leg, 1.0)
        for candidate in candidates:
            chunk_id = candidate.chunk.id
            rank = candidate.rank
            prior = scores.get(chunk_id)
            if prior is None:
                scores[chunk_id] = weight / (k + rank)
                best[chunk_id] = rank
                seen[chunk_id] = [(leg, candidate)]
            else:
                scores[chunk_id] = prior + weight / (k + rank)
                best[chunk_id] = min(best[chunk_id], rank)
                seen[chunk_id].append((leg, candidate))

    ranked = sorted(scores, key=lambda cid: (-scores[cid], best[cid], cid))
    if limit is not None:
        ranked = ranked[:limit]
    # Per-leg scores only for the hits kept: most candidates fall below ``limit``.
    return [
        Hit(
            chunk=seen[cid][0][1].chunk,
            score=scores[cid],
            legs={leg: LegScore(rank=c.rank, score=c.score) for leg, c in seen[cid]},
        )
        for cid in ranked
    ]


def distribution_based_score_fusion(
    legs: Mapping[str, Sequence[Candidate]],
    *,
    weights: Mapping[str, float] | None = None,
    limit: int | None = None,
) -> list[Hit]:
    """DBSF: normalise each leg's scores by mean ± 3σ of that leg, clip to [0, 1], sum.

    Unlike RRF it keeps the margin between a runaway best hit and the rest, which helps
    when one leg is very sure (an exact identifier in BM25). A leg whose scores are all
    equal contributes 0.5 per hit.
    """
    scores: dict[str, float] = {}
    chunks: dict[str, Chunk] = {}
    per_leg: dict[str, dict[str, LegScore]] = {}
    for leg, candidates in legs.items():
        if not candidates:
            continue
        weight = 1.0 if weights is None else weights.get(leg, 1.0)
        values = [c.score for c in candidates]
        mean = sum(values) / len(values)
        std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        low, high = mean - 3 * std, mean + 3 * std
        for candidate in candidates:
            span = high - low
            norm = min(1.0, max(0.0, (candidate.score - low) / span)) if span > 0 else 0.5
            chunk_id = candidate.chunk.id
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight * norm
            chunks.setdefault(chunk_id, candidate.chunk)
            per_leg.setdefault(chunk_id, {})[leg] = LegScore(
                rank=candidate.rank, score=candidate.score
            )
    ranked = sorted(
        scores,
        key=lambda cid: (-scores[cid], min(s.rank for s in per_leg[cid].values()), cid),
    )
    if limit is not None:
        ranked = ranked[:limit]
    return [Hit(chunk=chunks[cid], score=scores[cid], legs=per_leg[cid]) for cid in ranked]
