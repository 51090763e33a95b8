"""Read documents from disk: a folder of files in the formats of ``ingest.formats``,
one such file, or a BEIR folder.

Loaders only read; they never chunk or embed. Document ids are stable (a file's path
relative to the folder, with ``#row`` for a JSONL/CSV row, or the BEIR ``_id``), so
re-ingesting finds what it stored.

A file that cannot be read (damaged, hostile, too large, not UTF-8, binary) becomes a
``FileError`` naming the path and the reason, and the rest of the folder is still
read. Each file is bounded before it is parsed (``FormatSettings``), so one hostile
file cannot take the process's memory (design/decisions/0035).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import attrs

from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.ingest.documents import Document as Document
from retrieval_mcp.ingest.formats import READERS, FileInput, FormatSettings, UnreadableFile

SUFFIXES = tuple(READERS)
#: Row errors reported per file; past this they are counted.
MAX_ROW_ERRORS = 20


@attrs.frozen
class FileError:
    """A file (or ``file:line`` of a JSONL/CSV file) that was not ingested, and why."""

    path: str
    reason: str


def is_beir_folder(path: Path) -> bool:
    return path.is_dir() and (path / "corpus.jsonl").is_file()


def load_documents(
    path: Path,
    settings: FormatSettings | None = None,
    errors: list[FileError] | None = None,
) -> Iterator[Document]:
    """Documents under ``path``: a BEIR folder, a folder of files, or one file.

    A file that cannot be read is appended to ``errors`` and skipped; with no
    ``errors`` list the first one raises ``InvalidArgument``.
    """
    settings = settings or FormatSettings()
    if not path.exists():
        raise InvalidArgument(f"{path} does not exist", remedy="Pass an existing file or folder.")
    if is_beir_folder(path):
        yield from load_beir_corpus(path / "corpus.jsonl")
    elif path.is_dir():
        yield from load_folder(path, settings, errors)
    elif path.suffix.lower() in READERS:
        yield from read_file(path, path.name, settings, errors)
    else:
        raise InvalidArgument(
            f"{path} is neither a folder nor a file of a known format ({path.suffix or 'none'})",
            remedy="Pass a folder, a BEIR folder (corpus.jsonl) or one file of: "
            + " ".join(SUFFIXES),
        )


def load_folder(
    folder: Path, settings: FormatSettings, errors: list[FileError] | None = None
) -> Iterator[Document]:
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.suffix.lower() in READERS
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        and p.is_file()
    )
    for file in files:
        yield from read_file(file, file.relative_to(folder).as_posix(), settings, errors)


def read_file(
    file: Path,
    doc_id: str,
    settings: FormatSettings,
    errors: list[FileError] | None = None,
) -> Iterator[Document]:
    """The documents of one file; a failure is reported (or raised), never half-read."""
    row_errors: list[FileError] = []

    def on_row_error(line: int, reason: str) -> None:
        row_errors.append(FileError(f"{file}:{line}", reason))

    try:
        data = _bounded_bytes(file, settings.max_file_bytes)
        reader = READERS[file.suffix.lower()]
        stem = file.stem.replace("_", " ").replace("-", " ")
        source = FileInput(doc_id, file.resolve().as_uri(), stem, data, settings)
        del data
        # Whole files at a time: a reader that fails part-way yields nothing.
        documents = list(reader(source, on_row_error))
    except UnreadableFile as exc:
        _report(errors, FileError(str(file), str(exc)))
        return
    except Exception as exc:  # a parsing library's own failure
        _report(errors, FileError(str(file), f"could not be parsed ({type(exc).__name__}: {exc})"))
        return
    for error in row_errors[:MAX_ROW_ERRORS]:
        _report(errors, error)
    if len(row_errors) > MAX_ROW_ERRORS:
        extra = len(row_errors) - MAX_ROW_ERRORS
        _report(errors, FileError(str(file), f"{extra} more rows skipped"))
    yield from documents


def _report(errors: list[FileError] | None, error: FileError) -> None:
    if errors is None:
        raise InvalidArgument(
            f"{error.path}: {error.reason}", remedy="Fix or remove the file, then ingest again."
        )
    errors.append(error)


def _bounded_bytes(file: Path, limit: int) -> bytes:
    size = file.stat().st_size
    if size > limit:
        raise UnreadableFile(
            f"{size / 1048576:,.1f} MiB, over formats.max_file_bytes "
            f"({limit / 1048576:,.1f} MiB); not read"
        )
    with file.open("rb") as handle:
        data = handle.read(limit + 1)  # the file may have grown since stat
    if len(data) > limit:
        raise UnreadableFile(f"grew past formats.max_file_bytes ({limit:,} bytes) while read")
    return data


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
