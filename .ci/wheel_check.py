"""A pip install that works: build the wheel, install it alone into a fresh venv, serve, search.

Run by CI (``.ci/run``, through ``make wheel-check``). Nothing of the repository is on
the path of the server it starts: the venv holds only the wheel and what it declares.

1. ``pip install <wheel>``: no model tokenizer, so the server must start with the BM25
   leg, report the dense leg as unsupported with its remedy (``meta.legs.dropped``,
   ``index_status``, ``list_sources``) and describe its search as keyword search.
2. ``pip install '<wheel>[dense]'``: the same state directory, restarted; the dense
   leg must now run (the store backfills the vectors it was built without).

Stdlib only (urllib for JSON-RPC over loopback HTTP), so it runs on any python3.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def step(message: str) -> None:
    print(f"wheel-check: {message}", flush=True)


def run(*command: str | Path, cwd: Path) -> None:
    subprocess.run([str(c) for c in command], cwd=cwd, check=True)


class Server:
    def __init__(self, venv: Path, state: Path, cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["LATENCE_STATE_DIR"] = str(state)
        self.stderr_path = cwd / "serve.stderr"
        # A file, not a pipe: nobody reads stderr while the server runs, and a full pipe
        # would block it.
        self._stderr = open(self.stderr_path, "a", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [str(venv / "bin" / "latence-retrieval-mcp"), "serve", "--port", "0"],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        banner = self._read_until("This token is shown once", "The token was shown")
        url = re.search(r"MCP over HTTP : (\S+)", banner)
        token = re.search(r"Bearer (lrm_[A-Za-z0-9_-]+)", banner)
        if url is None:
            raise SystemExit(f"no URL in the banner: {banner!r}")
        self.url = url.group(1)
        self.token = token.group(1) if token else None

    def _read_until(self, *markers: str, limit_s: float = 300) -> str:
        """Stdout until one of ``markers`` (the banner's last line) appears."""
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        lines: list[str] = []
        done = threading.Event()

        def pump() -> None:
            for line in stdout:
                lines.append(line)
                if any(m in line for m in markers):
                    break
            done.set()

        threading.Thread(target=pump, daemon=True).start()
        done.wait(limit_s)
        seen = "".join(lines)
        if not any(m in seen for m in markers):
            self.proc.kill()
            self.proc.wait(timeout=30)
            err = self.stderr_path.read_text("utf-8", errors="replace")[-4000:]
            raise SystemExit(f"the server did not start: {seen!r}\nstderr: {err}")
        return seen

    def call(self, tool: str, arguments: dict[str, Any], token: str) -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
                "authorization": f"Bearer {token}",
            },
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            reply: dict[str, Any] = json.loads(response.read())
        envelope: dict[str, Any] = reply["result"]["structuredContent"]
        if not envelope["ok"]:
            raise SystemExit(f"{tool} failed: {envelope['error']}")
        return envelope

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        self._stderr.close()
        if code != 0:
            err = self.stderr_path.read_text("utf-8", errors="replace")[-4000:]
            raise SystemExit(f"serve exited {code}: {err}")


def check_keyword_only(server: Server, token: str) -> None:
    found = server.call("search", {"query": "how do I add my own documents", "top_k": 3}, token)
    meta = found["meta"]
    assert found["data"]["hits"], found
    assert meta["legs"]["used"] == ["bm25"], meta
    dropped = {d["leg"]: d for d in meta["legs"]["dropped"]}
    assert dropped["dense"]["reason"] == "unsupported" and dropped["dense"]["remedy"], meta
    status = server.call("index_status", {}, token)
    assert [u["leg"] for u in status["data"]["unavailable"]] == ["dense"], status
    sources = server.call("list_sources", {}, token)
    assert sources["data"]["unavailable"][0]["remedy"] == dropped["dense"]["remedy"]
    step(f"keyword-only install serves: {len(found['data']['hits'])} hits over bm25; dense: "
         f"{dropped['dense']['detail']} -> {dropped['dense']['remedy']}")


def check_hybrid(server: Server, token: str) -> None:
    found = server.call("search", {"query": "how do I add my own documents", "top_k": 3}, token)
    assert found["meta"]["legs"]["used"] == ["dense", "bm25"], found["meta"]
    assert found["meta"]["legs"]["dropped"] == [], found["meta"]
    step("with the [dense] extra the same store serves hybrid search (dense + bm25)")


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="lrm-wheel-"))
    try:
        dist, venv, state = work / "dist", work / "venv", work / "st"
        pip = Path(sys.executable).parent / "pip"
        step(f"building the wheel into {dist}")
        run(pip, "wheel", "--no-deps", "-q", "-w", dist, REPO, cwd=work)
        (wheel,) = dist.glob("latence_retrieval_mcp-*.whl")
        step(f"installing {wheel.name} alone into a fresh venv")
        run(sys.executable, "-m", "venv", venv, cwd=work)
        run(venv / "bin" / "pip", "install", "-q", wheel, cwd=work)
        server = Server(venv, state, cwd=work)
        try:
            if server.token is None:
                raise SystemExit("a first start must print a token")
            token = server.token
            check_keyword_only(server, token)
        finally:
            server.stop()
        step("installing the [dense] extra")
        run(venv / "bin" / "pip", "install", "-q", f"{wheel}[dense]", cwd=work)
        server = Server(venv, state, cwd=work)
        try:
            check_hybrid(server, token)
        finally:
            server.stop()
        step("passed")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
