"""How hits and passages look to an agent: the same fields in every tool.

Every piece of retrieved text leaves the server wrapped in the untrusted-data markers
(``⟦untrusted⟧…⟦/untrusted⟧``) with the screen's ``flags`` beside it; the operating
policy tells agents what both mean. ``retrieval_mcp.screening.unwrap`` recovers the
raw text for a consumer that needs it.
"""

from __future__ import annotations

import functools
import re

from retrieval_mcp.pipeline.packing import Passage
from retrieval_mcp.records import Chunk, Hit
from retrieval_mcp.screening.chunk_flags import chunk_flags, clean_text
from retrieval_mcp.screening.wrap import wrap, wrap_sanitised
from retrieval_mcp.tools.result_types import (
    ChunkView,
    HitView,
    PassageView,
    chunk_uri,
    document_uri,
    leg_score_view,
    passage_provenance_view,
    provenance_view,
)

_WORD = re.compile(r"\w{3,}")


_STOPWORDS = frozenset(
    {
        "about",
        "after",
        "also",
        "been",
        "does",
        "from",
        "have",
        "into",
        "more",
        "most",
        "only",
        "other",
        "over",
        "same",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "very",
        "what",
        "when",
        "where",
        "which",
        "while",
        "with",
        "would",
        "your",
    }
)


@functools.lru_cache(maxsize=256)
def _terms_pattern(query: str) -> re.Pattern[str]:
    """One alternation of the query's content words: one scan per hit, compiled once
    per query (the first match is the earliest any term appears)."""
    terms = sorted({w.lower() for w in _WORD.findall(query)} - _STOPWORDS, key=len, reverse=True)
    if not terms:
        return re.compile(r"(?!x)x")  # matches nothing
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in terms) + ")", re.IGNORECASE)


def snippet(text: str, query: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, starting just before the first whole-word
    match of a content word of the query (or at the start when none matches)."""
    if len(text) <= limit:
        return text
    match = _terms_pattern(query).search(text)
    start = max(0, match.start() - limit // 4) if match else 0
    end = min(len(text), start + limit)
    start = max(0, end - limit)
    if start > 0:
        space = text.find(" ", start, end)
        start = space + 1 if space != -1 else start
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    return ("… " if start > 0 else "") + text[start:end] + (" …" if end < len(text) else "")


def chunk_view(chunk: Chunk, *, text: str | None = None) -> ChunkView:
    return {
        "id": chunk.id,
        "resource_uri": chunk_uri(chunk.id),
        # Our stores hold sanitised text (and a snippet is a slice of it): no need to
        # sanitise again; a foreign chunk's text went through clean_text (sanitise).
        "text": wrap_sanitised(clean_text(chunk) if text is None else text),
        "flags": list(chunk_flags(chunk)),
        "provenance": provenance_view(chunk.provenance),
        "metadata": chunk.metadata,
    }


def hit_view(
    rank: int, hit: Hit, *, text: str | None = None, passed_guard: bool | None = None
) -> HitView:
    chunk = chunk_view(hit.chunk, text=text)
    view: HitView = {
        "rank": rank,
        "score": round(hit.score, 6),
        "id": chunk["id"],
        "resource_uri": chunk["resource_uri"],
        "text": chunk["text"],
        "flags": chunk["flags"],
        "provenance": chunk["provenance"],
        "metadata": chunk["metadata"],
        "legs": {leg: leg_score_view(score) for leg, score in hit.legs.items()},
    }
    if passed_guard is not None:
        view["passed_guard"] = passed_guard
    return view


def passage_view(passage: Passage, flags: list[str], *, sanitised: bool = False) -> PassageView:
    """``sanitised``: the passage is built from stored text only (our store sanitised
    it at ingest), so the second sanitise is skipped (``wrap_sanitised``)."""
    return {
        "resource_uri": document_uri(passage.chunk_ids[0]),
        "text": wrap_sanitised(passage.text) if sanitised else wrap(passage.text),
        "flags": flags,
        "score": round(passage.score, 6),
        "tokens": passage.tokens,
        "provenance": passage_provenance_view(passage),
    }


def cite(chunk: Chunk) -> str:
    p = chunk.provenance
    return (
        f"{p.source}:{p.doc_id} chunk {p.ordinal + 1}/{p.doc_chunks or '?'} "
        f"chars {p.char_start}-{p.char_end} (id {chunk.id})"
    )
