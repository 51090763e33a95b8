"""The composition root: open and own everything a running server needs, in order.

``open_services`` builds the server from async context managers in one
``AsyncExitStack`` — backend (``open_backend``), WAL log, reranker, then the
supervision tree (WAL writer, pipeline, and whatever the caller adds: the auth gate and
the rate limiter) — and closes them in reverse order, shielded, whatever cancels it:
queued WAL records are committed first, and the store lock is always released.
``open_backend`` is the one way every entry point (serve, ingest, status, eval, tests)
opens the configured store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any, cast

import attrs
import structlog
import trio
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus

from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.actors.orchestrator import Pipeline, build_rerank_strategy
from retrieval_mcp.actors.reranker import RerankStrategy
from retrieval_mcp.actors.supervisor import Actor, Child, Supervisor
from retrieval_mcp.actors.wal_writer import (
    BlockingRunner,
    WalWriter,
    open_segment_log,
    open_wal_writer,
    run_in_worker_thread,
)
from retrieval_mcp.backends.backend_factory import load_encoder as load_encoder
from retrieval_mcp.backends.backend_factory import minilm_loader, open_adapter
from retrieval_mcp.backends.protocol import (
    Capability,
    IngestTarget,
    PrewarmBackend,
    RetrievalBackend,
    unavailable_legs,
)
from retrieval_mcp.encoders.minilm import (
    MiniLMEncoder,
    approximate_token_count,
)
from retrieval_mcp.errors import CapabilityMissing, ConfigError, EncoderUnavailable
from retrieval_mcp.ingest.durable_ingest import DurableIngestTarget
from retrieval_mcp.ingest.folder_watch import FolderWatcher
from retrieval_mcp.ingest.live_ingest import IngestDesk
from retrieval_mcp.ingest.runner import (
    CommittableTarget,
    IngestReport,
    ProgressFn,
    ingest_documents,
    read_documents,
)
from retrieval_mcp.mcp_surface.copy_reload import CopyReloader, render_registry
from retrieval_mcp.mcp_surface.dispatch import (
    LegNote,
    ToolDispatcher,
    ToolLimiter,
    build_mcp_server,
)
from retrieval_mcp.mcp_surface.registry import RegistryHolder, ToolHandler, registry_hash
from retrieval_mcp.mcp_surface.resources import ResourceReader
from retrieval_mcp.mcp_surface.session_log import SessionRecorder
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.screening.chunk_flags import persist_verdicts
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.catalog_tools import IndexStatusTool, ListSourcesTool
from retrieval_mcp.tools.context_tool import GetContextTool
from retrieval_mcp.tools.neighbors_tool import ExpandNeighborsTool
from retrieval_mcp.tools.search_tool import SearchTool
from retrieval_mcp.tools.similar_tool import MoreLikeThisTool
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir
from retrieval_mcp.transport.caller import Caller
from retrieval_mcp.transport.metrics import ServerMetrics

log = structlog.get_logger(__name__)

DEMO_SOURCE = "demo"
#: How long shutdown waits for the WAL writer to commit what is queued (session records).
WAL_DRAIN_S = 5.0


@attrs.define
class Services:
    settings: Settings
    backend: RetrievalBackend
    pipeline: Pipeline
    registry: RegistryHolder
    dispatcher: ToolDispatcher
    mcp_server: Server[Any]
    hub: ReloadHub
    wal: WalWriter
    ingest: DurableIngestTarget | None
    tree: Supervisor
    sessions: SessionRecorder
    metrics: ServerMetrics = attrs.field(factory=ServerMetrics)
    #: Writes while serving (operator channel, watchers); None for a read-only backend.
    desk: IngestDesk | None = None

    async def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Ready = the backend answers, the WAL can still acknowledge writes (an fsync
        failure or a crash of its writer is fatal: nothing more may be acknowledged),
        and no supervised component is down for good."""
        status = await self.backend.status()
        wal = self.wal.statistics()
        failed = self.tree.failed()
        return status.ready and wal.healthy and not failed, {
            "backend": status.backend,
            "chunks": status.chunks,
            "detail": status.detail,
            "wal": {
                "healthy": wal.healthy,
                "failure": wal.failure,
                "queue_depth": wal.queue_depth,
                "unapplied": wal.unapplied,
                "last_fsync_s": wal.last_fsync_s,
                "session_records_dropped": self.sessions.dropped,
            },
            "failed_components": failed,
        }


async def load_encoder_if_installed(settings: Settings) -> MiniLMEncoder | None:
    """The bundled encoder, or None when its files are absent (a wheel-only install):
    the embedded store then serves the BM25 leg alone (design/decisions/0031)."""
    try:
        return await load_encoder(settings)
    except EncoderUnavailable as exc:
        log.warning("dense_model_missing", reason=exc.message, remedy=exc.remedy)
        return None


