from __future__ import annotations

import itertools
import random

import pytest

from retrieval_mcp.pipeline.chunking import chunk_spans


def words(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    vocab = ["alpha", "beta", "gamma", "delta", "flow", "wing", "heat", "plate"]
    sentences = []
    for _ in range(n // 8):
        sentences.append(" ".join(rng.choice(vocab) for _ in range(8)).capitalize() + ".")
    return " ".join(sentences)


def test_short_text_is_one_chunk_stripped() -> None:
    text = "  Hello world.  \n"
    spans = chunk_spans(text, chunk_chars=100, overlap_chars=10)
    assert len(spans) == 1
    assert text[spans[0].start : spans[0].end] == "Hello world."


def test_empty_and_blank_text_give_no_chunks() -> None:
    assert chunk_spans("", chunk_chars=100) == []
    assert chunk_spans("   \n\n  ", chunk_chars=100) == []


@pytest.mark.parametrize("seed", range(5))
def test_spans_cover_the_text_within_size_and_overlap(seed: int) -> None:
    text = words(800, seed)
    spans = chunk_spans(text, chunk_chars=300, overlap_chars=60)
    assert len(spans) > 5
    for span in spans:
        assert 0 < span.end - span.start <= 300
        assert not text[span.start].isspace() and not text[span.end - 1].isspace()
    for before, after in itertools.pairwise(spans):
        assert before.start < after.start <= before.end  # overlapping, always advancing
    # Every non-space character is inside some chunk.
    covered: set[int] = set()
    for span in spans:
        covered.update(range(span.start, span.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_prefers_paragraph_then_sentence_boundaries() -> None:
    para1 = "First paragraph sentence one. " * 8
    text = para1.strip() + "\n\n" + "Second paragraph words here. " * 8
    spans = chunk_spans(text, chunk_chars=len(para1) + 20, overlap_chars=0)
    assert text[spans[0].start : spans[0].end] == para1.strip()
    sentence_text = "One two three four five. Six seven eight nine ten. " * 20
    for span in chunk_spans(sentence_text, chunk_chars=120, overlap_chars=0)[:-1]:
        assert sentence_text[span.end - 1] == "."


def test_overlap_starts_on_a_word_boundary() -> None:
    text = words(400, 7)
    for span in chunk_spans(text, chunk_chars=200, overlap_chars=50)[1:]:
        assert text[span.start - 1].isspace()


def test_unbreakable_text_is_hard_cut() -> None:
    text = "x" * 1050
    spans = chunk_spans(text, chunk_chars=500, overlap_chars=100)
    assert all(s.end - s.start <= 500 for s in spans)
    assert spans[-1].end == 1050


def test_deterministic() -> None:
    text = words(500, 3)
    assert chunk_spans(text, chunk_chars=250, overlap_chars=40) == chunk_spans(
        text, chunk_chars=250, overlap_chars=40
    )
