"""Open and own everything a running server needs, in dependency order.

``open_services`` yields a ``Services`` bundle and closes it in reverse order,
shielded, whatever cancels it: the store lock is always released.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any, cast

import attrs
import structlog
import trio
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus

from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.actors.orchestrator import Pipeline
from retrieval_mcp.actors.reranker import RerankStrategy
from retrieval_mcp.actors.wal_writer import WalWriter, open_wal_writer
from retrieval_mcp.backends.backend_factory import check_encoder_choice, open_adapter
from retrieval_mcp.backends.protocol import (
    Capability,
    IngestTarget,
    RetrievalBackend,
    unavailable_legs,
)
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder, approximate_token_count
from retrieval_mcp.errors import CapabilityMissing, EncoderUnavailable
from retrieval_mcp.ingest.durable_ingest import DurableIngestTarget
from retrieval_mcp.ingest.loaders import load_documents
from retrieval_mcp.ingest.runner import (
    CommittableTarget,
    IngestReport,
    ProgressFn,
    ingest_documents,
)
from retrieval_mcp.mcp_surface.copy_reload import CopyReloader, render_registry
from retrieval_mcp.mcp_surface.dispatch import LegNote, ToolDispatcher, build_mcp_server
from retrieval_mcp.mcp_surface.registry import RegistryHolder, ToolHandler, registry_hash
from retrieval_mcp.mcp_surface.resources import ResourceReader
from retrieval_mcp.mcp_surface.session_log import SessionRecorder
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.catalog_tools import IndexStatusTool, ListSourcesTool
from retrieval_mcp.tools.context_tool import GetContextTool
from retrieval_mcp.tools.neighbors_tool import ExpandNeighborsTool
from retrieval_mcp.tools.search_tool import SearchTool
from retrieval_mcp.tools.similar_tool import MoreLikeThisTool
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir
from retrieval_mcp.transport.metrics import ServerMetrics

log = structlog.get_logger(__name__)

DEMO_SOURCE = "demo"


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
    metrics: ServerMetrics = attrs.field(factory=ServerMetrics)

    async def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Ready = the backend answers and the WAL can still acknowledge writes (an fsync
        failure is fatal for the writer: nothing more may be acknowledged)."""
        status = await self.backend.status()
        wal = self.wal.statistics()
        return status.ready and wal.healthy, {
            "backend": status.backend,
            "chunks": status.chunks,
            "detail": status.detail,
            "wal": {
                "healthy": wal.healthy,
                "failure": wal.failure,
                "queue_depth": wal.queue_depth,
                "unapplied": wal.unapplied,
                "last_fsync_s": wal.last_fsync_s,
            },
        }


async def load_encoder(settings: Settings) -> MiniLMEncoder:
    enc = settings.encoder
    return await trio.to_thread.run_sync(
        lambda: MiniLMEncoder(
            max_tokens=enc.max_tokens, batch_size=enc.batch_size, threads=enc.threads
        )
    )


async def load_encoder_if_installed(
    settings: Settings,
) -> tuple[MiniLMEncoder | None, EncoderUnavailable | None]:
    """The bundled encoder, or None and why: a wheel-only install has no tokenizer, and
    the embedded store then serves the BM25 leg alone (design/decisions/0031)."""
    try:
        return await load_encoder(settings), None
    except EncoderUnavailable as exc:
        log.warning("dense_model_missing", reason=exc.message, remedy=exc.remedy)
        return None, exc


async def open_backend(
    settings: Settings, encoder: MiniLMEncoder | None = None
) -> RetrievalBackend:
    """Open the configured store; every entry point (serve, ingest, status) comes here."""
    check_encoder_choice(settings)
    ensure_state_dir(settings.state_dir)
    if settings.backend.kind != "qdrant-embedded":

        async def minilm() -> MiniLMEncoder:
            return encoder or await load_encoder(settings)

        return await open_adapter(settings, minilm)
    missing = None
    if encoder is None:
        encoder, missing = await load_encoder_if_installed(settings)
    return await QdrantEmbeddedBackend.open(
        settings.store_path,
        encoder,
        hnsw_ef=settings.backend.qdrant_embedded.hnsw_ef,
        query_cache_size=settings.encoder.query_cache_size,
        dense_missing=missing,
    )


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
    faults: FaultInjector | None = None,
    rerank_strategy: RerankStrategy | None = None,
    hub: ReloadHub | None = None,
) -> AsyncIterator[Services]:
    """Open the store and the WAL (recovering it), start the pipeline's actors; close
    all of them on exit, in reverse order."""
    encoder, _ = await load_encoder_if_installed(settings)
    backend = await open_backend(settings, encoder)
    try:
        async with open_wal_writer(settings.wal_path, settings.wal) as wal:
            ingest = None
            if Capability.INGEST in backend.capabilities():
                ingest = DurableIngestTarget(ingest_target(backend), wal)
                await _recover(ingest)
            async with _serving(
                settings,
                backend,
                encoder,
                wal,
                ingest,
                faults=faults,
                rerank_strategy=rerank_strategy,
                hub=hub,
            ) as services:
                yield services
    finally:
        await backend.aclose()


async def _recover(ingest: DurableIngestTarget) -> None:
    report = await ingest.recover()
    if report.records:
        log.info("wal_recovered", **attrs.asdict(report))


@asynccontextmanager
async def _serving(
    settings: Settings,
    backend: RetrievalBackend,
    encoder: MiniLMEncoder | None,
    wal: WalWriter,
    ingest: DurableIngestTarget | None,
    *,
    faults: FaultInjector | None,
    rerank_strategy: RerankStrategy | None,
    hub: ReloadHub | None,
) -> AsyncIterator[Services]:
    pipeline = Pipeline(
        backend,
        settings.pipeline,
        encoder.count_tokens if encoder is not None else approximate_token_count,
        rerank_strategy=rerank_strategy,
        faults=faults,
    )
    hub = hub or ReloadHub()
    registry = await trio.to_thread.run_sync(render_registry, settings, backend.capabilities())
    holder = RegistryHolder(registry)
    log.info("copy_loaded", hash=registry_hash(registry), tools=[t.name for t in registry.tools])
    context = ToolContext(backend=backend, pipeline=pipeline, settings=settings, hub=hub)
    dispatcher = ToolDispatcher(holder, tool_handlers(context))
    dispatcher.record_sessions_with(SessionRecorder(wal, log_content=settings.wal.log_content))
    metrics = ServerMetrics()
    dispatcher.observe_with(metrics)
    pipeline.observe_leg = metrics.observe_leg
    metrics.watch(pipeline=pipeline, wal=wal, hub=hub)
    dispatcher.explain_legs_with(
        {u.leg.value: LegNote(u.reason, u.remedy) for u in unavailable_legs(backend)}
    )
    bus = InMemorySubscriptionBus()
    resources = ResourceReader(backend, dispatcher.caller_of)
    server = build_mcp_server(holder, dispatcher, bus, resources)
    hub.register("copy", CopyReloader(settings, backend.capabilities(), holder, server, bus))
    async with trio.open_nursery() as nursery:
        await nursery.start(pipeline.run, name="pipeline")
        try:
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
                metrics=metrics,
            )
        finally:
            nursery.cancel_scope.cancel()


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
    documents = await trio.to_thread.run_sync(lambda: list(load_documents(path)))
    return await ingest_documents(
        target,
        documents,
        source=source,
        chunk_chars=settings.chunking.chunk_chars,
        overlap_chars=settings.chunking.overlap_chars,
        prune=prune,
        progress=progress,
    )


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
