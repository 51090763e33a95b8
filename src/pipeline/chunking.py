"""Split a document into overlapping chunks at natural boundaries.

Pure and deterministic: the same text and settings always give the same spans, which
is what makes content-derived chunk ids (and so idempotent re-ingest) possible.
Spans are character offsets into the original text, and ``text[start:end]`` is
exactly the chunk, so provenance can be checked against the source.
"""

from __future__ import annotations

import re

import attrs

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"[.!?][\"')\]]?\s")
_SPACE = re.compile(r"\s")


@attrs.frozen
class Span:
    start: int
    end: int


def _last_break(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> int | None:
    """The end of the last match of ``pattern`` within text[lo:hi], or None."""
    best = None
    for match in pattern.finditer(text, lo, hi):
        best = match.end()
    return best


def _strip(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end) if end > start else None


def chunk_spans(text: str, *, chunk_chars: int = 1000, overlap_chars: int = 150) -> list[Span]:
    """Spans of at most ``chunk_chars`` characters, each overlapping the previous one.

    Breaks prefer, in order: a paragraph end, a sentence end, whitespace, and only then
    a hard cut, searching the second half of each window so chunks stay near full size.
    """
    if chunk_chars < 1:
        raise ValueError("chunk_chars must be >= 1")
    overlap_chars = max(0, min(overlap_chars, chunk_chars // 2))
    spans: list[Span] = []
    start = 0
    length = len(text)
    while start < length:
        hard_end = min(start + chunk_chars, length)
        end = hard_end
        if hard_end < length:
            floor = start + chunk_chars // 2
            for pattern in (_PARAGRAPH, _SENTENCE, _SPACE):
                found = _last_break(pattern, text, floor, hard_end)
                if found is not None and found > start:
                    end = found
                    break
        span = _strip(text, start, end)
        if span is not None:
            spans.append(span)
        if end >= length:
            break
        next_start = max(end - overlap_chars, start + 1)
        # Begin the overlap on a word boundary, never mid-word.
        boundary = _SPACE.search(text, next_start, end)
        start = boundary.end() if boundary is not None and overlap_chars else end
        if start <= (spans[-1].start if spans else -1):
            start = end
    return spans
