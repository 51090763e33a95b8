"""``ingest`` against a running server: handed over the Unix socket, applied while the
server answers searches, refused on TCP and without the ``ingest`` scope."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import trio

from retrieval_mcp.cli.ingest_command import ingest_via_server
from retrieval_mcp.errors import Unauthenticated
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.token_admin import create_token, list_tokens
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]


def hits_of(result: Any) -> list[dict[str, Any]]:
    data = result.structured_content
    assert data is not None
    return list(data["data"].get("hits") or [])


async def test_ingest_is_handed_to_the_running_server_and_searchable_at_once(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings()
    hub = ReloadHub()
    async with running_server(settings, hub=hub) as server:
        secret = create_token(settings.token_path, "operator", scopes=["ingest"])
        await hub.reload_all()
        assert {r["name"]: r["scopes"] for r in list_tokens(settings.token_path)}["operator"] == [
            "ingest"
        ]
        events: list[dict[str, Any]] = []
        summary = await trio.to_thread.run_sync(
            lambda: ingest_via_server(
                settings, corpus_dir, source="tiny", prune=False, token=secret,
                on_event=events.append,
            )
        )  # fmt: skip
        assert summary["source"] == "tiny" and summary["documents_written"] >= 2
        kinds = [e["event"] for e in events]
        assert "progress" in kinds and kinds[-1] == "done"
        published = {d for e in events if e["event"] == "published" for d in e["doc_ids"]}
        assert len(published) == summary["documents_written"]
        async with server.client() as client:
            found = hits_of(await client.call_tool("search", {"query": "what does E1234 mean"}))
            assert found and found[0]["provenance"]["source"] == "tiny"
            status = (await client.call_tool("index_status", {})).structured_content
            assert status is not None and status["data"]["ingest"]["tiny"]["syncs"] == 1
        again = await trio.to_thread.run_sync(
            lambda: ingest_via_server(
                settings, corpus_dir, source="tiny", prune=False, token=secret
            )
        )
        assert again["documents_unchanged"] == summary["documents_written"]
        assert again["chunks_written"] == 0


async def test_the_operator_channel_is_unix_socket_only_and_needs_the_ingest_scope(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings()
    body = {"path": str(corpus_dir), "source": "tiny"}
    async with running_server(settings) as server:
        assert server.info.socket_path is not None
        base = server.info.url.removesuffix("/mcp")
        async with httpx2.AsyncClient(headers=server.headers()) as tcp:
            # TCP: as if the route did not exist, whatever the token
            assert (await tcp.post(f"{base}/operator/ingest", json=body)).status_code == 404
        unix = httpx2.AsyncHTTPTransport(uds=str(server.info.socket_path))
        async with httpx2.AsyncClient(transport=unix) as client:
            url = "http://localhost/operator/ingest"
            assert (await client.post(url, json=body)).status_code == 401
            agent = await client.post(url, json=body, headers=server.headers())
            assert agent.status_code == 403 and "ingest scope" in agent.json()["message"]
        with pytest.raises(Unauthenticated, match="refused the ingest token"):
            await trio.to_thread.run_sync(
                lambda: ingest_via_server(
                    settings, corpus_dir, source="tiny", prune=False, token=server.token
                )
            )
        async with server.client() as client:  # nothing was written
            status = (await client.call_tool("index_status", {})).structured_content
            assert status is not None and status["data"]["chunks"] == 0


async def test_a_bad_request_is_refused_and_a_failing_ingest_ends_the_stream_with_its_error(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    settings = make_settings()
    hub = ReloadHub()
    async with running_server(settings, hub=hub) as server:
        secret = create_token(settings.token_path, "operator", scopes=["ingest"])
        await hub.reload_all()
        assert server.info.socket_path is not None
        headers = {"authorization": f"Bearer {secret}"}

        def post(body: dict[str, Any]) -> httpx.Response:
            transport = httpx.HTTPTransport(uds=str(server.info.socket_path))
            with httpx.Client(transport=transport) as client:
                return client.post("http://localhost/operator/ingest", json=body, headers=headers)

        relative = await trio.to_thread.run_sync(post, {"path": "docs", "source": "x"})
        assert relative.status_code == 400 and "absolute" in relative.json()["message"]
        extra = await trio.to_thread.run_sync(post, {"path": "/x", "source": "x", "sql": 1})
        assert extra.status_code == 400
        missing = await trio.to_thread.run_sync(
            post, {"path": str(tmp_path / "nowhere"), "source": "x"}
        )
        assert missing.status_code == 200
        last = json.loads(missing.text.strip().splitlines()[-1])
        assert last["event"] == "error" and last["error"]["code"] == "invalid_argument"
        async with server.client() as client:  # the server keeps serving
            assert not (await client.call_tool("index_status", {})).is_error


# The CLI's own hand-off (a real server process, `ingest` refused without an ingest
# token, then handed over with one) is tests/test_cli.py::test_serve_ingest_status_lifecycle:
# in-process it would reconfigure this process's logging.
