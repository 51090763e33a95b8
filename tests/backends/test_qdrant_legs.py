"""CONTRACT TESTS: a remote Qdrant collection with the vectors collections really have —
several named dense vectors, a learned sparse vector, a late-interaction multivector —
against ``contract_servers/qdrant_contract.py`` and a TEI-shaped query encoder.

End to end, the real MCP server answers with the dense, sparse and multivector legs
fused and reported in ``meta.legs``. The schema checks at open name what the
collection has; a failing query encoder drops only its own leg.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalRequest
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.services import open_backend
from retrieval_mcp.settings import PipelineConfig, Settings
from tests.backends.conformance import QDRANT_FIELDS, load_qdrant, make_settings
from tests.backends.contract_servers.loopback_host import serve_on_loopback
from tests.backends.contract_servers.qdrant_contract import QdrantContract
from tests.backends.contract_servers.tei_contract import TeiEncoderContract
from tests.backends.contract_servers.toy_encoders import toy_sparse
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]
SPLADE_MODEL = "prithivida/splade_pp_en_v1"  # served by the contract's "inference"


@pytest.fixture
async def stack(
    nursery: trio.Nursery, corpus_vectors: dict[str, list[float]]
) -> tuple[QdrantContract, TeiEncoderContract, str, str]:
    qdrant = QdrantContract(inference={SPLADE_MODEL: toy_sparse})
    load_qdrant(qdrant, corpus_vectors, every_leg=True)
    encoders = TeiEncoderContract()
    qdrant_url = await nursery.start(serve_on_loopback, qdrant.app)
    tei_url = await nursery.start(serve_on_loopback, encoders.app)
    return qdrant, encoders, qdrant_url, tei_url


def remote(url: str, tei_url: str, **changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "url": url,
        "collection": "company_docs",
        "dense_vector": "text-dense",
        "sparse_leg": {"vector": "splade", "model": SPLADE_MODEL},
        "multivector_leg": {"vector": "colbert", "endpoint": tei_url},
        "fields": QDRANT_FIELDS,
    }
    return {"kind": "qdrant-remote", "qdrant_remote": {**config, **changes}}


async def test_dense_sparse_and_multivector_fused_end_to_end(
    make_settings: SettingsFactory, stack: tuple[QdrantContract, TeiEncoderContract, str, str]
) -> None:
    qdrant, encoders, url, tei_url = stack
    settings = make_settings(backend=remote(url, tei_url))
    async with running_server(settings) as server, server.client() as client:
        result = await client.call_tool("search", {"query": "boiler pressure E1234", "top_k": 4})
        envelope = result.structured_content
        assert envelope is not None and envelope["ok"], envelope
        meta = envelope["meta"]
        assert meta["legs"] == {"used": ["dense", "sparse", "multivector"], "dropped": []}
        assert meta["steps_run"][:4] == [
            "fetch:dense",
            "fetch:sparse",
            "fetch:multivector",
            "fuse:rrf",
        ]
        top = envelope["data"]["hits"][0]
        assert top["provenance"]["doc_id"] == "boiler.md"
        assert set(top["legs"]) == {"dense", "sparse", "multivector"}
    queries = [body for path, body in qdrant.requests if path.endswith("/points/query")]
    by_vector = {q["using"]: q["query"] for q in queries}
    assert by_vector["splade"] == {"text": "boiler pressure E1234", "model": SPLADE_MODEL}
    colbert = by_vector["colbert"]
    assert isinstance(colbert, list) and isinstance(colbert[0], list)  # token vectors
    assert isinstance(by_vector["text-dense"][0], float)
    assert ("/embed_all", ["boiler pressure E1234"]) in encoders.calls


async def test_any_named_dense_vector_and_bm25_by_server_inference(
    tmp_path: Path,
    encoder: MiniLMEncoder,
    stack: tuple[QdrantContract, TeiEncoderContract, str, str],
) -> None:
    qdrant, _, url, tei_url = stack
    async with open_backend(
        make_settings(
            tmp_path,
            remote(
                url,
                tei_url,
                dense_vector="title-dense",
                sparse_vector="text-sparse",
                sparse_model="qdrant/bm25",
            ),
        ),
        encoder,
    ) as backend:
        assert Capability.BM25 in backend.capabilities()
        await backend.search(LegQuery(Capability.DENSE, "bread", 3))
        await backend.search(LegQuery(Capability.BM25, "bread", 3))
        used = [body.get("using") for path, body in qdrant.requests if path.endswith("/query")]
        assert used[-2:] == ["title-dense", "text-sparse"]
        status = await backend.status()
        legs: Any = status.extra["legs"]
        assert legs["sparse"]["query"] == f"qdrant inference {SPLADE_MODEL}"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"sparse_leg": {"vector": "nope", "model": "m"}},
            r"no sparse vector named 'nope'.*splade",
        ),
        (
            {"multivector_leg": {"vector": "text-dense", "endpoint": "http://127.0.0.1:9"}},
            r"no multivector named 'text-dense'.*colbert",
        ),
        ({"dense_vector": "colbert"}, r"'colbert' is a multivector"),
    ],
)
async def test_vectors_the_collection_lacks_are_refused_at_open(
    tmp_path: Path,
    encoder: MiniLMEncoder,
    stack: tuple[QdrantContract, TeiEncoderContract, str, str],
    changes: dict[str, Any],
    message: str,
) -> None:
    _, _, url, tei_url = stack
    with pytest.raises(ConfigError, match=message):
        async with open_backend(make_settings(tmp_path, remote(url, tei_url, **changes)), encoder):
            pass


async def test_a_multivector_endpoint_of_another_width_is_refused_at_open(
    tmp_path: Path,
    encoder: MiniLMEncoder,
    stack: tuple[QdrantContract, TeiEncoderContract, str, str],
) -> None:
    _, encoders, url, tei_url = stack
    encoders.token_dim_override = 8
    with pytest.raises(ConfigError, match=r"8-d token vectors.*'colbert' holds 32-d"):
        async with open_backend(make_settings(tmp_path, remote(url, tei_url)), encoder):
            pass


async def test_a_failing_query_encoder_drops_only_its_leg(
    tmp_path: Path,
    encoder: MiniLMEncoder,
    stack: tuple[QdrantContract, TeiEncoderContract, str, str],
) -> None:
    _, encoders, url, tei_url = stack
    async with open_backend(
        make_settings(
            tmp_path,
            remote(url, tei_url, sparse_leg={"vector": "splade", "endpoint": tei_url}),
        ),
        encoder,
    ) as backend:
        encoders.faults.mode = "500"
        pipeline = Pipeline(backend, PipelineConfig(), lambda text: len(text.split()))
        async with trio.open_nursery() as nursery:
            await nursery.start(pipeline.run)
            outcome = await pipeline.retrieve(RetrievalRequest(text="sourdough starter", top_k=3))
            nursery.cancel_scope.cancel()
        assert outcome.legs_used == ["dense"]
        assert sorted(outcome.legs_dropped) == [
            ("multivector", "error:backend_unavailable"),
            ("sparse", "error:backend_unavailable"),
        ]
        assert outcome.hits[0].chunk.provenance.doc_id == "bread.md"


def test_a_leg_takes_exactly_one_query_side(tmp_path: Path) -> None:
    for leg in ({"vector": "splade"}, {"vector": "splade", "model": "m", "endpoint": "http://x"}):
        with pytest.raises(ConfigError, match="exactly one of model"):
            make_settings(tmp_path, {"kind": "qdrant-remote", "qdrant_remote": {"sparse_leg": leg}})
