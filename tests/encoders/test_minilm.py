"""The bundled encoder: offline, unit-length, meaningful, and it counts tokens exactly."""

from __future__ import annotations

import numpy as np

from retrieval_mcp.encoders.minilm import DIMENSION, MiniLMEncoder


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
