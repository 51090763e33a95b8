"""The learned layer's semantic half: MiniLM token states scored by two small MLPs.

Why: the n-gram model (``learned_screen.py``) weighs words against the carrier's
vocabulary; a plain instruction in ordinary words ("To the summariser of this paper:
describe it as…") is a meaning, which a sentence encoder represents directly. ADR 0056
sums the two models' scores, each standardised on clean prose, and flags above one
threshold: steadier on clean text than either model alone.

A passage's features are the max and the mean, over its windows of ``WINDOW_TOKENS``
word pieces (stride half of it), of the window's mean token state, unit length: 768
numbers from one forward pass of the bundled encoder (truncated at ``MAX_TOKENS``, as at
ingest). Each text is encoded alone, never padded into a batch: the int8 graph
quantises a batch's activations together, so a text's features would otherwise depend
on its neighbours. Where the encoder is not installed (no ``[dense]`` extra) the layer
is absent and the n-gram model decides alone (``injection_screen.screen``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

MODEL_FILE = "semantic_model.npz"
WINDOW_TOKENS = 32
STRIDE = WINDOW_TOKENS // 2
MAX_TOKENS = 256
WIDTH = 384
FEATURES = 2 * WIDTH
#: An n-gram score of ``-inf`` (a text with no sentence) counts as this when summed.
NGRAM_FLOOR = -30.0
#: The standardised semantic score counts at most this much in the sum (ADR 0056): it
#: bounds the sum, so a low n-gram score settles a passage without the encoder.
SEMANTIC_CAP = 3.0

Array = npt.NDArray[np.float32]
Spans = npt.NDArray[np.int64]
Weights = npt.NDArray[np.float64]


def window_vectors(
    states: Array, offsets: npt.NDArray[np.int64]
) -> tuple[Array, npt.NDArray[np.int64]]:
    """Each window's mean token state (unit length) and its character span."""
    count = states.shape[0]
    if count == 0:
        return np.zeros((0, states.shape[1]), np.float32), np.zeros((0, 2), np.int64)
    starts = list(range(0, max(1, count - STRIDE), STRIDE)) or [0]
    cumulative = np.concatenate((np.zeros((1, states.shape[1])), np.cumsum(states, axis=0)))
    vectors, spans = [], []
    for start in starts:
        end = min(start + WINDOW_TOKENS, count)
        mean = (cumulative[end] - cumulative[start]) / (end - start)
        vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
        spans.append((int(offsets[start, 0]), int(offsets[end - 1, 1])))
    return np.array(vectors, np.float32), np.array(spans, np.int64)


def passage_features(states: Array, offsets: Spans) -> Array:
    """The max and the mean of a passage's window vectors (zeros for an empty one)."""
    vectors, _ = window_vectors(states, offsets)
    if not len(vectors):
        return np.zeros(FEATURES, np.float32)
    return np.concatenate((vectors.max(0), vectors.mean(0))).astype(np.float32)


@attrs.frozen
class SemanticModel:
    """Two one-hidden-layer MLPs over standardised features, and how their mean logit
    is summed with the n-gram model's score (ADR 0056)."""

    mean: Weights  # (FEATURES,) input standardisation
    scale: Weights
    hidden_weights: Weights  # (members, FEATURES, hidden)
    hidden_bias: Weights  # (members, hidden)
    out_weights: Weights  # (members, hidden)
    out_bias: Weights  # (members,)
    #: Clean-prose statistics (Cranfield 467-700) of each score, the sum's weight on
    #: the n-gram side, and the threshold on the sum.
    ngram_mean: float
    ngram_scale: float
    semantic_mean: float
    semantic_scale: float
    ngram_weight: float
    threshold: float
    version: str

    def semantic(self, features: Array) -> npt.NDArray[np.float64]:
        """The members' mean logit, one per row of ``features``."""
        z = (features.astype(np.float64) - self.mean) / self.scale
        logits = [
            np.maximum(z @ w + b, 0.0) @ v + c
            for w, b, v, c in zip(
                self.hidden_weights, self.hidden_bias, self.out_weights, self.out_bias, strict=True
            )
        ]
        return np.asarray(np.mean(logits, axis=0), np.float64)

    def combined(self, ngram: float, semantic: float) -> float:
        """The summed, standardised score that ``threshold`` applies to."""
        n = (max(ngram, NGRAM_FLOOR) - self.ngram_mean) / self.ngram_scale
        s = min((semantic - self.semantic_mean) / self.semantic_scale, SEMANTIC_CAP)
        return self.ngram_weight * n + (1.0 - self.ngram_weight) * s

    @property
    def ngram_gate(self) -> float:
        """The n-gram score at or below which the sum cannot exceed ``threshold`` even
        at the semantic cap: no encoder pass is needed there."""
        rest = self.threshold - (1.0 - self.ngram_weight) * SEMANTIC_CAP
        return self.ngram_mean + self.ngram_scale * rest / self.ngram_weight

    def needs_semantic(self, ngram: float) -> bool:
        """Whether the semantic score could decide a passage with this n-gram score."""
        return max(ngram, NGRAM_FLOOR) > self.ngram_gate


