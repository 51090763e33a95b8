"""The pack never holds less than the fused ranking truncated to the budget would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_mcp.pipeline.packing import pack
from retrieval_mcp.records import Chunk, Hit, Provenance

TEXT = " ".join(f"w{i}" for i in range(400))


def words(text: str) -> int:
    return len(text.split())


@st.composite
def pieces(draw: st.DrawFn, prefix: str) -> list[Hit]:
    """Chunks of a few documents, at random (often overlapping) spans, random scores."""
    out = []
    for i in range(draw(st.integers(0, 14))):
        doc = draw(st.sampled_from(["a", "b", "c", "d", "e"]))
        start = draw(st.integers(0, len(TEXT) - 2))
        end = draw(st.integers(start + 1, min(len(TEXT), start + 300)))
        score = draw(st.floats(0.0, 1.0, allow_nan=False))
        prov = Provenance("s", doc, "T", i, start, end)
        out.append(Hit(Chunk(f"{prefix}{i}", TEXT[start:end], prov), score, {}))
    return out


def truncated(ranking: list[Hit], budget: int) -> list[str]:
    """Plain top-k cut to the budget: chunks in rank order until one does not fit."""
    taken, used = [], 0
    for hit in ranking:
        cost = words(hit.chunk.text)
        if used + cost > budget:
            break
        taken.append(hit.chunk.id)
        used += cost
    return taken


@settings(max_examples=300, deadline=None)
@given(
    ranked=pieces("r"),
    extra=pieces("x"),  # neighbours, reranked hits: may outscore the ranking
    budget=st.integers(1, 200),
)
def test_pack_holds_the_ranking_truncated_to_the_budget(
    ranked: list[Hit], extra: list[Hit], budget: int
) -> None:
    result = pack(extra, budget_tokens=budget, count_tokens=words, ranked=ranked)
    packed = {cid for p in result.passages for cid in p.chunk_ids}
    assert set(truncated(ranked, budget)) <= packed
    baseline_docs = {h.chunk.provenance.doc_id for h in ranked if h.chunk.id in packed}
    assert {p.doc_id for p in result.passages} >= baseline_docs
    assert result.tokens_used <= budget
