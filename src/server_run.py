"""Run the whole server: state dir, token, services, demo corpus, sockets, HTTP.

``run_server`` is what ``latence-retrieval-mcp serve`` and the tests both call, so
the tests exercise the real start-up and shutdown path.
"""

from __future__ import annotations

import signal
from pathlib import Path

import attrs
import structlog
import trio
from mcp.server.transport_security import TransportSecuritySettings

from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.services import ingest_demo_if_empty, open_services
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.asgi_app import RootApp
from retrieval_mcp.transport.bearer_tokens import (
    TokenVerifier,
    ensure_state_dir,
    ensure_token_file,
    load_tokens,
)
from retrieval_mcp.transport.http_server import serve_http
from retrieval_mcp.transport.listeners import open_listeners

log = structlog.get_logger(__name__)


@attrs.frozen
class ServerInfo:
    """What a client needs to connect; ``new_token`` is set only when just created."""

    url: str
    port: int
    socket_path: Path | None
    token_path: Path
    new_token: str | None
    demo_chunks: int


def transport_security(settings: Settings, port: int) -> TransportSecuritySettings:
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    if settings.socket_path is not None:
        hosts.append("localhost")  # Unix-socket clients send Host: localhost, no port
    origins = [
        f"http://127.0.0.1:{port}",
        f"http://localhost:{port}",
        f"http://[::1]:{port}",
        *settings.server.allowed_origins,
    ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


async def _watch_signals(shutdown: trio.Event, force: trio.CancelScope, hub: ReloadHub) -> None:
    """SIGHUP: reload what is reloadable. First SIGTERM/SIGINT: drain gracefully. A second
    one: stop now (cleanup still runs)."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                await hub.reload_all()
            elif not shutdown.is_set():
                log.info("shutdown_signal", signal=name)
                shutdown.set()
            else:
                log.warning("forced_shutdown", signal=name)
                force.cancel()


async def run_server(
    settings: Settings,
    *,
    shutdown: trio.Event | None = None,
    hub: ReloadHub | None = None,
    handle_signals: bool | None = None,
    task_status: trio.TaskStatus[ServerInfo] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until ``shutdown`` is set or SIGTERM/SIGINT arrives; SIGHUP reloads.

    Signals are handled when ``handle_signals`` is true, which is the default when no
    ``shutdown`` event is given (the command line). Tests pass an event and choose.
    """
    hub = hub or ReloadHub()
    if handle_signals is None:
        handle_signals = shutdown is None
    shutdown = trio.Event() if shutdown is None else shutdown
    with trio.CancelScope() as force:
        async with trio.open_nursery() as nursery:
            if handle_signals:
                nursery.start_soon(_watch_signals, shutdown, force, hub)
            await _run(settings, shutdown, hub, task_status)
            nursery.cancel_scope.cancel()
    log.info("stopped")


async def _run(
    settings: Settings,
    shutdown: trio.Event,
    hub: ReloadHub,
    task_status: trio.TaskStatus[ServerInfo],
) -> None:
    ensure_state_dir(settings.state_dir)
    verifier = None
    new_token = None
    if settings.server.require_auth:
        new_token = ensure_token_file(settings.token_path)
        verifier = TokenVerifier(load_tokens(settings.token_path))
    async with open_services(settings, hub=hub) as services:
        demo = await ingest_demo_if_empty(services)
        listeners = open_listeners(settings.server.host, settings.server.port, settings.socket_path)
        try:
            mcp_app = services.mcp_server.streamable_http_app(
                streamable_http_path="/mcp",
                stateless_http=True,
                json_response=True,
                transport_security=transport_security(settings, listeners.port),
            )
            app = RootApp(mcp_app, services.readiness, verifier)
            async with trio.open_nursery() as nursery:
                await nursery.start(
                    lambda task_status: serve_http(
                        app,
                        listeners,
                        shutdown.wait,
                        graceful_timeout=settings.server.shutdown_grace_s,
                        task_status=task_status,
                    )
                )
                url = f"http://{_url_host(listeners.host)}:{listeners.port}/mcp"
                log.info("serving", url=url, socket=str(listeners.unix_path or ""))
                task_status.started(
                    ServerInfo(
                        url=url,
                        port=listeners.port,
                        socket_path=listeners.unix_path,
                        token_path=settings.token_path,
                        new_token=new_token,
                        demo_chunks=demo.chunks_written if demo else 0,
                    )
                )
        finally:
            listeners.close()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
