"""The real server over loopback TCP and its Unix socket, driven by the MCP SDK client."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
import trio

from retrieval_mcp.errors import ConfigError, StoreLocked, TransportConfigError
from retrieval_mcp.server_run import run_server
from retrieval_mcp.settings import Settings
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]


async def serve_tiny(
    make_settings: SettingsFactory, corpus_dir: Path, **overrides: Any
) -> tuple[Settings, Any]:
    settings = make_settings(**overrides)
    await ingest_folder(settings, corpus_dir, "tiny")
    return settings, running_server(settings)


@pytest.mark.parametrize("unix", [False, True], ids=["tcp", "unix"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_search_over_mcp(
    make_settings: SettingsFactory, corpus_dir: Path, unix: bool, mode: str
) -> None:
    _, server_cm = await serve_tiny(make_settings, corpus_dir)
    async with server_cm as server, server.client(unix=unix, mode=mode) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == [
            "search",
            "expand_neighbors",
            "more_like_this",
            "get_context",
            "list_sources",
            "index_status",
        ]
        schema = tools[0].input_schema
        assert schema["required"] == ["query"] and "filter" in schema["properties"]
        assert "hybrid" in (tools[0].description or "")

        result = await client.call_tool("search", {"query": "what does E1234 mean", "top_k": 3})
        assert not result.is_error
        envelope = result.structured_content
        assert envelope is not None and envelope["ok"] is True
        hits = envelope["data"]["hits"]
        assert hits[0]["provenance"]["doc_id"] == "boiler.md"
        assert hits[0]["provenance"]["source"] == "tiny"
        assert hits[0]["provenance"]["title"] == "Boiler fault codes"
        assert "E1234" in hits[0]["text"]
        assert set(hits[0]["legs"]) == {"dense", "bm25"}
        meta = envelope["meta"]
        assert meta["legs"] == {"used": ["dense", "bm25"], "dropped": []}
        assert meta["steps_run"] == ["fetch:dense", "fetch:bm25", "fuse:rrf", "guard"]
        assert meta["degraded"] is False
        assert len(meta["request_id"]) == 16
        text = result.content[0].text
        assert "Boiler fault codes" in text and "tiny:boiler.md" in text


async def test_semantic_query_and_filters_by_source(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    _, server_cm = await serve_tiny(make_settings, corpus_dir)
    async with server_cm as server, server.client() as client:
        result = await client.call_tool("search", {"query": "how to make a loaf with a starter"})
        assert result.structured_content["data"]["hits"][0]["provenance"]["doc_id"] == "bread.md"
        result = await client.call_tool("search", {"query": "bread", "sources": ["nope"]})
        assert result.is_error
        error = result.structured_content["error"]
        assert error["code"] == "unknown_source" and "tiny" in error["remedy"]


async def test_bad_arguments_get_a_structured_error_and_the_server_keeps_serving(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    _, server_cm = await serve_tiny(make_settings, corpus_dir)
    async with server_cm as server, server.client() as client:
        for args, needle in [
            ({}, "query"),
            ({"query": "x", "top_k": 0}, "top_k"),
            ({"query": "x", "top_k": 51}, "top_k"),
            ({"query": "x", "top_k": "many"}, "top_k"),
            ({"query": "x", "colour": "red"}, "colour"),
            ({"query": "   "}, "blank"),
            ({"query": "x" * 5000}, "limit"),
            ({"query": "x", "filter": {"bad key!": 1}}, "bad key!"),
            ({"query": "x", "filter": {"k": 1.5}}, "filter"),
        ]:
            result = await client.call_tool("search", args)
            assert result.is_error, args
            envelope = result.structured_content
            assert envelope["ok"] is False and envelope["error"]["code"] == "invalid_argument"
            assert needle in envelope["error"]["message"], (args, envelope["error"])
            assert envelope["error"]["remedy"]
        unknown = await client.call_tool("nonexistent", {})
        assert unknown.structured_content["error"]["code"] == "unknown_tool"
        ok = await client.call_tool("search", {"query": "tomatoes"})
        assert not ok.is_error


async def test_http_surface(make_settings: SettingsFactory, corpus_dir: Path) -> None:
    _, server_cm = await serve_tiny(make_settings, corpus_dir)
    async with server_cm as server, httpx2.AsyncClient() as http:
        base = server.info.url.removesuffix("/mcp")
        assert (await http.get(f"{base}/healthz")).json() == {"status": "ok"}
        ready = await http.get(f"{base}/readyz")
        assert ready.status_code == 200 and ready.json()["chunks"] == 4
        get = await http.get(server.info.url, headers=server.headers())
        assert get.status_code == 405 and get.headers["allow"] == "POST"
        assert (await http.delete(server.info.url)).status_code == 405
        assert (await http.get(f"{base}/other")).status_code == 404

        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        plain = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        }
        for bad_auth in [
            None,
            "Bearer wrong",
            f"Basic {server.token}",
            "Bearer " + "x" * 600,
            f"bearer{server.token}",
        ]:
            headers = dict(plain)
            if bad_auth:
                headers["authorization"] = bad_auth
            response = await http.post(server.info.url, json=body, headers=headers)
            assert response.status_code == 401, bad_auth
            assert response.headers["www-authenticate"].startswith("Bearer")
        auth = {**plain, **server.headers()}
        ok = await http.post(server.info.url, json=body, headers=auth)
        assert ok.status_code == 200 and ok.json()["result"]["tools"][0]["name"] == "search"
        evil = await http.post(
            server.info.url, json=body, headers={**auth, "origin": "http://evil.example"}
        )
        assert evil.status_code == 403
        port = server.info.port
        good_origin = await http.post(
            server.info.url, json=body, headers={**auth, "origin": f"http://localhost:{port}"}
        )
        assert good_origin.status_code == 200
        rebound = await http.post(
            server.info.url, json=body, headers={**auth, "host": f"attacker.example:{port}"}
        )
        assert rebound.status_code == 421
        other_port = await http.post(
            server.info.url, json=body, headers={**auth, "host": f"127.0.0.1:{port + 1}"}
        )
        assert other_port.status_code == 421


async def test_unix_socket_is_private_and_removed_at_shutdown(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings, server_cm = await serve_tiny(make_settings, corpus_dir)
    socket_path = settings.socket_path
    assert socket_path is not None
    async with server_cm as server:
        assert server.info.socket_path == socket_path
        mode = os.stat(socket_path).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        assert stat.S_IMODE(os.stat(settings.state_dir).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(settings.token_path).st_mode) == 0o600
    assert not socket_path.exists()
    # After shutdown nothing listens on the port any more.
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.info.port), 1):
        pass


def live_tasks() -> list[str]:
    names: list[str] = []

    def walk(task: trio.lowlevel.Task) -> None:
        for nursery in task.child_nurseries:
            for child in nursery.child_tasks:
                names.append(child.name)
                walk(child)

    root = trio.lowlevel.current_root_task()
    assert root is not None
    walk(root)
    return sorted(names)


async def test_shutdown_leaves_no_task_running(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    baseline = live_tasks()
    settings, server_cm = await serve_tiny(make_settings, corpus_dir)
    async with server_cm as server, server.client() as client:
        await client.call_tool("search", {"query": "wing"})
        assert len(live_tasks()) > len(baseline) + 2  # hypercorn, session manager, ...
    assert live_tasks() == baseline
    # And the store was released: a new server can open it at once.
    async with running_server(settings, token=server.token) as again, again.client() as client:
        assert not (await client.call_tool("search", {"query": "wing"})).is_error
    assert live_tasks() == baseline


async def test_second_server_on_the_same_store_fails_cleanly(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings, server_cm = await serve_tiny(make_settings, corpus_dir)
    async with server_cm as server:
        locked = pytest.RaisesExc(StoreLocked, match=str(os.getpid()))
        with pytest.RaisesGroup(locked, flatten_subgroups=True):
            async with running_server(settings):
                pass  # pragma: no cover
        async with server.client() as client:  # the first one is unharmed
            assert not (await client.call_tool("search", {"query": "bread"})).is_error


async def test_stale_socket_is_replaced_but_a_live_one_is_not(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings, server_cm = await serve_tiny(make_settings, corpus_dir)
    socket_path = settings.socket_path
    assert socket_path is not None
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(socket_path))
    stale.close()  # bound, never listening: what a crash leaves behind
    async with server_cm as server, server.client(unix=True) as client:
        assert not (await client.call_tool("search", {"query": "bread"})).is_error

    other = make_settings(
        server={"port": 0, "unix_socket": str(socket_path)},
        backend={"qdrant_embedded": {"path": str(settings.state_dir / "s2")}},
    )
    live = socket.socket(socket.AF_UNIX)
    live.bind(str(socket_path))
    live.listen()
    try:
        busy = pytest.RaisesExc(TransportConfigError, match="already listening")
        with pytest.RaisesGroup(busy, flatten_subgroups=True):
            async with running_server(other):
                pass  # pragma: no cover
    finally:
        live.close()
        socket_path.unlink()


async def test_demo_corpus_is_ingested_on_first_start(make_settings: SettingsFactory) -> None:
    settings = make_settings(demo={"ingest_on_first_start": True})
    async with running_server(settings) as server:
        assert server.info.demo_chunks > 0
        async with server.client() as client:
            result = await client.call_tool("search", {"query": "how do I add my own documents"})
            top = result.structured_content["data"]["hits"][0]["provenance"]
            assert (top["source"], top["doc_id"]) == ("demo", "operating.md")
    async with running_server(settings) as again:  # second start: nothing to ingest
        assert again.info.demo_chunks == 0 and again.info.new_token is None


async def test_auth_can_be_turned_off_for_trusted_setups(make_settings: SettingsFactory) -> None:
    settings = make_settings(server={"port": 0, "require_auth": False})
    async with running_server(settings) as server, httpx2.AsyncClient() as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        response = await http.post(
            server.info.url,
            json=body,
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
            },
        )
        assert response.status_code == 200


async def test_group_readable_token_file_refuses_to_start(make_settings: SettingsFactory) -> None:
    settings = make_settings()
    settings.state_dir.mkdir(mode=0o700)
    settings.token_path.write_text('{"format": 1, "tokens": []}')
    settings.token_path.chmod(0o644)
    refused = pytest.RaisesExc(
        ConfigError,
        match="accessible by group or others",
        check=lambda exc: "chmod 600" in exc.remedy,
    )
    with pytest.RaisesGroup(refused, flatten_subgroups=True):
        async with trio.open_nursery() as nursery:
            await nursery.start(
                lambda task_status: run_server(
                    settings, shutdown=trio.Event(), task_status=task_status
                )
            )
