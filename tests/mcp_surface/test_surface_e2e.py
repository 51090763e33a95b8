"""The full MCP surface, as a client sees it: the SDK client against the real server.

Tools carry titles, annotations and output schemas; every result (success and error
alike) fits its tool's published schema; cited passages are resources the caller can
read, and only within its token's scope; three protocol versions work end to end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp.client.session as client_session
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from retrieval_mcp.mcp_surface import resources as resources_module
from retrieval_mcp.mcp_surface.registry import LADDER
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.screening import CLOSE_MARKER, OPEN_MARKER
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.token_admin import create_token
from tests.transport.server_harness import RunningServer, running_server

SettingsFactory = Callable[..., Settings]
LADDER_NAMES = [key for key, _ in LADDER]


@asynccontextmanager
async def client_for(
    server: RunningServer, token: str, mode: str = "legacy"
) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with (
        http,
        Client(streamable_http_client(server.info.url, http_client=http), mode=mode) as c,
    ):
        yield c


def text_of(contents: types.TextResourceContents | types.BlobResourceContents) -> str:
    assert isinstance(contents, types.TextResourceContents)
    return contents.text


def calls(anchor_id: str) -> list[tuple[str, dict[str, Any], bool]]:
    """(tool, arguments, expect ok) for every tool, successes and failures."""
    return [
        ("search", {"query": "what does E1234 mean", "top_k": 3}, True),
        ("search", {"query": ""}, False),
        ("search", {"query": "boiler", "sources": ["nope"]}, False),
        ("expand_neighbors", {"chunk_id": anchor_id, "before": 1, "after": 1}, True),
        ("expand_neighbors", {"chunk_id": "0" * 32}, False),
        ("more_like_this", {"chunk_id": anchor_id, "top_k": 2}, True),
        ("more_like_this", {"chunk_id": anchor_id, "top_k": "two"}, False),
        ("get_context", {"query": "boiler pressure", "budget_tokens": 300}, True),
        ("get_context", {"ids": [anchor_id, "0" * 32]}, True),
        ("get_context", {"query": "x", "ids": [anchor_id]}, False),
        ("list_sources", {}, True),
        ("list_sources", {"extra": 1}, False),
        ("index_status", {}, True),
        ("index_status", {"verbose": True}, False),
    ]


async def test_tools_publish_annotations_and_schemas_that_every_result_fits(
    surface_settings: SettingsFactory,
) -> None:
    async with (
        running_server(surface_settings()) as server,
        client_for(server, server.token) as client,
    ):
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == LADDER_NAMES  # deterministic: the ladder's order
        validators = {}
        for tool in tools:
            assert tool.title and tool.annotations is not None
            hints = tool.annotations
            assert (
                hints.read_only_hint,
                hints.destructive_hint,
                hints.idempotent_hint,
                hints.open_world_hint,
            ) == (True, False, True, False), tool.name
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            Draft202012Validator.check_schema(tool.output_schema)
            validators[tool.name] = Draft202012Validator(tool.output_schema)
        assert [t.name for t in (await client.list_tools()).tools] == LADDER_NAMES

        first = await client.call_tool("search", {"query": "boiler E1234", "top_k": 1})
        anchor_id = first.structured_content["data"]["hits"][0]["id"]
        seen_errors: set[str] = set()
        for name, arguments, expect_ok in calls(anchor_id):
            result = await client.call_tool(name, arguments)
            envelope = result.structured_content
            assert envelope is not None and envelope["ok"] is expect_ok, (name, arguments)
            errors = sorted(validators[name].iter_errors(envelope), key=str)
            assert not errors, (name, arguments, [e.message for e in errors])
            if not expect_ok:
                seen_errors.add(envelope["error"]["code"])
        assert {"invalid_argument", "unknown_source"} <= seen_errors

        # Each schema is closed: an envelope with a field it does not describe fails.
        tampered = dict(first.structured_content or {}, extra=True)
        assert list(validators["search"].iter_errors(tampered))


async def test_cited_passages_are_resources_the_caller_can_read(
    surface_settings: SettingsFactory,
) -> None:
    async with (
        running_server(surface_settings()) as server,
        client_for(server, server.token) as client,
    ):
        result = await client.call_tool("search", {"query": "boiler pressure E1234", "top_k": 4})
        hits = result.structured_content["data"]["hits"]
        links = [c for c in result.content if isinstance(c, types.ResourceLink)]
        assert [link.uri for link in links] == [h["resource_uri"] for h in hits]
        assert all(link.uri.startswith("lrm://chunk/") for link in links)
        top = hits[0]
        assert links[0].title == top["provenance"]["title"]

        read = await client.read_resource(top["resource_uri"])
        (contents,) = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text.startswith(OPEN_MARKER) and contents.text.endswith(CLOSE_MARKER)
        assert "E1234" in contents.text
        assert contents.meta is not None
        assert contents.meta["provenance"] == top["provenance"]

        # Packed passages cite their document; reading it gives the text in reading order.
        packed = await client.call_tool("get_context", {"query": "boiler pressure"})
        passages = packed.structured_content["data"]["passages"]
        passage_links = [c for c in packed.content if isinstance(c, types.ResourceLink)]
        assert [link.uri for link in passage_links] == [p["resource_uri"] for p in passages]
        document = await client.read_resource(passages[0]["resource_uri"])
        assert document.contents and all(
            isinstance(c, types.TextResourceContents) and c.text.startswith(OPEN_MARKER)
            for c in document.contents
        )
        assert "Refill the heating circuit" in text_of(document.contents[0])

        templates = (await client.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {
            "lrm://chunk/{chunk_id}",
            "lrm://document/{chunk_id}",
            "lrm://source/{name}",
        }
        listed = (await client.list_resources()).resources
        assert [r.name for r in listed] == ["tiny", "vault"]  # sources, never chunks
        source = await client.read_resource(listed[0].uri)
        assert "chunks" in text_of(source.contents[0])

        for bad in (
            "lrm://chunk/" + "0" * 32,
            "lrm://chunk/",
            "lrm://nope/x",
            "file:///etc/passwd",
        ):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(bad)
            assert refused.value.error.code == types.INVALID_PARAMS
            assert refused.value.error.message == f"no resource at {bad}"


async def test_resources_list_is_paginated(
    surface_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources_module, "PAGE_SIZE", 1)
    async with (
        running_server(surface_settings()) as server,
        client_for(server, server.token) as client,
    ):
        first = await client.list_resources()
        assert [r.name for r in first.resources] == ["tiny"] and first.next_cursor
        second = await client.list_resources(cursor=first.next_cursor)
        assert [r.name for r in second.resources] == ["vault"] and second.next_cursor is None
        with pytest.raises(MCPError) as refused:
            await client.list_resources(cursor="not-a-cursor")
        assert refused.value.error.code == types.INVALID_PARAMS


async def test_a_scoped_token_cannot_read_another_sources_chunk_by_its_id(
    surface_settings: SettingsFactory,
) -> None:
    settings = surface_settings()
    hub = ReloadHub()
    async with running_server(settings, hub=hub) as server:
        scoped = create_token(settings.token_path, "tiny-only", ["tiny"])
        await hub.reload_all()
        async with client_for(server, server.token) as admin:
            found = await admin.call_tool("search", {"query": "vault combination", "top_k": 10})
            hits = found.structured_content["data"]["hits"]
            vault = next(h for h in hits if h["provenance"]["source"] == "vault")
            tiny = next(h for h in hits if h["provenance"]["source"] == "tiny")
        async with client_for(server, scoped) as client:
            assert (await client.read_resource(tiny["resource_uri"])).contents
            answers = []
            for uri in (
                vault["resource_uri"],
                vault["resource_uri"].replace("lrm://chunk/", "lrm://document/"),
                "lrm://source/vault",
                "lrm://chunk/" + "1" * 32,
                "lrm://source/no-such-source",
            ):
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                answers.append(
                    (refused.value.error.code, refused.value.error.message.replace(uri, "<uri>"))
                )
            assert len(set(answers)) == 1  # out of scope reads exactly like "no such thing"
            listed = (await client.list_resources()).resources
            assert [r.name for r in listed] == ["tiny"]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
async def test_each_protocol_version_end_to_end(
    surface_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    mode = "2026-07-28" if version == "2026-07-28" else "legacy"
    if version == "2025-06-18":  # the SDK offers its newest handshake version: pin an older one
        monkeypatch.setattr(client_session, "LATEST_HANDSHAKE_VERSION", version)
    async with (
        running_server(surface_settings()) as server,
        client_for(server, server.token, mode=mode) as client,
    ):
        assert client.protocol_version == version
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == LADDER_NAMES
        assert all(t.output_schema and t.annotations for t in tools)
        result = await client.call_tool("search", {"query": "what does E1234 mean", "top_k": 2})
        assert not result.is_error
        envelope = result.structured_content
        assert envelope is not None
        Draft202012Validator(tools[0].output_schema).validate(envelope)
        link = next(c for c in result.content if isinstance(c, types.ResourceLink))
        read = await client.read_resource(link.uri)
        assert "E1234" in text_of(read.contents[0])
