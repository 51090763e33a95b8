"""CONTRACT TESTS: an in-memory server speaking text-embeddings-inference's
``POST /embed_sparse`` and ``POST /embed_all`` (the query-side encoder contract of the
remote Qdrant sparse and multivector legs). Not TEI: the vectors come from
``toy_encoders``.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.backends.contract_servers.faults import FaultingApp, Faults
from tests.backends.contract_servers.toy_encoders import toy_multivector, toy_sparse


class TeiEncoderContract:
    def __init__(self, *, api_key: str = "") -> None:
        self.api_key = api_key
        self.calls: list[tuple[str, list[str]]] = []
        self.token_dim_override = 0  # >0: answer /embed_all with token vectors this wide
        self.faults = Faults()
        routes = [
            Route("/embed_sparse", self._sparse, methods=["POST"]),
            Route("/embed_all", self._all, methods=["POST"]),
        ]
        self.app = FaultingApp(Starlette(routes=routes), self.faults)

    async def _inputs(self, request: Request) -> list[str] | JSONResponse:
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return JSONResponse({"error": "Unauthorized", "error_type": "auth"}, status_code=401)
        body: dict[str, Any] = await request.json()
        raw = body["inputs"]
        inputs = [str(t) for t in (raw if isinstance(raw, list) else [raw])]
        self.calls.append((request.url.path, inputs))
        return inputs

    async def _sparse(self, request: Request) -> JSONResponse:
        inputs = await self._inputs(request)
        if isinstance(inputs, JSONResponse):
            return inputs
        out = []
        for text in inputs:
            indices, values = toy_sparse(text)
            out.append([{"index": i, "value": v} for i, v in zip(indices, values, strict=True)])
        return JSONResponse(out)

    async def _all(self, request: Request) -> JSONResponse:
        inputs = await self._inputs(request)
        if isinstance(inputs, JSONResponse):
            return inputs
        out = [toy_multivector(text) for text in inputs]
        if self.token_dim_override:
            out = [[row[: self.token_dim_override] for row in matrix] for matrix in out]
        return JSONResponse(out)
