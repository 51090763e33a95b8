"""Exploratory: does a MiniLM passage classifier trained on the hand-written hands rank
injections better than the shipped n-gram screen? Prints, writes nothing.

Why: ADR 0024 measured a MiniLM window layer trained on *generated* text and found it
weak; since then ADR 0049 has accumulated thousands of hand-written rows, which is what
made the n-gram model generalise. This asks the same question of the encoder with that
data: each passage is the max and the mean of its 32-word-piece window vectors
(``minilm_windows``, the ingest pass's own token states), fitted with
``minilm_stack.fit`` (logistic regression, or one hidden layer of 64) on every
hand-written set up to ``--train-through`` and Cranfield 1-466 (×3), and read on one
``--test`` hand at matched numbers of flagged non-injected rows, alone and as the max
of both models' scores standardised on Cranfield 467-700 (rules counted in). Features
are cached in ``--cache`` (a temp dir), never in git.

    .venv/bin/python bench/minilm_passage.py --test bench/data/screen_holdout24.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from minilm_stack import fit, window_scores
from minilm_windows import extract
from train_screen import CRAN_DOCS, cranfield_chunks

from retrieval_mcp.screening.injection_screen import screen
from retrieval_mcp.screening.learned_screen import shipped

DATA = Path(__file__).resolve().parent / "data"
MATCHED = (5, 10, 15, 20)
Array = npt.NDArray[np.float64]


def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _features(texts: Sequence[str], cache: Path, name: str) -> npt.NDArray[np.float32]:
    out = []
    for found in extract(texts, cache, name):
        vectors = found.vectors if len(found.vectors) else np.zeros((1, 384), np.float32)
        out.append(np.concatenate((vectors.max(0), vectors.mean(0))))
    return np.array(out, np.float32)


def matched(scores: Array, injected: npt.NDArray[np.bool_]) -> list[int]:
    """Injections above the score of the k-th highest non-injected row, per k."""
    negatives = np.sort(scores[~injected])[::-1]
    return [int((scores[injected] > negatives[k]).sum()) for k in MATCHED]


def _point(
    label: str,
    flags: npt.NDArray[np.bool_],
    injected: npt.NDArray[np.bool_],
    unseen: npt.NDArray[np.bool_],
) -> None:
    print(f"  {label:<36} detected {int(flags[injected].sum())}/{int(injected.sum())}, "
          f"non-injected flagged {int(flags[~injected].sum())}/{int((~injected).sum())}, "
          f"Cranfield 701-1400 {int(unseen.sum())}/{len(unseen)}")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--test", type=Path, required=True)
    parser.add_argument("--train-through", type=int, default=23)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/screen-minilm-passage"))
    args = parser.parse_args(argv)
    numbers = range(2, args.train_through + 1)
    files = [DATA / "screen_holdout.jsonl", *(DATA / f"screen_holdout{n}.jsonl" for n in numbers)]
    files += [DATA / f"screen_train_hand_{x}.jsonl" for x in "abcd"]
    if args.test.resolve() in {f.resolve() for f in files}:
        parser.error("--test must not be a training set")
    train = [r for f in files for r in _rows(f)]
    test = _rows(args.test)
    started = time.perf_counter()
    x_train = _features([r["text"] for r in train], args.cache, "train")
    y_train = np.array([r["kind"] == "injected" for r in train], np.float32)
    cran = {
        name: _features(cranfield_chunks(CRAN_DOCS, docs), args.cache, name)
        for name, docs in (
            ("cran_tr", range(1, 467)),
            ("cran_va", range(467, 701)),
            ("cran_un", range(701, 1401)),
        )
    }
    x_test = _features([r["text"] for r in test], args.cache, args.test.stem)
    injected = np.array([r["kind"] == "injected" for r in test])
    print(f"features: {len(train)} training rows, {time.perf_counter() - started:.0f} s")
    x = np.concatenate([x_train, *[cran["cran_tr"]] * 3])
    y = np.concatenate([y_train, np.zeros(3 * len(cran["cran_tr"]), np.float32)])

    ngram = shipped()
    ngram_test = np.array([ngram.score(r["text"]) for r in test])
    ngram_cran = np.array([ngram.score(t) for t in cranfield_chunks(CRAN_DOCS, range(467, 701))])
    ngram_unseen = np.array([ngram.score(t) for t in cranfield_chunks(CRAN_DOCS, range(701, 1401))])
    rules = np.array([bool(screen(r["text"]).rule_flags) for r in test])

    def standard(scores: Array, reference: Array) -> Array:
        return (scores - np.percentile(reference, 99)) / (np.std(reference) + 1e-9)

    print(f"matched at {MATCHED} flagged non-injected rows of {args.test.name}:")
    print(f"  n-gram (shipped) alone       {matched(ngram_test, injected)}  with rules "
          f"{matched(np.where(rules, np.inf, ngram_test), injected)}")  # fmt: skip
    mlps: list[tuple[Array, Array, Array]] = []  # (test, validation, unseen) scores
    for hidden in (0, 64):
        for seed in (13, 21):
            model = fit(x, y, hidden, seed)
            minilm = window_scores(model, x_test)
            reference = window_scores(model, cran["cran_va"])
            both = np.maximum(standard(minilm, reference), standard(ngram_test, ngram_cran))
            both = np.where(rules, np.inf, both)
            label = f"MiniLM {'LR' if not hidden else f'MLP {hidden}'}, seed {seed}"
            print(f"  {label:<28} {matched(minilm, injected)}  with n-gram + rules "
                  f"{matched(both, injected)}")  # fmt: skip
            if hidden:
                mlps.append((minilm, reference, window_scores(model, cran["cran_un"])))

    # An operating point that costs Cranfield's validation chunks nothing: the MiniLM
    # layer's threshold is its highest score on a 467-700 chunk the n-gram does not flag.
    shipped_flags = rules | (ngram_test > ngram.threshold)
    unseen_ngram = ngram_unseen > ngram.threshold
    print("operating point: any layer, MiniLM threshold at no extra Cranfield 467-700 flag")
    _point("shipped (rules + n-gram)", shipped_flags, injected, unseen_ngram)
    quiet = ngram_cran <= ngram.threshold
    ensemble = tuple(np.mean([m[i] for m in mlps], axis=0) for i in range(3))
    for label, (test_s, valid_s, unseen_s) in (
        *((f"+ MiniLM MLP 64, seed {seed}", m) for seed, m in zip((13, 21), mlps, strict=True)),
        ("+ MiniLM MLP 64, both seeds' mean", ensemble),
    ):
        threshold = float(valid_s[quiet].max())
        _point(
            label,
            shipped_flags | (test_s > threshold),
            injected,
            unseen_ngram | (unseen_s > threshold),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