@asynccontextmanager
async def open_backend(
    settings: Settings, encoder: MiniLMEncoder | None = None
) -> AsyncIterator[RetrievalBackend]:
    """The configured store, open for the block and released when it ends (shielded).

    Every entry point (serve, ingest, status, eval, tests) comes here. ``encoder`` is
    the bundled model when the caller already has it (the server also counts tokens
    with it); otherwise it is loaded only if the adapter needs it.
    """
    ensure_state_dir(settings.state_dir)
    if settings.backend.kind != "qdrant-embedded":
        # A foreign store is screened on read: keep its verdicts across restarts.
        await trio.to_thread.run_sync(persist_verdicts, settings.state_dir)
    async with open_adapter(settings, minilm_loader(settings, encoder)) as backend:
        yield backend


def tool_handlers(context: ToolContext) -> dict[str, ToolHandler]:
    return {
        "search": SearchTool(context),
        "expand_neighbors": ExpandNeighborsTool(context),
        "more_like_this": MoreLikeThisTool(context),
        "get_context": GetContextTool(context),
        "list_sources": ListSourcesTool(context),
        "index_status": IndexStatusTool(context),
    }


@asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    hub: ReloadHub | None = None,
    limiter: ToolLimiter | None = None,
    supervise: Sequence[Actor] = (),
    faults: FaultInjector | None = None,
    rerank_strategy: RerankStrategy | None = None,
    wal_blocking: BlockingRunner = run_in_worker_thread,
    local_caller: Caller | None = None,
) -> AsyncIterator[Services]:
    """Open the store and the WAL (recovering it), start the supervision tree; close
    all of it on exit, in reverse order.

    ``limiter`` applies per-tool budgets in the dispatcher; ``supervise`` adds actors
    (the transport's auth gate and rate limiter) to the one tree, after the WAL writer
    and the pipeline. A ``rerank_strategy`` passed in stays the caller's to close.
    ``local_caller`` is who calls without an HTTP request run as (embedded stdio only).
    """
    hub = hub or ReloadHub()
    faults = faults or FaultInjector()
    encoder = await load_encoder_if_installed(settings)
    async with AsyncExitStack() as stack:
        backend = await stack.enter_async_context(open_backend(settings, encoder))
        segment_log = await stack.enter_async_context(
            open_segment_log(settings.wal_path, settings.wal)
        )
        wal = WalWriter(segment_log, settings.wal, run_blocking=wal_blocking, faults=faults)
        if rerank_strategy is None:
            rerank_strategy = build_rerank_strategy(backend, settings.pipeline)
            stack.push_async_callback(_close_strategy, rerank_strategy)
        metrics = ServerMetrics()
        pipeline = Pipeline(
            backend,
            settings.pipeline,
            encoder.count_tokens if encoder is not None else approximate_token_count,
            token_floor=encoder.token_floor if encoder is not None else None,
            rerank_strategy=rerank_strategy,
            faults=faults,
            observe_leg=metrics.observe_leg,
        )
        desk, watchers = _live_ingest(settings, backend)
        tree = Supervisor(
            [Child(wal, restart="once"), pipeline, *supervise, *watchers], name="server"
        )
        registry = await trio.to_thread.run_sync(render_registry, settings, backend.capabilities())
        holder = RegistryHolder(registry)
        log.info(
            "copy_loaded", hash=registry_hash(registry), tools=[t.name for t in registry.tools]
        )
        context = ToolContext(
            backend=backend,
            pipeline=pipeline,
            settings=settings,
            hub=hub,
            wal=wal,
            tree=tree,
            desk=desk,
        )
        sessions = SessionRecorder(wal, log_content=settings.wal.log_content)
        dispatcher = ToolDispatcher(
            holder,
            tool_handlers(context),
            limiter=limiter,
            sessions=sessions,
            log_content=settings.logging.log_content,
            request_timeout_s=settings.pipeline.request_timeout_s,
            metrics=metrics,
            leg_notes={u.leg.value: LegNote(u.reason, u.remedy) for u in unavailable_legs(backend)},
            local_caller=local_caller,
        )
        metrics.watch(pipeline=pipeline, wal=wal, hub=hub)
        bus = InMemorySubscriptionBus()
        resources = ResourceReader(backend, dispatcher.caller_of)
        server = build_mcp_server(holder, dispatcher, bus, resources)
        hub.register("copy", CopyReloader(settings, backend.capabilities(), holder, server, bus))

        nursery = await stack.enter_async_context(trio.open_nursery())
        stack.push_async_callback(_stop_tree, wal, nursery.cancel_scope)
        await nursery.start(tree.run, name="supervision")
        ingest = None
        if Capability.INGEST in backend.capabilities():
            ingest = DurableIngestTarget(ingest_target(backend), wal)
            await _recover(ingest)
            if desk is not None:
                desk.attach(ingest)  # the watchers, already started, begin their first sync
        if isinstance(backend, PrewarmBackend):
            nursery.start_soon(_prewarm, backend)
        yield Services(
            settings=settings,
            backend=backend,
            pipeline=pipeline,
            registry=holder,
            dispatcher=dispatcher,
            mcp_server=server,
            hub=hub,
            wal=wal,
            ingest=ingest,
            tree=tree,
            sessions=sessions,
            metrics=metrics,
            desk=desk,
        )


