"""CONTRACT TESTS: Azure AI Search and Databricks Vector Search indexes built by others are
checked at start: a field map or vector field that cannot work is refused, naming the
field, before any agent asks a question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.services import open_backend
from tests.backends.conformance import load_azure, load_databricks, make_settings
from tests.backends.contract_servers.azure_contract import AzureSearchContract
from tests.backends.contract_servers.databricks_contract import DatabricksContract
from tests.backends.contract_servers.loopback_host import serve_on_loopback


@pytest.fixture
async def azure(
    nursery: trio.Nursery,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> tuple[AzureSearchContract, str]:
    server = AzureSearchContract(api_key="k", embed=lambda t: encoder.embed([t])[0].tolist())
    load_azure(server, corpus_vectors)
    monkeypatch.setenv("LRM_TEST_AZURE_KEY", "k")
    return server, await nursery.start(serve_on_loopback, server.app)


def azure_settings(tmp_path: Path, url: str, **changes: Any) -> Any:
    config: dict[str, Any] = {
        "endpoint": url,
        "index": "rag-chunks",
        "api_key": {"env": "LRM_TEST_AZURE_KEY"},
        "vector_field": "text_vector",
        "fields": {"metadata_fields": ["team", "year"]},
        **changes,
    }
    return make_settings(tmp_path, {"kind": "azure-search", "azure_search": config})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"vector_field": "embedding"},
            r"no vector field 'embedding' \(its vector fields: text_vector\)",
        ),
        ({"fields": {"title": "heading"}}, r"no field 'heading' \(fields.title\).*doc_id"),
        ({"semantic_configuration": "fancy"}, r"no semantic configuration 'fancy'"),
    ],
)
async def test_azure_refuses_a_map_the_index_cannot_serve(
    tmp_path: Path,
    encoder: MiniLMEncoder,
    azure: tuple[AzureSearchContract, str],
    changes: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(ConfigError, match=message):
        async with open_backend(azure_settings(tmp_path, azure[1], **changes), encoder):
            pass


async def test_azure_refuses_a_vector_field_of_another_dimension(
    tmp_path: Path, encoder: MiniLMEncoder, azure: tuple[AzureSearchContract, str]
) -> None:
    server, url = azure
    for doc in server.indexes["rag-chunks"].docs:
        doc["__vector"] = doc["__vector"][:256]
    with pytest.raises(ConfigError, match=r"'text_vector' holds 256-d vectors.*384-d") as caught:
        async with open_backend(azure_settings(tmp_path, url), encoder):
            pass
    assert "vector_query" in caught.value.remedy
    # The index's own vectorizer embeds the text: then our encoder's dimension is moot.
    async with open_backend(azure_settings(tmp_path, url, vector_query="text"), encoder):
        pass


async def test_azure_refuses_text_queries_without_a_vectorizer_and_unfilterable_fields(
    tmp_path: Path, encoder: MiniLMEncoder, azure: tuple[AzureSearchContract, str]
) -> None:
    server, url = azure
    index = server.indexes["rag-chunks"]
    index.vectorizer = False
    with pytest.raises(ConfigError, match="has no vectorizer"):
        async with open_backend(azure_settings(tmp_path, url, vector_query="text"), encoder):
            pass
    index.not_filterable = ("year",)
    with pytest.raises(
        ConfigError, match=r"field 'year' \(fields.metadata_fields\) is not filterable"
    ):
        async with open_backend(azure_settings(tmp_path, url), encoder):
            pass


@pytest.fixture
async def databricks(
    nursery: trio.Nursery,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> tuple[DatabricksContract, dict[str, str], str]:
    server = DatabricksContract(tokens={"t"}, embed=lambda t: encoder.embed([t])[0].tolist())
    indexes = load_databricks(server, corpus_vectors)
    monkeypatch.setenv("LRM_TEST_DATABRICKS_TOKEN", "t")
    return server, indexes, await nursery.start(serve_on_loopback, server.app)


def databricks_settings(tmp_path: Path, url: str, indexes: dict[str, str], **changes: Any) -> Any:
    config: dict[str, Any] = {
        "workspace_url": url,
        "token": {"env": "LRM_TEST_DATABRICKS_TOKEN"},
        "indexes": indexes,
        "fields": {"source": "", "uri": "", "metadata_fields": ["team", "year"]},
        **changes,
    }
    return make_settings(tmp_path, {"kind": "databricks", "databricks": config})


async def test_databricks_checks_query_kind_dimension_and_columns(
    tmp_path: Path,
    encoder: MiniLMEncoder,
    databricks: tuple[DatabricksContract, dict[str, str], str],
) -> None:
    server, indexes, url = databricks
    with pytest.raises(ConfigError, match=r"computes its own embeddings \(from text\)"):
        async with open_backend(
            databricks_settings(tmp_path, url, indexes, query="vector"), encoder
        ):
            pass
    with pytest.raises(ConfigError, match="no column 'chapter'"):
        async with open_backend(
            databricks_settings(
                tmp_path, url, indexes, fields={"source": "", "uri": "", "title": "chapter"}
            ),
            encoder,
        ):
            pass
    for index in server.indexes.values():  # now self-managed: vectors of another size
        index.managed_embeddings = False
        index.vectors = [v[:128] for v in index.vectors]
    with pytest.raises(ConfigError, match=r"embedding column '__vector' holds 128-d.*384-d"):
        async with open_backend(
            databricks_settings(tmp_path, url, indexes, query="vector"), encoder
        ):
            pass
    with pytest.raises(ConfigError, match="no managed embeddings"):
        async with open_backend(databricks_settings(tmp_path, url, indexes, query="text"), encoder):
            pass
