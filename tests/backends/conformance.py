"""The conformance suite's corpus, adapter cases and helpers.

Every adapter is tested through the same ``AdapterCase``: an opened backend holding the
same small corpus (the same chunk ids everywhere, built by the real chunker), the
capability set that configuration must declare, and the failures it must map. The
embedded store and Postgres are real engines loaded through the adapter's ingest path;
remote Qdrant, Databricks and Azure are CONTRACT TESTS against the local servers in
``contract_servers/``, loaded directly in the layout of an index some other tool built.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import qdrant_edge as qe

from retrieval_mcp.backends.chunk_payload import indexed_text
from retrieval_mcp.backends.protocol import (
    BackendStatus,
    Capability,
    LegQuery,
    NeighborsBackend,
    RetrievalBackend,
    SearchFilter,
    SimilarBackend,
    SourceInfo,
    VectorsBackend,
)
from retrieval_mcp.errors import RetrievalMCPError
from retrieval_mcp.ingest.chunk_builder import build_chunks
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.records import Candidate, Chunk
from retrieval_mcp.settings import Settings, load_settings
from tests.backends.contract_servers.azure_contract import AzureSearchContract, SearchIndex
from tests.backends.contract_servers.databricks_contract import DatabricksContract, Index
from tests.backends.contract_servers.qdrant_contract import Collection, Point, QdrantContract
from tests.backends.contract_servers.toy_encoders import TOKEN_DIM, toy_multivector, toy_sparse

CHUNK_CHARS, OVERLAP_CHARS = 200, 40


def _pump_text() -> str:
    parts = [
        f"Section {i}. Pump station {i} lifts water uphill through valve set {i}."
        for i in range(12)
    ]
    return "\n\n".join(parts)


CORPUS: dict[str, list[Document]] = {
    "kb": [
        Document(
            "boiler.md",
            "Boiler fault codes",
            "Error code E1234 means the boiler's pressure sensor reads below 0.5 bar. "
            "Refill the heating circuit to 1.5 bar and reset the boiler.",
            metadata={"team": "facilities", "year": 2024},
        ),
        Document(
            "wing.md",
            "Boundary layers on wings",
            "The boundary layer on an aircraft wing becomes turbulent downstream of "
            "transition; laminar flow has lower skin friction drag.",
            metadata={"team": "aero", "year": 2023},
        ),
        Document(
            "bread.md",
            "Baking sourdough bread",
            "Sourdough rises with a starter of wild yeast. Let the dough ferment "
            "overnight and bake it in a hot Dutch oven.",
            metadata={"team": "kitchen", "year": 2024},
        ),
        Document(
            "pumps.md", "Pump stations", _pump_text(), metadata={"team": "facilities", "year": 2022}
        ),
    ],
    "other": [
        Document(
            "tomatoes.txt",
            "Growing tomatoes",
            "Tomato plants need full sun, regular watering and support for the stems.",
            metadata={"team": "garden", "year": 2024},
        )
    ],
}

#: Queries each leg must answer with the named document first.
DENSE_QUERY = ("airplane wing aerodynamics and drag", "wing.md")
KEYWORD_QUERY = ("E1234", "boiler.md")

ALL_LEGS = (Capability.DENSE, Capability.BM25, Capability.SPARSE, Capability.MULTIVECTOR)


def corpus_chunks() -> list[Chunk]:
    return [
        chunk
        for source, docs in CORPUS.items()
        for doc in docs
        for chunk in build_chunks(
            doc, source=source, chunk_chars=CHUNK_CHARS, overlap_chars=OVERLAP_CHARS
        )
    ]


def chunk_of(doc_id: str, ordinal: int = 0) -> Chunk:
    return next(
        c
        for c in corpus_chunks()
        if c.provenance.doc_id == doc_id and c.provenance.ordinal == ordinal
    )


def counts_by_source() -> dict[str, int]:
    out: dict[str, int] = {}
    for c in corpus_chunks():
        out[c.provenance.source] = out.get(c.provenance.source, 0) + 1
    return out


def document_metadata(chunk: Chunk) -> dict[str, Any]:
    doc = next(d for d in CORPUS[chunk.provenance.source] if d.doc_id == chunk.provenance.doc_id)
    return dict(doc.metadata)


Vectors = Mapping[str, list[float]]


@attrs.frozen
class Failure:
    """Open a backend that meets this failure (at open or at its first search)."""

    error: type[RetrievalMCPError]
    open: Callable[[], Awaitable[RetrievalBackend]]


@attrs.frozen
class AdapterCase:
    kind: str
    backend: RetrievalBackend
    declares: frozenset[Capability]
    failures: Mapping[str, Failure]
    # Leaves the ``open_backend`` block(s) the case opened.
    close: Callable[[], Awaitable[None]]
    # Whether every provenance field survives the round trip (our own layout does;
    # a foreign index keeps only the mapped fields).
    full_provenance: bool = True


def make_settings(state_dir: Path, backend: dict[str, Any], **extra: Any) -> Settings:
    overrides: dict[str, Any] = {
        "server": {"port": 0},
        "demo": {"ingest_on_first_start": False},
        "logging": {"level": "warning"},
        "chunking": {"chunk_chars": CHUNK_CHARS, "overlap_chars": OVERLAP_CHARS},
        "backend": backend,
        **extra,
    }
    return load_settings(state_dir=state_dir, overrides=overrides)


# -- loading the contract servers, in foreign layouts ------------------------------------

QDRANT_FIELDS = {
    "text": "content",
    "title": "heading",
    "doc_id": "document",
    "ordinal": "position",
    "source": "tenant",
    "uri": "link",
    "metadata": "",
    "metadata_fields": ["team", "year"],
}


def load_qdrant(
    server: QdrantContract,
    vectors: Vectors,
    *,
    per_source: bool = False,
    every_leg: bool = False,
) -> None:
    """A collection built by another tool: its own payload keys and vector names. With
    ``every_leg``: two named dense vectors, a learned sparse vector (``splade``) and a
    late-interaction multivector (``colbert``) besides the BM25 sparse vector."""
    chunks = corpus_chunks()
    avg_len = sum(len(indexed_text(c).split()) for c in chunks) / len(chunks)
    bm25 = qe.Bm25(qe.Bm25Config(language="english", avg_len=avg_len))
    for chunk in chunks:
        p = chunk.provenance
        payload = {
            "content": chunk.text,
            "heading": p.title,
            "document": p.doc_id,
            "position": p.ordinal,
            "tenant": p.source,
            "link": p.uri,
            **document_metadata(chunk),
        }
        sparse = bm25.embed_document(indexed_text(chunk))
        point = Point(
            id=chunk.id,
            payload=payload,
            vectors={"text-dense": vectors[chunk.id]},
            sparse={"text-sparse": (list(sparse.indices), list(sparse.values))},
        )
        if every_leg:
            point.vectors["title-dense"] = vectors[chunk_of(p.doc_id).id]
            point.sparse["splade"] = toy_sparse(indexed_text(chunk))
            point.multi["colbert"] = toy_multivector(indexed_text(chunk))
        name = f"{p.source}_chunks" if per_source else "company_docs"
        collection = server.collections.setdefault(
            name,
            Collection(
                dense={"text-dense": 384, "title-dense": 384} if every_leg else {"text-dense": 384},
                sparse=("text-sparse", "splade") if every_leg else ("text-sparse",),
                text_key="content",
                multi={"colbert": TOKEN_DIM} if every_leg else {},
                payload_schema={"tenant": "keyword", "document": "keyword", "position": "integer"},
            ),
        )
        collection.points.append(point)


def load_databricks(
    server: DatabricksContract, vectors: Vectors, *, managed_embeddings: bool = True
) -> dict[str, str]:
    """One Delta Sync index per source over ``text``: managed embeddings, or (with
    ``managed_embeddings=False``) self-managed vectors the caller must send."""
    indexes = {source: f"main.rag.{source}_chunks" for source in CORPUS}
    for chunk in corpus_chunks():
        p = chunk.provenance
        index = server.indexes.setdefault(
            indexes[p.source],
            Index(primary_key="id", text_column="text", managed_embeddings=managed_embeddings),
        )
        index.rows.append(
            {
                "id": chunk.id,
                "text": chunk.text,
                "title": p.title,
                "doc_id": p.doc_id,
                "ordinal": p.ordinal,
                **document_metadata(chunk),
            }
        )
        index.vectors.append(vectors[chunk.id])
    return indexes


def load_azure(server: AzureSearchContract, vectors: Vectors) -> None:
    index = server.indexes.setdefault(
        "rag-chunks",
        SearchIndex(
            key="id",
            text_fields=("title", "text"),
            vector_field="text_vector",
            semantic_configurations=("default",),
        ),
    )
    for chunk in corpus_chunks():
        p = chunk.provenance
        index.docs.append(
            {
                "id": chunk.id,
                "text": chunk.text,
                "title": p.title,
                "source": p.source,
                "doc_id": p.doc_id,
                "ordinal": p.ordinal,
                "uri": p.uri,
                **document_metadata(chunk),
                "__vector": vectors[chunk.id],
            }
        )


# -- watching what the pipeline calls ------------------------------------------------------


class RecordingBackend:
    """Delegates to ``inner`` and records every call, so a test can assert that nothing
    undeclared is ever asked for. It has every optional method; only ``inner``'s
    declaration says which may be used."""

    def __init__(self, inner: RetrievalBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[str] = []
        self.legs: list[Capability] = []

    def capabilities(self) -> frozenset[Capability]:
        return self.inner.capabilities()

    async def search(self, query: LegQuery) -> list[Candidate]:
        self.calls.append("search")
        self.legs.append(query.leg)
        return await self.inner.search(query)

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        self.calls.append("fetch")
        return await self.inner.fetch(ids)

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        self.calls.append("neighbors")
        assert isinstance(self.inner, NeighborsBackend)
        return await self.inner.neighbors(chunk, before=before, after=after)

    async def similar(
        self,
        chunk_id: str,
        *,
        limit: int,
        sources: tuple[str, ...] = (),
        filter: SearchFilter | None = None,
    ) -> list[Candidate]:
        self.calls.append("similar")
        assert isinstance(self.inner, SimilarBackend)
        return await self.inner.similar(chunk_id, limit=limit, sources=sources, filter=filter)

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        self.calls.append("vectors")
        assert isinstance(self.inner, VectorsBackend)
        return await self.inner.vectors(ids)

    async def sources(self) -> list[SourceInfo]:
        self.calls.append("sources")
        return await self.inner.sources()

    async def status(self) -> BackendStatus:
        return await self.inner.status()
