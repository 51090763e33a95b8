"""Postgres relations the server did not create, against the real database.

The acceptance fixture is a memory table shaped like the sibling memory server's
(``namespace``, ``key``, ``value``, created/updated timestamps, a nullable
``vector(384)`` under an HNSW cosine index, rows nobody embedded), created here by
another role. The server reads it, configured by a settings file alone, through a
role granted ``SELECT`` only: both legs, the namespace as the tenant, a token scoped
to one namespace, and a check that nothing in the database changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
import trio
from mcp import Client

from retrieval_mcp.backends.pgvector_mapped import MappedPgBackend
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.encoders.embedding_provider import BundledMiniLM
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import ConfigError, InvalidArgument
from retrieval_mcp.settings import PostgresSettings, Settings, load_settings
from retrieval_mcp.transport.token_admin import create_token
from tests.backends.seed_memory import EMBEDDED, MEMORY_MAP, MEMORY_ROWS, READER
from tests.transport.server_harness import running_server

D, B = Capability.DENSE, Capability.BM25


def snapshot(uri: str, relation: str) -> dict[str, Any]:
    """Everything a write would change: rows, their content, indexes, triggers."""
    with psycopg.connect(uri) as conn:
        rows = conn.execute(f"SELECT count(*) FROM {relation}").fetchone()
        digest = conn.execute(
            f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {relation} t"
        ).fetchone()
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY 1",
            (relation,),
        ).fetchall()
        triggers = conn.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = %s::regclass", (relation,)
        ).fetchone()
        comment = conn.execute(
            "SELECT obj_description(%s::regclass, 'pg_class')", (relation,)
        ).fetchone()
    return {
        "rows": rows,
        "digest": digest,
        "indexes": indexes,
        "triggers": triggers,
        "comment": comment,
    }


def write_config(path: Path, conninfo: str, mapping: dict[str, Any]) -> Path:
    """A settings file that is all the server is given."""
    lines = [
        "[server]",
        "port = 0",
        "[demo]",
        "ingest_on_first_start = false",
        "[logging]",
        'level = "warning"',
        "[backend]",
        'kind = "postgres"',
        "[backend.postgres]",
        f"conninfo = {json.dumps(conninfo)}",
        "[backend.postgres.map]",
        *(f"{key} = {json.dumps(value)}" for key, value in mapping.items()),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    envelope: dict[str, Any] | None = result.structured_content
    assert envelope is not None
    return envelope


def _connect(server: Any, token: str) -> Any:
    server.known_token = token
    return server.client()


async def test_the_seed_memory_table_through_mcp_with_a_select_only_role(
    memory_db: str, pg_uri: str, short_dir: Path
) -> None:
    config = write_config(short_dir / "server.toml", memory_db, MEMORY_MAP)
    settings = load_settings(config, state_dir=short_dir / "state")
    admin = create_token(settings.token_path, "admin")
    acme = create_token(settings.token_path, "acme", ["acme-billing"])
    before = snapshot(pg_uri, "memory")

    async with running_server(settings, token=admin) as server:
        async with _connect(server, admin) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "expand_neighbors" not in tools  # no doc_id/ordinal mapped: not offered
            listed = await call(client, "list_sources", {})
            assert [(s["name"], s["chunks"]) for s in listed["data"]["sources"]] == [
                ("acme-billing", 4),
                ("other-project", 2),
            ]
            both = await call(client, "search", {"query": "when are invoices sent", "top_k": 6})
            assert both["ok"], both["error"]
            assert both["meta"]["legs"]["used"] == ["dense", "bm25"]
            assert {h["provenance"]["source"] for h in both["data"]["hits"]} == {
                "acme-billing",
                "other-project",
            }
            status = await call(client, "index_status", {})
            assert status["ok"], status["error"]

        async with _connect(server, acme) as client:
            found = await call(client, "search", {"query": "when are invoices payable", "top_k": 5})
            hits = found["data"]["hits"]
            assert found["meta"]["legs"]["used"] == ["dense", "bm25"]
            assert hits[0]["id"] == "acme-billing:knowledge/invoices"
            assert {h["provenance"]["source"] for h in hits} == {"acme-billing"}
            assert set(hits[0]["legs"]) == {"dense", "bm25"}
            assert "created_at" in hits[0]["metadata"]

            # Saved without an embedding: the keyword leg finds it, the dense leg cannot.
            refund = await call(client, "search", {"query": "chargeback card issuer", "top_k": 3})
            top = refund["data"]["hits"][0]
            assert top["id"] == "acme-billing:knowledge/refunds"
            assert set(top["legs"]) == {"bm25"}

            # Another namespace's words: never its rows.
            vault = await call(
                client, "search", {"query": "vault combination safe deposit box", "top_k": 10}
            )
            assert all(h["provenance"]["source"] == "acme-billing" for h in vault["data"]["hits"])
            refused = await call(
                client, "search", {"query": "invoices", "sources": ["other-project"]}
            )
            assert refused["error"]["code"] == "out_of_scope"
            foreign = await call(
                client, "more_like_this", {"chunk_id": "other-project:knowledge/invoices"}
            )
            assert foreign["error"]["code"] == "invalid_argument"
            listed = await call(client, "list_sources", {})
            assert [s["name"] for s in listed["data"]["sources"]] == ["acme-billing"]
            context = await call(client, "get_context", {"query": "invoice rules", "top_k": 3})
            assert {"step": "expand", "reason": "unsupported"} in context["meta"]["steps_skipped"]

    # Nothing was written, created or commented, and the role can only read.
    assert snapshot(pg_uri, "memory") == before
    with psycopg.connect(pg_uri) as conn:
        grants = conn.execute(
            "SELECT privilege_type FROM information_schema.role_table_grants "
            "WHERE grantee = %s AND table_name = 'memory'",
            (READER,),
        ).fetchall()
        assert grants == [("SELECT",)]
        for privilege in ("INSERT", "UPDATE", "DELETE", "TRUNCATE"):
            allowed = conn.execute(
                "SELECT has_table_privilege(%s, 'memory', %s)", (READER, privilege)
            ).fetchone()
            assert allowed == (False,), privilege


async def open_mapped(
    conninfo: str, encoder: MiniLMEncoder | None, **mapping: Any
) -> MappedPgBackend:
    settings = PostgresSettings.model_validate(
        {"conninfo": conninfo, "map": {**MEMORY_MAP, **mapping}}
    )
    return await MappedPgBackend.open(settings, BundledMiniLM(encoder) if encoder else None)


async def test_the_dense_leg_skips_rows_without_embeddings(
    memory_db: str, encoder: MiniLMEncoder
) -> None:
    backend = await open_mapped(memory_db, encoder)
    try:
        dense = await backend.search(LegQuery(D, "invoices", 50))
        assert len(dense) == EMBEDDED
        assert not {c.chunk.id for c in dense} & {
            "acme-billing:knowledge/refunds",
            "other-project:knowledge/secret",
        }
        keyword = await backend.search(LegQuery(B, "vault", 50))
        assert [c.chunk.id for c in keyword] == ["other-project:knowledge/secret"]
        # Namespace = source: a request scoped to one namespace reads only it.
        scoped = await backend.search(LegQuery(D, "invoices", 50, sources=("other-project",)))
        assert {c.chunk.provenance.source for c in scoped} == {"other-project"}
        # fetch keeps order, skips unknown and malformed ids; neighbours are not declared.
        ids = ["other-project:knowledge/invoices", "nope", "acme-billing:knowledge/tax"]
        assert [c.id for c in await backend.fetch(ids)] == [ids[0], ids[2]]
        assert Capability.NEIGHBORS not in backend.capabilities()
        assert Capability.FILTER in backend.capabilities()
        vectors = await backend.vectors(["acme-billing:knowledge/refunds", ids[0]])
        assert list(vectors) == [ids[0]]  # a row without an embedding has no vector
        similar = await backend.similar(ids[0], limit=10)
        assert ids[0] not in [c.chunk.id for c in similar] and len(similar) == EMBEDDED - 1
        with pytest.raises(InvalidArgument, match="created_at"):
            from retrieval_mcp.backends.protocol import SearchFilter

            await backend.search(
                LegQuery(B, "invoices", 5, filter=SearchFilter(equals={"created_at": (True,)}))
            )
        status = await backend.status()
        assert status.chunks == len(MEMORY_ROWS)
        assert status.extra["role_write_privileges"] == []
        dense_status: Any = status.extra["dense"]
        assert dense_status["index"].startswith("memory_embedding_hnsw")
        assert status.extra["keyword"] == "to_tsvector('english', value) per query"
        assert str(status.extra["keyword_index"]).startswith("none")  # logged at open, too
    finally:
        await backend.aclose()


async def test_map_tenants_bound_every_read(memory_db: str, encoder: MiniLMEncoder) -> None:
    backend = await open_mapped(memory_db, encoder, tenants=["acme-billing"])
    try:
        assert [s.name for s in await backend.sources()] == ["acme-billing"]
        for leg, text in ((D, "vault combination invoices"), (B, "invoices")):
            found = await backend.search(LegQuery(leg, text, 50))
            assert found and {c.chunk.provenance.source for c in found} == {"acme-billing"}
            assert await backend.search(LegQuery(leg, "vault", 5, sources=("other-project",))) == []
        assert await backend.fetch(["other-project:knowledge/invoices"]) == []
        assert await backend.vectors(["other-project:knowledge/invoices"]) == {}
    finally:
        await backend.aclose()


async def test_the_sessions_cannot_write_even_as_a_superuser(
    pg_uri: str, memory_db: str, encoder: MiniLMEncoder
) -> None:
    backend = await open_mapped(pg_uri, encoder)
    try:
        privileges: Any = (await backend.status()).extra["role_write_privileges"]
        assert "INSERT" in privileges
        pool = backend._pool
        assert pool is not None
        with pool.connection() as conn, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("DELETE FROM memory")
        # hnsw.ef_search is transaction-local: a search leaves the pooled session as it was.
        await backend.search(LegQuery(D, "invoices", 3))
        with pool.connection() as conn:
            assert conn.execute("SHOW hnsw.ef_search").fetchone() == ("40",)
    finally:
        await backend.aclose()


async def test_an_embedding_column_of_another_dimension_is_refused(
    pg_uri: str, encoder: MiniLMEncoder
) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS memory_voyage (namespace text, key text, value text, "
            "embedding vector(1024), PRIMARY KEY (namespace, key))"
        )
        conn.execute("CREATE TABLE IF NOT EXISTS memory_any (id text, value text, emb vector)")
        conn.execute("INSERT INTO memory_any VALUES ('a', 'x', '[1,2,3]') ON CONFLICT DO NOTHING")
    with pytest.raises(ConfigError, match=r"'embedding' holds 1024-d vectors.*384-d") as caught:
        await open_mapped(pg_uri, encoder, relation="memory_voyage", metadata_columns=[])
    assert "encoder" in caught.value.remedy
    # An unconstrained vector column is checked on a stored vector.
    with pytest.raises(ConfigError, match=r"'emb' holds 3-d vectors"):
        await open_mapped(
            pg_uri,
            encoder,
            relation="memory_any",
            id="id",
            id_scope="relation",
            tenant="",
            title="",
            embedding="emb",
            metadata_columns=[],
        )
    with pytest.raises(ConfigError, match=r"no column 'body'.*namespace, key, value"):
        await open_mapped(pg_uri, encoder, relation="memory_voyage", text="body")
    with pytest.raises(ConfigError, match="does not exist or this role cannot see it"):
        await open_mapped(pg_uri, encoder, relation="no_such_table")


async def test_without_an_embedding_column_only_the_keyword_leg_is_declared(
    memory_db: str,
) -> None:
    backend = await open_mapped(memory_db, None, embedding="")
    try:
        assert backend.capabilities() == frozenset({B, Capability.FILTER})
        assert [c.chunk.id for c in await backend.search(LegQuery(B, "chargeback", 3))] == [
            "acme-billing:knowledge/refunds"
        ]
    finally:
        await backend.aclose()


def test_a_mapped_relation_takes_tenants_not_sources(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"map\.tenants"):
        load_settings(
            state_dir=tmp_path,
            overrides={"backend": {"postgres": {"sources": ["a"], "map": {"relation": "memory"}}}},
        )
    with pytest.raises(ConfigError, match="plain column name"):
        load_settings(
            state_dir=tmp_path,
            overrides={"backend": {"postgres": {"map": {"relation": "m", "text": "a; drop"}}}},
        )


async def test_the_documents_view_through_mcp(
    pg_uri: str, pg_foreign: tuple[str, str], short_dir: Path
) -> None:
    from tests.backends.test_conformance import PG_VIEW_MAP

    config = write_config(short_dir / "server.toml", pg_uri, PG_VIEW_MAP)
    settings: Settings = load_settings(config, state_dir=short_dir / "state")
    scoped = create_token(settings.token_path, "garden", ["other"])
    admin = create_token(settings.token_path, "admin")
    table, view = pg_foreign
    before = snapshot(pg_uri, table)
    async with running_server(settings, token=admin) as server:
        async with _connect(server, admin) as client:
            found = await call(client, "search", {"query": "E1234", "top_k": 3})
            assert found["data"]["hits"][0]["provenance"]["doc_id"] == "boiler.md"
            assert found["meta"]["legs"]["used"] == ["dense", "bm25"]
            pump = next(
                h["id"]
                for h in (await call(client, "search", {"query": "pump station 5"}))["data"]["hits"]
                if h["provenance"]["doc_id"] == "pumps.md"
            )
            around = await call(
                client, "expand_neighbors", {"chunk_id": pump, "before": 1, "after": 1}
            )
            assert around["ok"], around["error"]
        async with _connect(server, scoped) as client:
            found = await call(client, "search", {"query": "E1234 boiler tomato", "top_k": 10})
            assert {h["provenance"]["source"] for h in found["data"]["hits"]} == {"other"}
    assert snapshot(pg_uri, table) == before
    assert view == "documents"


async def test_query_embeddings_from_an_openai_compatible_endpoint(
    memory_db: str,
    tmp_path: Path,
    nursery: trio.Nursery,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
) -> None:
    """CONTRACT TEST for the encoder side: the column was built by the model behind the
    endpoint (here MiniLM again), so the dense leg embeds queries there."""
    from retrieval_mcp.services import open_backend
    from tests.backends.conformance import make_settings
    from tests.backends.contract_servers.loopback_host import serve_on_loopback
    from tests.backends.contract_servers.openai_embeddings_contract import EmbeddingsContract

    embeddings = EmbeddingsContract(
        model="minilm", api_key="ek", embed=lambda t: encoder.embed([t])[0].tolist()
    )
    url = await nursery.start(serve_on_loopback, embeddings.app)
    monkeypatch.setenv("LRM_TEST_EMBED_KEY", "ek")
    settings = make_settings(
        tmp_path,
        {"kind": "postgres", "postgres": {"conninfo": memory_db, "map": MEMORY_MAP}},
        encoder={
            "kind": "openai-compatible",
            "openai": {
                "base_url": url,
                "model": "minilm",
                "api_key": {"env": "LRM_TEST_EMBED_KEY"},
            },
        },
    )
    async with open_backend(settings) as backend:
        found = await backend.search(LegQuery(D, "when are invoices payable", 3))
        assert found[0].chunk.id == "acme-billing:knowledge/invoices"
        assert embeddings.batches  # the probe at start and the query
