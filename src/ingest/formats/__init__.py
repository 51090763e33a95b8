"""Readers for the formats people keep, one module each, chosen by file extension.

A reader takes one bounded file (``FileInput``) and yields its documents; it raises
``UnreadableFile`` with a reason a person can act on. ``loaders`` turns that (and
anything else a parsing library raises) into a per-file error, and goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from retrieval_mcp.ingest.documents import Document
from retrieval_mcp.ingest.formats.docx import read_docx
from retrieval_mcp.ingest.formats.file_input import FileInput, UnreadableFile, decode_text
from retrieval_mcp.ingest.formats.format_settings import ColumnMapping, FormatSettings
from retrieval_mcp.ingest.formats.html import read_html
from retrieval_mcp.ingest.formats.markdown import read_markdown
from retrieval_mcp.ingest.formats.pdf import read_pdf
from retrieval_mcp.ingest.formats.restructuredtext import read_restructuredtext
from retrieval_mcp.ingest.formats.source_code import SUFFIXES as CODE_SUFFIXES
from retrieval_mcp.ingest.formats.source_code import read_source_code
from retrieval_mcp.ingest.formats.tabular import RowError, read_csv, read_jsonl

__all__ = [
    "READERS",
    "ColumnMapping",
    "FileInput",
    "FormatSettings",
    "Reader",
    "RowError",
    "UnreadableFile",
]

Reader = Callable[[FileInput, RowError], Iterable[Document]]


def read_plain_text(file: FileInput) -> Iterator[Document]:
    from retrieval_mcp.ingest.formats.file_input import bounded_text

    text = bounded_text(decode_text(file.data), file)
    yield Document(doc_id=file.doc_id, title=file.stem, text=text, uri=file.uri)


def _whole(read: Callable[[FileInput], Iterable[Document]]) -> Reader:
    def reader(file: FileInput, on_row_error: RowError) -> Iterable[Document]:
        return read(file)

    return reader


#: Reader by lower-case file extension.
READERS: dict[str, Reader] = {
    ".txt": _whole(read_plain_text),
    ".text": _whole(read_plain_text),
    ".md": _whole(read_markdown),
    ".markdown": _whole(read_markdown),
    ".rst": _whole(read_restructuredtext),
    ".rest": _whole(read_restructuredtext),
    ".html": _whole(read_html),
    ".htm": _whole(read_html),
    ".xhtml": _whole(read_html),
    ".pdf": _whole(read_pdf),
    ".docx": _whole(read_docx),
    ".jsonl": read_jsonl,
    ".ndjson": read_jsonl,
    ".csv": read_csv,
    ".tsv": read_csv,
    **dict.fromkeys(CODE_SUFFIXES, _whole(read_source_code)),
}
