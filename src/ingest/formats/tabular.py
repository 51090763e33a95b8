"""JSONL and CSV/TSV: one document per row, through the column mapping
(``formats.columns``: which column is the text, the title, the id, the metadata).

A bad row is reported with its line and the rest of the file is still read.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from retrieval_mcp.ingest.documents import Document
from retrieval_mcp.ingest.formats.file_input import (
    FileInput,
    UnreadableFile,
    check_text_chars,
    decode_text,
)
from retrieval_mcp.ingest.formats.format_settings import ColumnMapping

#: Called with (line, reason) for each row that is skipped.
RowError = Callable[[int, str], None]


def _document(
    file: FileInput, row: Mapping[str, Any], line: int, columns: ColumnMapping
) -> Document:
    text = row.get(columns.text)
    if not isinstance(text, str) or not text.strip():
        raise UnreadableFile(f"no text in column {columns.text!r}")
    check_text_chars(len(text), file)
    row_id = row.get(columns.id)
    key = str(row_id) if row_id not in (None, "") else f"line{line}"
    title = row.get(columns.title)
    used = {columns.text, columns.title, columns.id}
    if columns.metadata:
        metadata = {k: row[k] for k in columns.metadata if k in row}
    else:
        metadata = {k: v for k, v in row.items() if k not in used and k is not None}
    return Document(
        doc_id=f"{file.doc_id}#{key}",
        title=str(title) if title not in (None, "") else f"{file.stem} {key}",
        text=text,
        uri=f"{file.uri}#{key}",
        metadata=metadata,
    )


def read_jsonl(file: FileInput, on_row_error: RowError) -> Iterator[Document]:
    columns = file.settings.columns
    for line, raw in enumerate(decode_text(file.data).split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            if not isinstance(row, dict):
                raise UnreadableFile("a row must be a JSON object")
            yield _document(file, row, line, columns)
        except (json.JSONDecodeError, RecursionError) as exc:
            on_row_error(line, f"not JSON ({exc})")
        except UnreadableFile as exc:
            on_row_error(line, str(exc))


def read_csv(file: FileInput, on_row_error: RowError) -> Iterator[Document]:
    columns = file.settings.columns
    delimiter = "\t" if file.doc_id.lower().endswith(".tsv") else ","
    # A field may be as long as a document may be.
    csv.field_size_limit(max(file.settings.max_text_chars, 131072))
    reader = csv.DictReader(io.StringIO(decode_text(file.data), newline=""), delimiter=delimiter)
    if reader.fieldnames is None or columns.text not in reader.fieldnames:
        raise UnreadableFile(
            f"no {columns.text!r} column (header: {reader.fieldnames}); set "
            "formats.columns or pass --columns text=NAME"
        )
    try:
        for row in reader:
            try:
                yield _document(file, row, reader.line_num, columns)
            except UnreadableFile as exc:
                on_row_error(reader.line_num, str(exc))
    except csv.Error as exc:
        raise UnreadableFile(f"CSV stopped parsing at line {reader.line_num} ({exc})") from exc
