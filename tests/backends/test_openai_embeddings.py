"""CONTRACT TESTS: the OpenAI-compatible embeddings provider against a local server
speaking ``POST /v1/embeddings``."""

from __future__ import annotations

import math

import pytest
import trio

from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.encoders.openai_compatible import OpenAICompatibleEmbeddings, embeddings_path
from retrieval_mcp.errors import (
    BackendAuthFailed,
    BackendBadResponse,
    BackendError,
    BackendUnavailable,
    ConfigError,
)
from tests.backends.contract_servers.loopback_host import closed_port_url, serve_on_loopback
from tests.backends.contract_servers.openai_embeddings_contract import EmbeddingsContract


@pytest.fixture
async def endpoint(nursery: trio.Nursery, encoder: MiniLMEncoder) -> tuple[EmbeddingsContract, str]:
    server = EmbeddingsContract(
        model="mini", api_key="sk-test", embed=lambda t: encoder.embed([t])[0].tolist()
    )
    url: str = await nursery.start(serve_on_loopback, server.app)
    return server, url


async def test_embeds_in_order_in_batches_as_unit_vectors(
    endpoint: tuple[EmbeddingsContract, str], encoder: MiniLMEncoder
) -> None:
    server, url = endpoint
    provider = OpenAICompatibleEmbeddings(url, "mini", api_key="sk-test", batch_size=2)
    try:
        assert await provider.probe() == 384 and provider.dimension == 384
        texts = ["boiler pressure", "aircraft wing", "sourdough", "tomatoes", "pumps"]
        vectors = await provider.embed(texts)
        assert server.batches[1:] == [2, 2, 1]
        expected = encoder.embed(texts)
        for vector, row in zip(vectors, expected, strict=True):
            assert abs(math.sqrt(sum(x * x for x in vector)) - 1.0) < 1e-6
            assert sum(a * b for a, b in zip(vector, row.tolist(), strict=True)) > 0.999
        assert provider.name == "openai-compatible:mini"
    finally:
        await provider.aclose()
        await provider.aclose()


async def test_failures_are_our_errors(endpoint: tuple[EmbeddingsContract, str]) -> None:
    server, url = endpoint
    cases: list[tuple[OpenAICompatibleEmbeddings, type[BackendError]]] = [
        (OpenAICompatibleEmbeddings(url, "mini", api_key="wrong"), BackendAuthFailed),
        (OpenAICompatibleEmbeddings(url, "nope", api_key="sk-test"), BackendError),
        (OpenAICompatibleEmbeddings(closed_port_url(), "mini"), BackendUnavailable),
        (
            OpenAICompatibleEmbeddings(url, "mini", api_key="sk-test", dimension=768),
            BackendBadResponse,
        ),
    ]
    for provider, error in cases:
        with pytest.raises(error) as caught:
            await provider.embed(["x"])
        assert caught.value.remedy
        await provider.aclose()
    provider = OpenAICompatibleEmbeddings(url, "mini", api_key="sk-test")
    try:
        server.faults.mode = "malformed"
        with pytest.raises(BackendBadResponse):
            await provider.embed(["x"])
        server.faults.mode = None
        server.truncate_to = 10
        await provider.embed(["learns 10"])
        server.truncate_to = 12
        with pytest.raises(BackendBadResponse, match="12-d vector"):
            await provider.embed(["then changes"])
    finally:
        await provider.aclose()


def test_base_url_forms_and_config_errors() -> None:
    assert embeddings_path("http://h:1") == ("http://h:1", "/v1/embeddings")
    assert embeddings_path("http://h:1/v1/") == ("http://h:1", "/v1/embeddings")
    with pytest.raises(ConfigError):
        OpenAICompatibleEmbeddings("", "m")
