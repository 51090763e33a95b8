"""How well the screen separates injected passages from ordinary prose, and how fast.

Both layers are scored apart and together (a passage counts as detected when any
flag is raised): the rules (``screen_rules``), the learned layer (``learned:injection``)
and ``screen`` itself.

Only text the shipped model never learned from says how it does on a new hand, so each
hand-written set is labelled by what the shipped model (ADR 0049, nineteenth round) did
with it, and only the final holdout is a generalisation figure:

* *final holdout* ``frozen27`` (``bench/data/screen_holdout27.jsonl``): written by an
  author who read none of the project's files, committed unread, and scored once by
  this model (125/130 detected; 14/80 hard negatives and 0/50 ordinary non-English
  passages flagged). Reported per family, language and obfuscation, with the share of
  its hard negatives and clean rows flagged.
* *scored once, earlier* ``frozen23`` to ``frozen26``: written and scored the same way
  by this model, each once, before ``frozen27`` (124/130 at 5/80 and 0/50; 121/130 at
  12/80 and 1/50; 123/130 at 6/80 and 0/50; 127/130 at 6/80 and 3/50). Never trained or
  calibrated on; pooled with the final holdout in the line "scored once, pooled" (ADR
  0049, twentieth round, and ADR 0056: frozen24 and frozen26 each chose against a
  candidate that did not ship).
* *calibration (seen)* ``frozen22``: the nineteenth round set the threshold on it (at
  most the previous threshold's 7 flagged rows, and at most 1 % of Cranfield's 348
  validation chunks), so it flatters.
* *seen* ``frozen20`` and ``frozen21``: never trained on; frozen20 set the seventeenth
  round's threshold, frozen21 was scored once by it (121/130) and read while the
  nineteenth round was chosen.
* *trained on* ``frozen`` .. ``frozen19`` and ``bench/data/injection_eval.jsonl``
  (``eval/dev``, ``eval/holdout1``, ``eval/holdout2``, the rules' own set; the rules
  were tuned on dev and holdout1): kept as regression guards, not as estimates. The
  last six were scored once, each by the model shipped then, before they were trained
  on (tenth-round model: frozen14 102/130, frozen15 117/130, frozen16 100/130, frozen17
  119/130; fourteenth-round model: frozen18 123/130, frozen19 113/130).
* *generated* ``validation`` (the generator's validation split, carrier paragraphs
  training never saw) and ``tuned`` (a fresh sample of the training distribution):
  the generator's own distribution, so optimistic.

Clean passages: every chunk of the bundled demo corpus and of the ``.W`` text of the
1,400 Cranfield abstracts (``/work/shared/data/cranfield``, read at run time), cut with
the server's ``chunk_spans`` at its defaults. Cranfield abstracts 1-466 trained the
learned layer as clean prose and 467-700 validated it, so 701-1400 is the honest clean
figure; all three are reported.

Throughput is CPU time (``time.process_time``) per 1,000 characters, best of N.

    .venv/bin/python bench/injection_eval.py
    .venv/bin/python bench/injection_eval.py --json bench/out/injection_eval.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import resources
from pathlib import Path

import attrs

from retrieval_mcp.pipeline.chunking import chunk_spans
from retrieval_mcp.screening import LEARNED_FLAG, screen, screen_rules
from retrieval_mcp.screening.learned_screen import shipped
from retrieval_mcp.screening.training.generator import EXTRAS, passages
from retrieval_mcp.screening.verdict_cache import VerdictCache

DATA = Path(__file__).resolve().parent / "data"
EVAL_SET = DATA / "injection_eval.jsonl"
#: The hand-written holdouts, by number (``1`` is ``screen_holdout.jsonl``, split
#: ``frozen``). Listed, not globbed, so that a new holdout is read (scored) only once it
#: is named here; a listed file that is missing is skipped.
HOLDOUT_NUMBERS = range(1, 28)
HOLDOUT_PATHS = tuple(DATA / f"screen_holdout{'' if n == 1 else n}.jsonl" for n in HOLDOUT_NUMBERS)
HOLDOUTS = tuple(path for path in HOLDOUT_PATHS if path.exists())
#: What the shipped model (ADR 0049, seventeenth round's weights at the nineteenth
#: round's operating point) did with the hand-written sets: its weights were trained on
#: every holdout up to ``TRAINED_THROUGH`` (and on ``EVAL_SET``), its threshold was set
#: on ``CALIBRATION``, and ``FINAL_HOLDOUT`` was scored once after it shipped: the only
#: generalisation figure here, with ``SCORED_ONCE``, the hands it was scored on once
#: before, pooled beside it. The other sets between were read while choosing (seen).
FINAL_HOLDOUT = "frozen27"
SCORED_ONCE = ("frozen23", "frozen24", "frozen25", "frozen26")
CALIBRATION = "frozen22"
TRAINED_THROUGH = 19
CRAN_DOCS = Path("/work/shared/data/cranfield/cran.all.1400")
CHUNK_CHARS = 1000  # config/server.toml defaults
OVERLAP_CHARS = 150
DETECTION_TARGET = 0.95
CLEAN_FP_TARGET = 0.01
TRAIN_SEED = 13  # bench/train_screen.py's default
CRANFIELD_TRAINED, CRANFIELD_VALIDATED = 466, 700
LAYERS = ("rules", "learned", "either")


@attrs.frozen
class Case:
    id: str
    kind: str
    split: str
    family: str | None
    obfuscation: str
    embedded: bool
    expect_flagged: bool
    text: str
    note: str = ""
    lang: str = "en"


@attrs.frozen
class Passage:
    source: str
    id: str
    text: str


@attrs.frozen
class Rate:
    hits: int
    total: int

    @property
    def value(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.hits}/{self.total} = {100 * self.value:.1f}%"


@attrs.frozen
class Verdict:
    rules: bool
    learned: bool

    def layer(self, name: str) -> bool:
        return {"rules": self.rules, "learned": self.learned}.get(name, self.rules or self.learned)


def verdict(text: str) -> Verdict:
    result = screen(text)
    return Verdict(bool(result.rule_flags), LEARNED_FLAG in result.flags)


@attrs.frozen
class Report:
    """Rates keyed by (group, key) then by layer; see ``_print_report``."""

    detection: dict[str, dict[str, dict[str, Rate]]]
    clean_fp: dict[str, dict[str, Rate]]
    hard_negative_fp: dict[str, dict[str, Rate]]
    holdout_clean_fp: dict[str, dict[str, Rate]]
    final_fp: dict[str, dict[str, Rate]]
    frozen_detection: Rate
    #: The final holdout and ``SCORED_ONCE`` pooled: detection, and their non-injected
    #: rows flagged (hard negatives and clean rows together).
    once_detection: Rate
    once_negatives_fp: Rate
    clean_target_fp: Rate
    missed: list[str]
    clean_flagged: list[str]
    hard_wrong: list[str]


def load_cases(path: Path = EVAL_SET) -> list[Case]:
    with path.open(encoding="utf-8") as lines:
        return [Case(**json.loads(line)) for line in lines if line.strip()]


def cranfield_texts(path: Path = CRAN_DOCS) -> Iterator[tuple[str, str]]:
    """(id, ``.W`` text) of each SMART record that has one."""
    record_id, field, body = "", "", list[str]()
    for line in [*path.read_text("utf-8", errors="replace").splitlines(), ".I end"]:
        if line.startswith(".") and len(line) >= 2 and line[1] in "ITABWX":
            if field == "W" and body:
                yield record_id, "\n".join(body)
            field, body = line[1], []
            if field == "I":
                record_id = line[2:].strip()
        elif field == "W":
            body.append(line)


def chunks(source: str, doc_id: str, text: str) -> Iterator[Passage]:
    spans = chunk_spans(text, chunk_chars=CHUNK_CHARS, overlap_chars=OVERLAP_CHARS)
    for ordinal, span in enumerate(spans):
        yield Passage(source, f"{doc_id}#{ordinal}", text[span.start : span.end])


def _cranfield_source(doc_id: str) -> str:
    number = int(doc_id) if doc_id.isdigit() else 0
    if number <= CRANFIELD_TRAINED:
        return "cranfield 1-466 (trained)"
    if number <= CRANFIELD_VALIDATED:
        return "cranfield 467-700 (validated)"
    return "cranfield 701-1400 (unseen)"


def clean_passages(cranfield: Path | None = CRAN_DOCS) -> list[Passage]:
    """Demo corpus chunks, then Cranfield chunks (skipped when ``cranfield`` is None)."""
    out: list[Passage] = []
    demo = resources.files("retrieval_mcp.demo_corpus")
    for entry in sorted(demo.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            out += chunks("demo", entry.name, entry.read_text("utf-8"))
    if cranfield is not None:
        for doc_id, text in cranfield_texts(cranfield):
            out += chunks(_cranfield_source(doc_id), f"cran-{doc_id}", text)
    return out


def generated_cases(count: int, extras: frozenset[str] = EXTRAS) -> list[Case]:
    """``count`` injected passages each from the validation split and the training
    distribution (a fresh seed), as cases; ``extras`` are the generator families the
    shipped model was trained with (all of them since ADR 0046)."""
    out: list[Case] = []
    for split, seed, part in (("validation", TRAIN_SEED + 1, 1), ("tuned", TRAIN_SEED + 7, 0)):
        made = passages(seed, injected_count=count, clean_count=0, part=part, extras=extras)
        for i, p in enumerate(made):
            out.append(
                Case(
                    f"{split}-{i}",
                    "injected",
                    split,
                    p.intent,
                    p.obfuscation,
                    True,
                    True,
                    p.text,
                    lang=p.lang,
                )
            )
    return out


def _natural(key: str) -> tuple[str | int, ...]:
    """Sort key that puts ``frozen2`` before ``frozen10``."""
    parts = re.split(r"(\d+)", key)
    return tuple(int(t) if i % 2 else t for i, t in enumerate(parts))


def _rates(pairs: Iterable[tuple[str, Verdict]]) -> dict[str, dict[str, Rate]]:
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: {n: [0, 0] for n in LAYERS})
    for key, found in pairs:
        for layer in LAYERS:
            counts[key][layer][0] += found.layer(layer)
            counts[key][layer][1] += 1
    ordered = sorted(counts.items(), key=lambda kc: _natural(kc[0]))
    return {k: {n: Rate(*c[n]) for n in LAYERS} for k, c in ordered}


def _split(case: Case) -> str:
    known = case.split.startswith("frozen") or case.split in ("validation", "tuned")
    return case.split if known else f"eval/{case.split}"


def _holdout_number(split: str) -> int:
    return int(split.removeprefix("frozen") or 1)


def role(split: str) -> str:
    """What the shipped model did with a split (``_split``'s name): see ``FINAL_HOLDOUT``."""
    if split == FINAL_HOLDOUT:
        return "final (scored once)"
    if split in SCORED_ONCE:
        return "scored once, earlier"
    if split == CALIBRATION:
        return "calibration (seen)"
    if split in ("validation", "tuned"):
        return "generated"
    if split.startswith("eval/") or _holdout_number(split) <= TRAINED_THROUGH:
        return "trained on"
    if _holdout_number(split) < _holdout_number(CALIBRATION):
        return "seen"
    return "unseen"


def evaluate(cases: Sequence[Case], clean: Sequence[Passage]) -> Report:
    verdicts = {c.id: verdict(c.text) for c in cases}
    injected = [c for c in cases if c.kind == "injected"]
    hard = [c for c in cases if c.kind == "hard_negative"]
    clean_rows = [c for c in cases if c.kind == "clean"]
    clean_verdicts = [(p, verdict(p.text)) for p in clean]

    def by(key: Callable[[Case], str], keep: Callable[[Case], bool]) -> dict[str, dict[str, Rate]]:
        return _rates((key(c), verdicts[c.id]) for c in injected if keep(c))

    def final(c: Case) -> bool:
        return c.split == FINAL_HOLDOUT

    def calibration(c: Case) -> bool:
        return c.split == CALIBRATION

    def trained(c: Case) -> bool:
        return c.split.startswith("frozen") and role(c.split) == "trained on"

    def validation(c: Case) -> bool:
        return c.split == "validation"

    def tuned(c: Case) -> bool:
        return c.split == "tuned"

    trained_splits = sorted({c.split for c in injected if trained(c)}, key=_natural)
    seen = f"{trained_splits[0]}..{trained_splits[-1]}" if trained_splits else "none"
    detection = {
        "by split": by(_split, lambda c: True),
        f"{FINAL_HOLDOUT} final (scored once), by family": by(lambda c: str(c.family), final),
        f"{FINAL_HOLDOUT} final (scored once), by language": by(lambda c: c.lang, final),
        f"{FINAL_HOLDOUT} final (scored once), by obfuscation": by(lambda c: c.obfuscation, final),
        f"{CALIBRATION} calibration (seen), by family": by(lambda c: str(c.family), calibration),
        f"{CALIBRATION} calibration (seen), by language": by(lambda c: c.lang, calibration),
        f"{seen} (trained on), by family": by(lambda c: str(c.family), trained),
        f"{seen} (trained on), by language": by(lambda c: c.lang, trained),
        "eval (trained on), by family": by(
            lambda c: str(c.family), lambda c: _split(c).startswith("eval")
        ),
        "validation, by language": by(lambda c: c.lang, validation),
        "validation, by intent": by(lambda c: str(c.family), validation),
        "tuned, by language": by(lambda c: c.lang, tuned),
        "tuned, by intent": by(lambda c: str(c.family), tuned),
    }
    hard_clean = [c for c in hard if not c.expect_flagged]
    final_negatives = [c for c in (*hard_clean, *clean_rows) if final(c)]
    frozen = [verdicts[c.id].layer("either") for c in injected if final(c)]
    once = {FINAL_HOLDOUT, *SCORED_ONCE}
    once_hits = [verdicts[c.id].layer("either") for c in injected if _split(c) in once]
    once_negatives = [
        verdicts[c.id].layer("either") for c in (*hard_clean, *clean_rows) if _split(c) in once
    ]
    target_clean = [v.layer("either") for _, v in clean_verdicts]
    target_clean += [verdicts[c.id].layer("either") for c in final_negatives]
    clean_pairs = [(p.source, v) for p, v in clean_verdicts]
    row_kind = {"hard_negative": "hard negatives", "clean": "clean rows"}
    return Report(
        detection=detection,
        clean_fp=_rates([*clean_pairs, *(("all clean", v) for _, v in clean_verdicts)]),
        hard_negative_fp=_rates((_split(c), verdicts[c.id]) for c in hard_clean),
        holdout_clean_fp=_rates((_split(c), verdicts[c.id]) for c in clean_rows),
        final_fp=_rates(
            (f"{row_kind[c.kind]}, {lang}", verdicts[c.id])
            for c in final_negatives
            for lang in ("all", c.lang)
        ),
        frozen_detection=Rate(sum(frozen), len(frozen)),
        once_detection=Rate(sum(once_hits), len(once_hits)),
        once_negatives_fp=Rate(sum(once_negatives), len(once_negatives)),
        clean_target_fp=Rate(sum(target_clean), len(target_clean)),
        missed=[
            f"{c.id} [{c.lang}/{c.family}/{c.obfuscation}] {c.text[:90]!r}"
            for c in injected
            if final(c) and not verdicts[c.id].layer("either")
        ],
        clean_flagged=[
            f"{p.source}:{p.id} rules={v.rules} learned={v.learned} {p.text[:70]!r}"
            for p, v in clean_verdicts
            if v.layer("either")
        ],
        hard_wrong=[
            f"{c.id} [{_split(c)}, {role(_split(c))}] rules={verdicts[c.id].rules} "
            f"learned={verdicts[c.id].learned}: {c.text[:80]!r}"
            for c in (*hard_clean, *clean_rows)
            if verdicts[c.id].layer("either")
        ],
    )


def throughput_us_per_kb(
    fn: Callable[[str], object], texts: Sequence[str], *, repeat: int = 3
) -> float:
    """Best of ``repeat`` passes: CPU microseconds of ``fn`` per 1,000 characters."""
    chars = sum(len(t) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for text in texts:
            fn(text)
        best = min(best, time.process_time() - start)
    return best * 1e6 / (chars / 1000)


def on_read_us_per_passage(texts: Sequence[str]) -> dict[str, float]:
    """``chunk_flags`` on chunks with no stored flags: first read (screened) and later
    reads (a verdict-cache hit), per passage."""
    cache = VerdictCache(len(texts) + 1, version="bench")
    out = {}
    for name in ("first read (screened)", "later reads (cached)"):
        start = time.process_time()
        for text in texts:
            cache.flags(text, lambda t: screen(t).flags)
        out[name] = (time.process_time() - start) * 1e6 / max(1, len(texts))
    return out


def _table(title: str, rows: dict[str, dict[str, Rate]], label: Callable[[str], str] = str) -> None:
    print(f"{title}:  {'rules':>20} {'learned':>20} {'either':>20}")
    for key, rates in rows.items():
        print(f"  {label(key):<34} " + " ".join(f"{rates[n]!s:>20}" for n in LAYERS))


def _with_role(split: str) -> str:
    return f"{split} [{role(split)}]"


def _print_report(report: Report, speeds: dict[str, float]) -> None:
    final = f"{FINAL_HOLDOUT} final (scored once)"
    print(f"== {final}: never trained or calibrated on; the figure to quote")
    for title, rows in report.detection.items():
        if title.startswith(final):
            _table(f"detected, {title}", rows)
    _table(f"flagged, {FINAL_HOLDOUT} hard negatives and clean rows", report.final_fp)
    print(f"TARGET {FINAL_HOLDOUT} detected (either layer): {report.frozen_detection}  "
          f"(>= {DETECTION_TARGET:.0%})")  # fmt: skip
    fp = report.clean_target_fp  # two decimals: a budget of 1 % is spent one chunk at a time
    print(f"TARGET clean flagged (Cranfield + demo + {FINAL_HOLDOUT} hard negatives and clean "
          f"rows): {fp.hits}/{fp.total} = {fp.value:.2%}  (<= {CLEAN_FP_TARGET:.0%})")  # fmt: skip
    pooled = "+".join((*SCORED_ONCE, FINAL_HOLDOUT))
    print(f"scored once, pooled ({pooled}): detected {report.once_detection}; their hard "
          f"negatives and clean rows flagged {report.once_negatives_fp}")  # fmt: skip
    if report.missed:
        print(f"missed, {FINAL_HOLDOUT}:")
        for item in report.missed:
            print(f"  {item}")
    print("== seen by the shipped model (trained on, calibration) or generated: optimistic")
    for title, rows in report.detection.items():
        if not title.startswith(final):
            by_split = title == "by split"
            _table(f"detected, {title}", rows, _with_role if by_split else str)
    _table("clean passages flagged", report.clean_fp)
    _table("hard negatives (labelled clean) flagged", report.hard_negative_fp, _with_role)
    _table("clean rows of the holdouts flagged", report.holdout_clean_fp, _with_role)
    for label, items in (
        ("flagged clean", report.clean_flagged),
        ("hard negatives and holdout clean rows flagged", report.hard_wrong),
    ):
        if items:
            print(f"{label}:")
            for item in items:
                print(f"  {item}")
    print("cost (CPU time, best of 3):")
    for name, us in speeds.items():
        print(f"  {name:<40} {us:8.1f} µs per 1,000 chars")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--cranfield", type=Path, default=CRAN_DOCS)
    parser.add_argument("--generated", type=int, default=600, help="per generated split")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    cases = [c for path in (*HOLDOUTS, EVAL_SET) for c in load_cases(path)]
    cases += generated_cases(args.generated)
    clean = clean_passages(args.cranfield if args.cranfield.exists() else None)
    report = evaluate(cases, clean)
    model = shipped()
    sample = [p.text for p in clean[::4]]
    speeds = {
        "rules, clean (every 4th chunk)": throughput_us_per_kb(screen_rules, sample),
        "learned layer, clean": throughput_us_per_kb(model.score, sample),
        "screen (both), clean": throughput_us_per_kb(screen, sample),
        "screen (both), frozen injected": throughput_us_per_kb(
            screen, [c.text for c in cases if c.split.startswith("frozen")]
        ),
    }
    on_read = on_read_us_per_passage(sample)
    sizes = [len(p.text) for p in clean]
    print(f"model {model.version}, threshold {model.threshold:.3f}; {len(clean)} clean passages "
          f"(mean {sum(sizes) / max(1, len(sizes)):.0f} chars), {len(cases)} cases")  # fmt: skip
    _print_report(report, speeds)
    print("on read, a foreign store's passage (µs per passage, CPU time):")
    for name, us in on_read.items():
        print(f"  {name:<40} {us:8.1f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        figures = attrs.asdict(report, value_serializer=_serialise) | {
            "us_per_kb": speeds,
            "on_read_us_per_passage": on_read,
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    ok = (
        report.frozen_detection.value >= DETECTION_TARGET
        and report.clean_target_fp.value <= CLEAN_FP_TARGET
    )
    return 0 if ok else 1


def _serialise(_inst: object, _field: object, value: object) -> object:
    return {"hits": value.hits, "total": value.total} if isinstance(value, Rate) else value


if __name__ == "__main__":
    sys.exit(main())
