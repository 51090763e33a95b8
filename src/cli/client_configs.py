"""What ``serve`` prints: ready-to-paste configurations for the clients people use.

HTTP clients (Claude Code, Cursor, VS Code, the Inspector) get the loopback URL and the
bearer header; Claude Desktop, which launches servers as subprocesses, gets the stdio
bridge with the token in its ``env`` (never on the command line). The first block is
the generic ``mcpServers`` entry most clients accept.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

SERVER_KEY = "latence-retrieval"


def _command() -> tuple[str, list[str]]:
    """The installed console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "latence-retrieval-mcp"
    if script.exists():
        return str(script), []
    return sys.executable, ["-m", "retrieval_mcp"]


def _block(title: str, where: str, body: dict[str, Any] | str) -> list[str]:
    text = body if isinstance(body, str) else json.dumps(body, indent=2)
    return ["", f"{title} ({where}):", text]


def client_configs(url: str, token: str, state_dir: Path, socket_path: Path | None) -> str:
    header = f"Bearer {token}"
    http_entry = {"type": "http", "url": url, "headers": {"Authorization": header}}
    lines = _block("Any MCP client", "mcpServers entry", {"mcpServers": {SERVER_KEY: http_entry}})
    claude = ["claude", "mcp", "add", "--transport", "http", SERVER_KEY, url]
    lines += _block(
        "Claude Code", "run once", shlex.join([*claude, "--header", f"Authorization: {header}"])
    )
    lines += _block(
        "Cursor",
        "~/.cursor/mcp.json",
        {"mcpServers": {SERVER_KEY: {"url": url, "headers": {"Authorization": header}}}},
    )
    lines += _block("VS Code", ".vscode/mcp.json", {"servers": {SERVER_KEY: http_entry}})
    if socket_path is not None:
        command, prefix = _command()
        desktop = {
            "command": command,
            "args": [*prefix, "stdio", "--state-dir", str(state_dir)],
            "env": {"LATENCE_TOKEN": token},
        }
        lines += _block(
            "Claude Desktop",
            "claude_desktop_config.json: the stdio bridge onto this server's socket",
            {"mcpServers": {SERVER_KEY: desktop}},
        )
    inspector = ["npx", "@modelcontextprotocol/inspector", "--cli", url, "--transport", "http"]
    lines += _block(
        "MCP Inspector",
        "CLI",
        shlex.join([*inspector, "--header", f"Authorization: {header}", "--method", "tools/list"]),
    )
    return "\n".join([*lines, ""])
