"""A token scoped to one source never reads another, on every tool (real server, SDK client)."""

from __future__ import annotations

import json
from collections.abc import Callable

from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.token_admin import create_token
from tests.hardening.hardened_server import call, mcp_client
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]


async def test_out_of_scope_source_on_every_tool(hardened_settings: SettingsFactory) -> None:
    settings = hardened_settings()
    hub = ReloadHub()
    async with running_server(settings, hub=hub) as server:
        scoped = create_token(settings.token_path, "tiny-only", ["tiny"])
        await hub.reload_all()  # what SIGHUP does
        async with mcp_client(server, server.token) as admin:
            everything = await call(admin, "search", {"query": "boiler E1234 vault", "top_k": 10})
            by_source = {h["provenance"]["source"]: h["id"] for h in everything["data"]["hits"]}
            vault_id, tiny_id = by_source["vault"], by_source["tiny"]
            sources = await call(admin, "list_sources", {})
            assert [s["name"] for s in sources["data"]["sources"]] == ["tiny", "vault"]

        async with mcp_client(server, scoped) as client:
            seen: list[str] = []

            def sources_of(envelope: dict[str, object]) -> set[str]:
                data = envelope["data"]
                assert isinstance(data, dict)
                items = data.get("hits") or data.get("passages") or data.get("chunks") or []
                seen.extend(json.dumps(i) for i in items)
                return {i["provenance"]["source"] for i in items}

            # search: only in-scope hits, even for a query the vault matches best.
            found = await call(client, "search", {"query": "vault combination boiler E1234"})
            assert sources_of(found) == {"tiny"}
            for asked in (["vault"], ["tiny", "vault"], ["no-such-source"]):
                refused = await call(client, "search", {"query": "boiler", "sources": asked})
                assert refused["error"]["code"] == "out_of_scope", asked
                assert "vault" not in refused["error"]["remedy"]

            # list_sources and index_status: only what the scope holds.
            listed = await call(client, "list_sources", {})
            assert [s["name"] for s in listed["data"]["sources"]] == ["tiny"]
            status = await call(client, "index_status", {})
            tiny_chunks = listed["data"]["sources"][0]["chunks"]
            assert status["data"]["chunks"] == tiny_chunks and status["data"]["detail"] == ""

            # more_like_this: another source's chunk reads as "no such chunk".
            missing = await call(client, "more_like_this", {"chunk_id": "0" * 32})
            foreign = await call(client, "more_like_this", {"chunk_id": vault_id})
            assert foreign["error"]["code"] == missing["error"]["code"] == "invalid_argument"
            assert foreign["error"]["message"].replace(vault_id, "X") == missing["error"][
                "message"
            ].replace("0" * 32, "X")
            similar = await call(client, "more_like_this", {"chunk_id": tiny_id, "top_k": 10})
            assert sources_of(similar) <= {"tiny"}
            refused = await call(
                client, "more_like_this", {"chunk_id": tiny_id, "sources": ["vault"]}
            )
            assert refused["error"]["code"] == "out_of_scope"

            # expand_neighbors: the same.
            foreign = await call(client, "expand_neighbors", {"chunk_id": vault_id})
            assert foreign["error"]["code"] == "invalid_argument"
            around = await call(client, "expand_neighbors", {"chunk_id": tiny_id})
            assert sources_of(around) == {"tiny"}

            # get_context by ids: foreign ids are reported missing, like unknown ones.
            by_ids = await call(client, "get_context", {"ids": [vault_id, tiny_id]})
            assert by_ids["data"]["missing_ids"] == [vault_id]
            assert sources_of(by_ids) == {"tiny"}
            # get_context by query: only in-scope passages.
            by_query = await call(client, "get_context", {"query": "vault payroll ledgers"})
            assert sources_of(by_query) <= {"tiny"}
            refused = await call(client, "get_context", {"query": "ledgers", "sources": ["vault"]})
            assert refused["error"]["code"] == "out_of_scope"

            # No hit or passage the scoped token received holds the vault's text.
            assert seen and any("E1234" in text for text in seen)
            assert not any("payroll" in text or "Vault procedures" in text for text in seen)
