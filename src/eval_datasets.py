"""Standard test collections for ``latence-retrieval-mcp eval``: BEIR and classic SMART.

BEIR: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``. SMART (Cranfield):
``cran.all.1400``, ``cran.qry``, ``cranqrel``, with the collection's quirks handled
as its SOURCE.md describes: the n-th query in ``cran.qry`` is qid n (the ``.I``
numbers skip), relevance codes run 1 (best) to 4 and are mapped 1→4, 2→3, 3→2, 4→1,
and -1 → 0 (not relevant). Only queries with at least one relevant document count.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import attrs

from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.ingest.loaders import Document, load_beir_corpus

CRANFIELD_GRADES = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}
_FIELD = re.compile(r"^\.([A-Z])\s*(.*)$")


@attrs.frozen
class EvalDataset:
    name: str
    documents: list[Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_dataset(path: Path) -> EvalDataset:
    if (path / "corpus.jsonl").is_file():
        return load_beir(path)
    if (path / "cran.all.1400").is_file():
        return load_cranfield(path)
    raise InvalidArgument(
        f"{path} is neither a BEIR folder (corpus.jsonl) nor the SMART Cranfield layout",
        remedy="Pass a folder with corpus.jsonl, queries.jsonl and qrels/test.tsv, or "
        "cran.all.1400, cran.qry and cranqrel.",
    )


def _only_judged(qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {q: docs for q, docs in qrels.items() if any(g > 0 for g in docs.values())}


def load_beir(path: Path) -> EvalDataset:
    documents = list(load_beir_corpus(path / "corpus.jsonl"))
    queries: dict[str, str] = {}
    with (path / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                queries[str(row["_id"])] = str(row["text"])
    qrels: dict[str, dict[str, int]] = {}
    split = path / "qrels" / "test.tsv"
    with split.open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        for row in reader:
            if len(row) < 3 or row[0] == "query-id":
                continue
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    qrels = _only_judged(qrels)
    return EvalDataset(
        name=path.name,
        documents=documents,
        queries={q: t for q, t in queries.items() if q in qrels},
        qrels=qrels,
    )


def _smart_records(text: str) -> list[dict[str, str]]:
    records: list[dict[str, str]] = []
    field = ""
    for line in text.splitlines():
        match = _FIELD.match(line)
        if match and match.group(1) == "I":
            records.append({"I": match.group(2).strip()})
            field = ""
        elif match and records:
            field = match.group(1)
            records[-1][field] = match.group(2).strip()
        elif records and field:
            records[-1][field] = (records[-1][field] + " " + line.strip()).strip()
    return records


def load_cranfield(path: Path) -> EvalDataset:
    docs = _smart_records((path / "cran.all.1400").read_text("utf-8", errors="replace"))
    documents = [
        Document(
            doc_id=r["I"], title=r.get("T", ""), text=r.get("W", ""), uri=f"cranfield:{r['I']}"
        )
        for r in docs
    ]
    raw_queries = _smart_records((path / "cran.qry").read_text("utf-8", errors="replace"))
    queries = {str(n): r.get("W", "") for n, r in enumerate(raw_queries, start=1)}
    qrels: dict[str, dict[str, int]] = {}
    for line in (path / "cranqrel").read_text("utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 3:
            qrels.setdefault(parts[0], {})[parts[1]] = CRANFIELD_GRADES.get(int(parts[2]), 0)
    qrels = _only_judged(qrels)
    return EvalDataset(
        name="cranfield",
        documents=documents,
        queries={q: t for q, t in queries.items() if q in qrels},
        qrels=qrels,
    )
