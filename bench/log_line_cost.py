"""CPU per ``tool_call`` log line through the server's file handler.

Why: every tool call writes one JSON line (telemetry at ``info``), and a profile of the
cached-search path put 3.4 % of the server's samples in structlog and logging. This
times that line alone, the way ``serve`` writes it (``configure_logging`` without
stderr, then ``log_file`` at ``info``), so a change to the handler or the processors
can be measured by itself.

    .venv/bin/python bench/log_line_cost.py --lines 5000 --rounds 3
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import structlog

from retrieval_mcp import logs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    logs.configure_logging("info", stderr="never")
    log = structlog.get_logger("retrieval_mcp.mcp_surface.dispatch")
    with tempfile.TemporaryDirectory() as folder, logs.log_file(Path(folder) / "server.log"):
        figures = []
        for _ in range(args.rounds):
            started = time.process_time()
            for n in range(args.lines):
                log.info(
                    "tool_call",
                    tool="search",
                    token_name="bench",
                    request_id=f"r{n}",
                    latency_ms=3.2,
                    outcome="ok",
                    legs=["dense", "bm25"],
                    legs_dropped=[],
                    hit_count=8,
                )
            figures.append((time.process_time() - started) / args.lines * 1e6)
    print(f"commit {commit}: " + ", ".join(f"{f:.1f}" for f in figures) + " µs CPU per line")


if __name__ == "__main__":
    main()
