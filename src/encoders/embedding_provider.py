"""Embedding providers for the adapters that encode on our side, and a query-vector LRU.

An adapter is handed one ``EmbeddingProvider`` at construction (ADR 0006: adapters own
their query encoding) and takes ownership of it. Two exist: the bundled MiniLM model,
run in a worker thread, and an OpenAI-compatible ``/v1/embeddings`` endpoint
(``openai_compatible.py``). Both return unit-length vectors, so cosine scores and MMR
behave the same whichever built the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import trio

from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.encoders.query_cache import LRUCache


@runtime_checkable
class EmbeddingProvider(Protocol):
    """``name`` identifies the model (stores record it); ``dimension`` its vector size."""

    name: str
    dimension: int

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in input order."""
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
        vector = (await self.provider.embed([text]))[0]
        self._cache.put(text, vector)
        return vector

    def statistics(self) -> dict[str, Any]:
        return {
            "encoder": self.provider.name,
            "size": len(self._cache),
            "hits": self._cache.hits,
            "misses": self._cache.misses,
        }
