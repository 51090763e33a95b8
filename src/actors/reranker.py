"""The reranker actor and its strategies: none, MMR (built in), HTTP, local cross-encoder.

Every strategy returns the same hits in a new order with their fused scores replaced
by the reranker's, and records a ``rerank`` leg entry so the original ranks stay visible.
Network and model errors map to BackendError at this layer; the orchestrator then
keeps the fused order and reports the step as skipped. No strategy has a timeout of its
own: the orchestrator bounds the step at the call site (``rerank.timeout_s``, capped by
the request deadline), and a model running in a worker thread is abandoned there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

import attrs
import httpx
import trio

from retrieval_mcp.actors.actor import RequestActor
from retrieval_mcp.actors.faults import FaultInjector
from retrieval_mcp.backends.protocol import RetrievalBackend, VectorsBackend
from retrieval_mcp.errors import BackendError, BackendUnavailable, CapabilityMissing, ConfigError
from retrieval_mcp.pipeline.mmr import mmr_rerank
from retrieval_mcp.records import Hit, LegScore


@attrs.frozen
class RerankRequest:
    query: str
    hits: Sequence[Hit]
    limit: int


class RerankStrategy(Protocol):
    name: str

    async def rerank(self, request: RerankRequest) -> list[Hit]: ...

    async def aclose(self) -> None: ...


def _rescored(hits: Sequence[Hit], scores: Sequence[float], limit: int) -> list[Hit]:
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))[:limit]
    return [
        Hit(
            chunk=hits[i].chunk,
            score=float(scores[i]),
            legs={**hits[i].legs, "rerank": LegScore(rank=rank, score=float(scores[i]))},
        )
        for rank, i in enumerate(order, start=1)
    ]


class NoRerank:
    name = "none"

    async def rerank(self, request: RerankRequest) -> list[Hit]:
        return list(request.hits)[: request.limit]

    async def aclose(self) -> None:
        return None


class UnsupportedRerank:
    """A configured strategy this backend cannot serve (MMR without stored vectors).

    The orchestrator reports the step as skipped, ``unsupported``, instead of asking.
    """

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        self.why = why

    async def rerank(self, request: RerankRequest) -> list[Hit]:
        raise CapabilityMissing(f"rerank {self.name!r} is unsupported here: {self.why}")

    async def aclose(self) -> None:
        return None


class MMRRerank:
    """Diversity over the stored dense vectors (needs ``Capability.VECTORS``)."""

    name = "mmr"

    def __init__(self, backend: RetrievalBackend, *, lambda_: float = 0.7) -> None:
        self._backend = cast(VectorsBackend, backend)
        self._lambda = lambda_

    async def rerank(self, request: RerankRequest) -> list[Hit]:
        vectors = await self._backend.vectors([h.chunk.id for h in request.hits])
        ordered = mmr_rerank(request.hits, vectors, lambda_=self._lambda, limit=request.limit)
        return [
            attrs.evolve(h, legs={**h.legs, "rerank": LegScore(rank=rank, score=h.score)})
            for rank, h in enumerate(ordered, start=1)
        ]

    async def aclose(self) -> None:
        return None


class HttpRerank:
    """A reranking service: text-embeddings-inference ``/rerank`` or the ``/v1/rerank`` shape
    used by Cohere, Jina and Voyage."""

    name = "http"

    def __init__(
        self,
        url: str,
        *,
        api: str = "tei",
        model: str = "",
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not url:
            raise ConfigError("pipeline.rerank.http_url is empty but kind is 'http'")
        self._url = url
        self._api = api
        self._model = model
        # No httpx timeout: the orchestrator's cancel scope bounds every call.
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(None))

    async def rerank(self, request: RerankRequest) -> list[Hit]:
        texts = [h.chunk.text for h in request.hits]
        if not texts:
            return []
        body: dict[str, Any]
        if self._api == "tei":
            body = {"query": request.query, "texts": texts, "truncate": True}
        else:
            body = {"query": request.query, "documents": texts, "top_n": len(texts)}
            if self._model:
                body["model"] = self._model
        try:
            response = await self._client.post(self._url, json=body)
        except httpx.TransportError as exc:
            raise BackendUnavailable(f"reranker at {self._url} unreachable: {exc}") from exc
        if response.status_code != 200:
            raise BackendError(f"reranker answered HTTP {response.status_code}")
        try:
            payload = response.json()
            rows = payload if self._api == "tei" else payload["results"]
            key = "score" if self._api == "tei" else "relevance_score"
            scores = [float("-inf")] * len(texts)
            for row in rows:
                scores[int(row["index"])] = float(row[key])
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise BackendError(f"reranker sent a malformed response: {exc}") from exc
        return _rescored(request.hits, scores, request.limit)

    async def aclose(self) -> None:
        await self._client.aclose()


class CrossEncoderRerank:
    """A sentence-transformers CrossEncoder from a local folder (extra ``rerank-local``)."""

    name = "cross-encoder"

    def __init__(self, path: str, *, model: Any = None) -> None:
        # One prediction at a time: an abandoned one keeps its token until its thread
        # ends, so late predictions cannot pile up threads under load.
        self._limiter = trio.CapacityLimiter(1)
        if model is not None:  # an already loaded model (tests hand in a fake)
            self._model = model
            return
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise ConfigError(
                "the cross-encoder reranker needs sentence-transformers",
                remedy="pip install 'latence-retrieval-mcp[rerank-local]' "
                "(torch CPU: pip install torch==2.13.0 first), or use kind='mmr'.",
            ) from exc
        if not path:
            raise ConfigError("pipeline.rerank.cross_encoder_path is empty")
        try:  # a local folder only: nothing is ever downloaded
            self._model = CrossEncoder(path, device="cpu", local_files_only=True)
        except Exception as exc:  # transformers raises OSError/ValueError/…
            raise ConfigError(
                f"cannot load a cross-encoder from {path}: {exc}",
                remedy="Point pipeline.rerank.cross_encoder_path at a saved "
                "sentence-transformers CrossEncoder folder, or use kind='mmr'.",
            ) from exc

    async def rerank(self, request: RerankRequest) -> list[Hit]:
        pairs = [(request.query, h.chunk.text) for h in request.hits]
        if not pairs:
            return []
        # The model cannot be interrupted: at the step's deadline the wait is abandoned
        # and the thread's result discarded when it ends.
        scores = await trio.to_thread.run_sync(
            self._model.predict, pairs, abandon_on_cancel=True, limiter=self._limiter
        )
        return _rescored(request.hits, [float(s) for s in scores], request.limit)

    async def aclose(self) -> None:
        return None


class Reranker(RequestActor[RerankRequest, list[Hit]]):
    def __init__(self, strategy: RerankStrategy, *, faults: FaultInjector | None = None) -> None:
        super().__init__("reranker", faults=faults)
        self.strategy = strategy

    async def handle(self, request: RerankRequest) -> list[Hit]:
        result = await self.strategy.rerank(request)
        self.faults.checkpoint(self.name)
        return result
