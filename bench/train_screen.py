"""Train the learned screen's window model and write it as package data.

    .venv/bin/python bench/train_screen.py --out /tmp/s13.npz             # seed 13
    .venv/bin/python bench/train_screen.py --seed 21 --out /tmp/s21.npz
    .venv/bin/python bench/train_screen.py --average /tmp/s13.npz /tmp/s21.npz
    #   ^ what ships (ADR 0046): the two seeds' weights averaged, written to
    #     src/screening/window_model.npz with the threshold chosen as below
    .venv/bin/python bench/train_screen.py --out /tmp/m.npz --injected 400 --clean 400

Training passages come from ``retrieval_mcp.screening.training.generator`` (with the
optional families ``--extras``, by default all of them) with ``--seed`` on carrier
part 0; validation passages with ``--seed + 1`` on part 1 (carrier paragraphs training
never saw), plus, when the shared data is there, the chunks of Cranfield abstracts
467-700 as real clean prose (1-466 train, counted ``--cranfield-weight`` times). The
threshold is the lowest that flags at most ``--max-fp`` of the generated validation
passages and none of the Cranfield ones. Nothing here reads the frozen holdouts
(``bench/data/screen_holdout*.jsonl``) or ``bench/data/injection_eval.jsonl`` unless
``--hand-written`` names them: since ADR 0049 the *seen* ones (scored once, retired)
are training text written by other hands; the unscored one never is (ADR 0023).
Same seed, same file. The
first round's model (shipped until ADR 0046) is ``--extras "" --cue-set 1
--cranfield-weight 2`` at seed 13.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from retrieval_mcp.pipeline.chunking import chunk_spans
from retrieval_mcp.screening import screen_rules
from retrieval_mcp.screening.learned_screen import WindowModel, load, save, shipped
from retrieval_mcp.screening.training.fitting import (
    FitSettings,
    balanced_threshold,
    capped_threshold,
    fit,
    threshold_for,
    window_rows,
)
from retrieval_mcp.screening.training.generator import EXTRAS, Passage, passages

ROOT = Path(__file__).resolve().parents[1]
MODEL_OUT = ROOT / "src" / "screening" / "window_model.npz"
CRAN_DOCS = Path("/work/shared/data/cranfield/cran.all.1400")
# Cranfield abstracts 1..466 train (real clean prose), 467..700 validate, 701..1400 are
# only ever reported (bench/injection_eval.py).
TRAIN_CRANFIELD = range(1, 467)
VALIDATION_CRANFIELD = range(467, 701)
#: The generator families the shipped model was trained with (ADR 0046).
SHIPPED_EXTRAS = EXTRAS


def cranfield_chunks(path: Path, docs: range) -> list[str]:
    """Chunks (1,000/150, the server's defaults) of the ``.W`` text of abstracts ``docs``."""
    texts: list[str] = []
    doc, field, body = 0, "", list[str]()
    for line in [*path.read_text("utf-8", errors="replace").splitlines(), ".I 0"]:
        if line.startswith(".") and len(line) >= 2 and line[1] in "ITABWX":
            if field == "W" and body and doc in docs:
                text = "\n".join(body)
                texts += [
                    text[s.start : s.end]
                    for s in chunk_spans(text, chunk_chars=1000, overlap_chars=150)
                ]
            field, body = line[1], []
            if field == "I":
                doc = int(line[2:].strip())
        elif field == "W":
            body.append(line)
    return texts


def hand_written(path: Path) -> list[Passage]:
    """A holdout file's rows as training passages; the payload is not marked (a bag)."""
    out = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            kind, text = row["kind"], row["text"]
            if kind not in ("injected", "hard_negative", "clean") or not isinstance(text, str):
                raise ValueError(f"kind {kind!r}, text of type {type(text).__name__}")
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{number}: not a holdout row ({exc})") from None
        intent = str(row.get("family") or kind)
        lang, obfuscation = str(row.get("lang", "en")), str(row.get("obfuscation", "none"))
        out.append(Passage(text, kind == "injected", intent, lang, obfuscation, ""))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--injected", type=int, default=16000)
    parser.add_argument("--clean", type=int, default=16000)
    parser.add_argument("--validation", type=int, default=1500, help="of each kind")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--l2", type=float, default=1e-6)
    parser.add_argument("--max-fp", type=float, default=0.002)
    parser.add_argument("--cranfield", type=Path, default=CRAN_DOCS)
    parser.add_argument("--out", type=Path, default=MODEL_OUT)
    parser.add_argument(
        "--extras",
        default=",".join(sorted(SHIPPED_EXTRAS)),
        help="comma-separated optional generator families (generator.EXTRAS; ADR 0046)",
    )
    parser.add_argument(
        "--cue-set", type=int, default=2, help="cue_lexicon.CUE_SETS entry (2: ADR 0046)"
    )
    parser.add_argument(
        "--cranfield-weight", type=int, default=8, help="copies of each real clean chunk"
    )
    parser.add_argument(
        "--average",
        nargs="+",
        type=Path,
        help="fit nothing: average these models' weights (same cue set), then choose the "
        "threshold on --seed's validation split as after a fit",
    )
    parser.add_argument("--report", type=Path, help="write the validation figures here (JSON)")
    parser.add_argument(
        "--hand-written",
        nargs="*",
        type=Path,
        default=[],
        help="seen hand-written holdout files (bench/data/screen_holdout*.jsonl) to train on "
        "as well (ADR 0049); never the unscored one",
    )
    parser.add_argument(
        "--hand-weight", type=int, default=4, help="copies of each hand-written passage"
    )
    parser.add_argument(
        "--ungated",
        action="store_true",
        help="every window counts, not only those with an addressee cue (ADR 0049)",
    )
    parser.add_argument(
        "--calibrate",
        type=Path,
        help="a seen holdout not trained on, from another hand: the threshold is set on it "
        "(see --operating-point)",
    )
    parser.add_argument("--pooled-fp", type=float, default=0.01)
    parser.add_argument(
        "--operating-point",
        choices=("balanced", "pooled", "capped"),
        default="balanced",
        help="balanced: most --calibrate injections net of its clean rows flagged, at no "
        "more than --pooled-fp of Cranfield 467-700 or the distinct generated clean; "
        "pooled: at most --pooled-fp of all three pooled; capped: at most --max-flagged "
        "of --calibrate's non-injected rows flagged, same floor (ADR 0049)",
    )
    parser.add_argument(
        "--floor",
        choices=("both", "cranfield", "screen"),
        default="both",
        help="the lowest threshold --calibrate may choose: at most --pooled-fp of Cranfield "
        "467-700 and of the distinct generated clean (both), or of Cranfield alone "
        "(ADR 0049, twelfth round: the generator's clean text is not the prose served), "
        "or of Cranfield alone flagged by either layer, the rules counted in (screen; "
        "thirteenth round: the floor checks what ship rule (2) checks)",
    )
    parser.add_argument(
        "--cranfield-max-flagged",
        type=int,
        help="--floor screen: the most Cranfield 467-700 chunks either layer may flag "
        "(default: --pooled-fp of them; ADR 0049, fourteenth round: the shipped model's count)",
    )
    parser.add_argument(
        "--max-flagged",
        type=int,
        default=0,
        help="--operating-point capped: the most non-injected --calibrate rows flagged",
    )
    parser.add_argument(
        "--picker",
        type=Path,
        help="the model that picks a hand-written injected passage's positive window "
        "(default: the shipped one)",
    )
    parser.add_argument(
        "--minilm",
        action="store_true",
        help="measure the MiniLM-stacked screen (bench/minilm_stack.py); writes no model",
    )
    parser.add_argument("--minilm-subsample", type=int, default=1200, help="of each kind")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/screen-minilm-cache"))
    args = parser.parse_args(argv)
    # A ceiling that cannot apply, or a count below zero, would train for minutes and
    # write a model on an operating point nobody asked for: refuse it up front.
    if args.max_flagged < 0 or (args.cranfield_max_flagged or 0) < 0:
        parser.error("--max-flagged and --cranfield-max-flagged count rows: 0 or more")
    if args.cranfield_max_flagged is not None and args.floor != "screen":
        parser.error("--cranfield-max-flagged applies to --floor screen only")
    if args.floor == "screen" and not args.cranfield.exists():
        parser.error(f"--floor screen reads Cranfield 467-700: {args.cranfield} is missing")
    if args.minilm:
        import minilm_stack

        cranfield = {
            "train": cranfield_chunks(args.cranfield, TRAIN_CRANFIELD),
            "validation": cranfield_chunks(args.cranfield, VALIDATION_CRANFIELD),
            "unseen": cranfield_chunks(args.cranfield, range(701, 1401)),
        }
        figures = minilm_stack.run(args.seed, cranfield, args.cache, args.minilm_subsample)
        if args.report:
            args.report.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        return 0

    extras = frozenset(e for e in args.extras.split(",") if e)
    started = time.perf_counter()
    if args.average:
        members = [load(p) for p in args.average]
        if {m.cue_set for m in members} != {args.cue_set}:
            parser.error("--average: every model must use --cue-set")
        if {m.gated for m in members} != {not args.ungated}:
            parser.error("--average: every model must be gated, or every one --ungated")
        weights = np.mean([m.weights for m in members], axis=0).astype(np.float32)
        bias = float(np.mean([m.bias for m in members]))
        weights = weights.astype(np.float16).astype(np.float32)
        version = "avg(" + ",".join(m.version for m in members) + ")"
        return _finish(args, extras, weights, bias, version, started)
    train = passages(
        args.seed, injected_count=args.injected, clean_count=args.clean, part=0, extras=extras
    )
    if args.cranfield.exists():
        real = cranfield_chunks(args.cranfield, TRAIN_CRANFIELD)
        # Real prose counts eight times (by default): it is what the carriers only imitate.
        train += [Passage(t, False, "cranfield", "en", "none", "") for t in real] * (
            args.cranfield_weight
        )
    hand = [p for path in args.hand_written for p in hand_written(path)]
    train += hand * args.hand_weight
    picker = load(args.picker) if args.picker else (shipped() if hand else None)
    if picker is not None and picker.cue_set != args.cue_set:
        parser.error("--picker must use --cue-set")
    rows = window_rows(train, args.cue_set, picker, gated=not args.ungated)
    elapsed = time.perf_counter() - started
    positive = int(rows.labels.sum())
    print(
        f"train: {len(train)} passages, {rows.count} windows ({positive} positive), {elapsed:.0f} s"
    )
    settings = FitSettings(epochs=args.epochs, seed=args.seed, l2=args.l2)
    weights, bias = fit(rows, settings)
    weights = weights.astype(np.float16).astype(np.float32)  # as shipped
    print(f"fitted in {time.perf_counter() - started:.0f} s")
    version = f"seed{args.seed}-n{args.injected}+{args.clean}-e{args.epochs}-l2{args.l2:g}"
    if extras:
        version += "-x" + "+".join(sorted(extras))
    if args.cranfield_weight != 8:
        version += f"-r{args.cranfield_weight}"
    if args.cue_set != 1:
        version += f"-c{args.cue_set}"
    if hand:
        version += f"-h{len(hand)}x{args.hand_weight}"
    if args.ungated:
        version += "-u"
    return _finish(args, extras, weights, bias, version, started)


def _finish(
    args: argparse.Namespace,
    extras: frozenset[str],
    weights: npt.NDArray[np.float32],
    bias: float,
    version: str,
    started: float,
) -> int:
    """Choose the threshold on the validation split, write the model, print figures."""
    model = WindowModel(
        weights, bias, threshold=0.0, version="", cue_set=args.cue_set, gated=not args.ungated
    )
    held = passages(
        args.seed + 1,
        injected_count=args.validation,
        clean_count=args.validation,
        part=1,
        extras=extras,
    )
    real = cranfield_chunks(args.cranfield, VALIDATION_CRANFIELD) if args.cranfield.exists() else []
    generated_clean = [model.score(p.text) for p in held if not p.injected]
    real_clean = [model.score(t) for t in real]
    # At most --max-fp of the generated clean passages, and none of the real ones: above
    # the best of n real chunks, an unseen one lands with probability about 1 / (n + 1).
    threshold = threshold_for(generated_clean, args.max_fp)
    if real_clean:
        threshold = max(threshold, threshold_for(real_clean, 0.0))
    clean_scores = generated_clean + real_clean
    calibration: dict[str, object] = {}
    if args.calibrate:
        # ADR 0049: a seen hand-written holdout the model did not train on stands for
        # text from another hand; its clean rows join the pool the threshold is set on.
        rows = hand_written(args.calibrate)
        hand_clean = [model.score(p.text) for p in rows if not p.injected]
        hand_injected = [model.score(p.text) for p in rows if p.injected]
        if args.operating_point == "pooled":
            clean_scores = generated_clean + real_clean + hand_clean
            threshold = threshold_for(clean_scores, args.pooled_fp)
        else:
            # Generated clean passages share carrier sentences, so their top windows
            # repeat (583 distinct in 1,500): count each distinct score once.
            distinct = sorted(set(generated_clean))
            floor = threshold_for(real_clean, args.pooled_fp)
            if args.floor == "screen":
                # Rule (2) counts a chunk either layer flags: so does this floor.
                real_by_rules = [bool(screen_rules(t).flags) for t in real]
                ceiling = (
                    args.cranfield_max_flagged
                    if args.cranfield_max_flagged is not None
                    else int(np.floor(args.pooled_fp * len(real)))
                )
                floor = capped_threshold(real_clean, real_by_rules, ceiling, -np.inf)
            if args.floor == "both":
                floor = max(floor, threshold_for(distinct, args.pooled_fp))
            clean_by_rules = [bool(screen_rules(p.text).flags) for p in rows if not p.injected]
            if args.operating_point == "capped":
                threshold = capped_threshold(hand_clean, clean_by_rules, args.max_flagged, floor)
            else:
                threshold = balanced_threshold(
                    hand_injected,
                    [bool(screen_rules(p.text).flags) for p in rows if p.injected],
                    hand_clean,
                    clean_by_rules,
                    floor,
                )
        hits = [x > threshold for x in hand_injected]
        calibration = {
            "calibrate": str(args.calibrate),
            "calibrate_detection": [sum(hits), len(hits)],
            "calibrate_clean_flagged": [sum(x > threshold for x in hand_clean), len(hand_clean)],
        }
    by_key: dict[str, list[bool]] = defaultdict(list)
    for p in held:
        if p.injected:
            hit = model.score(p.text) > threshold
            for key in (
                "all",
                f"intent:{p.intent}",
                f"lang:{p.lang}",
                f"obfuscation:{p.obfuscation}",
            ):
                by_key[key].append(hit)
    figures = {
        "seed": args.seed,
        "threshold": threshold,
        "validation_clean_fp": float(np.mean(np.array(clean_scores) > threshold)),
        "validation_clean": len(clean_scores),
        "validation_cranfield_chunks": len(real),
        "validation_detection": {k: [sum(v), len(v)] for k, v in sorted(by_key.items())},
        **calibration,
    }
    save(
        args.out,
        weights,
        bias=bias,
        threshold=threshold,
        version=version,
        cue_set=args.cue_set,
        gated=not args.ungated,
    )
    print(json.dumps(figures, indent=1))
    if args.report:
        args.report.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    size, elapsed = args.out.stat().st_size / 1e6, time.perf_counter() - started
    print(f"wrote {args.out} ({size:.2f} MB) in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
