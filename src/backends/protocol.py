"""The backend seam: what every retrieval store adapter promises.

An adapter declares what it can do (``capabilities()``) and runs first-stage search
for one modality at a time; the pipeline composes legs from the declaration and never
calls a leg that is not declared. Adapters own their query encoders, because only the
adapter knows which model built its index. Every method maps the library's errors to
``retrieval_mcp.errors`` before they leave the adapter.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

import attrs
import trio

from retrieval_mcp.backends.page_prewarm import PrewarmReport
from retrieval_mcp.records import Candidate, Chunk, Provenance


class Capability(StrEnum):
    """What a backend can do. Legs are the first five; the rest are features."""

    DENSE = "dense"
    SPARSE = "sparse"
    BM25 = "bm25"
    MULTIVECTOR = "multivector"
    FILTER = "filter"
    NEIGHBORS = "neighbors"  # neighbours(): chunks around a chunk in its document
    SIMILAR = "similar"  # similar(): nearest chunks to a stored chunk
    VECTORS = "vectors"  # vectors(): stored dense vectors, for MMR
    INGEST = "ingest"


#: Capabilities that are retrieval legs, in the order the pipeline prefers them.
LEGS: tuple[Capability, ...] = (
    Capability.DENSE,
    Capability.BM25,
    Capability.SPARSE,
    Capability.MULTIVECTOR,
)

Scalar = str | int | bool


@attrs.frozen
class SearchFilter:
    """Equality filters on chunk metadata: every key must match one of its values."""

    equals: Mapping[str, tuple[Scalar, ...]] = attrs.field(factory=dict)

    def __bool__(self) -> bool:
        return bool(self.equals)


@attrs.frozen
class LegQuery:
    """One first-stage search for one leg. ``sources`` empty means every source.

    ``payloads`` False lets an adapter that declares ``late_payloads`` answer with
    id-only candidates (``id_only``): the pipeline fuses ranks and reads the payloads
    of the fused top-k alone with ``fetch``, instead of every leg's every candidate.
    """

    leg: Capability
    text: str
    limit: int
    sources: tuple[str, ...] = ()
    filter: SearchFilter | None = None
    payloads: bool = True


_NO_PROVENANCE = Provenance(source="", doc_id="", title="", ordinal=0, char_start=0, char_end=0)


@functools.lru_cache(maxsize=65_536)
def id_only(chunk_id: str) -> Chunk:
    """A placeholder for a candidate whose payload was not read (``payloads`` False):
    only its id means anything, and only fusion may look at it. Frozen, so shared:
    remembered per id (building one costs more than the dict lookup)."""
    return Chunk(id=chunk_id, text="", provenance=_NO_PROVENANCE)


def late_payloads(backend: object) -> bool:
    """Whether ``backend`` answers ``LegQuery(payloads=False)`` with id-only candidates
    and reads payloads cheaply by id (a class attribute ``late_payloads = True``)."""
    return getattr(backend, "late_payloads", False) is True


@attrs.frozen
class SourceInfo:
    name: str
    chunks: int


@attrs.frozen
class BackendStatus:
    """``ready`` means a search can be answered now (store open, encoders loaded)."""

    ready: bool
    backend: str
    chunks: int
    detail: str = ""
    extra: Mapping[str, object] = attrs.field(factory=dict)


@attrs.frozen
class UnavailableLeg:
    """A leg the backend would run but cannot now, why, and the one-line fix.

    Reported (``unavailable_legs()``) by a backend that opened degraded, e.g. the
    embedded store without the dense model's files; the pipeline reports the leg as
    dropped ("unsupported") on every request, and the catalogue tools show the remedy.
    """

    leg: Capability
    reason: str
    remedy: str


def unavailable_legs(backend: object) -> tuple[UnavailableLeg, ...]:
    """What ``backend`` says it cannot do now (optional: most backends say nothing)."""
    report = getattr(backend, "unavailable_legs", None)
    return tuple(report()) if callable(report) else ()


@runtime_checkable
class RetrievalBackend(Protocol):
    """A read-only retrieval store. Its resources (clients, pool, store lock) belong to
    the ``open_<kind>`` context manager that built it (``backend_factory``), which
    releases them when its block ends; after that every call fails or reports not
    ready."""

    name: str

    def capabilities(self) -> frozenset[Capability]: ...

    async def search(self, query: LegQuery) -> list[Candidate]:
        """Return up to ``query.limit`` candidates, best first, ranks starting at 1."""
        ...

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked; unknown ids are skipped."""
        ...

    async def sources(self) -> list[SourceInfo]: ...

    async def status(self) -> BackendStatus: ...


@runtime_checkable
class NeighborsBackend(Protocol):
    """Declares ``Capability.NEIGHBORS``."""

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        """Chunks of the same document within the window, in reading order, without ``chunk``."""
        ...


@runtime_checkable
class NeighborsManyBackend(Protocol):
    """Optional, beside ``neighbors``: every chunk's neighbours in one engine call."""

    async def neighbors_many(
        self, chunks: Sequence[Chunk], *, before: int, after: int
    ) -> list[list[Chunk]]:
        """``neighbors`` of each chunk, in the order given (one list per chunk)."""
        ...


async def neighbors_many(
    backend: NeighborsBackend, chunks: Sequence[Chunk], *, before: int, after: int
) -> list[list[Chunk]]:
    """Each chunk's ``neighbors``, one list per chunk in the order given: one engine call
    where the adapter has ``neighbors_many``, else one ``neighbors`` call per chunk, run
    concurrently (so every adapter that declares ``NEIGHBORS`` serves this)."""
    if isinstance(backend, NeighborsManyBackend):
        return await backend.neighbors_many(chunks, before=before, after=after)
    found: list[list[Chunk]] = [[] for _ in chunks]

    async def one(index: int, chunk: Chunk) -> None:
        found[index] = await backend.neighbors(chunk, before=before, after=after)

    async with trio.open_nursery() as nursery:
        for index, chunk in enumerate(chunks):
            nursery.start_soon(one, index, chunk)
    return found


@runtime_checkable
class SimilarBackend(Protocol):
    """Declares ``Capability.SIMILAR``."""

    async def similar(
        self,
        chunk_id: str,
        *,
        limit: int,
        sources: tuple[str, ...] = (),
        filter: SearchFilter | None = None,
    ) -> list[Candidate]:
        """Chunks nearest to the stored chunk ``chunk_id``, best first, without itself."""
        ...


@runtime_checkable
class VectorsBackend(Protocol):
    """Declares ``Capability.VECTORS``."""

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Unit-length dense vectors of the stored chunks (unknown ids are left out)."""
        ...


@runtime_checkable
class PrewarmBackend(Protocol):
    """Optional: a store whose files a search reads cold after it opens (ADR 0053)."""

    async def prewarm(self) -> PrewarmReport | None:
        """Read those files into the page cache once; None when turned off."""
        ...


@runtime_checkable
class IngestTarget(Protocol):
    """A backend the server can write into (declares ``Capability.INGEST``)."""

    async def document_hashes(self, source: str) -> dict[str, str]:
        """doc_id -> doc_hash of what is stored for ``source`` ("" if stored only in part)."""
        ...

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        """Embed and store; idempotent by chunk id."""
        ...

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None: ...
