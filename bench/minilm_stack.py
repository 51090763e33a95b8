"""Measure a MiniLM-stacked screen: window vectors ⊕ cue bits ⊕ the n-gram score.

    .venv/bin/python bench/train_screen.py --minilm    # prints the figures, writes nothing

ADR 0020 planned a semantic layer over the dense encoder's token states and nobody
measured it; ADR 0024 (third round) records what this prints. Windows of
``minilm_windows.WINDOW_TOKENS`` word pieces are pooled from ``token_states`` (the
ingest pass's own states), each row is the unit window vector, the window text's cue
classes and the shipped n-gram model's passage score; a seeded numpy classifier
(logistic regression, or one hidden layer of 64 ReLUs) is fitted on a subsample of the
generated training set plus Cranfield 1-466, and a passage scores its best window. The
threshold is the lowest flagging at most 0.5 % of Cranfield 467-700 with the demo
corpus, and of the generated validation clean passages. Reported: the generated
validation split, Cranfield 701-1400, the demo corpus and ``frozen4``-``frozen6``
(seen). ``frozen7`` is never read here. Extracted features are cached in
``--cache`` (a temp dir), never in git.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from minilm_windows import PassageWindows, extract, window_matrix

from retrieval_mcp.pipeline.chunking import chunk_spans
from retrieval_mcp.screening import screen_rules
from retrieval_mcp.screening.learned_screen import WindowModel, shipped
from retrieval_mcp.screening.training.generator import Passage, passages

DATA = Path(__file__).resolve().parent / "data"
SEEN = ("frozen4", "frozen5", "frozen6")
MAX_REAL_FP = 0.005
HIDDEN = (0, 64)
Array = npt.NDArray[np.float64]


def _demo_chunks() -> list[str]:
    from importlib import resources

    out = []
    for entry in sorted(
        resources.files("retrieval_mcp.demo_corpus").iterdir(), key=lambda e: e.name
    ):
        if entry.name.endswith(".md"):
            text = entry.read_text("utf-8")
            out += [
                text[s.start : s.end]
                for s in chunk_spans(text, chunk_chars=1000, overlap_chars=150)
            ]
    return out


def _holdout(name: str) -> list[dict[str, Any]]:
    path = DATA / f"screen_holdout{name.removeprefix('frozen')}.jsonl"
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _labelled(
    items: Sequence[Passage],
    mats: Sequence[npt.NDArray[np.float32]],
    wins: Sequence[PassageWindows],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Window rows and labels: positive when the window covers at least half of the
    payload or is at least half payload, negative when it touches none of it, left
    out in between (as ``fitting.window_rows`` does for sentences)."""
    rows, labels = [], []
    for item, mat, win in zip(items, mats, wins, strict=True):
        start = item.text.find(item.payload) if item.injected else -1
        if item.injected and start < 0:
            continue
        end = start + len(item.payload)
        for row, (a, b) in zip(mat, win.spans, strict=True):
            overlap = max(0, min(end, b) - max(start, a)) if item.injected else 0
            if overlap == 0:
                rows.append(row)
                labels.append(0.0)
            elif overlap >= 0.5 * min(b - a, end - start):
                rows.append(row)
                labels.append(1.0)
    return np.array(rows, np.float32), np.array(labels, np.float32)


def fit(x: npt.NDArray[np.float32], y: npt.NDArray[np.float32], hidden: int, seed: int) -> Any:
    """Standardised inputs, class-balanced log loss, minibatch Adam, 60 epochs."""
    rng = np.random.default_rng(seed)
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    dim = z.shape[1]
    balance = (1 - y.mean()) / y.mean()
    params: list[Any] = (
        [
            rng.normal(0, dim**-0.5, (dim, hidden)),
            np.zeros(hidden),
            rng.normal(0, hidden**-0.5, hidden),
            0.0,
        ]
        if hidden
        else [np.zeros(dim), 0.0]
    )
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = 0
    for _ in range(60):
        order = rng.permutation(len(y))
        for start in range(0, len(y), 256):
            batch = order[start : start + 256]
            zb, yb = z[batch], y[batch]
            hid = np.maximum(zb @ params[0] + params[1], 0) if hidden else zb
            logit = hid @ params[2] + params[3] if hidden else zb @ params[0] + params[1]
            prob = 1 / (1 + np.exp(-np.clip(logit, -30, 30)))
            r = (prob - yb) * np.where(yb > 0.5, balance, 1.0) / len(batch)
            if hidden:
                back = np.outer(r, params[2]) * (hid > 0)
                grads = [
                    zb.T @ back + 1e-4 * params[0],
                    back.sum(0),
                    hid.T @ r + 1e-4 * params[2],
                    r.sum(),
                ]
            else:
                grads = [zb.T @ r + 1e-4 * params[0], r.sum()]
            step += 1
            for i, g in enumerate(grads):
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                params[i] = params[i] - 0.01 * (m[i] / (1 - 0.9**step)) / (
                    np.sqrt(v[i] / (1 - 0.999**step)) + 1e-8
                )
    return mu, sd, params, hidden


def window_scores(model: Any, x: npt.NDArray[np.float32]) -> Array:
    mu, sd, params, hidden = model
    z = (x - mu) / sd
    if hidden:
        return np.asarray(np.maximum(z @ params[0] + params[1], 0) @ params[2] + params[3])
    return np.asarray(z @ params[0] + params[1])


