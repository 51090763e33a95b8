"""The learned layer of the screen: a linear model over hashed n-gram windows.

``window_model.npz`` (package data, written by ``bench/train_screen.py`` from a seeded
generator, ``screening/training/``) holds one weight per feature bucket, a bias and the
threshold chosen on the validation split. A passage is flagged when any of its windows
(``window_features.py``: one to three consecutive sentences) scores above the
threshold. Numpy only; no encoder pass, so it costs the same on every backend and on
read as at ingest.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

import attrs
import numpy as np
import numpy.typing as npt

from retrieval_mcp.screening.cue_lexicon import CUE_SETS
from retrieval_mcp.screening.window_features import (
    DIMENSION,
    NORM_FLOOR,
    Features,
    cue_buckets,
    features,
    window_buckets,
    window_cues,
    windows,
)

LEARNED_FLAG = "learned:injection"
MODEL_FILE = "window_model.npz"


@attrs.frozen
class WindowModel:
    weights: npt.NDArray[np.float32]
    bias: float
    threshold: float
    version: str
    cue_set: int = 1  # the ``cue_lexicon.CUE_SETS`` entry it was trained with
    #: Whether only windows with an addressee cue count (ADR 0020); models from ADR 0049
    #: on score every window, having learned the addressee from hand-written text.
    gated: bool = True

    def score(self, text: str) -> float:
        """The highest window score of ``text`` (a logit); ``-inf`` when it has none."""
        return self.score_features(features(text, self.cue_set))

    def score_features(self, found: Features) -> float:
        scores, addressed = self.window_logits(found)
        if not self.gated:
            return float(scores.max()) if scores.size else float("-inf")
        return float(scores[addressed].max()) if addressed.any() else float("-inf")

    def window_logits(
        self, found: Features
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        """Each window's logit, and whether the gate lets it count (``windows`` order)."""
        count = len(found.sentences)
        if not count or not found.buckets.size:
            return np.zeros(0), np.zeros(0, dtype=np.bool_)
        per_sentence = np.bincount(found.sentence_of, self.weights[found.buckets], count)
        sizes = np.bincount(found.sentence_of, minlength=count).astype(np.float64)
        totals = np.concatenate(([0.0], np.cumsum(per_sentence)))
        lengths = np.concatenate(([0.0], np.cumsum(sizes)))
        spans = np.array(windows(count), dtype=np.int64)
        sums = totals[spans[:, 1] + 1] - totals[spans[:, 0]]
        lens = lengths[spans[:, 1] + 1] - lengths[spans[:, 0]]
        masks = window_cues(found)
        cue_sums, cue_lens = self._cue_terms(masks)
        scores = (sums + cue_sums) / np.sqrt(np.maximum(lens + cue_lens, NORM_FLOOR)) + self.bias
        # A window with no addressee, no rules, no answer, no secret, no sending and no
        # tool in it is not an instruction to the agent, whatever its n-grams say.
        gate = CUE_SETS[found.cue_set].gate_mask
        addressed = np.array([bool(m & gate) for m in masks], dtype=np.bool_)
        return scores, addressed

    def _cue_terms(
        self, masks: list[int]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per window: the summed weights of its cue features, and how many there are."""
        sums = np.empty(len(masks))
        lens = np.empty(len(masks))
        for i, mask in enumerate(masks):
            buckets = cue_buckets(mask)
            sums[i] = float(self.weights[list(buckets)].sum()) if buckets else 0.0
            lens[i] = len(buckets)
        return sums, lens

    def window_scores(self, text: str) -> list[tuple[float, str]]:
        """Every window's score and text, highest first: why a passage was flagged."""
        found = features(text, self.cue_set)
        out = []
        for (first, last), buckets in window_buckets(found):
            total = float(self.weights[buckets].sum())
            score = total / np.sqrt(max(float(buckets.size), NORM_FLOOR)) + self.bias
            out.append((score, " ".join(found.sentences[first : last + 1])))
        return sorted(out, reverse=True)

    def flagged(self, text: str) -> bool:
        return self.score(text) > self.threshold


def load(path: Path | None = None) -> WindowModel:
    """The model at ``path``, or the one shipped with the package."""
    if path is None:
        with resources.as_file(resources.files("retrieval_mcp.screening") / MODEL_FILE) as file:
            return _read(file)
    return _read(path)


def _read(path: Path) -> WindowModel:
    with np.load(path, allow_pickle=False) as data:
        weights = data["weights"].astype(np.float32)
        if weights.shape != (DIMENSION,):
            raise ValueError(f"{path}: {weights.shape} weights, expected {DIMENSION}")
        cue_set = int(data["cue_set"]) if "cue_set" in data.files else 1
        if cue_set not in CUE_SETS:
            raise ValueError(f"{path}: unknown cue set {cue_set}")
        return WindowModel(
            weights=weights,
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            version=str(data["version"]),
            cue_set=cue_set,
            gated=bool(data["gated"]) if "gated" in data.files else True,
        )


@cache
def shipped() -> WindowModel:
    """The packaged model, loaded once per process."""
    return load()


def save(
    path: Path,
    weights: npt.NDArray[np.float32],
    *,
    bias: float,
    threshold: float,
    version: str,
    cue_set: int = 1,
    gated: bool = True,
) -> None:
    np.savez_compressed(
        path,
        weights=weights.astype(np.float16),
        bias=np.float64(bias),
        threshold=np.float64(threshold),
        version=np.str_(version),
        cue_set=np.int64(cue_set),
        gated=np.bool_(gated),
    )
