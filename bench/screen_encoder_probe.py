"""What the bundled MiniLM's token states give the learned screen (issue 13, item 1).

Pools MiniLM's contextual token states (one forward pass per passage, as ingest runs)
over every window of one to three sentences, fits a logistic regression on the
generated training split (the same generator and seed as ``train_screen.py``, fewer
passages: the encoder is ~100x slower than the n-gram features), picks its threshold
on the validation split with the same false-positive budget, and scores the frozen
holdouts and Cranfield with it, beside the shipped n-gram model. Prints figures only;
it ships nothing.

    .venv/bin/python bench/screen_encoder_probe.py --injected 1500 --clean 1500
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from retrieval_mcp.encoders.minilm import MiniLMEncoder, token_states
from retrieval_mcp.screening.learned_screen import shipped
from retrieval_mcp.screening.training.fitting import threshold_for
from retrieval_mcp.screening.training.generator import passages
from retrieval_mcp.screening.window_features import MAX_SENTENCES

sys.path.insert(0, str(Path(__file__).resolve().parent))
import injection_eval as ev
import train_screen as ts

_END = re.compile(r"(?<=[.!?;:])\s+|\n\s*\n\s*")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _END.finditer(text):
        if text[start : match.start()].strip():
            spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def window_vectors(
    text: str, states: npt.NDArray[np.float32], offsets: npt.NDArray[np.int64]
) -> list[tuple[tuple[int, int], npt.NDArray[np.float32]]]:
    """((start, end) characters, unit mean of the token states) for each window."""
    spans = sentence_spans(text)
    if not spans or not len(states):
        return []
    starts = np.array([s for s, _ in spans])
    owner = np.searchsorted(starts, offsets[:, 0], side="right") - 1
    out = []
    for first in range(len(spans)):
        for last in range(first, min(first + MAX_SENTENCES, len(spans))):
            keep = (owner >= first) & (owner <= last)
            if not keep.any():
                continue
            vector = states[keep].mean(axis=0)
            out.append(((spans[first][0], spans[last][1]), vector / np.linalg.norm(vector)))
    return out


def fit_dense(x: npt.NDArray[np.float32], y: npt.NDArray[np.float32], epochs: int = 300):
    """Full-batch logistic regression by gradient descent with momentum (384 inputs)."""
    w = np.zeros(x.shape[1])
    b = 0.0
    vw = np.zeros_like(w)
    vb = 0.0
    for _ in range(epochs):
        p = 1 / (1 + np.exp(-np.clip(x @ w + b, -30, 30)))
        gw = x.T @ (p - y) / len(y) + 1e-4 * w
        gb = float((p - y).mean())
        vw = 0.9 * vw + gw
        vb = 0.9 * vb + gb
        w -= 2.0 * vw
        b -= 2.0 * vb
    return w, b


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--injected", type=int, default=1500)
    parser.add_argument("--clean", type=int, default=1500)
    parser.add_argument("--validation", type=int, default=400)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    encoder = MiniLMEncoder()
    started = time.perf_counter()

    def windows_of(texts: list[str]):
        return [
            window_vectors(t, s, o)
            for t, (s, o) in zip(texts, token_states(encoder, texts), strict=True)
        ]

    train = passages(args.seed, injected_count=args.injected, clean_count=args.clean, part=0)
    cran_train = ts.cranfield_chunks(ts.CRAN_DOCS, range(1, 160)) if ts.CRAN_DOCS.exists() else []
    texts = [p.text for p in train] + cran_train
    xs, ys = [], []
    for i, found in enumerate(windows_of(texts)):
        payload = train[i].payload if i < len(train) else ""
        at = texts[i].find(payload) if payload else -1
        for (start, end), vector in found:
            if at < 0:
                label = 0.0
            elif start <= at and at + len(payload) <= end:
                label = 1.0
            elif end <= at or start >= at + len(payload):
                label = 0.0
            else:
                continue
            xs.append(vector)
            ys.append(label)
    x, y = np.array(xs), np.array(ys)
    print(f"encoded {len(texts)} training passages, {len(y)} windows ({int(y.sum())} positive) "
          f"in {time.perf_counter() - started:.0f} s")  # fmt: skip
    w, b = fit_dense(x, y)

    def scores(texts: list[str]) -> list[float]:
        return [
            max((float(v @ w + b) for _, v in found), default=-np.inf)
            for found in windows_of(texts)
        ]

    held = passages(
        args.seed + 1, injected_count=args.validation, clean_count=args.validation, part=1
    )
    cran_val = (
        ts.cranfield_chunks(ts.CRAN_DOCS, ts.VALIDATION_CRANFIELD) if ts.CRAN_DOCS.exists() else []
    )
    clean_scores = scores([p.text for p in held if not p.injected] + cran_val)
    threshold = threshold_for(clean_scores, 0.002)
    figures: dict[str, object] = {"threshold": threshold, "windows": len(y)}
    ngram = shipped()
    cases = [c for path in ev.HOLDOUTS for c in ev.load_cases(path)]
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for case, score in zip(cases, scores([c.text for c in cases]), strict=True):
        key = f"{case.split}/{case.kind}"
        by[key][0] += score > threshold
        by[key][1] += ngram.score(case.text) > ngram.threshold
        by[key][2] += (score > threshold) or ngram.score(case.text) > ngram.threshold
        by[key][3] += 1
    unseen = ts.cranfield_chunks(ts.CRAN_DOCS, range(701, 1401)) if ts.CRAN_DOCS.exists() else []
    cran_scores = scores(unseen)
    by["cranfield 701-1400"] = [
        sum(s > threshold for s in cran_scores),
        sum(ngram.score(t) > ngram.threshold for t in unseen),
        sum(
            s > threshold or ngram.score(t) > ngram.threshold
            for s, t in zip(cran_scores, unseen, strict=True)
        ),
        len(unseen),
    ]
    print(f"{'':<28} {'minilm':>8} {'n-gram':>8} {'either':>8} {'of':>6}")
    for key, (m, n, e, total) in sorted(by.items()):
        print(f"{key:<28} {m:>8} {n:>8} {e:>8} {total:>6}")
    figures["rates"] = dict(by)
    print(f"done in {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=float) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
