"""``serve --workers N``: one parent binds the sockets, N worker processes serve them.

One process tops out near 1000 / (GIL-milliseconds per call) calls a second, whatever
the store can take. For a remote store (Qdrant server, Postgres, Databricks, Azure)
the store is not ours to protect, so more processes buy more calls (ADR 0045).

The parent holds no services. It binds the loopback listener and the Unix socket
(``open_listeners``, so refusals and the socket's 0600 mode are as for one process),
creates the token file and the shared rate-limit table, then starts each worker
(``worker_process.py``) with the sockets in ``pass_fds``: the kernel hands each new
connection to whichever worker accepts first. Worker 0 is started (and ingests the
demo corpus into an empty store) before the others, so there is one writer.

Signals: SIGHUP is forwarded to every worker, each reloading its tokens and copy as a
single server does; the first SIGTERM/SIGINT is forwarded as SIGTERM and the parent
waits for the workers to drain, a second one kills them. A worker that dies is
restarted, at most ``MAX_RESTARTS`` times in ``RESTART_WINDOW_S``; past that the pool
stops every worker and the command exits with ``worker_failed``. A worker that cannot
start the first time fails the command at once: its error is the operator's to fix.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

import attrs
import structlog
import trio

from retrieval_mcp.errors import ConfigError, RetrievalMCPError
from retrieval_mcp.logs import log_file
from retrieval_mcp.server_run import ServerInfo, server_log_path
from retrieval_mcp.services import WAL_DRAIN_S
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir, ensure_token_file
from retrieval_mcp.transport.listeners import Listeners, open_listeners
from retrieval_mcp.transport.shared_limits import create_table
from retrieval_mcp.transport.worker_process import WorkerSpec

log = structlog.get_logger(__name__)

MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
#: A worker loads the encoder and opens the store before it is ready; a busy machine is slow.
READY_TIMEOUT_S = 180.0
LIMITS_TABLE = "rate-limits.bin"
WORKER_MODULE = "retrieval_mcp.transport.worker_process"


class WorkerFailed(RetrievalMCPError):
    """A worker could not start, or kept dying past the restart budget."""

    code = "worker_failed"
    remedy = "Read the worker's log (logs/server.worker-<k>.log in the state directory)."


def check_worker_count(settings: Settings, count: int) -> None:
    """Refuse what cannot run as N processes, before anything is bound."""
    if count < 1:
        raise ConfigError(f"--workers must be at least 1, not {count}")
    if count == 1:
        return
    if settings.backend.kind == "qdrant-embedded":
        raise ConfigError(
            "--workers needs a remote store: the embedded store (backend.kind = "
            "'qdrant-embedded') is opened by one process only, under an exclusive lock",
            remedy="Drop --workers to serve the embedded store from one process, or serve "
            "the index from a store server: backend.kind = 'qdrant-remote', 'postgres', "
            "'databricks' or 'azure-search'.",
        )
    if settings.ingest.watch:
        raise ConfigError(
            "--workers with [[ingest.watch]] would run one watcher per worker, each "
            "writing the same source",
            remedy="Remove [[ingest.watch]] (run 'latence-retrieval-mcp ingest' from a "
            "scheduler instead) or serve with one worker.",
        )


def worker_log_path(settings: Settings, index: int) -> Path:
    """``server.log`` → ``server.worker-<k>.log``: one writer per rotating file."""
    path = server_log_path(settings)
    return path.with_name(f"{path.stem}.worker-{index}{path.suffix or '.log'}")


def worker_wal_path(settings: Settings, index: int) -> Path:
    """One WAL per worker, under the server's: a WAL has one writer (its lock)."""
    return settings.wal_path / f"worker-{index}"


def worker_settings(settings: Settings, index: int) -> dict[str, Any]:
    """The settings worker ``index`` runs with, as JSON data for its stdin."""
    data = settings.model_dump(mode="json", by_alias=True)
    data["wal"]["path"] = str(worker_wal_path(settings, index))
    data["logging"]["file"] = str(worker_log_path(settings, index))
    if index > 0:  # worker 0 alone fills an empty store (one writer)
        data["demo"]["ingest_on_first_start"] = False
    return data


@attrs.define
class RestartBudget:
    """At most ``limit`` restarts within any ``window_s`` seconds."""

    limit: int = MAX_RESTARTS
    window_s: float = RESTART_WINDOW_S
    _at: deque[float] = attrs.field(factory=deque)

    def allow(self, now: float) -> bool:
        while self._at and now - self._at[0] >= self.window_s:
            self._at.popleft()
        if len(self._at) >= self.limit:
            return False
        self._at.append(now)
        return True


def _exit_reason(returncode: int) -> str:
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exit status {returncode}"


