"""MiniLM window vectors for the screen: the encoder's token states pooled over windows.

ADR 0020 planned a semantic layer over the token states of the ingest pass
(``encoders.minilm.token_states``); this module pools them over windows of
``WINDOW_TOKENS`` word pieces (stride half of it), so a window vector costs no encoder
pass beyond the one that embeds the chunk. Used by ``bench/train_screen.py --minilm``
to measure a stacked classifier; features are cached in a temp dir, never in git.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np
import numpy.typing as npt

from retrieval_mcp.screening.cue_lexicon import NAMES
from retrieval_mcp.screening.learned_screen import WindowModel
from retrieval_mcp.screening.window_features import _WORD, cue_mask, normalise

WINDOW_TOKENS = 32
STRIDE = WINDOW_TOKENS // 2


@attrs.frozen
class PassageWindows:
    vectors: npt.NDArray[np.float32]  # windows x 384, unit length
    spans: npt.NDArray[np.int64]  # windows x 2: (start, end) characters in the text


def pool(states: npt.NDArray[np.float32], offsets: npt.NDArray[np.int64]) -> PassageWindows:
    """Mean of each run of WINDOW_TOKENS token states (stride STRIDE), unit length."""
    count = states.shape[0]
    if count == 0:
        return PassageWindows(np.zeros((0, 384), np.float32), np.zeros((0, 2), np.int64))
    starts = list(range(0, max(1, count - STRIDE), STRIDE)) or [0]
    vecs, spans = [], []
    cumulative = np.concatenate((np.zeros((1, states.shape[1])), np.cumsum(states, axis=0)))
    for start in starts:
        end = min(start + WINDOW_TOKENS, count)
        mean = (cumulative[end] - cumulative[start]) / (end - start)
        vecs.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
        spans.append((int(offsets[start, 0]), int(offsets[end - 1, 1])))
    return PassageWindows(np.array(vecs, np.float32), np.array(spans, np.int64))


def extract(texts: Sequence[str], cache_dir: Path, name: str) -> list[PassageWindows]:
    """Window vectors of ``texts``, cached under ``cache_dir`` by name and content."""
    from retrieval_mcp.encoders.minilm import MiniLMEncoder, token_states

    digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:16]
    path = cache_dir / f"{name}-{digest}.pkl"
    if path.exists():
        with path.open("rb") as file:
            cached: list[PassageWindows] = pickle.load(file)
            return cached
    encoder = MiniLMEncoder(threads=2, batch_size=8)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: list[PassageWindows | None] = [None] * len(texts)
    for start in range(0, len(order), 64):
        batch = order[start : start + 64]
        for index, (states, offsets) in zip(
            batch, token_states(encoder, [texts[i] for i in batch]), strict=True
        ):
            out[index] = pool(states, offsets)
    done = [w for w in out if w is not None]
    cache_dir.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        pickle.dump(done, file)
    return done


def cue_bits(text: str) -> npt.NDArray[np.float32]:
    mask = cue_mask(_WORD.findall(normalise(text)))
    return np.array([(mask >> b) & 1 for b in range(len(NAMES))], np.float32)


def window_matrix(
    text: str, windows: PassageWindows, ngram: WindowModel
) -> npt.NDArray[np.float32]:
    """One row per window: vector ⊕ cue bits of its text ⊕ the n-gram model's passage
    score (relative to its threshold, clipped)."""
    score = ngram.score(text)
    rel = (
        np.float32(np.clip((score - ngram.threshold) / 4.0, -3.0, 3.0))
        if np.isfinite(score)
        else np.float32(-3.0)
    )
    rows = []
    for (start, end), vec in zip(windows.spans, windows.vectors, strict=True):
        rows.append(np.concatenate((vec, cue_bits(text[start:end]), [rel])))
    return np.array(rows, np.float32).reshape(-1, 384 + len(NAMES) + 1)
