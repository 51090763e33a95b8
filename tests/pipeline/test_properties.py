"""Property-based tests of the pure pipeline steps (hypothesis)."""

from __future__ import annotations

import itertools

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_mcp.pipeline.fusion import (
    distribution_based_score_fusion,
    reciprocal_rank_fusion,
)
from retrieval_mcp.pipeline.guard import GuardSettings, apply_guard
from retrieval_mcp.pipeline.mmr import mmr_rerank
from retrieval_mcp.pipeline.packing import pack
from retrieval_mcp.records import Candidate, Chunk, Hit, LegScore, Provenance

IDS = st.sampled_from([f"c{i}" for i in range(12)])


def chunk(cid: str) -> Chunk:
    return Chunk(id=cid, text=cid, provenance=Provenance("s", cid, "", 0, 0, len(cid)))


@st.composite
def legs(draw: st.DrawFn) -> dict[str, list[Candidate]]:
    out: dict[str, list[Candidate]] = {}
    for leg in draw(st.lists(st.sampled_from(["dense", "bm25", "sparse"]), unique=True)):
        ids = draw(st.lists(IDS, unique=True, max_size=10))
        scores = sorted(
            draw(st.lists(st.floats(0, 10), min_size=len(ids), max_size=len(ids))), reverse=True
        )
        out[leg] = [
            Candidate(chunk(i), s, r) for r, (i, s) in enumerate(zip(ids, scores, strict=False), 1)
        ]
    return out


def as_tuples(hits: list[Hit]) -> list[tuple[str, float]]:
    return [(h.chunk.id, round(h.score, 12)) for h in hits]


@given(legs(), st.randoms())
def test_fusion_ignores_the_order_of_its_inputs(
    data: dict[str, list[Candidate]], rnd: object
) -> None:
    items = list(data.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    shuffled = dict(items)
    assert as_tuples(reciprocal_rank_fusion(data)) == as_tuples(reciprocal_rank_fusion(shuffled))
    assert as_tuples(distribution_based_score_fusion(data)) == as_tuples(
        distribution_based_score_fusion(shuffled)
    )


@given(legs())
def test_fusion_keeps_every_candidate_once_best_first(data: dict[str, list[Candidate]]) -> None:
    for fused in (reciprocal_rank_fusion(data), distribution_based_score_fusion(data)):
        ids = [h.chunk.id for h in fused]
        assert len(ids) == len(set(ids))
        assert set(ids) == {c.chunk.id for cands in data.values() for c in cands}
        assert all(a.score >= b.score for a, b in itertools.pairwise(fused))
        for hit in fused:
            for leg, score in hit.legs.items():
                assert any(c.chunk.id == hit.chunk.id and c.rank == score.rank for c in data[leg])


@given(legs(), st.integers(1, 60), st.none() | st.integers(0, 15))
def test_rrf_is_the_formula_with_its_tie_breaks(
    data: dict[str, list[Candidate]], k: int, limit: int | None
) -> None:
    """Fusion builds per-leg scores only for the hits it keeps; what it keeps and how it
    orders them must still be the textbook sum over the legs, ties broken on the best
    single-leg rank, then on the id, and each kept hit carries every leg's rank."""
    expected: dict[str, float] = {}
    for cands in data.values():
        for c in cands:
            expected[c.chunk.id] = expected.get(c.chunk.id, 0.0) + 1.0 / (k + c.rank)

    def best(cid: str) -> int:
        return min(c.rank for cands in data.values() for c in cands if c.chunk.id == cid)

    order = sorted(expected, key=lambda cid: (-expected[cid], best(cid), cid))
    order = order if limit is None else order[:limit]
    fused = reciprocal_rank_fusion(data, k=k, limit=limit)
    assert [h.chunk.id for h in fused] == order
    for hit in fused:
        assert hit.score == pytest.approx(expected[hit.chunk.id], rel=1e-12)
        assert hit.legs == {
            leg: LegScore(rank=c.rank, score=c.score)
            for leg, cands in data.items()
            for c in cands
            if c.chunk.id == hit.chunk.id
        }


def hit(cid: str, score: float) -> Hit:
    return Hit(chunk=chunk(cid), score=score, legs={"dense": LegScore(1, score)})


@given(st.lists(st.floats(0, 1), max_size=20), st.floats(0, 1), st.floats(0, 1))
def test_guard_partitions_and_keeps_the_best(
    scores: list[float], floor: float, alpha: float
) -> None:
    hits = [hit(f"c{i}", s) for i, s in enumerate(scores)]
    verdict = apply_guard(hits, GuardSettings(min_score=floor, alpha=alpha))
    assert len(verdict.passed) + len(verdict.rejected) == len(hits)
    assert all(h.score >= verdict.threshold for h in verdict.passed)
    assert all(h.score < verdict.threshold for h in verdict.rejected)
    if hits and max(scores) >= floor:
        assert max(scores) in [h.score for h in verdict.passed]


WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=60).map(lambda t: t.strip() or "x")


