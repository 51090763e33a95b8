"""The console script as a user runs it: serve, ingest, status, in real processes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

CLI = [sys.executable, "-m", "retrieval_mcp"]


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def read_until(proc: subprocess.Popen[str], marker: str, limit_s: float = 90) -> str:
    """Collect the child's stdout until ``marker`` appears (bounded; no fixed sleeps)."""
    assert proc.stdout is not None
    stdout = proc.stdout
    lines: list[str] = []
    found = threading.Event()

    def pump() -> None:
        for line in stdout:
            lines.append(line)
            if marker in line:
                found.set()
                return
        found.set()  # EOF: the process ended

    threading.Thread(target=pump, daemon=True).start()
    found.wait(limit_s)
    seen = "".join(lines)
    assert marker in seen, f"no {marker!r} in output: {seen!r}"
    return seen


def test_serve_ingest_status_lifecycle(tmp_path: Path, corpus_dir: Path, short_dir: Path) -> None:
    env = {**os.environ, "LATENCE_STATE_DIR": str(short_dir / "st")}
    ingested = run("ingest", str(corpus_dir), "--source", "tiny", env=env)
    assert ingested.returncode == 0, ingested.stderr
    assert json.loads(ingested.stdout)["ingested"]["documents_written"] == 4
    again = run("ingest", str(corpus_dir), "--source", "tiny", env=env)
    assert json.loads(again.stdout)["ingested"]["documents_unchanged"] == 4

    proc = subprocess.Popen(
        [*CLI, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        banner = read_until(proc, "This token is shown once")
        url = re.search(r"MCP over HTTP : (\S+)", banner).group(1)  # type: ignore[union-attr]
        config = json.JSONDecoder().raw_decode(banner[banner.index("{") :])[0]
        entry = config["mcpServers"]["latence-retrieval"]
        assert entry["url"] == url
        token = entry["headers"]["Authorization"].removeprefix("Bearer ")
        base = url.removesuffix("/mcp")
        assert httpx.get(f"{base}/healthz").json() == {"status": "ok"}
        assert httpx.get(f"{base}/readyz").json()["chunks"] == 4
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "E1234"}},
        }
        reply = httpx.post(
            url,
            json=call,
            headers={
                "authorization": f"Bearer {token}",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
            },
        ).json()
        assert (
            reply["result"]["structuredContent"]["data"]["hits"][0]["provenance"]["doc_id"]
            == "boiler.md"
        )

        status = run("status", env=env)
        assert json.loads(status.stdout)["server_running"] is True
        # A server holds the store: ingest is handed to it, which needs an ingest token.
        refused = run("ingest", str(corpus_dir), env=env)
        assert refused.returncode == 2 and "scope ingest" in refused.stderr
        assert "Traceback" not in refused.stderr
        minted = run("token", "create", "operator", "--scopes", "ingest", env=env)
        secret = minted.stdout.split("Bearer ", 1)[1].split()[0]
        proc.send_signal(signal.SIGHUP)  # reload tokens now, not at the next poll
        handed = run(
            "ingest",
            str(corpus_dir),
            "--source",
            "more",
            env={**env, "LATENCE_INGEST_TOKEN": secret},
        )
        assert handed.returncode == 0, handed.stderr
        assert json.loads(handed.stdout)["ingested"]["documents_written"] == 4
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert not (short_dir / "st" / "server.sock").exists()
    status = json.loads(run("status", env=env).stdout)
    assert (status["server_running"], status["sources"]) == (False, {"more": 4, "tiny": 4})


def test_bad_settings_exit_with_a_message_not_a_traceback(short_dir: Path) -> None:
    env = {**os.environ, "LATENCE_STATE_DIR": str(short_dir / "st")}
    result = run("serve", "--host", "0.0.0.0", env=env)
    assert result.returncode == 2
    assert "not a loopback address" in result.stderr and "Traceback" not in result.stderr
