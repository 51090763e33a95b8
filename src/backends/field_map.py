"""Which field of an existing index holds which part of a chunk, and the conversion.

Existing collections and indexes were built by other tools, with their own names for
the text, the title, the document id. The remote adapters read a ``FieldMap`` from
config and use it both to ask for the right fields and to build ``Chunk`` records
from what comes back. Fields named by our own layout (``chunk_payload``) but absent
from a foreign index fall back to neutral defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.records import Chunk, Provenance
from retrieval_mcp.settings import FieldMapSettings

# Provenance details our own ingest stores under these names; read when present.
_EXTRA_FIELDS = ("char_start", "char_end", "doc_chunks", "prev_id", "next_id", "doc_hash")


@attrs.frozen
class FieldMap:
    id: str = "id"
    text: str = "text"
    title: str = "title"
    source: str = "source"
    doc_id: str = "doc_id"
    ordinal: str = "ordinal"
    uri: str = "uri"
    metadata: str = ""
    metadata_fields: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: FieldMapSettings) -> FieldMap:
        return cls(**settings.model_dump())

    @property
    def has_reading_order(self) -> bool:
        """Neighbours need a document id and an ordinal to walk along."""
        return bool(self.doc_id and self.ordinal)

    def columns(self, *, extras: bool = False) -> list[str]:
        """Every mapped field name (for ``select``/``columns``), without duplicates."""
        names = [
            self.id,
            self.text,
            self.title,
            self.source,
            self.doc_id,
            self.ordinal,
            self.uri,
            self.metadata,
            *self.metadata_fields,
        ]
        if extras:
            names += list(_EXTRA_FIELDS)
        return [n for n in dict.fromkeys(names) if n]

    def filter_field(self, key: str) -> str:
        """The index field a metadata filter key lives in; InvalidArgument if none."""
        if self.metadata:
            return f"{self.metadata}.{key}"
        if key in self.metadata_fields:
            return key
        allowed = ", ".join(self.metadata_fields) or "none"
        raise InvalidArgument(
            f"filter key {key!r} is not a filterable field of this index",
            remedy=f"Filter on one of: {allowed}.",
        )

    def to_chunk(
        self, record: Mapping[str, Any], *, chunk_id: str, source: str | None = None
    ) -> Chunk:
        """Build a Chunk from one record; ``source`` overrides the mapped field (an index
        that is one source has no source field)."""
        text = _text(record, self.text)
        metadata: dict[str, Any] = {}
        if self.metadata:
            nested = record.get(self.metadata)
            if isinstance(nested, Mapping):
                metadata.update(nested)
        for name in self.metadata_fields:
            if name in record and record[name] is not None:
                metadata[name] = record[name]
        return Chunk(
            id=chunk_id,
            text=text,
            provenance=Provenance(
                source=source if source is not None else _text(record, self.source),
                doc_id=_text(record, self.doc_id) or chunk_id,
                title=_text(record, self.title),
                ordinal=_int(record, self.ordinal, 0),
                char_start=_int(record, "char_start", 0),
                char_end=_int(record, "char_end", len(text)),
                doc_chunks=_int(record, "doc_chunks", 0),
                uri=_text(record, self.uri),
                prev_id=_optional_text(record, "prev_id"),
                next_id=_optional_text(record, "next_id"),
            ),
            doc_hash=_text(record, "doc_hash"),
            # Screened at ingest only when this server wrote the record; None: screen it.
            flags=tuple(str(f) for f in flags)
            if isinstance(flags := record.get("flags"), list)
            else None,
            metadata=metadata,
        )


def _text(record: Mapping[str, Any], key: str) -> str:
    if not key:
        return ""
    value = record.get(key)
    return "" if value is None else str(value)


def _optional_text(record: Mapping[str, Any], key: str) -> str | None:
    value = record.get(key)
    return None if value is None or value == "" else str(value)


def _int(record: Mapping[str, Any], key: str, default: int) -> int:
    value = record.get(key) if key else None
    if value is None or isinstance(value, bool):
        return default
    return int(value)