@st.composite
def documents_hits(draw: st.DrawFn) -> list[Hit]:
    """Hits over real documents: chunks are exact, possibly overlapping, slices."""
    hits: list[Hit] = []
    for d in range(draw(st.integers(1, 3))):
        text = " ".join(draw(st.lists(WORDS, min_size=3, max_size=12)))
        for o in range(draw(st.integers(1, 5))):
            start = draw(st.integers(0, len(text) - 1))
            end = draw(st.integers(start + 1, len(text)))
            cid = f"d{d}-{o}-{start}-{end}"
            prov = Provenance("src", f"doc{d}", f"T{d}", o, start, end, uri=f"u{d}")
            hits.append(Hit(Chunk(cid, text[start:end], prov), draw(st.floats(0, 1)), {}))
    return hits


def count_words(text: str) -> int:
    return len(text.split())


@settings(max_examples=300)
@given(documents_hits(), st.integers(1, 60))
def test_packing_respects_budget_never_splits_and_keeps_provenance(
    hits: list[Hit], budget: int
) -> None:
    result = pack(hits, budget_tokens=budget, count_tokens=count_words)
    assert result.tokens_used <= budget
    assert result.tokens_used == sum(p.tokens for p in result.passages)
    by_id = {h.chunk.id: h for h in hits}
    packed_ids = [cid for p in result.passages for cid in p.chunk_ids]
    assert len(packed_ids) == len(set(packed_ids))
    for passage in result.passages:
        for cid in passage.chunk_ids:
            source = by_id[cid].chunk
            assert source.text in passage.text  # whole, never split
            prov = source.provenance
            assert (prov.source, prov.doc_id, prov.title, prov.uri) == (
                passage.source,
                passage.doc_id,
                passage.title,
                passage.uri,
            )
            assert passage.char_start <= prov.char_start and prov.char_end <= passage.char_end
            assert prov.ordinal in passage.ordinals


@settings(max_examples=300)
@given(documents_hits(), st.integers(1, 60), st.integers(0, 3), st.integers(0, 12))
def test_a_token_floor_changes_no_choice_of_the_pack(
    hits: list[Hit], budget: int, divisor: int, ranked_from: int
) -> None:
    # Any lower bound on the count (here a fraction of it, or zero) must give the very
    # pack counting everything gives: it only spares the counting.
    def floor(text: str) -> int:
        return count_words(text) // divisor if divisor else 0

    ranked = sorted(hits, key=lambda h: -h.score)[ranked_from:]
    plain = pack(hits, budget_tokens=budget, count_tokens=count_words, ranked=ranked)
    floored = pack(hits, budget_tokens=budget, count_tokens=count_words, ranked=ranked, floor=floor)
    assert floored == plain
    exact = pack(
        hits, budget_tokens=budget, count_tokens=count_words, ranked=ranked, floor=count_words
    )
    assert exact == plain
    # Counts stored at ingest stand in for counting when they are true; a stored count
    # below the floor (a store understating its chunks) is ignored, not believed.
    for understated in (0, 1):
        told = [
            attrs.evolve(
                h, chunk=attrs.evolve(h.chunk, tokens=count_words(h.chunk.text) - understated)
            )
            for h in hits
        ]
        told_ranked = sorted(told, key=lambda h: -h.score)[ranked_from:]
        kept = pack(
            told,
            budget_tokens=budget,
            count_tokens=count_words,
            ranked=told_ranked,
            floor=count_words,
        )
        assert [(p.chunk_ids, p.tokens) for p in kept.passages] == [
            (p.chunk_ids, p.tokens) for p in plain.passages
        ]


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(-1, 1), st.floats(-1, 1)), max_size=12),
    st.floats(0, 1),
)
def test_mmr_is_a_permutation(rows: list[tuple[float, float, float]], lam: float) -> None:
    hits = [hit(f"c{i}", s) for i, (s, _, _) in enumerate(rows)]
    vectors = {f"c{i}": [x, y] for i, (_, x, y) in enumerate(rows)}
    ranked = mmr_rerank(hits, vectors, lambda_=lam)
    assert sorted(h.chunk.id for h in ranked) == sorted(h.chunk.id for h in hits)
    if hits:
        assert ranked[0].score == max(h.score for h in hits) or lam < 1
