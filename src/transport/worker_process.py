"""One worker of ``serve --workers N``: a fresh interpreter that serves inherited sockets.

The parent (``worker_pool.py``) starts ``python -m retrieval_mcp.transport.worker_process``
with the listening sockets in ``pass_fds`` and writes one JSON line on its stdin: the
worker's settings (its own WAL directory and log file already filled in) and its
role. The worker then runs the ordinary ``run_server`` on those sockets and writes one
JSON line on its stdout once it is serving, which is how the parent knows it is up.

The parent keeps the worker's stdin open: end-of-file there means the parent is gone
(even by ``kill -9``), and the worker shuts down gracefully rather than serving on as
an orphan nobody supervises. SIGHUP and SIGTERM are handled as in a single server;
the worker runs in its own session, so a terminal's Ctrl-C reaches only the parent,
which forwards one SIGTERM.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import attrs
import trio

from retrieval_mcp.errors import project_error
from retrieval_mcp.logs import configure_logging
from retrieval_mcp.server_run import ServerInfo, WorkerRole, run_server
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.listeners import Listeners


@attrs.frozen
class WorkerSpec:
    """What the parent tells a worker, as one JSON line."""

    index: int
    count: int
    settings: dict[str, Any]
    tcp_fd: int
    unix_fd: int | None
    host: str
    port: int
    socket_path: str | None
    limits_table: str

    def encode(self) -> bytes:
        return json.dumps(attrs.asdict(self)).encode() + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> WorkerSpec:
        return cls(**json.loads(line))


def inherited_role(spec: WorkerSpec) -> WorkerRole:
    tcp = socket.socket(fileno=spec.tcp_fd)
    unix = socket.socket(fileno=spec.unix_fd) if spec.unix_fd is not None else None
    listeners = Listeners(tcp=tcp, port=spec.port, host=spec.host, unix=unix, unix_path=None)
    return WorkerRole(
        index=spec.index,
        count=spec.count,
        listeners=listeners,
        socket_path=Path(spec.socket_path) if spec.socket_path else None,
        limits_table=Path(spec.limits_table),
    )


async def _until_parent_gone(shutdown: trio.Event) -> None:
    stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    async with stdin:
        while await stdin.receive_some(4096):
            pass
    shutdown.set()


async def serve_worker(spec: WorkerSpec) -> None:
    """Serve until SIGTERM/SIGINT or the parent's end of stdin closes; SIGHUP reloads."""
    settings = Settings.model_validate(spec.settings)
    shutdown = trio.Event()
    async with trio.open_nursery() as outer:
        outer.start_soon(_until_parent_gone, shutdown)
        async with trio.open_nursery() as inner:
            info: ServerInfo = await inner.start(
                lambda task_status: run_server(
                    settings,
                    shutdown=shutdown,
                    handle_signals=True,
                    worker=inherited_role(spec),
                    task_status=task_status,
                )
            )
            ready = {"pid": os.getpid(), "index": spec.index, "demo_chunks": info.demo_chunks}
            sys.stdout.write(json.dumps(ready) + "\n")
            sys.stdout.flush()
        outer.cancel_scope.cancel()  # drained and stopped: stop watching the parent too


def main() -> int:
    spec = WorkerSpec.decode(sys.stdin.buffer.readline())
    logs = spec.settings.get("logging", {})
    configure_logging(
        logs.get("level", "info"),
        stderr=logs.get("stderr", "always"),
        log_content=bool(logs.get("log_content", False)),
    )
    try:
        trio.run(serve_worker, spec)
    except BaseException as exc:
        error = project_error(exc)
        if error is None:
            raise
        # One line the parent's operator can act on (the parent names the worker).
        sys.stderr.write(f"error [{error.code}]: {error.message}; remedy: {error.remedy}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
