"""``serve``'s banner: one ready-to-paste configuration per client, all consistent."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from retrieval_mcp.cli.client_configs import client_configs

URL = "http://127.0.0.1:8765/mcp"
TOKEN = "lrm_secret"


def blocks(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for chunk in text.strip().split("\n\n"):
        title, _, body = chunk.partition("\n")
        out[title.split(" (")[0]] = body
    return out


def test_every_client_gets_a_config_that_parses_and_names_the_same_server() -> None:
    found = blocks(client_configs(URL, TOKEN, Path("/st"), Path("/st/server.sock")))
    assert list(found) == [
        "Any MCP client",
        "Claude Code",
        "Cursor",
        "VS Code",
        "Claude Desktop",
        "MCP Inspector",
    ]
    generic = json.loads(found["Any MCP client"])["mcpServers"]["latence-retrieval"]
    assert generic == {"type": "http", "url": URL, "headers": {"Authorization": f"Bearer {TOKEN}"}}
    assert shlex.split(found["Claude Code"]) == [
        "claude", "mcp", "add", "--transport", "http", "latence-retrieval", URL,
        "--header", f"Authorization: Bearer {TOKEN}",
    ]  # fmt: skip
    cursor = json.loads(found["Cursor"])["mcpServers"]["latence-retrieval"]
    assert cursor == {"url": URL, "headers": {"Authorization": f"Bearer {TOKEN}"}}
    assert json.loads(found["VS Code"])["servers"]["latence-retrieval"] == generic
    desktop = json.loads(found["Claude Desktop"])["mcpServers"]["latence-retrieval"]
    assert desktop["args"][-3:] == ["stdio", "--state-dir", "/st"]
    assert desktop["env"] == {"LATENCE_TOKEN": TOKEN}
    assert TOKEN not in " ".join([desktop["command"], *desktop["args"]])  # never in ps
    assert "--transport http" in found["MCP Inspector"]


def test_without_a_socket_there_is_no_stdio_bridge_to_offer() -> None:
    assert "Claude Desktop" not in blocks(client_configs(URL, TOKEN, Path("/st"), None))
