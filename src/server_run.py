"""Run the whole server: state dir, token, services, demo corpus, sockets, HTTP.

``run_server`` is what ``latence-retrieval-mcp serve`` and the tests both call, so
the tests exercise the real start-up and shutdown path. Under ``serve --workers N``
each worker process calls it too, with a ``WorkerRole``: the sockets it inherited
from the parent, the shared rate-limit table, and no operator channel (ADR 0045).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

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
from retrieval_mcp.transport.listeners import Listeners, open_listeners
from retrieval_mcp.transport.origin_policy import OriginPolicy
from retrieval_mcp.transport.rate_limiter import RateLimiter
from retrieval_mcp.transport.shared_limits import SharedBuckets

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


@attrs.frozen
class WorkerRole:
    """One of ``count`` worker processes: ``listeners`` were bound by the parent (their
    ``unix_path`` is None, so closing them never unlinks the parent's socket file) and
    ``limits_table`` is the bucket table every worker maps."""

    index: int
    count: int
    listeners: Listeners
    socket_path: Path | None
    limits_table: Path

    def describe(self) -> dict[str, int]:
        return {"index": self.index, "of": self.count, "pid": os.getpid()}


ReadinessProbe = Callable[[], Awaitable[tuple[bool, dict[str, Any]]]]


def _with_worker(probe: ReadinessProbe, role: WorkerRole) -> ReadinessProbe:
    """``/readyz`` names the worker that answered: which process a connection reached."""

    async def readiness() -> tuple[bool, dict[str, Any]]:
        ready, detail = await probe()
        return ready, {**detail, "worker": role.describe()}

    return readiness


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
    settings: Settings,
    services: Services,
    gate: AuthGate,
    limiter: RateLimiter,
    port: int,
    worker: WorkerRole | None = None,
) -> RootApp:
    """The whole HTTP surface for a server on ``port``: our checks in front of the SDK.

    A worker serves no operator channel: a remote store needs none (``ingest`` writes
    into it directly), and N desks would be N writers (ADR 0045)."""
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
        services.readiness if worker is None else _with_worker(services.readiness, worker),
        gate,
        limiter,
        policy,
        settings.limits,
        metrics=services.metrics.render,
        operator=services.desk if worker is None else None,
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
    worker: WorkerRole | None = None,
    task_status: trio.TaskStatus[ServerInfo] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until ``shutdown`` is set or SIGTERM/SIGINT arrives; SIGHUP reloads.

    Signals are handled when ``handle_signals`` is true, which is the default when no
    ``shutdown`` event is given (the command line). Tests pass an event and choose.
    ``worker`` is set in a worker process of ``serve --workers N`` (``worker_pool``).
    """
    hub = hub or ReloadHub()
    if handle_signals is None:
        handle_signals = shutdown is None
    shutdown = trio.Event() if shutdown is None else shutdown
    with trio.CancelScope() as force:
        async with trio.open_nursery() as nursery:
            if handle_signals:
                nursery.start_soon(_watch_signals, shutdown, force, hub)
            await _run(settings, shutdown, hub, worker, task_status)
            nursery.cancel_scope.cancel()
    log.info("stopped")


async def _run(
    settings: Settings,
    shutdown: trio.Event,
    hub: ReloadHub,
    worker: WorkerRole | None,
    task_status: trio.TaskStatus[ServerInfo],
) -> None:
    ensure_state_dir(settings.state_dir)
    new_token = None
    if settings.server.require_auth:
        new_token = ensure_token_file(settings.token_path)
    gate = AuthGate(
        settings.token_path, settings.auth, require_auth=settings.server.require_auth, hub=hub
    )
    shared = SharedBuckets(worker.limits_table) if worker is not None else None
    limiter = RateLimiter(settings.limits, shared=shared)
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
            try:
                await _serve(
                    settings,
                    services,
                    gate,
                    limiter,
                    shutdown,
                    new_token,
                    demo,
                    worker,
                    task_status,
                )
            finally:
                if shared is not None:
                    shared.close()


async def _serve(
    settings: Settings,
    services: Services,
    gate: AuthGate,
    limiter: RateLimiter,
    shutdown: trio.Event,
    new_token: str | None,
    demo: IngestReport | None,
    worker: WorkerRole | None,
    task_status: trio.TaskStatus[ServerInfo],
) -> None:
    if worker is None:
        listeners = open_listeners(settings.server.host, settings.server.port, settings.socket_path)
        socket_path = listeners.unix_path
    else:
        listeners, socket_path = worker.listeners, worker.socket_path
    try:
        app = build_root_app(settings, services, gate, limiter, listeners.port, worker)
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
            log.info("serving", url=url, socket=str(socket_path or ""))
            task_status.started(
                ServerInfo(
                    url=url,
                    port=listeners.port,
                    socket_path=socket_path,
                    token_path=settings.token_path,
                    new_token=new_token,
                    demo_chunks=demo.chunks_written if demo else 0,
                )
            )
    finally:
        listeners.close()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
