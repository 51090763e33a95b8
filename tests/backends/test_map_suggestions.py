"""``config suggest``: read a store someone else built, propose the map, and check that
the proposal, pasted into a settings file as printed, opens and searches that store.

Postgres is real (the seed-002 memory table, the foreign table and its view); remote
Qdrant, Azure AI Search and Databricks are CONTRACT TESTS against the local servers.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
import trio

from retrieval_mcp.backends.map_suggestions import suggest_maps
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.schema_suggestion import Suggestion, render_toml
from retrieval_mcp.cli import main
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.services import open_backend
from retrieval_mcp.settings import Settings, load_settings
from tests.backends.conformance import load_azure, load_databricks, load_qdrant, make_settings
from tests.backends.contract_servers.azure_contract import AzureSearchContract
from tests.backends.contract_servers.databricks_contract import DatabricksContract
from tests.backends.contract_servers.loopback_host import serve_on_loopback
from tests.backends.contract_servers.qdrant_contract import QdrantContract

D, B, F, N = Capability.DENSE, Capability.BM25, Capability.FILTER, Capability.NEIGHBORS


def settings_from(snippet: str, state_dir: Path, **extra: Any) -> Settings:
    """What an operator gets by pasting the snippet as their settings file."""
    data = tomllib.loads(snippet)
    return load_settings(
        state_dir=state_dir,
        overrides={**data, "demo": {"ingest_on_first_start": False}, **extra},
    )


def section(suggestion: Suggestion, name: str) -> dict[str, Any]:
    return dict(dict(suggestion.tables)[name])


async def test_the_seed_memory_table_is_mapped_as_it_is(
    memory_db: str, tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    base = make_settings(tmp_path, {"kind": "postgres", "postgres": {"conninfo": memory_db}})
    [found] = await suggest_maps(base, target="memory")
    assert section(found, "backend.postgres.map") == {
        "relation": "public.memory",
        "id": "key",
        "id_scope": "tenant",
        "text": "value",
        "embedding": "embedding",
        "tsvector": "",
        "title": "",
        "doc_id": "",
        "ordinal": "",
        "uri": "",
        "metadata": "",
        "metadata_columns": ["created_at", "updated_at"],
        "tenant": "namespace",
    }
    assert found.legs == ("dense", "bm25")
    notes = " ".join(found.notes)
    assert "values seen: acme-billing, other-project" in notes
    assert "NULL embedding" in notes and "to_tsvector('english', value) per query" in notes
    assert "expand_neighbors is not offered" in notes
    assert not any("may INSERT" in n for n in found.notes)  # the reader role only reads

    async with open_backend(
        settings_from(render_toml([found]), tmp_path / "s"), encoder
    ) as backend:
        assert backend.capabilities() >= {D, B, F}
        hits = await backend.search(LegQuery(B, "chargeback", 3))
        assert hits[0].chunk.id == "acme-billing:knowledge/refunds"


async def test_every_candidate_relation_is_proposed_and_the_view_has_its_tsvector(
    pg_uri: str, pg_foreign: tuple[str, str], memory_db: str, tmp_path: Path
) -> None:
    base = make_settings(tmp_path, {"kind": "postgres", "postgres": {"conninfo": pg_uri}})
    found = await suggest_maps(base)
    targets = [s.target for s in found]
    assert any("foreign_chunks" in t for t in targets)
    [view] = await suggest_maps(base, target="documents")
    mapped = section(view, "backend.postgres.map")
    assert (mapped["tsvector"], mapped["doc_id"], mapped["ordinal"], mapped["tenant"]) == (
        "tsv",
        "doc",
        "chunk_index",
        "collection",
    )
    assert mapped["metadata"] == "metadata" and "neighbors" in view.features
    assert any("a view" in n for n in view.notes)
    assert any("may INSERT" in n for n in view.notes)  # the superuser could write
    rendered = render_toml(found)
    assert tomllib.loads(rendered)["backend"]["kind"] == "postgres"
    assert "# Other candidates" in rendered or len(found) == 1


def test_config_suggest_prints_a_snippet_that_loads(
    memory_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "server.toml"
    config.write_text(
        f'[backend]\nkind = "postgres"\n[backend.postgres]\nconninfo = "{memory_db}"\n'
    )
    argv = ["config", "suggest", "--config", str(config), "--state-dir", str(tmp_path / "st")]
    assert main([*argv, "--target", "memory"]) == 0
    printed = capsys.readouterr().out
    data = tomllib.loads(printed)
    assert data["backend"]["postgres"]["map"]["tenant"] == "namespace"
    assert data["backend"]["postgres"]["conninfo"] == memory_db
    assert main([*argv, "--target", "memory", "--json"]) == 0
    assert '"id_scope": "tenant"' in capsys.readouterr().out
    assert main([*argv, "--target", "no_such_relation"]) == 2
    assert "does not exist" in capsys.readouterr().err


async def test_a_remote_qdrant_collection_with_every_kind_of_vector(
    tmp_path: Path,
    nursery: trio.Nursery,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> None:
    server = QdrantContract()
    load_qdrant(server, corpus_vectors, every_leg=True)
    url = await nursery.start(serve_on_loopback, server.app)
    base = make_settings(tmp_path, {"kind": "qdrant-remote", "qdrant_remote": {"url": url}})
    [found] = await suggest_maps(base)  # no collection named: every one listed
    main_table = section(found, "backend.qdrant_remote")
    assert main_table["url"] == url and main_table["collection"] == "company_docs"
    assert (main_table["dense_vector"], main_table["sparse_vector"]) == (
        "text-dense",
        "text-sparse",
    )
    assert section(found, "backend.qdrant_remote.fields") == {
        "text": "content",
        "title": "heading",
        "source": "tenant",
        "doc_id": "document",
        "ordinal": "position",
        "uri": "link",
        "metadata": "",
        "metadata_fields": ["team", "year"],
    }
    choices = {(c.section, c.key): c.value for c in found.optional}
    assert choices[("backend.qdrant_remote.sparse_leg", "vector")] == "splade"
    assert choices[("backend.qdrant_remote.multivector_leg", "vector")] == "colbert"
    assert any("other dense vectors: title-dense" in n for n in found.notes)
    assert any("team has no payload index" in n for n in found.notes)

    async with open_backend(
        settings_from(render_toml([found]), tmp_path / "s"), encoder
    ) as backend:
        assert backend.capabilities() >= {D, B, F, N}


async def test_an_azure_index_and_a_databricks_index(
    tmp_path: Path,
    nursery: trio.Nursery,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> None:
    def embed(text: str) -> list[float]:
        vector: list[float] = encoder.embed([text])[0].tolist()
        return vector

    azure = AzureSearchContract(api_key="k", embed=embed)
    load_azure(azure, corpus_vectors)
    azure_url = await nursery.start(serve_on_loopback, azure.app)
    monkeypatch.setenv("LRM_TEST_AZURE_KEY", "k")
    base = make_settings(
        tmp_path,
        {
            "kind": "azure-search",
            "azure_search": {
                "endpoint": azure_url,
                "index": "rag-chunks",
                "api_key": {"env": "LRM_TEST_AZURE_KEY"},
            },
        },
    )
    [found] = await suggest_maps(base)
    values = section(found, "backend.azure_search")
    assert values["api_key"] == {"env": "LRM_TEST_AZURE_KEY"}  # the reference, never the key
    assert (values["vector_field"], values["vector_query"], values["semantic_configuration"]) == (
        "text_vector",
        "text",
        "default",
    )
    fields = section(found, "backend.azure_search.fields")
    assert (fields["id"], fields["text"], fields["ordinal"]) == ("id", "text", "ordinal")
    async with open_backend(
        settings_from(render_toml([found]), tmp_path / "a"), encoder
    ) as backend:
        assert backend.capabilities() >= {D, B, F, N}

    databricks = DatabricksContract(tokens={"t"}, embed=embed)
    indexes = load_databricks(databricks, corpus_vectors)
    db_url = await nursery.start(serve_on_loopback, databricks.app)
    monkeypatch.setenv("LRM_TEST_DATABRICKS_TOKEN", "t")
    base = make_settings(
        tmp_path,
        {
            "kind": "databricks",
            "databricks": {"workspace_url": db_url, "token": {"env": "LRM_TEST_DATABRICKS_TOKEN"}},
        },
    )
    [found] = await suggest_maps(base, target=indexes["kb"])
    values = section(found, "backend.databricks")
    assert values["query"] == "text" and values["indexes"] == {"kb_chunks": indexes["kb"]}
    fields = section(found, "backend.databricks.fields")
    assert (fields["doc_id"], fields["ordinal"], fields["metadata_fields"]) == (
        "doc_id",
        "ordinal",
        ["team", "year"],
    )
    async with open_backend(
        settings_from(render_toml([found]), tmp_path / "d"), encoder
    ) as backend:
        assert backend.capabilities() >= {D, B, F, N}


async def test_the_embedded_store_has_nothing_to_suggest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="the server's own store"):
        await suggest_maps(make_settings(tmp_path, {"kind": "qdrant-embedded"}))
