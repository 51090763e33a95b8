"""Benchmark corpus and queries from the Cranfield collection (SMART format).

Why Cranfield: real technical prose with real queries, small enough to ship in
``/work/shared/data``, and deterministic. Its 1,398 non-empty documents make 2,213
chunks at the default chunking; for bigger stores the documents are repeated
under suffixed ids with a small seeded perturbation (sentence order, a dropped
sentence), so the store holds near-duplicates rather than identical vectors (a
one-sentence document repeats unchanged).

Everything here is a pure function of the inputs and the seed: the same call writes
the same bytes, so a reused state dir is recognised as already ingested.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import attrs

from retrieval_mcp.pipeline.chunking import chunk_spans

CRANFIELD_DIR = Path("/work/shared/data/cranfield")
CRAN_DOCS = CRANFIELD_DIR / "cran.all.1400"
CRAN_QUERIES = CRANFIELD_DIR / "cran.qry"
SEED = 20240601

_FIELD = re.compile(r"^\.([ITABW])\b\s*(.*)$")
_SENTENCE_END = re.compile(r"(?<=\s\.)\s+")


@attrs.frozen
class SmartRecord:
    """One ``.I`` record; ``fields`` maps a field letter to its raw text."""

    id: str
    fields: dict[str, str]


@attrs.frozen
class CorpusInfo:
    path: Path
    documents: int
    chunks: int
    rounds: int


def parse_smart(path: Path) -> list[SmartRecord]:
    """Records of a SMART file, in file order (``.I id`` then ``.X`` fields)."""
    records: list[SmartRecord] = []
    current_id: str | None = None
    fields: dict[str, list[str]] = {}
    field: str | None = None

    def close() -> None:
        if current_id is not None:
            records.append(
                SmartRecord(
                    id=current_id,
                    fields={k: "\n".join(v).strip() for k, v in fields.items()},
                )
            )

    for line in path.read_text("utf-8", errors="replace").splitlines():
        match = _FIELD.match(line)
        if match and match.group(1) == "I":
            close()
            current_id, fields, field = match.group(2).strip(), {}, None
        elif match:
            field = match.group(1)
            fields.setdefault(field, [])
            if match.group(2):
                fields[field].append(match.group(2))
        elif field is not None:
            fields[field].append(line)
    close()
    return records


def _paragraphs(raw: str) -> str:
    """Unwrap Cranfield's hard-wrapped lines; an indented line starts a paragraph."""
    paragraphs: list[list[str]] = [[]]
    for line in raw.splitlines():
        if line.startswith("  ") and paragraphs[-1]:
            paragraphs.append([])
        if line.strip():
            paragraphs[-1].append(line.strip())
    return "\n\n".join(" ".join(p) for p in paragraphs if p)


def _title(raw: str) -> str:
    return " ".join(raw.split()).rstrip(" .")


def _perturb(text: str, rng: random.Random) -> str:
    """A near-duplicate: the opening sentence (Cranfield repeats the title there) stays,
    the others are shuffled and, when there are three or more, one is dropped; the
    paragraph sizes are kept. Dense and BM25 vectors both move a little."""
    paragraphs = [_SENTENCE_END.split(p) for p in text.split("\n\n")]
    sizes = [len(p) for p in paragraphs]
    first, *rest = [s for p in paragraphs for s in p]
    rng.shuffle(rest)
    if len(rest) >= 3:
        del rest[rng.randrange(len(rest))]
        sizes[max(range(len(sizes)), key=sizes.__getitem__)] -= 1
    sentences = [first, *rest]
    out: list[str] = []
    for size in sizes:
        out.append(" ".join(sentences[:size]))
        del sentences[:size]
    return "\n\n".join(p for p in out if p)


