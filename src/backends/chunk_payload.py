"""How a Chunk is laid out as a Qdrant payload, and back.

Shared by the embedded and (later) remote Qdrant adapters so both read and write the
same shape. Metadata lives under ``meta`` so operator keys can never collide with
provenance fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from retrieval_mcp.records import Chunk, Provenance

META_KEY = "meta"
#: The token count taken at ingest (``Chunk.tokens``); absent in stores written before it.
TOKENS_KEY = "tokens"


def indexed_text(chunk: Chunk) -> str:
    """The text both legs index: the title and the heading path give short chunks
    their topic (a chunk under "Install › Linux" is about installing on Linux)."""
    p = chunk.provenance
    if p.section and p.title and not p.section.startswith(p.title):
        head = f"{p.title} › {p.section}"
    else:
        head = p.section or p.title
    return f"{head}\n{chunk.text}" if head else chunk.text


def to_payload(chunk: Chunk) -> dict[str, Any]:
    p = chunk.provenance
    return {
        "text": chunk.text,
        "source": p.source,
        "doc_id": p.doc_id,
        "title": p.title,
        "ordinal": p.ordinal,
        "char_start": p.char_start,
        "char_end": p.char_end,
        "uri": p.uri,
        "prev_id": p.prev_id,
        "next_id": p.next_id,
        "doc_hash": chunk.doc_hash,
        "flags": list(chunk.flags) if chunk.flags is not None else None,
        "doc_chunks": p.doc_chunks,
        "section": p.section,
        "page_start": p.page_start,
        "page_end": p.page_end,
        META_KEY: dict(chunk.metadata),
        TOKENS_KEY: chunk.tokens,
    }


def from_payload(point_id: str, payload: Mapping[str, Any]) -> Chunk:
    return Chunk(
        id=point_id,
        text=str(payload.get("text", "")),
        provenance=Provenance(
            source=str(payload.get("source", "")),
            doc_id=str(payload.get("doc_id", "")),
            title=str(payload.get("title", "")),
            ordinal=int(payload.get("ordinal", 0)),
            char_start=int(payload.get("char_start", 0)),
            char_end=int(payload.get("char_end", 0)),
            doc_chunks=int(payload.get("doc_chunks", 0)),
            uri=str(payload.get("uri", "")),
            prev_id=payload.get("prev_id"),
            next_id=payload.get("next_id"),
            section=str(payload.get("section") or ""),
            page_start=_page(payload.get("page_start")),
            page_end=_page(payload.get("page_end")),
        ),
        doc_hash=str(payload.get("doc_hash", "")),
        flags=tuple(str(f) for f in flags)
        if isinstance(flags := payload.get("flags"), list)
        else None,
        metadata=dict(payload.get(META_KEY) or {}),
        tokens=_tokens(payload.get(TOKENS_KEY)),
    )


def _page(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _tokens(value: Any) -> int | None:
    """A stored token count, or None for anything else (a bool is not a count)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
