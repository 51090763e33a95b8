"""Pick the configured adapter and open it: one table from ``backend.kind`` to an opener.

Each adapter module has one ``open_<kind>(settings, load_minilm)`` async context
manager that builds everything the adapter uses — HTTP clients, the OAuth helper, the
encoder, the pool or the store — in an ``AsyncExitStack`` and closes all of it, in
reverse order and shielded, however the block is left. ``open_adapter`` only chooses
among them; ``services.open_backend`` is what every entry point calls. Credentials are
read inside the openers, once, through ``SecretRef`` (environment variable or 0600
file); the bundled model is loaded only when the adapter encodes on our side.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import outcome
import structlog
import trio

from retrieval_mcp.backends.azure_ai_search import open_azure_search
from retrieval_mcp.backends.databricks_vector_search import open_databricks
from retrieval_mcp.backends.protocol import RetrievalBackend
from retrieval_mcp.backends.qdrant_embedded import open_qdrant_embedded
from retrieval_mcp.backends.qdrant_remote import open_qdrant_remote
from retrieval_mcp.encoders.embedding_provider import MiniLMLoader
from retrieval_mcp.encoders.minilm import MiniLMEncoder, QueryGraph, build_query_graph
from retrieval_mcp.errors import ConfigError, EncoderUnavailable
from retrieval_mcp.settings import Settings

log = structlog.get_logger(__name__)

Opener = Callable[[Settings, MiniLMLoader], AbstractAsyncContextManager[RetrievalBackend]]


def check_encoder_choice(settings: Settings) -> None:
    """The embedded store always uses the bundled model: refuse a config that says otherwise."""
    if settings.backend.kind == "qdrant-embedded" and settings.encoder.kind != "minilm-onnx":
        raise ConfigError(
            "encoder.kind = 'openai-compatible' needs another backend: the embedded store "
            "uses the bundled model",
            remedy="Set encoder.kind = 'minilm-onnx', or choose backend.kind = 'postgres'.",
        )


async def load_encoder(settings: Settings) -> MiniLMEncoder:
    """The bundled MiniLM model, loaded in a worker thread (about 0.3 s), and its
    int8-MatMul query graph unless configured off (ADR 0052), built in a second thread
    at the same time: both are onnxruntime session builds, which run without the GIL,
    so the graph adds little to a start.

    The graph is checked and put to use here, before anything is served, so that every
    query a server answers is embedded by one graph; if it cannot be, queries stay on
    the shipped graph and the log says why."""
    enc = settings.encoder
    graph: outcome.Outcome[QueryGraph] | None = None

    async def build_graph() -> None:
        nonlocal graph
        graph = await outcome.acapture(trio.to_thread.run_sync, build_query_graph, enc.threads)

    # Both outcomes are captured, so the nursery raises nothing of its own: a missing
    # model surfaces below as EncoderUnavailable, not wrapped in an exception group.
    async with trio.open_nursery() as nursery:
        if enc.query_graph == "int8-matmul":
            nursery.start_soon(build_graph)
        built = await outcome.acapture(
            trio.to_thread.run_sync,
            lambda: MiniLMEncoder(
                max_tokens=enc.max_tokens, batch_size=enc.batch_size, threads=enc.threads
            ),
        )
    encoder = built.unwrap()
    if graph is not None:
        try:
            rewritten = await trio.to_thread.run_sync(encoder.use_query_graph, graph.unwrap())
        except EncoderUnavailable as exc:
            log.warning("query_graph_unavailable", reason=str(exc), graph=encoder.query_graph)
        else:
            log.info("query_graph_ready", graph=encoder.query_graph, matmuls=rewritten)
    return encoder


def minilm_loader(settings: Settings, encoder: MiniLMEncoder | None = None) -> MiniLMLoader:
    """``encoder`` if given, else the model loaded on first use and shared after."""
    loaded: list[MiniLMEncoder] = [encoder] if encoder is not None else []

    async def load() -> MiniLMEncoder:
        if not loaded:
            loaded.append(await load_encoder(settings))
        return loaded[0]

    return load


def _open_pgvector(
    settings: Settings, load_minilm: MiniLMLoader
) -> AbstractAsyncContextManager[RetrievalBackend]:
    try:  # psycopg is an optional extra: import it only when configured
        from retrieval_mcp.backends.pgvector import open_pgvector
        from retrieval_mcp.backends.pgvector_mapped import open_pgvector_mapped
    except ImportError as exc:
        raise ConfigError(
            f"backend.kind = 'postgres' needs psycopg: {exc}",
            remedy="pip install 'latence-retrieval-mcp[postgres]'",
        ) from exc
    if settings.backend.postgres.map.relation:  # an existing table or view, read-only
        return open_pgvector_mapped(settings, load_minilm)
    return open_pgvector(settings, load_minilm)


OPENERS: dict[str, Opener] = {
    "qdrant-embedded": open_qdrant_embedded,
    "postgres": _open_pgvector,
    "qdrant-remote": open_qdrant_remote,
    "databricks": open_databricks,
    "azure-search": open_azure_search,
}


@asynccontextmanager
async def open_adapter(
    settings: Settings, load_minilm: MiniLMLoader
) -> AsyncIterator[RetrievalBackend]:
    """Open the adapter named by ``settings.backend.kind``; closed when the block ends."""
    check_encoder_choice(settings)
    opener = OPENERS.get(settings.backend.kind)
    if opener is None:
        raise ConfigError(f"backend.kind {settings.backend.kind!r} has no adapter")
    async with opener(settings, load_minilm) as backend:
        yield backend
