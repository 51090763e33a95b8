"""A wheel-only install: no tokenizer for the dense model, so the server says so and
serves keyword search; once the model is installed, the same store serves hybrid."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from retrieval_mcp.encoders import minilm
from retrieval_mcp.settings import Settings
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]


async def test_without_the_dense_model_keyword_search_serves_and_says_why(
    make_settings: SettingsFactory, corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(minilm, "TOKENIZER_FILES", (("no_such_package_lrm", "tokenizer.json"),))
    settings = make_settings()
    await ingest_folder(settings, corpus_dir, "tiny")
    manifest = settings.store_path / "manifest.json"
    assert json.loads(manifest.read_text())["encoder"] is None
    async with running_server(settings) as server, server.client() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "keyword retrieval" in (tools["search"].description or "")
        assert "more_like_this" in tools and "expand_neighbors" in tools

        result = await client.call_tool("search", {"query": "what does E1234 mean", "top_k": 3})
        envelope = result.structured_content
        assert envelope is not None and envelope["ok"] is True
        assert envelope["data"]["hits"][0]["provenance"]["doc_id"] == "boiler.md"
        meta = envelope["meta"]
        assert meta["legs"]["used"] == ["bm25"] and meta["degraded"] is True
        (dense,) = meta["legs"]["dropped"]
        assert (dense["leg"], dense["reason"], dense["remedy"]) == (
            "dense",
            "unsupported",
            minilm.DENSE_REMEDY,
        )
        assert "tokenizer is not installed" in dense["detail"]

        expected = [{"leg": "dense", "reason": dense["detail"], "remedy": minilm.DENSE_REMEDY}]
        status = (await client.call_tool("index_status", {})).structured_content
        assert status is not None and status["data"]["unavailable"] == expected
        assert "dense" not in status["data"]["capabilities"]
        sources = (await client.call_tool("list_sources", {})).structured_content
        assert sources is not None and sources["data"]["unavailable"] == expected
        text = (await client.call_tool("list_sources", {})).content[0].text  # type: ignore[union-attr]
        assert minilm.DENSE_REMEDY in text

        anchor = envelope["data"]["hits"][0]["id"]
        packed = await client.call_tool("get_context", {"query": "boiler pressure"})
        assert packed.structured_content is not None and packed.structured_content["ok"]
        assert packed.structured_content["data"]["tokens_used"] > 0  # estimated counts
        similar = await client.call_tool("more_like_this", {"chunk_id": anchor})
        assert similar.structured_content is not None and similar.structured_content["ok"]
        token = server.token

    monkeypatch.undo()  # the model's package is installed again: same store, restarted
    async with running_server(settings, token=token) as server, server.client() as client:
        assert json.loads(manifest.read_text())["encoder"] == minilm.MODEL_NAME
        found = await client.call_tool("search", {"query": "how to make a loaf with a starter"})
        envelope = found.structured_content
        assert envelope is not None
        assert envelope["meta"]["legs"] == {"used": ["dense", "bm25"], "dropped": []}
        top = envelope["data"]["hits"][0]
        assert top["provenance"]["doc_id"] == "bread.md" and "dense" in top["legs"]


def test_the_token_estimate_is_near_the_tokenizers_count(encoder: minilm.MiniLMEncoder) -> None:
    texts = [
        "Error code E1234 means the boiler's pressure sensor reads below 0.5 bar.",
        "The boundary layer on an aircraft wing becomes turbulent downstream of the "
        "transition point; laminar flow has lower skin friction.",
        "Sourdough rises with a starter of wild yeast and lactic acid bacteria.",
    ]
    for text in texts:
        exact, estimate = encoder.count_tokens(text), minilm.approximate_token_count(text)
        assert 0.75 * exact <= estimate <= 1.35 * exact, (text, exact, estimate)
