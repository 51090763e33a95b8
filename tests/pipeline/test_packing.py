from __future__ import annotations

import pytest

from retrieval_mcp.pipeline.packing import pack
from retrieval_mcp.records import Chunk, Hit, Provenance

DOC = "one two three four five six seven eight nine ten eleven twelve"


def piece(cid: str, start: int, end: int, score: float, doc: str = "d") -> Hit:
    prov = Provenance("s", doc, "T", 0, start, end)
    return Hit(Chunk(cid, DOC[start:end], prov), score, {})


def words(text: str) -> int:
    return len(text.split())


def test_overlapping_chunks_merge_into_one_passage_paid_once() -> None:
    a = piece("a", 0, 23, 0.9)  # one two three four five
    b = piece("b", 14, 37, 0.8)  # four five six seven eight
    result = pack([a, b], budget_tokens=100, count_tokens=words)
    assert len(result.passages) == 1
    passage = result.passages[0]
    assert passage.text == DOC[0:37] and passage.chunk_ids == ("a", "b")
    assert passage.tokens == 8 < words(a.chunk.text) + words(b.chunk.text)


def test_chunks_over_budget_are_skipped_whole_and_counted() -> None:
    big = piece("big", 0, len(DOC), 0.9)
    small = piece("small", 0, 7, 0.5, doc="other")
    result = pack([big, small], budget_tokens=3, count_tokens=words)
    assert [p.chunk_ids for p in result.passages] == [("small",)]
    assert result.chunks_over_budget == 1


def test_reading_order_groups_documents_by_best_score() -> None:
    late = piece("late", 24, 37, 0.4)
    early = piece("early", 0, 7, 0.3)
    other = piece("other", 0, 7, 0.6, doc="e")
    result = pack([late, early, other], budget_tokens=100, count_tokens=words)
    assert [p.chunk_ids for p in result.passages] == [("other",), ("early",), ("late",)]


def test_duplicates_are_packed_once_and_bad_budget_refused() -> None:
    a = piece("a", 0, 7, 0.9)
    assert pack([a, a], budget_tokens=10, count_tokens=words).chunks_packed == 1
    with pytest.raises(ValueError):
        pack([a], budget_tokens=0, count_tokens=words)
