"""Open and own everything a running server needs, in dependency order.

``open_services`` yields a ``Services`` bundle and closes it in reverse order,
shielded, whatever cancels it: the store lock is always released.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import structlog
import trio
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus

from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.actors.orchestrator import Pipeline
from retrieval_mcp.actors.reranker import RerankStrategy
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.loaders import load_documents
from retrieval_mcp.ingest.runner import IngestReport, ProgressFn, ingest_documents
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.catalog_tools import IndexStatusTool, ListSourcesTool
from retrieval_mcp.tools.context_tool import GetContextTool
from retrieval_mcp.tools.copy_reload import CopyReloader, render_registry
from retrieval_mcp.tools.dispatch import ToolDispatcher, build_mcp_server
from retrieval_mcp.tools.neighbors_tool import ExpandNeighborsTool
from retrieval_mcp.tools.registry import RegistryHolder, ToolHandler, registry_hash
from retrieval_mcp.tools.search_tool import SearchTool
from retrieval_mcp.tools.similar_tool import MoreLikeThisTool
from retrieval_mcp.tools.tool_context import ToolContext
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir

log = structlog.get_logger(__name__)

DEMO_SOURCE = "demo"


@attrs.define
class Services:
    settings: Settings
    backend: QdrantEmbeddedBackend
    pipeline: Pipeline
    registry: RegistryHolder
    dispatcher: ToolDispatcher
    mcp_server: Server[Any]
    hub: ReloadHub

    async def readiness(self) -> tuple[bool, dict[str, Any]]:
        status = await self.backend.status()
        return status.ready, {
            "backend": status.backend,
            "chunks": status.chunks,
            "detail": status.detail,
        }


async def load_encoder(settings: Settings) -> MiniLMEncoder:
    enc = settings.encoder
    return await trio.to_thread.run_sync(
        lambda: MiniLMEncoder(
            max_tokens=enc.max_tokens, batch_size=enc.batch_size, threads=enc.threads
        )
    )


async def open_backend(
    settings: Settings, encoder: MiniLMEncoder | None = None
) -> QdrantEmbeddedBackend:
    """Open the configured store; every entry point (serve, ingest, status) comes here."""
    ensure_state_dir(settings.state_dir)
    encoder = encoder or await load_encoder(settings)
    return await QdrantEmbeddedBackend.open(
        settings.store_path,
        encoder,
        hnsw_ef=settings.backend.qdrant_embedded.hnsw_ef,
        query_cache_size=settings.encoder.query_cache_size,
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
    """Open the store and start the pipeline's actors; close both on exit."""
    encoder = await load_encoder(settings)
    backend = await open_backend(settings, encoder)
    try:
        pipeline = Pipeline(
            backend,
            settings.pipeline,
            encoder.count_tokens,
            rerank_strategy=rerank_strategy,
            faults=faults,
        )
        hub = hub or ReloadHub()
        registry = await trio.to_thread.run_sync(render_registry, settings, backend.capabilities())
        holder = RegistryHolder(registry)
        log.info(
            "copy_loaded", hash=registry_hash(registry), tools=[t.name for t in registry.tools]
        )
        context = ToolContext(backend=backend, pipeline=pipeline, settings=settings, hub=hub)
        dispatcher = ToolDispatcher(holder, tool_handlers(context))
        bus = InMemorySubscriptionBus()
        server = build_mcp_server(holder, dispatcher, bus)
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
                )
            finally:
                nursery.cancel_scope.cancel()
    finally:
        await backend.aclose()


def demo_corpus_path() -> Path:
    return Path(str(resources.files("retrieval_mcp.demo_corpus")))


async def ingest_path(
    backend: QdrantEmbeddedBackend,
    settings: Settings,
    path: Path,
    *,
    source: str,
    prune: bool = False,
    progress: ProgressFn | None = None,
) -> IngestReport:
    documents = await trio.to_thread.run_sync(lambda: list(load_documents(path)))
    return await ingest_documents(
        backend,
        documents,
        source=source,
        chunk_chars=settings.chunking.chunk_chars,
        overlap_chars=settings.chunking.overlap_chars,
        prune=prune,
        progress=progress,
    )


async def ingest_demo_if_empty(services: Services) -> IngestReport | None:
    if not services.settings.demo.ingest_on_first_start:
        return None
    status = await services.backend.status()
    if status.chunks:
        return None
    report = await ingest_path(
        services.backend, services.settings, demo_corpus_path(), source=DEMO_SOURCE
    )
    log.info("demo_ingested", chunks=report.chunks_written, documents=report.documents_written)
    return report
