"""Embedding providers for the adapters that encode on our side, and a query-vector LRU.

An adapter is handed one ``EmbeddingProvider`` at construction (ADR 0006: adapters own
their query encoding). Two exist: the bundled MiniLM model, run in a worker thread, and
an OpenAI-compatible ``/v1/embeddings`` endpoint (``openai_compatible.py``). Both
return unit-length vectors, so cosine scores and MMR behave the same whichever built
the index. ``open_embedder`` builds the configured one and closes it on exit; an
adapter's ``open_<kind>`` enters it into the exit stack that owns the adapter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol, runtime_checkable

import trio

from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.encoders.query_cache import LRUCache
from retrieval_mcp.settings import EncoderSettings

#: Loads (or hands back the already loaded) bundled model, only when an adapter needs it.
MiniLMLoader = Callable[[], Awaitable[MiniLMEncoder]]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """``name`` identifies the model (stores record it); ``dimension`` its vector size."""

    name: str
    dimension: int

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in input order."""
        ...

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` for search queries (the bundled model may use a cheaper graph)."""
        ...

    async def aclose(self) -> None: ...


class BundledMiniLM:
    """The bundled all-MiniLM-L6-v2 in a worker thread (onnxruntime releases the GIL)."""

    def __init__(self, encoder: MiniLMEncoder) -> None:
        self._encoder = encoder
        self.name = encoder.name
        self.dimension = encoder.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        # Abandoning an embedding on cancel is harmless: it has no side effect.
        matrix = await trio.to_thread.run_sync(
            self._encoder.embed, list(texts), abandon_on_cancel=True
        )
        rows: list[list[float]] = matrix.tolist()
        return rows

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        matrix = await trio.to_thread.run_sync(
            self._encoder.embed_queries, list(texts), abandon_on_cancel=True
        )
        rows: list[list[float]] = matrix.tolist()
        return rows

    async def aclose(self) -> None:
        return None


class QueryVectors:
    """Query text -> vector through ``provider``, with an LRU in front (Trio thread only)."""

    def __init__(self, provider: EmbeddingProvider, capacity: int) -> None:
        self.provider = provider
        self._cache: LRUCache[list[float]] = LRUCache(capacity)

    async def vector(self, text: str) -> list[float]:
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        vector = (await self.provider.embed_queries([text]))[0]
        self._cache.put(text, vector)
        return vector

    def statistics(self) -> dict[str, Any]:
        return {
            "encoder": self.provider.name,
            "size": len(self._cache),
            "hits": self._cache.hits,
            "misses": self._cache.misses,
        }


@asynccontextmanager
async def open_embedder(
    settings: EncoderSettings, load_minilm: MiniLMLoader
) -> AsyncIterator[EmbeddingProvider]:
    """The configured encoder as an EmbeddingProvider, closed (shielded) on exit.

    An OpenAI-compatible endpoint with no configured dimension is probed once here, so
    a wrong URL or key fails at start-up, naming the endpoint.
    """
    if settings.kind == "minilm-onnx":
        yield BundledMiniLM(await load_minilm())
        return
    from retrieval_mcp.encoders.openai_compatible import OpenAICompatibleEmbeddings

    o = settings.openai
    provider = OpenAICompatibleEmbeddings(
        o.base_url,
        o.model,
        dimension=o.dimension,
        api_key=o.api_key.read("encoder.openai.api_key"),
        batch_size=o.batch_size,
        timeout_s=o.timeout_s,
    )
    try:
        if provider.dimension == 0:
            await provider.probe()
        yield provider
    finally:
        await provider.aclose()  # JsonHttp.aclose: shielded and bounded