def _live_ingest(
    settings: Settings, backend: RetrievalBackend
) -> tuple[IngestDesk | None, list[FolderWatcher]]:
    """The desk for writes while serving and one watcher per ``[[ingest.watch]]``."""
    if Capability.INGEST not in backend.capabilities():
        if settings.ingest.watch:
            raise ConfigError(
                f"ingest.watch is set but backend {backend.name} is read-only",
                remedy="Remove [ingest] watch, or use a backend this server can write into.",
            )
        return None, []
    desk = IngestDesk(
        settings.chunking,
        formats=settings.formats,
        commit_every=settings.backend.qdrant_embedded.max_segment_points,
    )
    return desk, [FolderWatcher(watch, desk) for watch in settings.ingest.watch]


async def _prewarm(backend: PrewarmBackend) -> None:
    """Warm the store's cold files beside serving; a failure costs speed, not service."""
    try:
        report = await backend.prewarm()
    except Exception as exc:  # an OS error here must not stop the server
        log.warning("store_prewarm_failed", error=str(exc))
        return
    if report is not None:
        log.info(
            "store_prewarmed",
            files=report.files,
            mib=round(report.bytes_read / 2**20, 1),
            seconds=round(report.seconds, 2),
            budget_spent=report.budget_spent,
        )


async def _stop_tree(wal: WalWriter, tree_scope: trio.CancelScope) -> None:
    # The WAL writer first, gracefully: what is queued (session records, markers) is
    # committed before the tree is cancelled. Bounded, so a stuck disk cannot hold
    # shutdown forever (a batch already in its worker thread still completes).
    with trio.CancelScope(shield=True), trio.move_on_after(WAL_DRAIN_S):
        await wal.aclose()
        await wal.wait_stopped()
    tree_scope.cancel()


async def _close_strategy(strategy: RerankStrategy) -> None:
    with trio.CancelScope(shield=True), trio.move_on_after(2):
        await strategy.aclose()


async def _recover(ingest: DurableIngestTarget) -> None:
    report = await ingest.recover()
    if report.records:
        log.info("wal_recovered", **attrs.asdict(report))


def demo_corpus_path() -> Path:
    return Path(str(resources.files("retrieval_mcp.demo_corpus")))


@asynccontextmanager
async def durable_target(
    backend: RetrievalBackend, settings: Settings
) -> AsyncIterator[DurableIngestTarget]:
    """The backend as an ingest target that writes through the WAL (recovered first)."""
    target = ingest_target(backend)
    async with open_wal_writer(settings.wal_path, settings.wal) as wal:
        durable = DurableIngestTarget(target, wal)
        await _recover(durable)
        yield durable


async def ingest_path(
    backend: RetrievalBackend,
    settings: Settings,
    path: Path,
    *,
    source: str,
    prune: bool = False,
    progress: ProgressFn | None = None,
    target: CommittableTarget | None = None,
) -> IngestReport:
    """Ingest ``path`` through the WAL: ``target`` when the caller already holds one (a
    running server), otherwise a WAL opened for this ingest alone."""
    if target is None:
        async with durable_target(backend, settings) as durable:
            return await ingest_path(
                backend,
                settings,
                path,
                source=source,
                prune=prune,
                progress=progress,
                target=durable,
            )
    documents, errors = await read_documents(path, settings.formats)
    report = await ingest_documents(
        target,
        documents,
        source=source,
        chunk_chars=settings.chunking.chunk_chars,
        overlap_chars=settings.chunking.overlap_chars,
        prune=prune,
        progress=progress,
        # One embedded segment at a time (ADR 0027); elsewhere a commit is cheap.
        commit_every=settings.backend.qdrant_embedded.max_segment_points,
    )
    report.errors.extend(errors)
    return report


def ingest_target(backend: RetrievalBackend) -> CommittableTarget:
    """The backend as an ingest target, or CapabilityMissing for a read-only one."""
    if (
        Capability.INGEST not in backend.capabilities()
        or not isinstance(backend, IngestTarget)
        or not hasattr(backend, "commit")
    ):
        raise CapabilityMissing(
            f"backend {backend.name} is read-only: this server searches it but cannot write",
            remedy="Load documents with the backend's own tools, or use backend.kind "
            "'qdrant-embedded' or 'postgres' to ingest with latence-retrieval-mcp.",
        )
    return cast(CommittableTarget, backend)


async def ingest_demo_if_empty(services: Services) -> IngestReport | None:
    if not services.settings.demo.ingest_on_first_start:
        return None
    if Capability.INGEST not in services.backend.capabilities():
        return None  # a read-only backend is searched as it is
    status = await services.backend.status()
    if status.chunks:
        return None
    report = await ingest_path(
        services.backend,
        services.settings,
        demo_corpus_path(),
        source=DEMO_SOURCE,
        target=services.ingest,
    )
    log.info("demo_ingested", chunks=report.chunks_written, documents=report.documents_written)
    return report
