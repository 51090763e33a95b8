"""How well ``screen`` separates injected passages from ordinary prose, and how fast.

Clean passages: every chunk of the bundled demo corpus and of the ``.W`` text of all
1,400 Cranfield abstracts (read at run time from ``/work/shared/data/cranfield``, not
copied), cut with the server's own ``chunk_spans`` at its default settings. Injected
passages and hard negatives: ``bench/data/injection_eval.jsonl``, one JSON object a
line with ``id``, ``kind`` (``injected`` | ``hard_negative``), ``split``,
``family``, ``obfuscation``, ``embedded`` (inside otherwise normal prose),
``expect_flagged``, ``text`` and, for hard negatives, ``note``.

Splits, in the order they were written: ``dev`` (written first, the rules were tuned
on it), ``holdout1`` (written after the first freeze; scored 67%, then the rules were
generalised on it, so it is tuned too) and ``holdout2`` (written after the second
freeze and never tuned on: the honest estimate for phrasings nobody anticipated).
The targets (>= 95% detected, <= 1% of clean passages flagged) are checked on the
tuned splits; ``holdout2`` is reported beside them.

A passage counts as detected when ``screen`` returns any flag; "family hit" also
requires the flag of the family it was written for. Throughput is CPU time
(``time.process_time``), so a busy machine skews it less than wall time would.

    .venv/bin/python bench/injection_eval.py
    .venv/bin/python bench/injection_eval.py --json bench/out/injection_eval.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from pathlib import Path

import attrs

from retrieval_mcp.pipeline.chunking import chunk_spans
from retrieval_mcp.screening import screen

EVAL_SET = Path(__file__).resolve().parent / "data" / "injection_eval.jsonl"
CRAN_DOCS = Path("/work/shared/data/cranfield/cran.all.1400")
CHUNK_CHARS = 1000  # config/server.toml defaults
OVERLAP_CHARS = 150
DETECTION_TARGET = 0.95
CLEAN_FP_TARGET = 0.01
TUNED_SPLITS = ("dev", "holdout1")


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
class Report:
    detection_by_family: dict[str, Rate]
    family_hit_by_family: dict[str, Rate]
    detection_by_obfuscation: dict[str, Rate]
    detection_by_split: dict[str, Rate]
    tuned_detection: Rate
    detection: Rate
    embedded_detection: Rate
    clean_fp_by_source: dict[str, Rate]
    clean_fp: Rate
    hard_clean_fp: Rate
    hard_flag_detection: Rate
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


def clean_passages(cranfield: Path | None = CRAN_DOCS) -> list[Passage]:
    """Demo corpus chunks, then Cranfield chunks (skipped when ``cranfield`` is None)."""
    passages: list[Passage] = []
    demo = resources.files("retrieval_mcp.demo_corpus")
    for entry in sorted(demo.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            passages += chunks("demo", entry.name, entry.read_text("utf-8"))
    if cranfield is not None:
        for doc_id, text in cranfield_texts(cranfield):
            passages += chunks("cranfield", f"cran-{doc_id}", text)
    return passages


def _rates(pairs: Iterable[tuple[str, bool]]) -> dict[str, Rate]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for key, hit in pairs:
        counts[key][0] += hit
        counts[key][1] += 1
    return {key: Rate(h, t) for key, (h, t) in sorted(counts.items())}


def _rate(hits: Sequence[bool]) -> Rate:
    return Rate(sum(hits), len(hits))


def evaluate(cases: Sequence[Case], clean: Sequence[Passage]) -> Report:
    injected = [c for c in cases if c.kind == "injected"]
    hard = [c for c in cases if c.kind == "hard_negative"]
    flags = {c.id: screen(c.text).flags for c in cases}
    detected = {c.id: bool(flags[c.id]) for c in injected}
    clean_hits = [(p, screen(p.text).flags) for p in clean]
    hard_clean = [c for c in hard if not c.expect_flagged]
    hard_flag = [c for c in hard if c.expect_flagged]
    return Report(
        detection_by_family=_rates((str(c.family), detected[c.id]) for c in injected),
        family_hit_by_family=_rates((str(c.family), c.family in flags[c.id]) for c in injected),
        detection_by_obfuscation=_rates((c.obfuscation, detected[c.id]) for c in injected),
        detection_by_split=_rates((c.split, detected[c.id]) for c in injected),
        tuned_detection=_rate([detected[c.id] for c in injected if c.split in TUNED_SPLITS]),
        detection=_rate([detected[c.id] for c in injected]),
        embedded_detection=_rate([detected[c.id] for c in injected if c.embedded]),
        clean_fp_by_source=_rates((p.source, bool(f)) for p, f in clean_hits),
        clean_fp=_rate([bool(f) for _, f in clean_hits]),
        hard_clean_fp=_rate([bool(flags[c.id]) for c in hard_clean]),
        hard_flag_detection=_rate([bool(flags[c.id]) for c in hard_flag]),
        missed=[f"{c.id} [{c.family}/{c.obfuscation}]" for c in injected if not detected[c.id]],
        clean_flagged=[f"{p.source}:{p.id} {list(f)}" for p, f in clean_hits if f],
        hard_wrong=[
            f"{c.id} expect={c.expect_flagged} flags={list(flags[c.id])}: {c.note}"
            for c in hard
            if bool(flags[c.id]) != c.expect_flagged
        ],
    )


def throughput_us_per_kb(texts: Sequence[str], *, repeat: int = 5) -> float:
    """Best of ``repeat`` passes over ``texts``: CPU microseconds of ``screen`` per 1,000
    characters."""
    chars = sum(len(t) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for text in texts:
            screen(text)
        best = min(best, time.process_time() - start)
    return best * 1e6 / (chars / 1000)


def _print_report(report: Report, speeds: dict[str, float]) -> None:
    print("injected passages, detected (any flag) / family flag present, by family:")
    for family, rate in report.detection_by_family.items():
        print(f"  {family:<16} {rate!s:<22} family hit {report.family_hit_by_family[family]}")
    print("by obfuscation:")
    for name, rate in report.detection_by_obfuscation.items():
        print(f"  {name:<16} {rate}")
    print("by split:")
    for name, rate in report.detection_by_split.items():
        print(f"  {name:<16} {rate}")
    print(f"tuned ({'+'.join(TUNED_SPLITS)})  {report.tuned_detection}   "
          f"(target >= {DETECTION_TARGET:.0%})")  # fmt: skip
    print(f"all injected           {report.detection}")
    print(f"  embedded in prose    {report.embedded_detection}")
    print("clean false positives:")
    for source, rate in report.clean_fp_by_source.items():
        print(f"  {source:<16} {rate}")
    print(f"  all clean            {report.clean_fp}   (target <= {CLEAN_FP_TARGET:.0%})")
    print(f"hard negatives labelled clean, flagged:   {report.hard_clean_fp}")
    print(f"hard negatives labelled flagged, flagged: {report.hard_flag_detection}")
    for label, items in (
        ("missed injected", report.missed),
        ("flagged clean", report.clean_flagged),
        ("hard negatives against their label", report.hard_wrong),
    ):
        if items:
            print(f"{label}:")
            for item in items:
                print(f"  {item}")
    print("throughput (best of 5, CPU time):")
    for name, us in speeds.items():
        print(f"  {name:<16} {us:.1f} µs per 1,000 chars")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--cranfield", type=Path, default=CRAN_DOCS)
    parser.add_argument("--eval-set", type=Path, default=EVAL_SET)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    cases = load_cases(args.eval_set)
    clean = clean_passages(args.cranfield)
    report = evaluate(cases, clean)
    speeds = {
        "clean": throughput_us_per_kb([p.text for p in clean]),
        "clean demo": throughput_us_per_kb([p.text for p in clean if p.source == "demo"]),
        "injected": throughput_us_per_kb([c.text for c in cases if c.kind == "injected"]),
    }
    sizes = [len(p.text) for p in clean]
    print(f"{len(clean)} clean passages (mean {sum(sizes) / len(sizes):.0f} chars), "
          f"{sum(c.kind == 'injected' for c in cases)} injected, "
          f"{sum(c.kind == 'hard_negative' for c in cases)} hard negatives")  # fmt: skip
    _print_report(report, speeds)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        figures = attrs.asdict(report, value_serializer=_serialise) | {"us_per_kb": speeds}
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    ok = (
        report.tuned_detection.value >= DETECTION_TARGET
        and report.clean_fp.value <= CLEAN_FP_TARGET
    )
    return 0 if ok else 1


def _serialise(_inst: object, _field: object, value: object) -> object:
    return {"hits": value.hits, "total": value.total} if isinstance(value, Rate) else value


if __name__ == "__main__":
    sys.exit(main())
