"""``latence-retrieval-mcp stdio`` driven by the MCP SDK's own stdio client.

The bridge runs as a real subprocess (as Claude Desktop launches it) against the real
server's Unix socket; ``--embedded`` opens the store itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from retrieval_mcp.settings import Settings
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]


def mcp_error(exc: BaseException) -> MCPError | None:
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := mcp_error(inner)) is not None:
                return found
    return None


def bridge(state_dir: Path, *args: str, token: str | None = None) -> StdioServerParameters:
    env = {"LATENCE_STATE_DIR": str(state_dir), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    if token is not None:
        env["LATENCE_TOKEN"] = token
    return StdioServerParameters(
        command=sys.executable, args=["-m", "retrieval_mcp", "stdio", *args], env=env
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_bridge_serves_every_request_over_the_socket(
    make_settings: SettingsFactory, corpus_dir: Path, mode: str
) -> None:
    settings = make_settings()
    await ingest_folder(settings, corpus_dir, "tiny")
    async with running_server(settings) as server:
        params = bridge(settings.state_dir, token=server.token)
        async with Client(params, mode=mode) as client:
            tools = (await client.list_tools()).tools
            assert tools[0].name == "search"
            assert all(t.annotations is not None and t.output_schema for t in tools)
            result = await client.call_tool("search", {"query": "what does E1234 mean"})
            envelope = result.structured_content
            assert envelope is not None and envelope["ok"] is True
            assert envelope["data"]["hits"][0]["provenance"]["doc_id"] == "boiler.md"
            link = next(c for c in result.content if isinstance(c, types.ResourceLink))
            read = await client.read_resource(link.uri)
            assert "E1234" in read.contents[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError):
                await client.read_resource("lrm://chunk/" + "0" * 32)
            failed = await client.call_tool("search", {"query": ""})
            assert failed.is_error and failed.structured_content is not None
        log = settings.state_dir / "logs" / "stdio.log"
        assert log.exists()
        assert server.token not in log.read_text()


async def test_a_wrong_token_is_refused_through_the_bridge(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings()
    async with running_server(settings):
        params = bridge(settings.state_dir, token="lrm_not-a-real-token")
        with pytest.raises(BaseException) as refused:  # the SDK wraps it in a group
            async with Client(params, mode="legacy") as client:
                await client.list_tools()
        error = mcp_error(refused.value)
        assert error is not None and "HTTP 401" in error.error.message


def test_with_no_server_it_says_so_in_one_line_and_exits_non_zero(short_dir: Path) -> None:
    env = {**os.environ, "LATENCE_STATE_DIR": str(short_dir / "st"), "LATENCE_TOKEN": "lrm_x"}
    done = subprocess.run(
        [sys.executable, "-m", "retrieval_mcp", "stdio"],
        input="",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""  # nothing but protocol messages, and there are none
    (line,) = done.stderr.strip().splitlines()
    assert "no latence-retrieval-mcp server is running" in line and "--embedded" in line


def test_without_a_token_it_names_the_variable(short_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LATENCE_TOKEN"}
    env["LATENCE_STATE_DIR"] = str(short_dir / "st")
    done = subprocess.run(
        [sys.executable, "-m", "retrieval_mcp", "stdio"],
        input="",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "LATENCE_TOKEN" in done.stderr


async def test_embedded_mode_opens_the_store_itself(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings()
    await ingest_folder(settings, corpus_dir, "tiny")
    async with Client(bridge(settings.state_dir, "--embedded"), mode="legacy") as client:
        result = await client.call_tool("search", {"query": "sourdough starter", "top_k": 2})
        envelope = result.structured_content
        assert envelope is not None and envelope["ok"] is True
        assert envelope["data"]["hits"][0]["provenance"]["doc_id"] == "bread.md"
        listed = (await client.list_resources()).resources
        assert [r.name for r in listed] == ["tiny"]
