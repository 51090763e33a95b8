"""Score candidate window models side by side on what a round may look at.

Why a script of its own: ``injection_eval.py`` scores only the shipped model, and a
round must compare candidates before one ships. For each model file (default: the
shipped one) this prints one row of the candidates table — generated validation
detection (the first round's generator, seed 14, 500 injected), detection on the
seen holdouts ``frozen4``-``frozen27``, the share of their hard negatives flagged, and
Cranfield 701-1400 and demo-corpus false positives — with the rules counted in (a
passage is flagged when either layer flags it), then, with ``--detail``, each model's
``frozen8`` figures per family and language and the hard negatives it flags. The
rules run once per text; only the learned layer changes.

    .venv/bin/python bench/compare_screen.py                       # the shipped model
    .venv/bin/python bench/compare_screen.py /tmp/a.npz /tmp/b.npz --detail

It reads the seen holdouts only (``frozen4``–``frozen27``; frozen9 was scored once at
ad6a011, frozen10 at 5f66303, frozen11 at ce6194f, frozen12 at e8c5232, frozen13 at
74bf9ca, frozen14 at 8e24482, frozen15 at ea61c3a, frozen16 at 853ec99, frozen17 at
561681f, frozen18 at 8257ce9, frozen19 at e57437e, frozen20 at 92337ab, frozen21 at
a08b75f, frozen22 at 9502f82, frozen23 at 327b75e, frozen24 at d2f5fba, frozen25 at
f4b589d, frozen26 at 9a27328, frozen27 at 43549a4). In ADR 0049's seventeenth round the
candidates train on ``frozen``–``frozen19`` and the hand-written training sets (their
columns there are training figures) and are calibrated on frozen20.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from injection_eval import CRAN_DOCS, DATA, Case, clean_passages, generated_cases, load_cases

from retrieval_mcp.screening import screen_rules
from retrieval_mcp.screening.learned_screen import WindowModel, load, shipped

SEEN = tuple(f"frozen{n}" for n in range(4, 28))
HARD = tuple(f"frozen{n}" for n in range(5, 28))  # frozen9-27: clean non-English too


def _holdout(name: str) -> list[Case]:
    number = name.removeprefix("frozen")
    return load_cases(DATA / f"screen_holdout{number}.jsonl")


def _cost_us_per_kb(model: WindowModel, texts: Sequence[str]) -> float:
    chars = sum(len(t) for t in texts)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for text in texts:
            model.score(text)
        best = min(best, time.process_time() - start)
    return best * 1e6 / (chars / 1000)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--generated", type=int, default=500)
    parser.add_argument("--detail", action="store_true")
    args = parser.parse_args(argv)

    holdouts = {name: _holdout(name) for name in SEEN}
    # The first round's generator (no extras): one yardstick for every candidate, whatever
    # families it was trained with.
    cases = generated_cases(args.generated, extras=frozenset())
    validation = [c for c in cases if c.split == "validation"]
    clean = clean_passages(CRAN_DOCS if CRAN_DOCS.exists() else None)
    unseen = [p.text for p in clean if p.source == "cranfield 701-1400 (unseen)"]
    demo = [p.text for p in clean if p.source == "demo"]
    texts = {c.text for cases in holdouts.values() for c in cases}
    texts |= {c.text for c in validation} | set(unseen) | set(demo)
    rules = {t: bool(screen_rules(t).flags) for t in texts}
    sample = [p.text for p in clean[::4]]

    models = [(str(p), load(p)) for p in args.models] or [("shipped", shipped())]
    header = ["model", "threshold", "validation", *SEEN, "hard neg. " + "/".join(HARD)]
    print(" | ".join([*header, "Cranfield 701-1400", "demo", "µs/1k chars"]))
    for label, model in models:
        scores = {t: model.score(t) for t in texts}

        def flagged(text: str, m: WindowModel = model, s: dict[str, float] = scores) -> bool:
            return rules[text] or s[text] > m.threshold

        def count(items: Sequence[str]) -> str:
            return f"{sum(flagged(t) for t in items)}/{len(items)}"

        cells = [label, f"{model.threshold:.3f}", count([c.text for c in validation])]
        for name in SEEN:
            cells.append(count([c.text for c in holdouts[name] if c.expect_flagged]))
        hard = [count([c.text for c in holdouts[n] if not c.expect_flagged]) for n in HARD]
        cells += [", ".join(hard), count(unseen), count(demo)]
        cells.append(f"{_cost_us_per_kb(model, sample):.0f}")
        print(" | ".join(cells), flush=True)
        if args.detail:
            groups: dict[str, list[bool]] = defaultdict(list)
            for case in holdouts["frozen8"]:
                if case.expect_flagged:
                    hit = flagged(case.text)
                    groups[f"family:{case.family}"].append(hit)
                    groups[f"lang:{case.lang}"].append(hit)
            rates = (f"{k} {sum(v)}/{len(v)}" for k, v in sorted(groups.items()))
            print("  frozen8: " + ", ".join(rates))
            for name in HARD:
                for case in holdouts[name]:
                    if not case.expect_flagged and flagged(case.text):
                        print(f"  FP {case.id} [{case.lang}] {case.text[:90]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
