"""What a reader hands the chunker: a document's text and, for structured formats,
the sections that tile it.

A section is a span of the text with its heading path (``("Install", "Linux")``) and,
for paged formats, its page. The chunker never lets a chunk cross from one heading
path into another, and reports the pages a chunk spans, so provenance can say
"Install › Linux" or "pages 3–4" (design/decisions/0035).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

#: What joins two parts of a document's text: a paragraph break, so chunking sees one.
PART_BREAK = "\n\n"


@attrs.frozen
class Section:
    """``text[start:end]`` of a document, under heading ``path``, on ``page`` (1-based)."""

    start: int
    end: int
    path: tuple[str, ...] = ()
    page: int | None = None


@attrs.frozen
class Document:
    doc_id: str
    title: str
    text: str
    uri: str = ""
    metadata: dict[str, Any] = attrs.field(factory=dict, hash=False)
    #: Empty: the whole text is one untitled part. Otherwise contiguous, in order,
    #: from 0 to ``len(text)``.
    sections: tuple[Section, ...] = ()


@attrs.frozen
class Part:
    """One piece of a document as a reader finds it, before assembly."""

    text: str
    path: tuple[str, ...] = ()
    page: int | None = None


def assemble(parts: Iterable[Part]) -> tuple[str, tuple[Section, ...]]:
    """The text of ``parts`` joined by paragraph breaks, and the sections that tile it.

    Each break belongs to the section before it, so sections stay contiguous.
    Parts without text are dropped unless they carry a page (an empty page still
    counts for ``page_end``).
    """
    pieces: list[str] = []
    sections: list[Section] = []
    position = 0
    for part in parts:
        text = part.text.strip("\n")
        if not text.strip() and part.page is None:
            continue
        if pieces:
            pieces.append(PART_BREAK)
            last = sections[-1]
            sections[-1] = attrs.evolve(last, end=last.end + len(PART_BREAK))
            position += len(PART_BREAK)
        pieces.append(text)
        sections.append(Section(position, position + len(text), part.path, part.page))
        position += len(text)
    return "".join(pieces), tuple(sections)


def heading_path(stack: list[tuple[int, str]], level: int, heading: str) -> tuple[str, ...]:
    """Push ``heading`` at ``level`` onto ``stack`` (popping deeper or equal levels);
    the path from the top heading down to it."""
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, heading))
    return tuple(h for _, h in stack)
