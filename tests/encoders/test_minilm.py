"""The bundled encoder: offline, unit-length, meaningful, and it counts tokens exactly."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_mcp.encoders.minilm import DIMENSION, MiniLMEncoder, word_piece_floor


def test_embeddings_are_unit_length_and_meaningful(encoder: MiniLMEncoder) -> None:
    vectors = encoder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The boundary layer separates on the wing.",
        ]
    )
    assert vectors.shape == (3, DIMENSION)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert similar > 0.6 > 0.2 > unrelated  # sentence-transformers gives ≈ 0.75 and ≈ 0.05


def test_order_and_batching_do_not_change_embeddings(encoder: MiniLMEncoder) -> None:
    texts = [f"note {i} " * (i + 1) for i in range(20)]
    together = encoder.embed(texts)
    alone = np.vstack([encoder.embed([t]) for t in texts[:3]])
    assert np.allclose(together[:3], alone, atol=1e-4)


def test_token_counts_are_exact_without_padding_or_truncation(encoder: MiniLMEncoder) -> None:
    assert encoder.count_tokens("hello world") == 2
    assert encoder.count_tokens("word " * 400) == 400  # past the model's 128/256 limits
    assert encoder.count_tokens("") == 0


# What the tokenizer treats specially: special tokens matched in raw text (any case),
# characters its normaliser removes (controls, format characters, accents), Unicode
# whitespace it does not split on, CJK it splits per character, ASCII separators.
TRICKY = st.sampled_from(
    [
        "[SEP]",
        "[mask]",
        "[CLS]",
        "[UNK]",
        "[",
        "]",
        " ",
        "\t",
        "\n",
        "\r",
        "\x1f",
        "\x85",
        "\u200b",
        "\u200d",
        "\ufeff",
        "\u0301",
        "\u2028",
        "\xa0",
        "\ufffd",
        "\x00",
        "é",
        "漢字",
        "ﬁ",
        "İ",
        "_",
        ".",
        "-",
        "a",
        "Z9",
        "²",
        "€",
        "x" * 120,
    ]
)


ASCII = st.text(st.characters(max_codepoint=127))  # the floor's fast path


@settings(max_examples=3000)
@given(st.lists(st.one_of(st.text(), ASCII, TRICKY), max_size=40).map("".join))
def test_the_token_floor_never_exceeds_the_count(encoder: MiniLMEncoder, text: str) -> None:
    # The packer skips a chunk uncounted when its floor exceeds what is left of the
    # budget: a floor above the count would drop a chunk that fits.
    count = encoder.count_tokens(text)
    assert word_piece_floor(text) <= count
    assert encoder.token_floor(text) == count  # remembered now: the floor is exact


def test_the_token_floor_is_close_enough_to_skip_counting(encoder: MiniLMEncoder) -> None:
    prose = (
        "An experimental study of a wing in a propeller slipstream was made in order "
        "to determine the spanwise distribution of the lift increase due to slipstream "
        "at different angles of attack of the wing and at different free stream to "
        "slipstream velocity ratios."
    )
    assert 0.7 * encoder.count_tokens(prose) <= word_piece_floor(prose)
    accented = prose.replace("a", "\u00e4")  # the same words off the ASCII path
    assert word_piece_floor(accented) == word_piece_floor(prose)
    assert word_piece_floor("a" * 10_000) == 1 and word_piece_floor("€" * 10_000) == 0
