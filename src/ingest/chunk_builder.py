"""Turn a Document into Chunks with content-derived ids and full provenance.

A chunk id is a UUIDv5 of (source, doc id, document hash, ordinal). The document hash
covers the title, the text and the chunking settings, so the same content always gets
the same ids (re-ingest is a no-op) and any change gets new ones.

Retrieved text is untrusted: the document is sanitised before chunking (so stored
text, and the character offsets in provenance, refer to the sanitised document) and
every chunk is screened for injected instructions, by the rules and the learned layer
(``screening.screen``). The flags are stored with the chunk, so screening costs
nothing per query. What sanitising removes (invisible
characters, forged markers, hidden tags) is itself evidence: those families, found in
the raw document, flag every chunk of it.
"""

from __future__ import annotations

import hashlib
import uuid

from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.pipeline.chunking import chunk_spans
from retrieval_mcp.records import Chunk, Provenance
from retrieval_mcp.screening import FLAGS, sanitise, screen, screen_rules

CHUNK_NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-5e7f-9c0d-1a2b3c4d5e6f")


def document_hash(doc: Document, *, chunk_chars: int, overlap_chars: int) -> str:
    digest = hashlib.sha256()
    for part in (doc.title, doc.text, f"{chunk_chars}/{overlap_chars}"):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def chunk_id(source: str, doc_id: str, doc_hash: str, ordinal: int) -> str:
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{source}\x1f{doc_id}\x1f{doc_hash}\x1f{ordinal}"))


#: Families whose evidence sanitising removes, so they are judged on the raw document.
RAW_EVIDENCE = frozenset({"invisible_text", "marker_forgery", "hidden_tag"})


def _ordered(flags: set[str]) -> tuple[str, ...]:
    return tuple(f for f in FLAGS if f in flags)


def build_chunks(
    doc: Document, *, source: str, chunk_chars: int, overlap_chars: int
) -> list[Chunk]:
    doc_hash = document_hash(doc, chunk_chars=chunk_chars, overlap_chars=overlap_chars)
    text, title = sanitise(doc.text), sanitise(doc.title)
    evidence: set[str] = set()
    if text != doc.text or title != doc.title:
        evidence = set(screen_rules(f"{doc.title}\n{doc.text}").flags) & RAW_EVIDENCE
    spans = chunk_spans(text, chunk_chars=chunk_chars, overlap_chars=overlap_chars)
    ids = [chunk_id(source, doc.doc_id, doc_hash, i) for i in range(len(spans))]
    return [
        Chunk(
            id=ids[i],
            text=text[span.start : span.end],
            provenance=Provenance(
                source=source,
                doc_id=doc.doc_id,
                title=title,
                ordinal=i,
                char_start=span.start,
                char_end=span.end,
                doc_chunks=len(spans),
                uri=doc.uri,
                prev_id=ids[i - 1] if i > 0 else None,
                next_id=ids[i + 1] if i + 1 < len(ids) else None,
            ),
            doc_hash=doc_hash,
            flags=_ordered(set(screen(text[span.start : span.end]).flags) | evidence),
            metadata=dict(doc.metadata),
        )
        for i, span in enumerate(spans)
    ]
