"""The console script's entry: start reading the store from disk, then import the server.

Why a module of its own: importing the command line (the MCP SDK, Hypercorn, pydantic
models, the encoder's runtime) takes 1.2-2 s, and a 1M-chunk embedded store's ``load``
spends most of its 2-3 s waiting for 1.5 GiB of dense vectors that qdrant-edge's
``close`` dropped from the page cache. For ``serve``, this reads those files in a
daemon thread first, so the disk works while Python imports (ADR 0053). It imports
only the settings before the thread starts; anything it cannot work out (another
backend, a bad config file, a missing store) it leaves to the command, which reports it.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from pathlib import Path


def read_ahead_for(argv: Sequence[str]) -> threading.Thread | None:
    """Start reading the embedded store's files when ``argv`` is a ``serve``: the reader."""
    if not argv or argv[0] != "serve":
        return None
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--state-dir", type=Path)
    try:
        known, _ = parser.parse_known_args(list(argv[1:]))
        from retrieval_mcp.backends.page_prewarm import shard_load_files, start_read_ahead
        from retrieval_mcp.settings import load_settings

        settings = load_settings(known.config, state_dir=known.state_dir)
        budget = settings.backend.qdrant_embedded.prewarm_max_mib * 2**20
        if settings.backend.kind != "qdrant-embedded" or budget <= 0:
            return None
        paths = shard_load_files(settings.store_path / "shard")
    except (Exception, SystemExit):  # the command itself reports what is wrong
        return None
    return start_read_ahead(paths, max_bytes=budget) if paths else None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    read_ahead_for(args)
    from retrieval_mcp.cli.main import main as run_command

    return run_command(args)