class WorkerPool:
    """Starts, watches and stops the workers; ``run`` restarts the ones that die."""

    def __init__(self, settings: Settings, count: int, listeners: Listeners, table: Path) -> None:
        self._settings = settings
        self._count = count
        self._listeners = listeners
        self._table = table
        self._procs: dict[int, trio.Process] = {}
        self._budget = RestartBudget()
        self._stopping = False
        self.restarts = 0

    def pids(self) -> dict[int, int]:
        return {index: proc.pid for index, proc in self._procs.items()}

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Start worker 0, then the others; report worker 0's demo chunks once all are
        serving; keep them serving until cancelled. Cancellation leaves the processes
        running: ``stop`` (shielded, by the caller) ends them."""
        async with trio.open_nursery() as nursery:
            demo = await nursery.start(self._keep, 0)
            async with trio.open_nursery() as starting:
                for index in range(1, self._count):
                    starting.start_soon(nursery.start, self._keep, index)
            task_status.started(demo)

    async def _keep(self, index: int, *, task_status: trio.TaskStatus[int]) -> None:
        proc, demo = await self._spawn(index)
        task_status.started(demo)
        while True:
            code = await proc.wait()
            self._procs.pop(index, None)
            if self._stopping:
                return
            log.error("worker_died", worker=index, pid=proc.pid, reason=_exit_reason(code))
            while True:
                if not self._budget.allow(trio.current_time()):
                    raise WorkerFailed(
                        f"worker {index} died ({_exit_reason(code)}) and the restart budget "
                        f"({MAX_RESTARTS} in {RESTART_WINDOW_S:.0f} s) is spent"
                    )
                self.restarts += 1
                try:
                    proc, _ = await self._spawn(index)
                except WorkerFailed as exc:
                    log.error("worker_restart_failed", worker=index, error=exc.message)
                    continue
                log.info("worker_restarted", worker=index, pid=proc.pid)
                break

    async def _spawn(self, index: int) -> tuple[trio.Process, int]:
        listeners = self._listeners
        fds = [listeners.tcp.fileno()] + ([listeners.unix.fileno()] if listeners.unix else [])
        spec = WorkerSpec(
            index=index,
            count=self._count,
            settings=worker_settings(self._settings, index),
            tcp_fd=fds[0],
            unix_fd=fds[1] if len(fds) > 1 else None,
            host=listeners.host,
            port=listeners.port,
            socket_path=str(self._settings.socket_path) if listeners.unix else None,
            limits_table=str(self._table),
        )
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=fds,
            start_new_session=True,  # a terminal's Ctrl-C reaches the parent only
        )
        self._procs[index] = proc
        assert proc.stdin is not None and proc.stdout is not None
        await proc.stdin.send_all(spec.encode())  # stdin stays open: EOF = parent gone
        line = b""
        with trio.move_on_after(READY_TIMEOUT_S):
            while not line.endswith(b"\n"):
                chunk = await proc.stdout.receive_some(4096)
                if not chunk:
                    break
                line += chunk
        if not line.endswith(b"\n"):
            self._procs.pop(index, None)
            with trio.CancelScope(shield=True):
                proc.kill()
                code = await proc.wait()
            raise WorkerFailed(
                f"worker {index} did not start ({_exit_reason(code)}); its error is above "
                f"and in {worker_log_path(self._settings, index)}"
            )
        ready = json.loads(line)
        log.info("worker_ready", worker=index, pid=ready["pid"])
        return proc, int(ready.get("demo_chunks", 0))

    def forward(self, signum: int) -> None:
        for proc in list(self._procs.values()):
            if proc.returncode is None:
                proc.send_signal(signum)

    async def stop(self, grace_s: float) -> None:
        """SIGTERM every worker, wait up to ``grace_s`` for them to drain, then kill
        what is left and reap all. Call shielded."""
        self._stopping = True
        self.forward(signal.SIGTERM)
        with trio.move_on_after(grace_s):
            for proc in list(self._procs.values()):
                await proc.wait()
        for index, proc in list(self._procs.items()):
            if proc.returncode is None:
                log.warning("worker_killed", worker=index, pid=proc.pid)
                proc.kill()
            await proc.wait()
            if proc.stdin is not None:
                await proc.stdin.aclose()
        self._procs.clear()


async def _watch_signals(pool: WorkerPool, shutdown: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                log.info("reload_forwarded", workers=sorted(pool.pids()))
                pool.forward(signal.SIGHUP)
            elif not shutdown.is_set():
                log.info("shutdown_signal", signal=name)
                shutdown.set()
            else:
                log.warning("forced_shutdown", signal=name)
                pool.forward(signal.SIGKILL)


async def run_pool(
    settings: Settings,
    count: int,
    *,
    shutdown: trio.Event | None = None,
    task_status: trio.TaskStatus[ServerInfo] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve with ``count`` worker processes until SIGTERM/SIGINT (or ``shutdown``);
    every worker is stopped and reaped, the socket file and the table removed, however
    this ends. Raises WorkerFailed when a worker cannot start or keeps dying."""
    check_worker_count(settings, count)
    handle_signals = shutdown is None
    shutdown = trio.Event() if shutdown is None else shutdown
    ensure_state_dir(settings.state_dir)
    new_token = ensure_token_file(settings.token_path) if settings.server.require_auth else None
    logs = settings.logging
    with log_file(
        server_log_path(settings),
        level=logs.level,
        max_bytes=logs.file_max_bytes,
        backups=logs.file_backups,
        log_content=logs.log_content,
    ):
        listeners = open_listeners(settings.server.host, settings.server.port, settings.socket_path)
        table = settings.state_dir / LIMITS_TABLE
        create_table(table)
        pool = WorkerPool(settings, count, listeners, table)
        try:
            async with trio.open_nursery() as nursery:
                if handle_signals:
                    nursery.start_soon(_watch_signals, pool, shutdown)
                demo = await nursery.start(pool.run)
                host = f"[{listeners.host}]" if ":" in listeners.host else listeners.host
                url = f"http://{host}:{listeners.port}/mcp"
                log.info("serving", url=url, workers=pool.pids())
                task_status.started(
                    ServerInfo(
                        url=url,
                        port=listeners.port,
                        socket_path=listeners.unix_path,
                        token_path=settings.token_path,
                        new_token=new_token,
                        demo_chunks=demo,
                    )
                )
                await shutdown.wait()
                nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await pool.stop(settings.server.shutdown_grace_s + WAL_DRAIN_S + 5)
            listeners.close()
            table.unlink(missing_ok=True)
            log.info("stopped", restarts=pool.restarts)
