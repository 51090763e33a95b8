"""Postgres + pgvector beyond the conformance suite, against the real database:
the namespace, ingest's skip/replace/prune, a lost connection, a foreign table."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

from retrieval_mcp.backends.pgvector import PgvectorBackend
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.encoders.embedding_provider import BundledMiniLM
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.ingest.runner import ingest_documents
from retrieval_mcp.settings import PostgresSettings
from tests.backends.conformance import CHUNK_CHARS, OVERLAP_CHARS, chunk_of

D, B = Capability.DENSE, Capability.BM25


@pytest.fixture
def pg(pg_uri: str, pg_corpus: str) -> tuple[str, str]:
    return pg_uri, pg_corpus


async def open_pg(uri: str, encoder: MiniLMEncoder, **settings: object) -> PgvectorBackend:
    return await PgvectorBackend.open(
        PostgresSettings.model_validate({"conninfo": uri, **settings}), BundledMiniLM(encoder)
    )


async def test_the_namespace_bounds_every_read_and_write(
    pg: tuple[str, str], encoder: MiniLMEncoder
) -> None:
    uri, table = pg
    backend = await open_pg(uri, encoder, table=table, sources=["kb"])
    try:
        assert [s.name for s in await backend.sources()] == ["kb"]
        everything = await backend.search(LegQuery(D, "tomato plants in the sun", 50))
        assert everything and {c.chunk.provenance.source for c in everything} == {"kb"}
        assert await backend.search(LegQuery(D, "tomato", 5, sources=("other",))) == []
        tomato = chunk_of("tomatoes.txt")
        assert await backend.fetch([tomato.id]) == []
        assert await backend.vectors([tomato.id]) == {}
        assert await backend.neighbors(tomato, before=1, after=1) == []
        assert (await backend.status()).chunks == sum(s.chunks for s in await backend.sources())
        with pytest.raises(ConfigError, match="outside this backend's namespace"):
            await backend.document_hashes("other")
    finally:
        await backend.aclose()


async def test_ingest_skips_replaces_and_prunes(pg_uri: str, encoder: MiniLMEncoder) -> None:
    table = f"ingest_{uuid.uuid4().hex[:8]}"
    backend = await open_pg(uri := pg_uri, encoder, table=table)
    docs = [
        Document("a.md", "Alpha", "Error code E1234 means low pressure."),
        Document("b.md", "Beta", "Sourdough ferments overnight."),
    ]

    async def ingest(documents: list[Document], prune: bool = False) -> tuple[int, int, int, int]:
        r = await ingest_documents(
            backend,
            documents,
            source="s",
            chunk_chars=CHUNK_CHARS,
            overlap_chars=OVERLAP_CHARS,
            prune=prune,
        )
        return r.documents_written, r.documents_unchanged, r.documents_replaced, r.documents_pruned

    try:
        assert await ingest(docs) == (2, 0, 0, 0)
        assert await ingest(docs) == (0, 2, 0, 0)
        changed = [docs[0], Document("b.md", "Beta", "Rye bread ferments for two days.")]
        assert await ingest(changed) == (1, 1, 1, 0)
        found = await backend.search(LegQuery(B, "rye", 5))
        assert [c.chunk.provenance.doc_id for c in found] == ["b.md"]
        assert await backend.search(LegQuery(B, "sourdough", 5)) == []
        assert await ingest([docs[0]], prune=True) == (0, 1, 0, 1)
        assert [(s.name, s.chunks) for s in await backend.sources()] == [("s", 1)]
        # A document stored only in part is reported with an empty hash: rewritten next time.
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"UPDATE {table} SET doc_chunks = 2 WHERE doc_id = 'a.md'")
        assert await backend.document_hashes("s") == {"a.md": ""}
        assert await ingest([docs[0]]) == (1, 0, 1, 0)
    finally:
        await backend.aclose()


async def test_a_lost_connection_is_retried_once(
    pg: tuple[str, str], encoder: MiniLMEncoder
) -> None:
    uri, table = pg
    backend = await open_pg(uri, encoder, table=table, pool_min_size=2)
    try:
        assert await backend.search(LegQuery(B, "E1234", 3))
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'latence-retrieval-mcp' AND pid <> pg_backend_pid()"
            )
        found = await backend.search(LegQuery(B, "E1234", 3))
        assert found[0].chunk.provenance.doc_id == "boiler.md"
        status = await backend.status()
        assert status.extra["read_retries"] == 1
    finally:
        await backend.aclose()


async def test_a_table_built_by_another_encoder_is_refused(
    pg_uri: str, encoder: MiniLMEncoder, tmp_path: Path
) -> None:
    table = f"foreign_{uuid.uuid4().hex[:8]}"
    await (await open_pg(pg_uri, encoder, table=table)).aclose()
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(
            f"COMMENT ON TABLE {table} IS 'latence-retrieval-mcp chunks; encoder=some-other-model'"
        )
    with pytest.raises(ConfigError, match="some-other-model"):
        await open_pg(pg_uri, encoder, table=table)
