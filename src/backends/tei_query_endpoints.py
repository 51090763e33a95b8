"""Query-side encoders for the legs whose model does not run here: learned sparse
(SPLADE-style) and late-interaction multivector (ColBERT-style) query vectors from an
HTTP endpoint.

The contract is text-embeddings-inference's (TEI), so a stock TEI serves the sparse
side and any small service can serve either by answering the same two shapes:

- ``POST {endpoint}/embed_sparse`` ``{"inputs": [text]}`` → ``[[{"index": i, "value": w}, …]]``
- ``POST {endpoint}/embed_all`` ``{"inputs": [text]}`` → ``[[[x, …], …]]`` — one matrix
  per input, one row per query token (for a ColBERT model: its projected token vectors).

An ``api_key`` is sent as ``Authorization: Bearer``. No model is downloaded or run here
(ADR 0042). Each encoder owns its ``JsonHttp`` and an LRU of query vectors; the
adapter that holds it closes it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from retrieval_mcp.encoders.query_cache import LRUCache
from retrieval_mcp.errors import BackendBadResponse
from retrieval_mcp.json_http import JsonHttp, bad_response


@attrs.frozen
class SparseVector:
    indices: tuple[int, ...]
    values: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {"indices": list(self.indices), "values": list(self.values)}


class _Endpoint:
    def __init__(
        self,
        service: str,
        endpoint: str,
        path: str,
        *,
        api_key: str | None,
        timeout_s: float,
        cache_size: int,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

        async def auth() -> dict[str, str]:
            return headers

        self.service = service
        self._path = path
        self._http = JsonHttp(service, endpoint, timeout_s=timeout_s, headers=auth)
        self._cache: LRUCache[Any] = LRUCache(cache_size)

    async def _first(self, text: str) -> Any:
        answer = await self._http.request(
            "POST", self._path, json={"inputs": [text]}, action="encode a query"
        )
        with bad_response(self.service, "encode a query"):
            if not isinstance(answer, list) or len(answer) != 1:
                raise ValueError(f"expected one result, got {type(answer).__name__}")
            return answer[0]

    def statistics(self) -> dict[str, Any]:
        return {"size": len(self._cache), "hits": self._cache.hits, "misses": self._cache.misses}

    async def aclose(self) -> None:
        await self._http.aclose()


class SparseQueryEndpoint(_Endpoint):
    """Sparse query vectors from ``POST /embed_sparse`` (TEI's shape)."""

    def __init__(
        self,
        endpoint: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        cache_size: int = 1024,
    ) -> None:
        super().__init__(
            "the sparse encoder endpoint",
            endpoint,
            "/embed_sparse",
            api_key=api_key,
            timeout_s=timeout_s,
            cache_size=cache_size,
        )

    async def encode(self, text: str) -> SparseVector:
        cached: SparseVector | None = self._cache.get(text)
        if cached is not None:
            return cached
        entries = await self._first(text)
        with bad_response(self.service, "encode a query"):
            weights: dict[int, float] = {}
            for entry in entries:
                index, value = int(entry["index"]), float(entry["value"])
                if index < 0 or not math.isfinite(value):
                    raise ValueError(f"bad sparse entry {entry!r}")
                weights[index] = weights.get(index, 0.0) + value
        ordered = sorted(weights.items())
        vector = SparseVector(tuple(i for i, _ in ordered), tuple(v for _, v in ordered))
        self._cache.put(text, vector)
        return vector


class MultivectorQueryEndpoint(_Endpoint):
    """Late-interaction query token vectors from ``POST /embed_all`` (TEI's shape)."""

    def __init__(
        self,
        endpoint: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        cache_size: int = 1024,
    ) -> None:
        super().__init__(
            "the multivector encoder endpoint",
            endpoint,
            "/embed_all",
            api_key=api_key,
            timeout_s=timeout_s,
            cache_size=cache_size,
        )

    async def encode(self, text: str) -> list[list[float]]:
        cached: list[list[float]] | None = self._cache.get(text)
        if cached is not None:
            return cached
        rows = await self._first(text)
        with bad_response(self.service, "encode a query"):
            matrix = [[float(x) for x in row] for row in rows]
        if not matrix or len({len(row) for row in matrix}) != 1 or not matrix[0]:
            raise BackendBadResponse(
                f"{self.service} answered a query with {len(matrix)} token vectors of "
                "unequal or zero length"
            )
        if not all(math.isfinite(x) for row in matrix for x in row):
            raise BackendBadResponse(f"{self.service} answered a query with non-finite values")
        self._cache.put(text, matrix)
        return matrix


def matrix_width(matrix: Sequence[Sequence[float]]) -> int:
    return len(matrix[0]) if matrix else 0
