"""Detection on a scored holdout at matched numbers of false positives, one row per model.

Why: a model's own threshold is one point of a trade-off, and two models at different
thresholds cannot be compared by their figures alone (ADR 0049). This moves each
model's threshold until at most N of the holdout's non-injected rows are flagged (the
rules counted in, as they flag at every threshold) and prints how many injections it
catches there. Read it only on holdouts already scored once: it changes nothing.

    .venv/bin/python bench/screen_matched.py bench/data/screen_holdout16.jsonl \\
        git:5f66303 git:e8c5232 git:66837db /tmp/r12_avg.npz

A model is a file, or ``git:COMMIT`` for the model shipped at that commit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from injection_eval import load_cases

from retrieval_mcp.screening import screen_rules
from retrieval_mcp.screening.learned_screen import WindowModel, load

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = (5, 10, 15, 20, 28)


def model_at(spec: str, scratch: Path) -> WindowModel:
    if not spec.startswith("git:"):
        return load(Path(spec))
    blob = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{spec[4:]}:src/screening/window_model.npz"],
        capture_output=True,
        check=True,
    ).stdout
    path = scratch / f"{spec[4:]}.npz"
    path.write_bytes(blob)
    return load(path)


def caught_at(
    scores: npt.NDArray[np.float64],
    injected: npt.NDArray[np.bool_],
    ruled: npt.NDArray[np.bool_],
    budget: int,
) -> tuple[int, int] | None:
    """(injections caught, rows flagged) at the lowest threshold flagging ≤ budget."""
    for threshold in [*np.unique(scores), np.inf]:
        flagged = (scores > threshold) | ruled
        if int(flagged[~injected].sum()) <= budget:
            return int(flagged[injected].sum()), int(flagged[~injected].sum())
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("holdout", type=Path)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args(argv)
    cases = load_cases(args.holdout)
    injected = np.array([c.expect_flagged for c in cases])
    ruled = np.array([bool(screen_rules(c.text).flags) for c in cases])
    print(f"{args.holdout.name}: {int(injected.sum())} injected, {int((~injected).sum())} not")
    print("| model | " + " | ".join(f"≤ {b} flagged" for b in BUDGETS) + " |")
    print("|---|" + "---:|" * len(BUDGETS))
    with tempfile.TemporaryDirectory() as folder:
        for spec in args.models:
            model = model_at(spec, Path(folder))
            scores = np.array([model.score(c.text) for c in cases])
            cells = []
            for budget in BUDGETS:
                found = caught_at(scores, injected, ruled, budget)
                cells.append("rules alone exceed" if found is None else f"{found[0]} ({found[1]})")
            print(f"| {spec} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
