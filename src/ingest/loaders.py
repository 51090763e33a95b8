"""Read documents from disk: a folder of Markdown/text files, or a BEIR folder.

Loaders only read; they never chunk or embed. Document ids are stable (a file's path
relative to the folder, or the BEIR ``_id``), so re-ingesting finds what it stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from retrieval_mcp.errors import InvalidArgument

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.MULTILINE)


@attrs.frozen
class Document:
    doc_id: str
    title: str
    text: str
    uri: str = ""
    metadata: dict[str, Any] = attrs.field(factory=dict, hash=False)


def is_beir_folder(path: Path) -> bool:
    return path.is_dir() and (path / "corpus.jsonl").is_file()


def load_documents(path: Path) -> Iterator[Document]:
    """Documents under ``path``: a BEIR folder, a folder of text files, or one file."""
    if not path.exists():
        raise InvalidArgument(f"{path} does not exist", remedy="Pass an existing file or folder.")
    if is_beir_folder(path):
        yield from load_beir_corpus(path / "corpus.jsonl")
    elif path.is_dir():
        yield from load_text_folder(path)
    elif path.suffix.lower() in TEXT_SUFFIXES:
        yield _text_document(path, path.name)
    else:
        raise InvalidArgument(
            f"{path} is neither a folder nor a {'/'.join(TEXT_SUFFIXES)} file",
            remedy="Pass a folder of .md/.txt files, a BEIR folder (corpus.jsonl) or one file.",
        )


def load_text_folder(folder: Path) -> Iterator[Document]:
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in TEXT_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    for file in files:
        yield _text_document(file, file.relative_to(folder).as_posix())


def _text_document(file: Path, doc_id: str) -> Document:
    text = file.read_text("utf-8", errors="replace")
    heading = _HEADING.search(text) if file.suffix.lower() != ".txt" else None
    title = heading.group(1) if heading else file.stem.replace("_", " ").replace("-", " ")
    return Document(doc_id=doc_id, title=title, text=text, uri=file.resolve().as_uri())


def load_beir_corpus(corpus: Path) -> Iterator[Document]:
    with corpus.open("r", encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                doc_id = str(row["_id"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InvalidArgument(
                    f"{corpus}:{line_no}: not a BEIR corpus row ({exc})",
                    remedy='Each line must be JSON with "_id", "text" and optional "title".',
                ) from exc
            metadata = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
            yield Document(
                doc_id=doc_id,
                title=str(row.get("title") or ""),
                text=str(row.get("text") or ""),
                uri=f"{corpus.resolve().as_uri()}#{doc_id}",
                metadata=metadata,
            )
