"""The shape of every tool's ``data``: one set of types for the output and its schema.

Each tool builds its ``data`` as plain dicts through these ``TypedDict`` types, so
``mypy --strict`` checks every field a handler writes, at no cost per call (a
``TypedDict`` is a dict at run time: nothing is validated or copied on the way out).
``mcp_surface/output_schemas.py`` turns the very same types into each tool's published
``outputSchema`` (JSON Schema 2020-12), so the schema cannot drift from the output; a
test validates real responses against it.

``extra="forbid"`` makes every object closed (``additionalProperties: false``) except
the free-form ones named as such: chunk ``metadata`` (the store's own fields), and the
statistics ``index_status`` reports.
"""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from retrieval_mcp.pipeline.packing import Passage
from retrieval_mcp.records import LegScore, Provenance

_CLOSED = ConfigDict(extra="forbid")

#: The project's own URI scheme for cited passages (see ``mcp_surface/resources.py``).
CHUNK_URI_PREFIX = "lrm://chunk/"
DOCUMENT_URI_PREFIX = "lrm://document/"


def chunk_uri(chunk_id: str) -> str:
    return CHUNK_URI_PREFIX + chunk_id


def document_uri(chunk_id: str) -> str:
    """The whole document that holds ``chunk_id``, in reading order."""
    return DOCUMENT_URI_PREFIX + chunk_id


@with_config(_CLOSED)
class ProvenanceView(TypedDict):
    source: str
    doc_id: str
    title: str
    ordinal: int
    char_start: int
    char_end: int
    doc_chunks: int
    uri: str
    prev_id: str | None
    next_id: str | None
    section: str
    page_start: int | None
    page_end: int | None


@with_config(_CLOSED)
class LegScoreView(TypedDict):
    rank: int
    score: float


@with_config(_CLOSED)
class ChunkView(TypedDict):
    id: str
    resource_uri: str
    text: str
    flags: list[str]
    provenance: ProvenanceView
    metadata: dict[str, Any]


@with_config(_CLOSED)
class HitView(ChunkView):
    rank: int
    score: float
    legs: dict[str, LegScoreView]
    passed_guard: NotRequired[bool]
    other_chunks: NotRequired[int]  # search, collapsed: the document's further matching chunks


@with_config(_CLOSED)
class NeighborView(ChunkView):
    is_anchor: bool


@with_config(_CLOSED)
class PassageProvenanceView(TypedDict):
    source: str
    doc_id: str
    title: str
    uri: str
    char_start: int
    char_end: int
    chunk_ids: list[str]
    ordinals: list[int]


@with_config(_CLOSED)
class PassageView(TypedDict):
    resource_uri: str
    text: str
    flags: list[str]
    score: float
    tokens: int
    provenance: PassageProvenanceView


@with_config(_CLOSED)
class GuardView(TypedDict):
    threshold: float
    below_threshold: int


@with_config(_CLOSED)
class SearchData(TypedDict):
    query: str
    hits: list[HitView]
    guard: GuardView


@with_config(_CLOSED)
class NeighborsData(TypedDict):
    anchor_id: str
    chunks: list[NeighborView]


@with_config(_CLOSED)
class SimilarData(TypedDict):
    anchor_id: str
    hits: list[HitView]


@with_config(_CLOSED)
class ContextData(TypedDict):
    query: NotRequired[str]  # for a query; ids and missing_ids for a list of ids
    ids: NotRequired[list[str]]
    missing_ids: NotRequired[list[str]]
    passages: list[PassageView]
    tokens_used: int
    budget_tokens: int
    rejected_by_guard: int
    withheld_flagged: int
    chunks_over_budget: int


@with_config(_CLOSED)
class UnavailableLegView(TypedDict):
    """A leg the backend would run but cannot now (e.g. the dense model is absent)."""

    leg: str
    reason: str
    remedy: str


@with_config(_CLOSED)
class SourceView(TypedDict):
    name: str
    chunks: int
    capabilities: list[str]


@with_config(_CLOSED)
class SourcesData(TypedDict):
    sources: list[SourceView]
    unavailable: list[UnavailableLegView]


@with_config(_CLOSED)
class StatusData(TypedDict):
    ready: bool
    backend: str
    chunks: int
    detail: str
    capabilities: list[str]
    unavailable: list[UnavailableLegView]
    backend_stats: dict[str, Any]
    pipeline: dict[str, Any]
    last_reload: dict[str, Any]  # per part: outcome, when, trigger (unscoped: the reason)
    reloads_refused: int
    wal: dict[str, Any] | None  # healthy (and, unscoped, failure and queue)
    supervision: dict[str, Any]  # the supervision tree's states
    # Per source written while serving (watched folders, operator ingest): files seen,
    # pending, last sync, errors (unscoped only: path and reason).
    ingest: dict[str, Any]


#: Each tool's ``data`` type, by handler key.
TOOL_DATA: dict[str, type] = {
    "search": SearchData,
    "expand_neighbors": NeighborsData,
    "more_like_this": SimilarData,
    "get_context": ContextData,
    "list_sources": SourcesData,
    "index_status": StatusData,
}


def provenance_view(p: Provenance) -> ProvenanceView:
    return {
        "source": p.source,
        "doc_id": p.doc_id,
        "title": p.title,
        "ordinal": p.ordinal,
        "char_start": p.char_start,
        "char_end": p.char_end,
        "doc_chunks": p.doc_chunks,
        "uri": p.uri,
        "prev_id": p.prev_id,
        "next_id": p.next_id,
        "section": p.section,
        "page_start": p.page_start,
        "page_end": p.page_end,
    }


def leg_score_view(score: LegScore) -> LegScoreView:
    return {"rank": score.rank, "score": score.score}


def passage_provenance_view(passage: Passage) -> PassageProvenanceView:
    return {
        "source": passage.source,
        "doc_id": passage.doc_id,
        "title": passage.title,
        "uri": passage.uri,
        "char_start": passage.char_start,
        "char_end": passage.char_end,
        "chunk_ids": list(passage.chunk_ids),
        "ordinals": list(passage.ordinals),
    }
