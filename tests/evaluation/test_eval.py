"""Collections load with their quirks handled; metrics match a hand computation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from retrieval_mcp.eval_datasets import load_dataset
from retrieval_mcp.eval_runner import doc_ranking, score_run

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield"


@pytest.mark.skipif(not CRANFIELD.exists(), reason="shared Cranfield data not present")
def test_cranfield_quirks() -> None:
    data = load_dataset(CRANFIELD)
    assert len(data.documents) == 1400 and len(data.queries) == 225
    assert sum(len(d) for d in data.qrels.values()) == 1837
    # The third query in cran.qry is ".I 004" but its qid is 3 (ordinal position).
    assert data.queries["3"].startswith("what problems of heat conduction in composite slabs")
    assert data.qrels["1"]["184"] == 3  # code 2 -> grade 3
    grades = {g for docs in data.qrels.values() for g in docs.values()}
    assert grades <= {0, 1, 2, 3, 4} and 0 in grades  # -1 became 0
    assert data.documents[0].title.startswith("experimental investigation of the aerodynamics")


def test_beir_layout(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": "T", "text": "x"}) + "\n"
    )
    (tmp_path / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "find x"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "unjudged"})
        + "\n"
    )
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    data = load_dataset(tmp_path)
    assert data.queries == {"q1": "find x"} and data.qrels == {"q1": {"d1": 1}}


def test_metrics_match_a_hand_computation() -> None:
    qrels = {"q": {"a": 2, "b": 1, "z": 1}}
    run = {"q": ["b", "x", "a"]}
    # trec_eval nDCG: linear gains. DCG = 1/log2(2) + 2/log2(4); ideal = 2 + 1/log2(3) + 1/2.
    dcg = 1 / math.log2(2) + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    metrics = score_run(qrels, run)
    assert metrics["nDCG@10"] == pytest.approx(dcg / ideal)
    assert metrics["Recall@100"] == pytest.approx(2 / 3)
    assert metrics["MRR@10"] == pytest.approx(1.0)


def test_documents_rank_where_their_best_chunk_ranks() -> None:
    hits = [{"provenance": {"doc_id": d}} for d in ["7", "3", "7", "9", "3"]]
    assert doc_ranking(hits) == ["7", "3", "9"]
    assert doc_ranking(hits, depth=2) == ["7", "3"]


def test_ranking_is_cut_to_the_budget_in_rank_order() -> None:
    from retrieval_mcp.eval_runner import cut_to_budget

    texts = {"a": "one two three four five six", "b": "seven eight"}

    def hit(doc: str, start: int, end: int) -> dict[str, object]:
        return {"provenance": {"doc_id": doc, "char_start": start, "char_end": end}}

    ranking = [hit("a", 0, 13), hit("a", 14, 27), hit("b", 0, 11)]  # 3, 3 and 2 words

    def words(text: str) -> int:
        return len(text.split())

    assert cut_to_budget(ranking, texts, 6, words) == ranking[:2]
    # Stops at the first chunk that does not fit, as plain truncation would.
    assert cut_to_budget(ranking, texts, 5, words) == ranking[:1]
    assert cut_to_budget(ranking, texts, 2, words) == []


def test_holds_counts_queries_with_a_relevant_document_and_their_recall() -> None:
    from retrieval_mcp.eval_runner import _holds

    qrels = {"q1": {"a": 2, "b": 1, "z": 0}, "q2": {"c": 1}}
    share, recall = _holds(qrels, {"q1": {"a", "z"}, "q2": {"x"}})
    assert share == 0.5 and recall == pytest.approx((1 / 2 + 0) / 2)
