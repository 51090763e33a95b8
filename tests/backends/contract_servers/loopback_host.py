"""CONTRACT TESTS: serve a small ASGI app on 127.0.0.1 (a free port) for one test.

The contract servers in this package speak the documented subset of a remote API that
an adapter uses; they are not the real services. ``serve_on_loopback`` binds the
socket itself (so the port is known before Hypercorn starts) and hands it over as
``fd://``; cancelling the surrounding nursery stops it.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve


async def serve_on_loopback(
    app: Any, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve ``app`` until cancelled; ``task_status.started`` gets its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{os.dup(sock.fileno())}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.1
    sock.close()
    shutdown = trio.Event()
    try:
        await serve(
            app,
            config,
            shutdown_trigger=shutdown.wait,
            task_status=_Forward(task_status, f"http://127.0.0.1:{port}"),
        )
    finally:
        shutdown.set()


class _Forward:
    """Hypercorn calls ``started()`` with no value; the caller wants the URL."""

    def __init__(self, status: trio.TaskStatus[str], url: str) -> None:
        self._status = status
        self._url = url

    def started(self, value: object = None) -> None:
        self._status.started(self._url)


def closed_port_url() -> str:
    """A loopback URL nothing listens on (connection refused)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"
