"""Run the ASGI app with Hypercorn's Trio worker on pre-bound sockets.

Hypercorn installs no signal handlers; the caller passes ``shutdown_trigger`` and
Hypercorn drains in-flight requests for up to ``graceful_timeout`` seconds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from retrieval_mcp.transport.asgi_app import ASGIApp
from retrieval_mcp.transport.listeners import Listeners


def hypercorn_config(listeners: Listeners, *, graceful_timeout: float) -> Config:
    config = Config()
    config.bind = listeners.binds()
    config.graceful_timeout = graceful_timeout
    config.accesslog = None
    config.errorlog = None  # our own structured logs say what runs where
    config.include_server_header = False
    return config


async def serve_http(
    app: ASGIApp,
    listeners: Listeners,
    shutdown_trigger: Callable[[], Awaitable[None]],
    *,
    graceful_timeout: float = 5.0,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until ``shutdown_trigger`` returns; signals ``task_status`` once listening."""
    config = hypercorn_config(listeners, graceful_timeout=graceful_timeout)
    await serve(app, config, shutdown_trigger=shutdown_trigger, task_status=task_status)  # type: ignore[arg-type]
