"""How documents are read: size bounds and the column mapping of JSONL/CSV files.

``settings.py`` embeds this as ``Settings.formats`` (``[formats]`` in the config file);
``latence-retrieval-mcp ingest --columns`` overrides the mapping for one run.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class ColumnMapping(BaseModel):
    """Which columns of a JSONL or CSV row make the document.

    ``metadata`` names the columns kept as metadata; empty keeps every column that is
    not the text, title or id. A row without ``id`` is numbered by its line.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field("text", min_length=1)
    title: str = "title"
    id: str = "id"
    metadata: tuple[str, ...] = ()


class FormatSettings(BaseModel):
    """Bounds that keep one hostile file from taking the process's memory.

    ``max_file_bytes``: larger files are reported and skipped, never read.
    ``max_unzipped_bytes``: an Office file (a zip) declaring more than this
    uncompressed is reported as a zip bomb before anything is inflated.
    ``max_text_chars``: a document whose extracted text is longer is reported.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_file_bytes: int = Field(32 * MIB, ge=1024, le=4096 * MIB)
    max_unzipped_bytes: int = Field(64 * MIB, ge=1024, le=8192 * MIB)
    max_text_chars: int = Field(8_000_000, ge=1000, le=1_000_000_000)
    columns: ColumnMapping = ColumnMapping()


def parse_columns(spec: str) -> dict[str, object]:
    """``text=body,title=name,id=uid,metadata=lang;tags`` as ``ColumnMapping`` fields
    (for ``ingest --columns``); ValueError names what is wrong."""
    fields: dict[str, object] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in ColumnMapping.model_fields:
            raise ValueError(
                f"{item!r}: expected KEY=COLUMN with KEY one of text, title, id, metadata"
            )
        if key == "metadata":
            fields[key] = tuple(c.strip() for c in value.split(";") if c.strip())
        else:
            fields[key] = value.strip()
    ColumnMapping.model_validate(fields)
    return fields
