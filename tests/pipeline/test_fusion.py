from __future__ import annotations

import pytest

from retrieval_mcp.pipeline.fusion import reciprocal_rank_fusion
from retrieval_mcp.records import Candidate, Chunk, Provenance


def chunk(cid: str) -> Chunk:
    return Chunk(id=cid, text=cid, provenance=Provenance("s", cid, "", 0, 0, len(cid)))


def ranked(*ids: str) -> list[Candidate]:
    return [Candidate(chunk=chunk(i), score=1.0 / r, rank=r) for r, i in enumerate(ids, 1)]


def test_agreement_beats_a_single_top_rank() -> None:
    hits = reciprocal_rank_fusion({"dense": ranked("a", "b", "c"), "bm25": ranked("b", "d", "a")})
    assert [h.chunk.id for h in hits][:2] == ["b", "a"]
    assert hits[0].legs["dense"].rank == 2 and hits[0].legs["bm25"].rank == 1


def test_scores_follow_the_formula() -> None:
    hits = reciprocal_rank_fusion({"x": ranked("a"), "y": ranked("z", "a")}, k=10)
    by_id = {h.chunk.id: h.score for h in hits}
    assert by_id["a"] == pytest.approx(1 / 11 + 1 / 12)
    assert by_id["z"] == pytest.approx(1 / 11)


def test_weights_shift_the_order() -> None:
    legs = {"dense": ranked("a", "b"), "bm25": ranked("b", "a")}
    assert reciprocal_rank_fusion(legs, weights={"dense": 2.0})[0].chunk.id == "a"
    assert reciprocal_rank_fusion(legs, weights={"bm25": 2.0})[0].chunk.id == "b"


def test_single_leg_keeps_its_order_and_limit_applies() -> None:
    hits = reciprocal_rank_fusion({"dense": ranked("c", "a", "b")}, limit=2)
    assert [h.chunk.id for h in hits] == ["c", "a"]


def test_ties_are_deterministic() -> None:
    legs = {"x": ranked("q"), "y": ranked("p")}
    assert [h.chunk.id for h in reciprocal_rank_fusion(legs)] == ["p", "q"]


def test_no_legs_gives_no_hits_and_bad_k_is_refused() -> None:
    assert reciprocal_rank_fusion({}) == []
    with pytest.raises(ValueError):
        reciprocal_rank_fusion({"x": ranked("a")}, k=0)


def test_an_rrf_tie_goes_to_the_hit_with_the_best_single_leg_rank() -> None:
    """k = 1: ranks (1, 5) and (2, 2) both score 1/2 + 1/6 = 1/3 + 1/3 exactly; the hit
    one leg put first wins, whichever id sorts first."""
    legs = {
        "dense": ranked("z-first-somewhere", "a-second-twice"),
        "bm25": ranked("x", "a-second-twice", "y", "w", "z-first-somewhere"),
    }
    fused = reciprocal_rank_fusion(legs, k=1)
    order = [h.chunk.id for h in fused]
    first, second = fused[order.index("z-first-somewhere")], fused[order.index("a-second-twice")]
    assert first.score == second.score
    assert order.index("z-first-somewhere") < order.index("a-second-twice")
