"""Every ladder tool end to end: the MCP SDK client against the real server and store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client

from retrieval_mcp.screening import unwrap
from retrieval_mcp.settings import Settings
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]


def long_doc() -> str:
    parts = [
        f"Section {i}. The pump station {i} moves water uphill using valve set {i}."
        for i in range(30)
    ]
    return "# Pump stations\n\n" + "\n\n".join(parts)


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    envelope: dict[str, Any] | None = result.structured_content
    assert envelope is not None
    assert envelope["ok"] is not result.is_error
    return envelope


async def test_the_ladder(make_settings: SettingsFactory, corpus_dir: Path) -> None:
    (corpus_dir / "pumps.md").write_text(long_doc())
    settings = make_settings(chunking={"chunk_chars": 200, "overlap_chars": 40})
    await ingest_folder(settings, corpus_dir, "tiny")
    async with running_server(settings) as server, server.client() as client:
        # L1: search, snippets and guard annotations.
        found = await call(client, "search", {"query": "pump station 17 valve", "top_k": 5})
        hits = found["data"]["hits"]
        anchor = hits[0]
        assert anchor["provenance"]["doc_id"] == "pumps.md"
        assert "17" in anchor["text"]
        assert all("passed_guard" in h for h in hits)
        assert len(anchor["text"]) <= settings.search.snippet_chars + 4

        # L2: expand_neighbors reads around the hit, in order, with the anchor marked.
        around = await call(
            client, "expand_neighbors", {"chunk_id": anchor["id"], "before": 2, "after": 1}
        )
        chunks = around["data"]["chunks"]
        ordinals = [c["provenance"]["ordinal"] for c in chunks]
        assert ordinals == sorted(ordinals) and len(chunks) == 4
        assert [c["id"] for c in chunks if c["is_anchor"]] == [anchor["id"]]
        assert around["meta"]["steps_run"] == ["fetch:by_id", "neighbors"]

        # L2: more_like_this leaves the anchor out.
        similar = await call(client, "more_like_this", {"chunk_id": anchor["id"], "top_k": 3})
        similar_ids = [h["id"] for h in similar["data"]["hits"]]
        assert anchor["id"] not in similar_ids and len(similar_ids) == 3
        assert similar["data"]["hits"][0]["provenance"]["doc_id"] == "pumps.md"

        # L3: get_context by query runs the whole pipeline and stays within budget.
        context = await call(
            client,
            "get_context",
            {"query": "how does the pump station move water", "top_k": 4, "budget_tokens": 300},
        )
        data = context["data"]
        assert 0 < data["tokens_used"] <= 300
        assert context["meta"]["steps_run"] == [
            "fetch:dense",
            "fetch:bm25",
            "fuse:rrf",
            "guard",
            "expand",
            "rerank:mmr",
            "quarantine",
            "pack",
        ]
        for passage in data["passages"]:
            prov = passage["provenance"]
            assert prov["source"] == "tiny" and prov["chunk_ids"]
            assert prov["char_end"] > prov["char_start"]
        pump_text = long_doc()
        for passage in data["passages"]:
            if passage["provenance"]["doc_id"] == "pumps.md":
                prov = passage["provenance"]
                assert pump_text[prov["char_start"] : prov["char_end"]] == unwrap(passage["text"])

        # L3: get_context by ids returns exactly those chunks, and names unknown ids.
        ids = [h["id"] for h in hits[:2]]
        by_ids = await call(client, "get_context", {"ids": [*ids, "nope"]})
        packed = {cid for p in by_ids["data"]["passages"] for cid in p["provenance"]["chunk_ids"]}
        assert packed == set(ids) and by_ids["data"]["missing_ids"] == ["nope"]

        sources = await call(client, "list_sources", {})
        assert {s["name"] for s in sources["data"]["sources"]} == {"tiny"}
        assert "dense" in sources["data"]["sources"][0]["capabilities"]

        status = await call(client, "index_status", {})
        assert status["data"]["ready"] is True
        assert status["data"]["pipeline"]["legs_planned"] == ["dense", "bm25"]
        actors = status["data"]["pipeline"]["actors"]
        assert {"fetcher:dense", "fetcher:bm25", "fuser", "expander", "reranker", "packer"} <= set(
            actors
        )
        assert actors["fetcher:dense"]["handled"] >= 2


async def test_ladder_errors_carry_remedies(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings()
    await ingest_folder(settings, corpus_dir, "tiny")
    async with running_server(settings) as server, server.client() as client:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("expand_neighbors", {"chunk_id": "missing"}, "no chunk"),
            ("expand_neighbors", {"chunk_id": "x", "before": 9}, "before"),
            ("more_like_this", {"chunk_id": "missing"}, "no chunk"),
            ("get_context", {}, "exactly one of"),
            ("get_context", {"query": "x", "ids": ["a"]}, "exactly one of"),
            ("get_context", {"query": "x", "budget_tokens": 10**6}, "budget_tokens"),
            ("list_sources", {"extra": 1}, "extra"),
        ]
        for tool, args, needle in cases:
            envelope = await call(client, tool, args)
            assert envelope["ok"] is False, (tool, args)
            assert needle in envelope["error"]["message"], (tool, envelope["error"])
            assert envelope["error"]["remedy"]


async def test_search_collapses_by_document_unless_asked_for_raw_chunks(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    (corpus_dir / "pumps.md").write_text(long_doc())
    settings = make_settings(chunking={"chunk_chars": 200, "overlap_chars": 40})
    await ingest_folder(settings, corpus_dir, "tiny")
    async with running_server(settings) as server, server.client() as client:
        args = {"query": "pump station valve water uphill", "top_k": 4}
        collapsed = (await call(client, "search", args))["data"]["hits"]
        raw = (await call(client, "search", {**args, "collapse": False}))["data"]["hits"]
    docs = [h["provenance"]["doc_id"] for h in collapsed]
    assert len(docs) == len(set(docs)) == 4
    assert collapsed[0]["provenance"]["doc_id"] == "pumps.md"
    assert collapsed[0]["other_chunks"] >= 3  # the raw ranking's other pump chunks
    assert [h["rank"] for h in collapsed] == [1, 2, 3, 4]
    assert len(raw) == 4 and all("other_chunks" not in h for h in raw)
    assert [h["provenance"]["doc_id"] for h in raw].count("pumps.md") >= 2
    assert raw[0]["id"] == collapsed[0]["id"]
