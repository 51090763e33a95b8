"""CONTRACT TESTS: Databricks ``HYBRID`` queries, against the local contract server.

Databricks documents which query fields each ``query_type`` needs: ``HYBRID`` always
needs ``query_text`` (its keyword half searches it) and, on an index with self-managed
embeddings, ``query_vector`` too (the index has no model to embed the text). The
contract server enforces that rule as documented; the adapter must meet it.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import BackendError
from retrieval_mcp.json_http import JsonHttp
from retrieval_mcp.services import open_backend
from tests.backends.conformance import DENSE_QUERY, KEYWORD_QUERY, load_databricks, make_settings
from tests.backends.contract_servers.databricks_contract import DatabricksContract
from tests.backends.contract_servers.loopback_host import serve_on_loopback

FIELDS = {"source": "", "uri": "", "metadata_fields": ["team", "year"]}


async def contract(
    nursery: trio.Nursery,
    encoder: MiniLMEncoder,
    vectors: dict[str, list[float]],
    *,
    managed: bool,
) -> tuple[DatabricksContract, str, dict[str, str]]:
    server = DatabricksContract(
        tokens={"dapi-good"}, embed=lambda t: encoder.embed([t])[0].tolist()
    )
    indexes = load_databricks(server, vectors, managed_embeddings=managed)
    url: str = await nursery.start(serve_on_loopback, server.app)
    return server, url, indexes


async def test_hybrid_over_self_managed_embeddings_sends_text_and_vector(
    nursery: trio.Nursery,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> None:
    server, url, indexes = await contract(nursery, encoder, corpus_vectors, managed=False)
    monkeypatch.setenv("LRM_TEST_DATABRICKS_TOKEN", "dapi-good")
    settings = make_settings(
        tmp_path / "state",
        {
            "kind": "databricks",
            "databricks": {
                "workspace_url": url,
                "token": {"env": "LRM_TEST_DATABRICKS_TOKEN"},
                "indexes": indexes,
                "query": "vector",
                "dense_query_type": "HYBRID",
                "fields": FIELDS,
            },
        },
    )
    async with open_backend(settings, encoder) as backend:
        meaning = await backend.search(LegQuery(Capability.DENSE, DENSE_QUERY[0], 3))
        keyword = await backend.search(LegQuery(Capability.DENSE, KEYWORD_QUERY[0], 3))
    assert meaning[0].chunk.provenance.doc_id == DENSE_QUERY[1]
    assert keyword[0].chunk.provenance.doc_id == KEYWORD_QUERY[1]  # the keyword half ran
    hybrid = [q for q in server.queries if q.get("query_type") == "HYBRID"]
    assert hybrid
    assert all(isinstance(q.get("query_text"), str) for q in hybrid)
    assert all(len(q.get("query_vector") or []) == 384 for q in hybrid)


@pytest.mark.parametrize(
    ("managed", "body", "refusal"),
    [
        (False, {"query_type": "HYBRID", "query_vector": "V"}, "query_text is required"),
        (False, {"query_type": "HYBRID", "query_text": "pumps"}, "query_vector is required"),
        (False, {"query_type": "ANN", "query_text": "pumps"}, "query_vector is required"),
        (True, {"query_type": "HYBRID", "query_vector": "V"}, "query_text is required"),
        (True, {"query_type": "FULL_TEXT"}, "query_text is required"),
        (True, {"query_type": "ANN"}, "One of query_text, query_vector"),
        (False, {"query_type": "HYBRID", "query_text": "pumps", "query_vector": "V"}, None),
        (True, {"query_type": "HYBRID", "query_text": "pumps"}, None),
        (True, {"query_type": "ANN", "query_text": "pumps"}, None),
    ],
)
async def test_the_contract_server_follows_the_documented_rule(
    nursery: trio.Nursery,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
    managed: bool,
    body: dict[str, Any],
    refusal: str | None,
) -> None:
    _, url, indexes = await contract(nursery, encoder, corpus_vectors, managed=managed)
    vector = next(iter(corpus_vectors.values()))
    request = {k: vector if v == "V" else v for k, v in body.items()}
    request |= {"columns": ["id", "text"], "num_results": 2}

    async def bearer() -> dict[str, str]:
        return {"Authorization": "Bearer dapi-good"}

    index = next(iter(indexes.values()))
    async with JsonHttp("Databricks", url, timeout_s=5, headers=bearer) as http:
        if refusal is None:
            answer = await http.request(
                "POST", f"/api/2.0/vector-search/indexes/{index}/query", json=request
            )
            assert answer["result"]["data_array"]
        else:
            with pytest.raises(BackendError, match=refusal) as caught:
                await http.request(
                    "POST", f"/api/2.0/vector-search/indexes/{index}/query", json=request
                )
            assert "HTTP 400" in caught.value.message