def _threshold(scores: Array, fraction: float) -> float:
    ordered = np.sort(scores)[::-1]
    k = int(np.floor(fraction * len(ordered)))
    return float(ordered[k]) if k < len(ordered) else float(ordered[-1]) - 1e-6


def run(seed: int, cranfield: dict[str, list[str]], cache: Path, subsample: int) -> dict[str, Any]:
    """Fit and score every variant; the figures as a dict (also printed)."""
    started = time.perf_counter()
    ngram: WindowModel = shipped()
    train = passages(seed, injected_count=subsample, clean_count=subsample, part=0)
    held = passages(seed + 1, injected_count=500, clean_count=500, part=1)
    texts: dict[str, list[str]] = {
        "train_gen": [p.text for p in train],
        "train_cran": cranfield["train"],
        "val_gen": [p.text for p in held],
        "val_cran": cranfield["validation"],
        "demo": _demo_chunks(),
        "cran_unseen": cranfield["unseen"],
    }
    holdouts = {name: _holdout(name) for name in SEEN}
    texts |= {name: [row["text"] for row in rows] for name, rows in holdouts.items()}
    mats: dict[str, list[npt.NDArray[np.float32]]] = {}
    wins: dict[str, list[PassageWindows]] = {}
    for name, items in texts.items():
        wins[name] = extract(items, cache, name)
        mats[name] = [window_matrix(t, w, ngram) for t, w in zip(items, wins[name], strict=True)]
    extracted = time.perf_counter() - started
    cran_items = [Passage(t, False, "cranfield", "en", "none", "") for t in cranfield["train"]]
    x1, y1 = _labelled(train, mats["train_gen"], wins["train_gen"])
    x2, y2 = _labelled(cran_items, mats["train_cran"], wins["train_cran"])
    x, y = np.vstack([x1, x2, x2]), np.concatenate([y1, y2, y2])  # real prose twice
    rules = {name: np.array([bool(screen_rules(t).flags) for t in texts[name]]) for name in SEEN}
    injected = np.array([p.injected for p in held])
    dim = 384
    cue_end = x.shape[1] - 1
    variants = {
        "vector": slice(0, dim),
        "vector+cues": slice(0, cue_end),
        "vector+cues+ngram": slice(0, cue_end + 1),
    }
    figures: dict[str, Any] = {
        "train_windows": len(y),
        "positive": int(y.sum()),
        "extract_s": round(extracted),
    }
    for label, cols in variants.items():
        for hidden in HIDDEN:
            model = fit(x[:, cols], y, hidden, seed)
            score = {
                n: np.array(
                    [window_scores(model, m[:, cols]).max() if len(m) else -1e9 for m in ms]
                )
                for n, ms in mats.items()
                if not n.startswith("train")
            }
            real = np.concatenate([score["val_cran"], score["demo"]])
            threshold = max(
                _threshold(real, MAX_REAL_FP),
                _threshold(score["val_gen"][~injected], MAX_REAL_FP),
            )
            hit = {n: s > threshold for n, s in score.items()}
            row: dict[str, Any] = {
                "threshold": round(threshold, 3),
                "val_gen": [int(hit["val_gen"][injected].sum()), int(injected.sum())],
                "validation_clean": [
                    int(hit["val_gen"][~injected].sum()),
                    int((~injected).sum()),
                ],
                "cranfield_467_700+demo": [
                    int(hit["val_cran"].sum() + hit["demo"].sum()),
                    len(real),
                ],
                "cran_unseen": [
                    int(hit["cran_unseen"].sum()),
                    len(hit["cran_unseen"]),
                ],
                "demo": [int(hit["demo"].sum()), len(hit["demo"])],
            }
            for name in SEEN:
                kinds = np.array([r["kind"] == "injected" for r in holdouts[name]])
                both = hit[name] | rules[name]
                row[name] = [int(both[kinds].sum()), int(kinds.sum())]
                row[f"{name} hard negatives"] = [int(both[~kinds].sum()), int((~kinds).sum())]
            figures[f"{label} h={hidden}"] = row
            print(label, f"h={hidden}", json.dumps(row), flush=True)
    figures["cost_us_per_1000_chars"] = cost(texts["val_cran"][:60], ngram, model, cols)
    print("cost", json.dumps(figures["cost_us_per_1000_chars"]), flush=True)
    figures["total_s"] = round(time.perf_counter() - started)
    return figures


def cost(texts: list[str], ngram: WindowModel, model: Any, cols: slice) -> dict[str, float]:
    """CPU time per 1,000 characters, best of 3: the encoder pass (paid once at ingest
    for the embedding anyway; a foreign store pays it on first read), and the layer on
    top of its token states (pooling, cues, the n-gram score, the classifier)."""
    from minilm_windows import pool

    from retrieval_mcp.encoders.minilm import MiniLMEncoder, token_states

    encoder = MiniLMEncoder(threads=1, batch_size=8)
    chars = sum(len(t) for t in texts) / 1000
    states = token_states(encoder, texts)
    best: dict[str, float] = {"encoder pass": float("inf"), "layer on the states": float("inf")}
    for _ in range(3):
        started = time.process_time()
        token_states(encoder, texts)
        best["encoder pass"] = min(best["encoder pass"], time.process_time() - started)
        started = time.process_time()
        for text, (vectors, offsets) in zip(texts, states, strict=True):
            window_scores(model, window_matrix(text, pool(vectors, offsets), ngram)[:, cols]).max()
        best["layer on the states"] = min(
            best["layer on the states"], time.process_time() - started
        )
    return {k: round(v / chars * 1e6, 1) for k, v in best.items()}
