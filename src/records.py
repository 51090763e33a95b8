"""Domain records that travel between backends, the pipeline and the tools.

Frozen attrs classes: cheap, hashable, and safe to pass between Trio tasks without
copying. pydantic stays at the edges (agent input, config files); cattrs turns these
into plain data for envelopes and, later, WAL records.
"""

from __future__ import annotations

from typing import Any

import attrs
import cattrs


@attrs.frozen
class Provenance:
    """Where a chunk came from, precisely enough to cite and to re-read it."""

    source: str
    doc_id: str
    title: str
    ordinal: int
    char_start: int
    char_end: int
    doc_chunks: int = 0
    uri: str = ""
    prev_id: str | None = None
    next_id: str | None = None
    # Where in the document: the heading path ("Install › Linux") of a sectioned
    # format, and the 1-based pages a PDF chunk spans (design/decisions/0035).
    section: str = ""
    page_start: int | None = None
    page_end: int | None = None


@attrs.frozen
class Chunk:
    """One unit of retrievable text with its provenance.

    ``id`` is derived from the content and position (see ``ingest.chunk_builder``), so
    ingesting the same content twice yields the same ids and changes nothing. ``flags``
    are the injection screen's findings from ingest; None means the chunk was never
    screened (a store this server did not write), so readers screen it themselves.
    """

    id: str
    text: str
    provenance: Provenance
    doc_hash: str = ""
    flags: tuple[str, ...] | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict, hash=False)
    # Word-piece tokens in ``text``, counted at ingest where the store keeps them (the
    # packer's budget without a tokenizer pass per query); None: count when needed.
    # Derived from ``text``, so not part of a chunk's identity.
    tokens: int | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Candidate:
    """One first-stage result from one leg: the chunk, its score and its rank (1-based)."""

    chunk: Chunk
    score: float
    rank: int


@attrs.frozen
class LegScore:
    rank: int
    score: float


@attrs.frozen
class Hit:
    """A fused result: the chunk, its fused score and what each leg said about it."""

    chunk: Chunk
    score: float
    legs: dict[str, LegScore] = attrs.field(hash=False)


converter = cattrs.Converter()


def unstructure(value: Any) -> Any:
    """Plain JSON-ready data for an attrs record (or a list of them)."""
    return converter.unstructure(value)
