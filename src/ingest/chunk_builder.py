"""Turn a Document into Chunks with content-derived ids and full provenance.

A chunk id is a UUIDv5 of (source, doc id, document hash, ordinal). The document hash
covers the title, the text, the sections, the metadata and the chunking settings, so
the same document always gets the same ids (re-ingest is a no-op) and any change,
metadata alone included, gets new ones (design/decisions/0036).

A structured document (``Document.sections``) is chunked section by section: a chunk
never mixes two heading paths, carries its path in ``Provenance.section`` (which the
encoder sees too, ``chunk_payload.indexed_text``) and the pages it spans.

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
import json
import uuid
from typing import Any

import attrs

from retrieval_mcp.ingest.documents import Document, Section
from retrieval_mcp.pipeline.chunking import Span, chunk_spans
from retrieval_mcp.records import Chunk, Provenance
from retrieval_mcp.screening import FLAGS, sanitise, screen, screen_rules

CHUNK_NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-5e7f-9c0d-1a2b3c4d5e6f")

#: How a heading path is written in provenance and in the text the encoder sees.
PATH_SEPARATOR = " › "


def canonical_metadata(metadata: dict[str, Any]) -> str:
    """One spelling of ``metadata``: sorted keys, no spaces, non-JSON values as text,
    so equal metadata always hashes alike and any change hashes differently."""
    return json.dumps(
        metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


def document_hash(doc: Document, *, chunk_chars: int, overlap_chars: int) -> str:
    # A plain document without metadata hashes as it always did, so upgrading does
    # not re-embed a store of text files; sections and metadata extend the hash.
    parts = [doc.title, doc.text, f"{chunk_chars}/{overlap_chars}"]
    if doc.sections:
        parts.append(
            "sections:"
            + json.dumps(
                [[s.start, s.end, list(s.path), s.page] for s in doc.sections],
                separators=(",", ":"),
                ensure_ascii=False,
            )
        )
    if doc.metadata:
        parts.append("metadata:" + canonical_metadata(doc.metadata))
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", errors="surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def chunk_id(source: str, doc_id: str, doc_hash: str, ordinal: int) -> str:
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{source}\x1f{doc_id}\x1f{doc_hash}\x1f{ordinal}"))


#: Families whose evidence sanitising removes, so they are judged on the raw document.
RAW_EVIDENCE = frozenset({"invisible_text", "marker_forgery", "hidden_tag"})


def _ordered(flags: set[str]) -> tuple[str, ...]:
    return tuple(f for f in FLAGS if f in flags)


@attrs.frozen
class _Piece:
    """A chunk-to-be: its span of the sanitised text, heading path and pages."""

    span: Span
    path: tuple[str, ...]
    pages: tuple[int, ...]


def _sanitised(doc: Document) -> tuple[str, tuple[Section, ...]]:
    """The sanitised text and its sections, re-measured: sanitising one section at a
    time keeps every offset true of the stored text."""
    if not doc.sections:
        text = sanitise(doc.text)
        return text, (Section(0, len(text)),)
    pieces: list[str] = []
    sections: list[Section] = []
    position = 0
    for section in doc.sections:
        clean = sanitise(doc.text[section.start : section.end])
        pieces.append(clean)
        sections.append(attrs.evolve(section, start=position, end=position + len(clean)))
        position += len(clean)
    return "".join(pieces), tuple(sections)


def _pieces(
    text: str, sections: tuple[Section, ...], *, chunk_chars: int, overlap_chars: int
) -> list[_Piece]:
    pieces: list[_Piece] = []
    run: list[Section] = []

    def close_run() -> None:
        if not run:
            return
        start, end = run[0].start, run[-1].end
        for span in chunk_spans(
            text[start:end], chunk_chars=chunk_chars, overlap_chars=overlap_chars
        ):
            shifted = Span(span.start + start, span.end + start)
            pages = tuple(
                s.page
                for s in run
                if s.page is not None and s.start < shifted.end and shifted.start < s.end
            )
            pieces.append(_Piece(shifted, run[0].path, pages))
        run.clear()

    for section in sections:
        if run and section.path != run[-1].path:
            close_run()
        run.append(section)
    close_run()
    return pieces


def build_chunks(
    doc: Document, *, source: str, chunk_chars: int, overlap_chars: int
) -> list[Chunk]:
    doc_hash = document_hash(doc, chunk_chars=chunk_chars, overlap_chars=overlap_chars)
    (text, sections), title = _sanitised(doc), sanitise(doc.title)
    evidence: set[str] = set()
    if text != doc.text or title != doc.title:
        evidence = set(screen_rules(f"{doc.title}\n{doc.text}").flags) & RAW_EVIDENCE
    pieces = _pieces(text, sections, chunk_chars=chunk_chars, overlap_chars=overlap_chars)
    ids = [chunk_id(source, doc.doc_id, doc_hash, i) for i in range(len(pieces))]
    chunks = []
    for i, piece in enumerate(pieces):
        body = text[piece.span.start : piece.span.end]
        chunks.append(
            Chunk(
                id=ids[i],
                text=body,
                provenance=Provenance(
                    source=source,
                    doc_id=doc.doc_id,
                    title=title,
                    ordinal=i,
                    char_start=piece.span.start,
                    char_end=piece.span.end,
                    doc_chunks=len(pieces),
                    uri=doc.uri,
                    prev_id=ids[i - 1] if i > 0 else None,
                    next_id=ids[i + 1] if i + 1 < len(ids) else None,
                    section=sanitise(PATH_SEPARATOR.join(piece.path)),
                    page_start=min(piece.pages) if piece.pages else None,
                    page_end=max(piece.pages) if piece.pages else None,
                ),
                doc_hash=doc_hash,
                flags=_ordered(set(screen(body).flags) | evidence),
                metadata=dict(doc.metadata),
            )
        )
    return chunks
