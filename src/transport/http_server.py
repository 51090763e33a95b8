"""Run the ASGI app with Hypercorn's Trio worker on pre-bound sockets.

Hypercorn installs no signal handlers; the caller passes ``shutdown_trigger`` and
Hypercorn drains in-flight requests for up to ``graceful_timeout`` seconds.

Connection-level limits are Hypercorn's: ``keep_alive_timeout`` closes a connection
that has been idle, or has not finished sending its request headers, for
``limits.idle_timeout_s`` (a slowloris on the headers is dropped); h11 refuses a head
that is still incomplete past ``limits.max_header_bytes`` (the ASGI app caps a head
that arrived whole); the listen ``backlog`` bounds the connections waiting to be
accepted. A slow *body* is the ASGI app's to
stop (Hypercorn's ``read_timeout`` is per read, so one byte a second would reset it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from retrieval_mcp.settings import LimitsSettings
from retrieval_mcp.transport.asgi_types import ASGIApp
from retrieval_mcp.transport.listeners import Listeners


def hypercorn_config(
    listeners: Listeners, *, graceful_timeout: float, limits: LimitsSettings | None = None
) -> Config:
    limits = limits or LimitsSettings()
    config = Config()
    config.bind = listeners.binds()
    config.graceful_timeout = graceful_timeout
    config.accesslog = None
    config.errorlog = None  # our own structured logs say what runs where
    config.include_server_header = False
    config.keep_alive_timeout = limits.idle_timeout_s
    config.h11_max_incomplete_size = limits.max_header_bytes
    config.backlog = limits.backlog
    return config


async def serve_http(
    app: ASGIApp,
    listeners: Listeners,
    shutdown_trigger: Callable[[], Awaitable[None]],
    *,
    graceful_timeout: float = 5.0,
    limits: LimitsSettings | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until ``shutdown_trigger`` returns; signals ``task_status`` once listening."""
    config = hypercorn_config(listeners, graceful_timeout=graceful_timeout, limits=limits)
    await serve(app, config, shutdown_trigger=shutdown_trigger, task_status=task_status)  # type: ignore[arg-type]
