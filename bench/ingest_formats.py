"""Ingest per format: encoder-alone tokens/s against whole-ingest tokens/s, and the
peak memory of reading the hostile files.

Throughput. For each format, ``--docs`` Cranfield documents are written as files of
that format (``tests/ingest/format_files.py`` makes the PDFs and DOCX; Markdown/reST
get a title and one heading per paragraph, HTML gets navigation and a footer around
an ``<article>``, Python gets one function per paragraph, JSONL/CSV one row per
document). Then, alternating, ``--rounds`` times:

* ``whole``: ``services.ingest_path`` into a fresh embedded store through its WAL:
  read, parse, chunk, sanitise, screen, embed, upsert, commit (the store and its
  encoder are opened before the clock starts);
* ``read``: ``load_documents`` + ``build_chunks`` alone (parse, chunk, sanitise,
  screen: the CPU work ingest adds in front of the encoder);
* ``encoder``: ``MiniLMEncoder.embed`` alone, in groups of 64 (the runner's
  ``BATCH_CHUNKS``), on exactly the texts that ingest embedded
  (``chunk_payload.indexed_text`` of the chunks ``build_chunks`` makes).

Tokens are the word pieces the encoder runs (with [CLS]/[SEP], truncated at 256), so
both rates count the same work; ``ratio`` = whole / encoder (1.0 = ingest adds
nothing to embedding). The best round of each is reported.

Hostile files. Each of ``write_hostile_folder``'s files (100 MB single-line text, a
DOCX declaring ``--bomb-mib`` MiB, a 50,000-deep HTML nesting, a truncated PDF, …)
is read by ``loaders.load_documents`` at the default bounds in its own
subprocess; the report is the process's peak RSS (``ru_maxrss``) after the imports
and a warm-up read of a good file of the same format, and after the hostile one,
plus the per-file error it produced. A last subprocess reads the whole hostile
folder at once.

    .venv/bin/python bench/ingest_formats.py --docs 60 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO))

GROUP = 64
FORMATS = ("txt", "md", "rst", "html", "pdf", "docx", "py", "jsonl", "csv")


def cranfield_docs(count: int) -> list[tuple[str, str, list[str]]]:
    """(id, title, paragraphs) of the first ``count`` Cranfield documents."""
    from corpus import cranfield_rows

    docs: list[tuple[str, str, list[str]]] = []
    for _, row in cranfield_rows():
        text = str(row["text"])
        docs.append((str(row["_id"]), str(row["title"]) or "untitled", text.split("\n\n")))
        if len(docs) == count:
            return docs
    return docs


def write_corpus(folder: Path, fmt: str, docs: list[tuple[str, str, list[str]]]) -> None:
    import csv
    import io

    from tests.ingest.format_files import docx_bytes, pdf_bytes

    folder.mkdir(parents=True)
    if fmt in ("jsonl", "csv"):
        rows = [{"id": i, "title": t, "text": "\n\n".join(p)} for i, t, p in docs]
        if fmt == "jsonl":
            (folder / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
        else:
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=["id", "title", "text"])
            writer.writeheader()
            writer.writerows(rows)
            (folder / "rows.csv").write_text(out.getvalue())
        return
    for doc_id, title, paragraphs in docs:
        heads = [f"Part {k + 1}" for k in range(len(paragraphs))]
        if fmt == "txt":
            body = "\n\n".join(paragraphs)
        elif fmt == "md":
            body = f"# {title}\n\n" + "\n\n".join(
                f"## {h}\n\n{p}" for h, p in zip(heads, paragraphs, strict=True)
            )
        elif fmt == "rst":
            body = f"{title}\n{'=' * len(title)}\n\n" + "\n\n".join(
                f"{h}\n{'-' * len(h)}\n\n{p}" for h, p in zip(heads, paragraphs, strict=True)
            )
        elif fmt == "html":
            body = (
                f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> "
                "<a href='/papers'>Papers</a></nav><article>"
                f"<h1>{title}</h1>"
                + "".join(f"<h2>{h}</h2><p>{p}</p>" for h, p in zip(heads, paragraphs, strict=True))
                + "</article><footer>Copyright. All rights reserved.</footer></body></html>"
            )
        elif fmt == "py":
            body = f'"""{title}."""\n\n' + "\n\n".join(
                f'def part_{k}() -> None:\n    """{p}"""\n' for k, p in enumerate(paragraphs)
            )
        elif fmt == "pdf":
            (folder / f"{doc_id}.pdf").write_bytes(pdf_bytes(paragraphs, title=title))
            continue
        elif fmt == "docx":
            sections = list(zip(heads, paragraphs, strict=True))
            (folder / f"{doc_id}.docx").write_bytes(docx_bytes(title, sections))
            continue
        else:
            raise ValueError(fmt)
        (folder / f"{doc_id}.{fmt}").write_text(body)


def embedded_texts(folder: Path, settings: Any) -> list[str]:
    from retrieval_mcp.backends.chunk_payload import indexed_text
    from retrieval_mcp.ingest.chunk_builder import build_chunks
    from retrieval_mcp.ingest.loaders import load_documents

    errors: list[Any] = []
    texts = [
        indexed_text(c)
        for d in load_documents(folder, settings.formats, errors)
        for c in build_chunks(
            d,
            source="b",
            chunk_chars=settings.chunking.chunk_chars,
            overlap_chars=settings.chunking.overlap_chars,
        )
    ]
    assert not errors, errors
    return texts


def token_total(texts: list[str]) -> int:
    from encoder_throughput import token_counts

    return sum(c + 2 for c in token_counts(texts))


def time_encoder(encoder: Any, texts: list[str]) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(texts), GROUP):
        encoder.embed(texts[i : i + GROUP])
    return time.perf_counter() - t0


def time_whole(folder: Path, state: Path) -> tuple[float, int]:
    import trio

    from retrieval_mcp.services import ingest_path, open_backend
    from retrieval_mcp.settings import load_settings

    shutil.rmtree(state, ignore_errors=True)
    settings = load_settings(state_dir=state, overrides={"logging": {"level": "warning"}})

    async def main() -> tuple[float, int]:
        async with open_backend(settings) as backend:
            t0 = time.perf_counter()
            report = await ingest_path(backend, settings, folder, source="b")
            elapsed = time.perf_counter() - t0
        assert not report.errors, report.errors
        return elapsed, report.chunks_written

    return trio.run(main)


def throughput(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    from retrieval_mcp.encoders.minilm import MiniLMEncoder
    from retrieval_mcp.settings import load_settings

    docs = cranfield_docs(args.docs)
    settings = load_settings(state_dir=work / "settings")
    encoder = MiniLMEncoder()
    encoder.embed(["warm up"])
    rows = []
    for fmt in FORMATS:
        folder = work / "corpus" / fmt
        write_corpus(folder, fmt, docs)
        texts = embedded_texts(folder, settings)
        tokens = token_total(texts)
        enc_s, whole_s, read_s = [], [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            embedded_texts(folder, settings)
            read_s.append(time.perf_counter() - t0)
            enc_s.append(time_encoder(encoder, texts))
            elapsed, chunks = time_whole(folder, work / "state")
            assert chunks == len(texts), (fmt, chunks, len(texts))
            whole_s.append(elapsed)
        row = {
            "format": fmt,
            "files": sum(1 for _ in folder.iterdir()),
            "chunks": len(texts),
            "tokens": tokens,
            "encoder_tok_s": round(tokens / min(enc_s)),
            "whole_tok_s": round(tokens / min(whole_s)),
            "ratio": round(min(enc_s) / min(whole_s), 2),
            "read_chunk_screen_s": round(min(read_s), 2),
            "encoder_s": round(min(enc_s), 2),
            "whole_s": round(min(whole_s), 2),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def rss_one(path: Path, warm: Path | None) -> None:
    """(child) RSS after the imports and a warm-up read, and the peak while reading
    ``path`` (VmHWM reset through clear_refs first: ru_maxrss would carry the
    parent's peak across exec); prints one JSON line."""
    from retrieval_mcp.ingest.loaders import FileError, load_documents

    if warm is not None:
        list(load_documents(warm, errors=[]))
    before = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    errors: list[FileError] = []
    t0 = time.perf_counter()
    docs = list(load_documents(path, errors=errors))
    elapsed = time.perf_counter() - t0
    peak = _status_kib("VmHWM")
    size = sum(p.stat().st_size for p in path.rglob("*")) if path.is_dir() else path.stat().st_size
    print(
        json.dumps(
            {
                "file": path.name,
                "mib_on_disk": round(size / 1048576, 2),
                "rss_before_mib": round(before / 1024, 1),
                "peak_rss_reading_mib": round(peak / 1024, 1),
                "seconds": round(elapsed, 2),
                "documents": len(docs),
                "errors": [e.reason for e in errors],
            }
        )
    )


def hostile(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    from tests.ingest.format_files import MIB, write_good_folder, write_hostile_folder

    folder, good = work / "hostile", work / "good"
    write_hostile_folder(folder, bomb_bytes=args.bomb_mib * MIB)
    write_good_folder(good)
    warm = {".pdf": "turbine.pdf", ".docx": "bees.docx", ".html": "starter.html"}
    rows = []
    targets = [*sorted(folder.iterdir()), folder]
    for target in targets:
        warm_file = good / warm.get(target.suffix, "notes.txt")
        out = subprocess.run(
            [sys.executable, __file__, "--rss-one", str(target), "--warm", str(warm_file)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bomb-mib", type=int, default=1024)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-hostile", action="store_true")
    parser.add_argument("--rss-one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--warm", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_one:
        rss_one(args.rss_one, args.warm)
        return
    from retrieval_mcp.logs import configure_logging

    configure_logging("warning")
    work = Path(tempfile.mkdtemp(prefix="lrm-formats-"))
    try:
        if not args.skip_throughput:
            throughput(args, work)
        if not args.skip_hostile:
            hostile(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
