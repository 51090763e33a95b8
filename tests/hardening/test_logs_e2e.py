"""Logs against the real server: JSON lines, one per event, no secrets, no content by default."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from retrieval_mcp.server_run import server_log_path
from retrieval_mcp.settings import Settings
from tests.hardening.hardened_server import (
    LIST_TOOLS,
    MCP_HEADERS,
    bearer,
    fresh_http,
    tool_call,
)
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]

#: A query built to forge log lines: newlines, a JSON object, quotes, a CR, a NUL.
HOSTILE_QUERY = (
    'boiler E1234\n{"event": "tool_call", "level": "error", "token_name": "admin"}\r\n'
    '"}\n\x00{"forged": true}'
)


def read_lines(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]  # every line is one whole JSON object


async def exercise(settings: Settings, query: str) -> tuple[str, list[dict[str, Any]], str]:
    """Start, send a tool call with ``query`` and a few refused requests, stop; return the
    token, the parsed log lines and the raw log text."""
    async with running_server(settings) as server, fresh_http() as http:
        token = server.token
        wrong = "lrm_" + "N" * 43
        response = await http.post(
            server.info.url, json=tool_call("search", {"query": query}), headers=bearer(token)
        )
        assert response.json()["result"]["structuredContent"]["ok"] is True
        await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(wrong))
        await http.post(
            f"{server.info.url}?access_token={token}", json=LIST_TOOLS, headers=MCP_HEADERS
        )
        await http.post(
            server.info.url, json=LIST_TOOLS, headers={**bearer(token), "origin": "http://x.y"}
        )
    path = server_log_path(settings)
    return token, read_lines(path), path.read_text("utf-8")


@pytest.mark.parametrize("log_content", [False, True], ids=["default", "log_content"])
async def test_a_hostile_query_is_one_log_line_and_secrets_never_appear(
    hardened_settings: SettingsFactory, log_content: bool
) -> None:
    settings = hardened_settings(logging={"level": "info", "log_content": log_content})
    token, lines, raw = await exercise(settings, HOSTILE_QUERY)

    calls = [line for line in lines if line["event"] == "tool_call"]
    assert len(calls) == 1  # one event, one line: nothing forged
    [telemetry] = calls
    assert telemetry["tool"] == "search" and telemetry["token_name"] == "default"
    assert telemetry["outcome"] == "ok" and telemetry["legs"] == ["dense", "bm25"]
    assert telemetry["hit_count"] >= 1 and telemetry["latency_ms"] > 0
    assert len(telemetry["request_id"]) == 16
    assert not any(line.get("forged") for line in lines)
    assert sum(line.get("token_name") == "admin" for line in lines) == 0

    # Secrets: never, in any mode (the right token was sent in a header and in a URL).
    assert token not in raw and token[4:] not in raw and "N" * 43 not in raw
    assert any(line["event"] == "token_exposed_in_url" for line in lines)
    assert {"auth_invalid", "auth_token_in_url", "forbidden_origin"} <= {
        line.get("reason") for line in lines
    }
    if log_content:
        assert telemetry["arguments"] == {"query": HOSTILE_QUERY}  # intact, on one line
    else:
        assert "arguments" not in telemetry
        assert "E1234" not in raw and "forged" not in raw  # no query text at all

    path = server_log_path(settings)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


async def test_the_log_file_rotates_at_its_size(hardened_settings: SettingsFactory) -> None:
    settings = hardened_settings(
        logging={"level": "info", "file_max_bytes": 4096, "file_backups": 2}
    )
    async with running_server(settings) as server, fresh_http() as http:
        for n in range(40):
            await http.post(
                server.info.url,
                json=tool_call("list_sources", {}, n),
                headers=bearer(server.token),
            )
    path = server_log_path(settings)
    rotated = sorted(p.name for p in path.parent.iterdir())
    assert rotated == ["server.log", "server.log.1", "server.log.2"]
    for name in rotated:
        info = os.stat(path.parent / name)
        assert info.st_size <= 4096 and stat.S_IMODE(info.st_mode) == 0o600
        read_lines(path.parent / name)
