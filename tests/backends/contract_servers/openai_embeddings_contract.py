"""CONTRACT TESTS: an in-memory server speaking OpenAI's ``POST /v1/embeddings`` (the
shape Ollama, vLLM and text-embeddings-inference also serve). Not OpenAI: vectors come
from the callable it is given (the bundled MiniLM in these tests), scaled so that the
client's normalisation is exercised.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.backends.contract_servers.faults import FaultingApp, Faults
from tests.backends.contract_servers.scoring import Embed


class EmbeddingsContract:
    def __init__(self, *, model: str, embed: Embed, api_key: str = "", scale: float = 3.0) -> None:
        self.model = model
        self.embed = embed
        self.api_key = api_key
        self.scale = scale
        self.truncate_to = 0  # >0: answer with vectors of this many dimensions (a bad server)
        self.batches: list[int] = []
        self.faults = Faults()
        routes = [Route("/v1/embeddings", self._embeddings, methods=["POST"])]
        self.app = FaultingApp(Starlette(routes=routes), self.faults)

    async def _embeddings(self, request: Request) -> JSONResponse:
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        body: dict[str, Any] = await request.json()
        if body.get("model") != self.model:
            return _error(404, f"The model `{body.get('model')}` does not exist", "model_not_found")
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.batches.append(len(inputs))
        data = []
        for i, text in enumerate(inputs):
            vector = [x * self.scale for x in self.embed(str(text))]
            if self.truncate_to:
                vector = vector[: self.truncate_to]
            data.append({"object": "embedding", "index": i, "embedding": vector})
        data.reverse()  # clients must order by "index", not by position
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": self.model,
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        )


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": code}},
        status_code=status,
    )
