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

from retrieval_mcp.actors.search_pipeline import PipelineSettings, SearchPipeline
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.loaders import load_documents
from retrieval_mcp.ingest.runner import IngestReport, ProgressFn, ingest_documents
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.copy_config import load_shipped_copy
from retrieval_mcp.tools.dispatch import ToolDispatcher, build_mcp_server
from retrieval_mcp.tools.registry import RegistryHolder, build_registry
from retrieval_mcp.tools.search_tool import SearchTool
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir

log = structlog.get_logger(__name__)

DEMO_SOURCE = "demo"


@attrs.define
class Services:
    settings: Settings
    backend: QdrantEmbeddedBackend
    pipeline: SearchPipeline
    registry: RegistryHolder
    dispatcher: ToolDispatcher
    mcp_server: Server[Any]

    async def readiness(self) -> tuple[bool, dict[str, Any]]:
        status = await self.backend.status()
        return status.ready, {
            "backend": status.backend,
            "chunks": status.chunks,
            "detail": status.detail,
        }


async def open_backend(settings: Settings) -> QdrantEmbeddedBackend:
    """Open the configured store; every entry point (serve, ingest, status) comes here."""
    ensure_state_dir(settings.state_dir)
    enc = settings.encoder
    encoder = await trio.to_thread.run_sync(
        lambda: MiniLMEncoder(
            max_tokens=enc.max_tokens, batch_size=enc.batch_size, threads=enc.threads
        )
    )
    return await QdrantEmbeddedBackend.open(
        settings.store_path,
        encoder,
        hnsw_ef=settings.backend.qdrant_embedded.hnsw_ef,
        query_cache_size=enc.query_cache_size,
    )


@asynccontextmanager
async def open_services(settings: Settings) -> AsyncIterator[Services]:
    backend = await open_backend(settings)
    try:
        search = settings.search
        pipeline = SearchPipeline(
            backend,
            PipelineSettings(
                candidates_per_leg=search.candidates_per_leg,
                leg_timeout_s=search.leg_timeout_s,
                rrf_k=search.rrf_k,
            ),
        )
        holder = RegistryHolder(build_registry(load_shipped_copy(), backend.capabilities(), search))
        dispatcher = ToolDispatcher(holder, {"search": SearchTool(backend, pipeline, search)})
        yield Services(
            settings=settings,
            backend=backend,
            pipeline=pipeline,
            registry=holder,
            dispatcher=dispatcher,
            mcp_server=build_mcp_server(holder, dispatcher),
        )
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
