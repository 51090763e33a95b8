from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.pipeline.collapse import collapse_by_document
from retrieval_mcp.records import Chunk, Hit, Provenance


def hit(cid: str, doc: str, score: float = 1.0, source: str = "s") -> Hit:
    return Hit(Chunk(cid, "text", Provenance(source, doc, "T", 0, 0, 4)), score, {})


def test_best_chunk_stands_for_its_document_with_a_count_of_the_rest() -> None:
    ranking = [hit("a1", "a"), hit("a2", "a"), hit("b1", "b"), hit("a3", "a"), hit("c1", "c")]
    out = collapse_by_document(ranking, 2)
    assert [(c.hit.chunk.id, c.other_chunks) for c in out] == [("a1", 2), ("b1", 0)]


def test_same_doc_id_in_two_sources_is_two_documents() -> None:
    out = collapse_by_document([hit("x", "d", source="s1"), hit("y", "d", source="s2")], 5)
    assert [c.hit.chunk.id for c in out] == ["x", "y"]


@given(
    docs=st.lists(st.integers(min_value=0, max_value=6), max_size=40),
    limit=st.integers(min_value=1, max_value=10),
)
def test_collapse_keeps_rank_order_distinct_documents_and_counts_every_chunk(
    docs: list[int], limit: int
) -> None:
    ranking = [hit(f"c{i}", f"d{d}") for i, d in enumerate(docs)]
    out = collapse_by_document(ranking, limit)
    first_seen = list(dict.fromkeys(docs))
    assert [c.hit.chunk.provenance.doc_id for c in out] == [f"d{d}" for d in first_seen][:limit]
    for c in out:
        doc = int(c.hit.chunk.provenance.doc_id[1:])
        assert c.hit.chunk.id == f"c{docs.index(doc)}"
        assert c.other_chunks == docs.count(doc) - 1
