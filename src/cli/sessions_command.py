"""``latence-retrieval-mcp sessions``: export the per-tool session records as JSON lines.

Reads the WAL without a lock and without changing it, so it is safe while the server
runs. Answers "what did this agent see?": filter by token, tool or time.

Under ``serve --workers N`` each worker writes its own WAL (``wal/worker-<k>/``,
ADR 0045); the export reads the server's WAL and every worker's and merges the
records by time, so it reads the same whether one process served or many.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import attrs

from retrieval_mcp.settings import Settings
from retrieval_mcp.wal.filesystem import OsFileSystem
from retrieval_mcp.wal.recovery import iter_log
from retrieval_mcp.wal.wal_records import SessionRecord


def add_sessions_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sessions = sub.add_parser("sessions", help="export per-tool session records (JSON lines)")
    sessions.add_argument("--config", type=Path, help="operator settings file (TOML)")
    sessions.add_argument("--state-dir", type=Path)
    sessions.add_argument("--token", help="only calls made with this token name")
    sessions.add_argument("--tool", help="only calls of this tool")
    sessions.add_argument("--since-hours", type=float, help="only calls younger than this")
    sessions.add_argument("--limit", type=int, help="only the last N matching records")


def session_logs(wal_path: Path) -> list[Path]:
    """The server's WAL directory and each worker's (``worker-<k>``), those that exist."""
    if not wal_path.is_dir():
        return []
    workers = sorted(
        (p for p in wal_path.glob("worker-*") if p.is_dir() and p.name[7:].isdigit()),
        key=lambda p: int(p.name[7:]),
    )
    return [wal_path, *workers]


def run_sessions_command(args: argparse.Namespace, settings: Settings) -> int:
    since = time.time() - args.since_hours * 3600 if args.since_hours is not None else None
    matching: list[SessionRecord] = []
    for directory in session_logs(settings.wal_path):
        for record in iter_log(directory, OsFileSystem()):
            payload = record.payload
            if not isinstance(payload, SessionRecord):
                continue
            if args.token and payload.token_name != args.token:
                continue
            if args.tool and payload.tool != args.tool:
                continue
            if since is not None and payload.at < since:
                continue
            matching.append(payload)
    matching.sort(key=lambda payload: payload.at)  # stable: one log's order is kept
    if args.limit is not None:
        matching = matching[-args.limit :] if args.limit > 0 else []
    for payload in matching:
        sys.stdout.write(json.dumps(attrs.asdict(payload), default=str) + "\n")
    return 0