def cranfield_rows(
    path: Path = CRAN_DOCS, *, seed: int = SEED
) -> Iterator[tuple[int, dict[str, object]]]:
    """BEIR rows forever: round 0 is Cranfield as is, round r>0 repeats every document
    as ``<id>-r<r>`` with a perturbation seeded by (seed, round, id). Yields (round, row)."""
    records = [r for r in parse_smart(path) if r.fields.get("W", "").strip()]
    round_no = 0
    while True:
        for record in records:
            text = _paragraphs(record.fields["W"])
            doc_id = f"cran-{record.id}"
            if round_no:
                rng = random.Random(f"{seed}/{round_no}/{record.id}")
                text = _perturb(text, rng)
                doc_id = f"{doc_id}-r{round_no}"
            yield (
                round_no,
                {
                    "_id": doc_id,
                    "title": _title(record.fields.get("T", "")),
                    "text": text,
                    "metadata": {"author": _title(record.fields.get("A", "")), "round": round_no},
                },
            )
        round_no += 1


def long_rows(
    join: int, path: Path = CRAN_DOCS, *, seed: int = SEED
) -> Iterator[tuple[int, dict[str, object]]]:
    """``cranfield_rows`` with every ``join`` consecutive documents of a round made one
    (``<first id>+<n>``, their abstracts as paragraphs under the first one's title).

    Why: a Cranfield abstract is ~900 characters, so most of its chunks are short; a
    store of full ~1,000-character prose chunks (what a real corpus gives at the default
    chunking) moves more payload per hit, and that is where per-hit costs show.
    """
    pending: list[dict[str, object]] = []
    for round_no, row in cranfield_rows(path, seed=seed):
        pending.append(row)
        if len(pending) < join:
            continue
        first = pending[0]
        yield (
            round_no,
            {
                "_id": f"{first['_id']}+{join}",
                "title": first["title"],
                "text": "\n\n".join(str(r["text"]) for r in pending),
                "metadata": first["metadata"],
            },
        )
        pending = []


def write_beir_corpus(
    folder: Path,
    chunks: int,
    *,
    chunk_chars: int = 1000,
    overlap_chars: int = 150,
    seed: int = SEED,
    join: int = 1,
) -> CorpusInfo:
    """Write ``folder/corpus.jsonl`` with just enough documents for ``chunks`` chunks.

    Chunks are counted with the server's own ``chunk_spans`` and settings, so the
    store ends up holding ``chunks`` chunks, or at most one document's worth more.
    ``join`` > 1 writes long documents (``long_rows``): nearly every chunk full length.
    """
    folder.mkdir(parents=True, exist_ok=True)
    total = documents = 0
    last_round = 0
    corpus = folder / "corpus.jsonl"
    tmp = corpus.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        rows = cranfield_rows(seed=seed) if join <= 1 else long_rows(join, seed=seed)
        for round_no, row in rows:
            if total >= chunks:
                break
            total += len(
                chunk_spans(str(row["text"]), chunk_chars=chunk_chars, overlap_chars=overlap_chars)
            )
            documents += 1
            last_round = round_no
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    tmp.replace(corpus)
    return CorpusInfo(path=folder, documents=documents, chunks=total, rounds=last_round + 1)


def cranfield_queries(path: Path = CRAN_QUERIES) -> list[str]:
    """The 225 Cranfield queries, whitespace-normalised, in file order."""
    return [" ".join(r.fields["W"].split()) for r in parse_smart(path) if r.fields.get("W")]


def distinct_queries(count: int, *, start: int = 0) -> list[str]:
    """``count`` pairwise-distinct query strings: the Cranfield queries, then numbered
    variants of them ("... (variant 2)") once the 225 are used up.

    ``start`` skips that many positions of the same infinite sequence, so two calls
    with disjoint ranges never share a string (no cache hit across runs).
    """
    base = cranfield_queries()
    out: list[str] = []
    for position in range(start, start + count):
        cycle, index = divmod(position, len(base))
        query = base[index] if cycle == 0 else f"{base[index]} (variant {cycle + 1})"
        out.append(query)
    return out


def repeated_queries(count: int, *, distinct: int = 10) -> list[str]:
    """``count`` queries cycling over the first ``distinct`` Cranfield queries."""
    base = cranfield_queries()[:distinct]
    return [base[i % len(base)] for i in range(count)]


if __name__ == "__main__":
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="write a Cranfield BEIR corpus")
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="cran-")))
    args = parser.parse_args()
    info = write_beir_corpus(args.out, args.chunks)
    print(
        f"{info.documents} documents, {info.chunks} chunks, {info.rounds} round(s) "
        f"-> {info.path / 'corpus.jsonl'}"
    )
