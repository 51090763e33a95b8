"""Embeddings from an OpenAI-compatible ``POST /v1/embeddings`` endpoint.

The same request shape is served by OpenAI, Azure OpenAI deployments behind a proxy,
Ollama, vLLM and text-embeddings-inference: ``{"model": …, "input": [texts]}`` answered
by ``{"data": [{"index": i, "embedding": […]}, …]}``. Vectors are L2-normalised here,
so stores and MMR see unit vectors whatever the server returns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import httpx

from retrieval_mcp.errors import BackendBadResponse, ConfigError
from retrieval_mcp.json_http import JsonHttp, bad_response

SERVICE = "the embeddings endpoint"


def embeddings_path(base_url: str) -> tuple[str, str]:
    """(base, path): a base ending in /v1 is not given a second one."""
    base = base_url.rstrip("/")
    if base.endswith("/v1"):
        return base[: -len("/v1")], "/v1/embeddings"
    return base, "/v1/embeddings"


class OpenAICompatibleEmbeddings:
    """An ``EmbeddingProvider`` over HTTP. Owns its HTTP client; ``aclose`` closes it.

    ``dimension`` 0 means "learn it": call ``probe()`` once before use.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        dimension: int = 0,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url or not model:
            raise ConfigError(
                "encoder.kind is 'openai-compatible' but encoder.openai.base_url or .model is empty"
            )
        base, self._path = embeddings_path(base_url)
        self.name = f"openai-compatible:{model}"
        self.dimension = dimension
        self._model = model
        self._batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

        async def auth_headers() -> dict[str, str]:
            return headers

        self._http = JsonHttp(
            SERVICE, base, timeout_s=timeout_s, headers=auth_headers, transport=transport
        )

    async def probe(self) -> int:
        """Embed one short text to learn (or check) the dimension; returns it."""
        await self.embed(["dimension probe"])
        return self.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            out.extend(await self._embed_batch(list(texts[start : start + self._batch_size])))
        return out

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embed(texts)

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        if not batch:
            return []
        body = await self._http.request(
            "POST",
            self._path,
            json={"model": self._model, "input": batch},
            action="embeddings",
        )
        with bad_response(SERVICE, "embeddings"):
            rows: list[Any] = body["data"]
            ordered = sorted(rows, key=lambda row: int(row.get("index", 0)))
            vectors = [[float(x) for x in row["embedding"]] for row in ordered]
        if len(vectors) != len(batch):
            raise BackendBadResponse(
                f"{SERVICE} returned {len(vectors)} embeddings for {len(batch)} inputs"
            )
        for vector in vectors:
            if self.dimension == 0:
                self.dimension = len(vector)
            if len(vector) != self.dimension:
                raise BackendBadResponse(
                    f"{SERVICE} returned a {len(vector)}-d vector; the configured model has "
                    f"{self.dimension} dimensions",
                    remedy="Set encoder.openai.dimension to the model's real dimension, or "
                    "point encoder.openai.model at the model that built the index.",
                )
        return [_unit(v) for v in vectors]

    async def aclose(self) -> None:
        await self._http.aclose()


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else vector
