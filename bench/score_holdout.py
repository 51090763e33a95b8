"""Score the shipped screen once on one hand-written holdout file, per family and language.

Why a script of its own: a frozen holdout is scored once, by the model that ships at
that moment (ADR 0023), and ``injection_eval.py`` reads only the holdouts listed in
its ``HOLDOUT_NUMBERS`` (a new, unscored file is listed there only after this script
has scored it). This one reads any file in its format (``bench/data/screen_holdout*.jsonl``)
and prints detection of the injected passages and the share of its hard negatives
flagged, per layer (rules, learned, either).

    .venv/bin/python bench/score_holdout.py bench/data/screen_holdout8.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from injection_eval import LAYERS, Rate, load_cases, verdict


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    args = parser.parse_args(argv)
    cases = load_cases(args.path)
    counts: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(
        lambda: {layer: [0, 0] for layer in LAYERS}
    )
    missed: list[str] = []
    for case in cases:
        seen = verdict(case.text)
        groups = [("all", case.kind)]
        if case.expect_flagged:
            groups += [("family", case.family or "-"), ("lang", case.lang)]
        for group in groups:
            for layer in LAYERS:
                counts[group][layer][0] += seen.layer(layer)
                counts[group][layer][1] += 1
        if case.expect_flagged and not seen.layer("either"):
            missed.append(f"{case.id} [{case.family}/{case.lang}]")
    print(f"{args.path}: flagged per layer (injected: detection; hard_negative: false positives)")
    print(f"{'group':<28}" + "".join(f"{layer:>20}" for layer in LAYERS))
    for (group, key), layers in sorted(counts.items()):
        cells = "".join(f"{Rate(*layers[layer])!s:>20}" for layer in LAYERS)
        print(f"{group + ':' + key:<28}{cells}")
    print("missed:", ", ".join(missed) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
