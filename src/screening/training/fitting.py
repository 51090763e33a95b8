"""Fit the window classifier: logistic regression in numpy, minibatch Adam, one seed.

Rows are windows (``window_features.window_buckets``). A window of an injected
passage is positive when it holds the whole payload, negative when it holds none of
it, and left out when it holds part (a split payload's first sentence alone is not the
injection, and is not clean either). Every window of a clean passage is negative.

A hand-written injected passage does not mark its payload (``payload`` empty). It is a
bag: the window a ``picker`` model scores highest (for a gated model, among those the
gate lets count) is its positive, and the others are left out, since the payload may
span several (multiple-instance learning with one round of labels, ADR 0049).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np
import numpy.typing as npt

from retrieval_mcp.screening.learned_screen import WindowModel
from retrieval_mcp.screening.training.generator import Passage
from retrieval_mcp.screening.window_features import (
    DIMENSION,
    NORM_FLOOR,
    Features,
    features,
    normalise,
    sentences,
    window_buckets,
)


@attrs.frozen
class Rows:
    """Windows as a sparse matrix (CSR parts) with labels."""

    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int32]
    labels: npt.NDArray[np.float32]

    @property
    def count(self) -> int:
        return int(self.labels.size)


def _payload_view(payload: str) -> str:
    return " ".join(sentences(normalise(payload)))


def window_rows(
    passages: Sequence[Passage],
    cue_set: int = 1,
    picker: WindowModel | None = None,
    gated: bool = True,
) -> Rows:
    indptr = [0]
    chunks: list[npt.NDArray[np.int64]] = []
    labels: list[float] = []
    # A weighted passage is the same object repeated (``hand * 48``): its windows are
    # computed once and their arrays shared, so the repeats cost a reference each, not
    # a featurisation and a copy (48 copies of the hand-written sets filled 24 GiB).
    done: dict[int, list[Window]] = {}
    for passage in passages:
        windows = done.get(id(passage))
        if windows is None:
            windows = done[id(passage)] = _windows(passage, cue_set, picker, gated)
        for buckets, label in windows:
            chunks.append(buckets)
            indptr.append(indptr[-1] + buckets.size)
            labels.append(label)
    return Rows(
        np.array(indptr, dtype=np.int64),
        np.concatenate(chunks, dtype=np.int32) if chunks else np.zeros(0, dtype=np.int32),
        np.array(labels, dtype=np.float32),
    )


#: One labelled window: its feature buckets and 1.0 (injection) or 0.0 (clean).
Window = tuple[npt.NDArray[np.int64], float]


def _windows(
    passage: Passage, cue_set: int, picker: WindowModel | None, gated: bool
) -> list[Window]:
    """One passage's labelled windows (see the module's docstring)."""
    found = features(passage.text, cue_set)
    if passage.injected and not passage.payload:
        return _bag(found, picker, gated)
    target = _payload_view(passage.payload) if passage.injected else ""
    rows = window_buckets(found)
    inside = [bool(target) and s in target for s in found.sentences]
    whole = [target in " ".join(found.sentences[a : b + 1]) for (a, b), _ in rows]
    if target and not any(whole):
        # The payload was cut differently in context: its own sentences stand for it.
        whole = [all(inside[a : b + 1]) for (a, b), _ in rows]
    windows: list[Window] = []
    for ((first, last), buckets), has_all in zip(rows, whole, strict=True):
        if not buckets.size:
            continue
        if target and has_all:
            windows.append((buckets, 1.0))
        elif not (target and any(inside[first : last + 1])):
            windows.append((buckets, 0.0))
    return windows


def _bag(found: Features, picker: WindowModel | None, gated: bool) -> list[Window]:
    """The picker's best window of an unmarked injected passage, as its positive; for a
    ``gated`` model the best among those the gate lets count."""
    if picker is None:
        raise ValueError("an injected passage without its payload needs a picker model")
    scores, addressed = picker.window_logits(found)
    if not gated:
        addressed = np.ones_like(addressed)
    if not addressed.any():
        return []  # the gate shuts every window: no weight can make this passage count
    best = int(np.argmax(np.where(addressed, scores, -np.inf)))
    buckets = window_buckets(found)[best][1]
    return [(buckets, 1.0)] if buckets.size else []


@attrs.frozen
class FitSettings:
    epochs: int = 8
    batch: int = 512
    learning_rate: float = 0.02
    l2: float = 1e-6
    positive_weight: float = 1.0
    seed: int = 0


def fit(rows: Rows, settings: FitSettings) -> tuple[npt.NDArray[np.float32], float]:
    """(weights, bias) minimising weighted log loss plus ``l2`` on the weights."""
    rng = np.random.default_rng(settings.seed)
    weights = np.zeros(DIMENSION, dtype=np.float64)
    bias = 0.0
    m, v = np.zeros(DIMENSION), np.zeros(DIMENSION)
    mb, vb = 0.0, 0.0
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    lengths = np.diff(rows.indptr)
    scale = 1.0 / np.sqrt(np.maximum(lengths, NORM_FLOOR))
    step = 0
    for _ in range(settings.epochs):
        order = rng.permutation(rows.count)
        for start in range(0, rows.count, settings.batch):
            batch = order[start : start + settings.batch]
            sizes = lengths[batch]
            offsets = np.cumsum(sizes) - sizes
            members = np.repeat(rows.indptr[batch] - offsets, sizes) + np.arange(sizes.sum())
            owner = np.repeat(np.arange(batch.size), sizes)
            cols = rows.indices[members]
            logits = np.bincount(owner, weights[cols], minlength=batch.size) * scale[batch]
            logits += bias
            probs = 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))
            y = rows.labels[batch]
            sample = np.where(y > 0.5, settings.positive_weight, 1.0)
            residual = (probs - y) * sample / batch.size
            contributions = (residual * scale[batch])[owner]
            grad = np.bincount(cols, contributions, minlength=DIMENSION).astype(np.float64)
            grad = grad + settings.l2 * weights
            grad_b = float(residual.sum())
            step += 1
            m = beta1 * m + (1 - beta1) * grad
            v = beta2 * v + (1 - beta2) * grad * grad
            mb = beta1 * mb + (1 - beta1) * grad_b
            vb = beta2 * vb + (1 - beta2) * grad_b * grad_b
            correction = np.sqrt(1 - beta2**step) / (1 - beta1**step)
            weights -= settings.learning_rate * correction * m / (np.sqrt(v) + eps)
            bias -= settings.learning_rate * correction * mb / (np.sqrt(vb) + eps)
    return weights.astype(np.float32), float(bias)


def threshold_for(clean_scores: Sequence[float], max_fp: float) -> float:
    """The lowest threshold that flags at most ``max_fp`` of ``clean_scores``."""
    ranked = np.sort(np.asarray(clean_scores, dtype=np.float64))[::-1]
    allowed = int(np.floor(max_fp * ranked.size))
    if ranked.size == 0:
        return 0.0
    # Flag strictly above the threshold: sit just above the (allowed+1)-th highest score.
    return float(np.nextafter(ranked[min(allowed, ranked.size - 1)], np.inf))


def balanced_threshold(
    injected: Sequence[float],
    injected_by_rules: Sequence[bool],
    clean: Sequence[float],
    clean_by_rules: Sequence[bool],
    floor: float,
) -> float:
    """The threshold at or above ``floor`` that flags most injections net of clean rows.

    Why net: on text from a hand no template came from, no threshold gives both 95 %
    and 1 %, so an operating point must trade one detection for one false positive
    (ADR 0049). A passage the rules flag counts whatever the threshold; ties go to the
    higher threshold, the one that flags less.
    """
    inj = np.asarray(injected, dtype=np.float64)
    neg = np.asarray(clean, dtype=np.float64)
    inj_rules = np.asarray(injected_by_rules, dtype=np.bool_)
    neg_rules = np.asarray(clean_by_rules, dtype=np.bool_)
    # Every distinct useful threshold sits just below a score, or at the floor.
    points = {floor}
    points.update(float(np.nextafter(s, -np.inf)) for s in np.concatenate((inj, neg)) if s > floor)
    best, best_net = floor, None
    for t in sorted(points, reverse=True):
        net = int(((inj > t) | inj_rules).sum()) - int(((neg > t) | neg_rules).sum())
        if best_net is None or net > best_net:
            best, best_net = t, net
    return best


def capped_threshold(
    clean: Sequence[float], clean_by_rules: Sequence[bool], cap: int, floor: float
) -> float:
    """The lowest threshold at or above ``floor`` that flags at most ``cap`` clean rows.

    Why: a candidate is compared with the shipped model at the shipped model's number of
    false positives on the calibration set (ADR 0049, tenth round), so its operating
    point cannot buy detections with flags the rule would refuse. Rows the rules flag
    count at every threshold; if they alone exceed ``cap``, nothing the learned layer
    does can meet it and the highest score is returned (the layer flags nothing).
    """
    neg = np.asarray(clean, dtype=np.float64)
    by_rules = np.asarray(clean_by_rules, dtype=np.bool_)
    budget = cap - int(by_rules.sum())
    scores = np.sort(neg[~by_rules])[::-1]  # learned-layer scores of the other rows
    if budget < 0 or not scores.size:
        return max(floor, float(scores[0]) if scores.size else floor)
    if budget >= scores.size:
        return floor
    # Flag at most ``budget``: stay at or above the (budget + 1)-th highest score.
    return max(floor, float(scores[budget]))