def save(path: Path, model: SemanticModel) -> None:
    arrays: dict[str, Any] = {k: np.asarray(v) for k, v in attrs.asdict(model).items()}
    arrays["version"] = np.str_(model.version)
    np.savez_compressed(path, **arrays)


def load(path: Path | None = None) -> SemanticModel | None:
    """The model at ``path``, or the packaged one; ``None`` when none is packaged."""
    if path is None:
        entry = resources.files("retrieval_mcp.screening") / MODEL_FILE
        if not entry.is_file():
            return None
        with resources.as_file(entry) as file:
            return _read(file)
    return _read(path)


def _read(path: Path) -> SemanticModel:
    with np.load(path, allow_pickle=False) as data:
        values: dict[str, Any] = {name: data[name] for name in data.files}

    def array(name: str) -> Weights:
        return np.asarray(values[name], np.float64)

    model = SemanticModel(
        mean=array("mean"),
        scale=array("scale"),
        hidden_weights=array("hidden_weights"),
        hidden_bias=array("hidden_bias"),
        out_weights=array("out_weights"),
        out_bias=array("out_bias"),
        ngram_mean=float(values["ngram_mean"]),
        ngram_scale=float(values["ngram_scale"]),
        semantic_mean=float(values["semantic_mean"]),
        semantic_scale=float(values["semantic_scale"]),
        ngram_weight=float(values["ngram_weight"]),
        threshold=float(values["threshold"]),
        version=str(values["version"]),
    )
    if model.mean.shape != (FEATURES,) or model.hidden_weights.shape[1] != FEATURES:
        raise ValueError(f"{path}: features of the wrong width")
    return model


@cache
def shipped() -> SemanticModel | None:
    """The packaged model, loaded once per process (``None``: not packaged)."""
    return load()


class _Encoder:
    """The screen's own MiniLM session: one thread, one text per pass (see above)."""

    def __init__(self) -> None:
        from retrieval_mcp.encoders.minilm import MiniLMEncoder

        self._encoder = MiniLMEncoder(max_tokens=MAX_TOKENS, batch_size=1, threads=1)

    def features(self, texts: Sequence[str]) -> Array:
        from retrieval_mcp.encoders.minilm import token_states

        rows = [passage_features(*token_states(self._encoder, [t])[0]) for t in texts]
        return np.array(rows, np.float32).reshape(len(texts), FEATURES)


_lock = threading.Lock()
_loaded: list[_Encoder | None] = []


def encoder() -> _Encoder | None:
    """The screen's encoder, built on first use; ``None`` where it is not installed."""
    with _lock:
        if not _loaded:
            from retrieval_mcp.errors import EncoderUnavailable

            try:
                _loaded.append(_Encoder())
            except (EncoderUnavailable, ImportError):
                _loaded.append(None)
        return _loaded[0]


def features(texts: Sequence[str]) -> Array | None:
    """Passage features of ``texts``, or ``None`` where the encoder is not installed."""
    found = encoder()
    return None if found is None else found.features(texts)
