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

from retrieval_mcp.ingest.runner import IngestReport
from retrieval_mcp.logs import log_file
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.services import Services, ingest_demo_if_empty, open_services
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.asgi_app import RootApp
from retrieval_mcp.transport.auth_gate import AuthGate
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir, ensure_token_file
from retrieval_mcp.transport.http_server import serve_http
from retrieval_mcp.transport.listeners import open_listeners
from retrieval_mcp.transport.origin_policy import OriginPolicy
from retrieval_mcp.transport.rate_limiter import RateLimiter

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


def origin_policy(settings: Settings, port: int) -> OriginPolicy:
    """Our port only (the SDK's default accepts any local port), plus what is configured."""
    return OriginPolicy.for_port(
        port,
        extra_hosts=settings.server.allowed_hosts,
        extra_origins=settings.server.allowed_origins,
    )


def transport_security(policy: OriginPolicy) -> TransportSecuritySettings:
    """The same lists for the SDK's own check, which runs after ours (defence in depth)."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=policy.all_hosts,
        allowed_origins=sorted(policy.origins),
    )


def build_root_app(
    settings: Settings, services: Services, gate: AuthGate, limiter: RateLimiter, port: int
) -> RootApp:
    """The whole HTTP surface for a server on ``port``: our checks in front of the SDK."""
    policy = origin_policy(settings, port)
    mcp_app = services.mcp_server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=settings.limits.max_body_bytes,
        transport_security=transport_security(policy),
    )
    app = RootApp(
        mcp_app,
        services.readiness,
        gate,
        limiter,
        policy,
        settings.limits,
        metrics=services.metrics.render,
        operator=services.desk,
    )
    services.metrics.watch(gate=gate, limiter=limiter, app=app)
    return app


def server_log_path(settings: Settings) -> Path:
    configured = settings.logging.file
    return Path(configured).expanduser() if configured else settings.state_dir / "logs/server.log"


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
    new_token = None
    if settings.server.require_auth:
        new_token = ensure_token_file(settings.token_path)
    gate = AuthGate(
        settings.token_path, settings.auth, require_auth=settings.server.require_auth, hub=hub
    )
    limiter = RateLimiter(settings.limits)
    logs = settings.logging
    with log_file(
        server_log_path(settings),
        level=logs.level,
        max_bytes=logs.file_max_bytes,
        backups=logs.file_backups,
        log_content=logs.log_content,
    ):
        # One supervision tree: the gate's token watcher and the limiter's sweeper join
        # the WAL writer and the pipeline in the services' tree (ADR 0009).
        async with open_services(
            settings, hub=hub, limiter=limiter, supervise=[gate, limiter]
        ) as services:
            demo = await ingest_demo_if_empty(services)
            await _serve(settings, services, gate, limiter, shutdown, new_token, demo, task_status)


async def _serve(
    settings: Settings,
    services: Services,
    gate: AuthGate,
    limiter: RateLimiter,
    shutdown: trio.Event,
    new_token: str | None,
    demo: IngestReport | None,
    task_status: trio.TaskStatus[ServerInfo],
) -> None:
    listeners = open_listeners(settings.server.host, settings.server.port, settings.socket_path)
    try:
        app = build_root_app(settings, services, gate, limiter, listeners.port)
        async with trio.open_nursery() as nursery:
            await nursery.start(
                lambda task_status: serve_http(
                    app,
                    listeners,
                    shutdown.wait,
                    graceful_timeout=settings.server.shutdown_grace_s,
                    limits=settings.limits,
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
