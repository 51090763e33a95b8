"""Reranker strategies: MMR (built in) and the HTTP reranker against a local server that
speaks the text-embeddings-inference ``/rerank`` API and the ``/v1/rerank`` shape.

CONTRACT TESTS for the HTTP part: the local server implements the documented request
and response shapes, scoring by word overlap; it is not a real reranking model.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from retrieval_mcp.actors.reranker import HttpRerank, MMRRerank, RerankRequest
from retrieval_mcp.errors import BackendError, BackendUnavailable, ConfigError
from retrieval_mcp.records import Hit, LegScore
from tests.actors.scripted_backend import ScriptedBackend, make_chunk
from tests.backends.contract_servers.loopback_host import closed_port_url, serve_on_loopback

QUERY = "boiler pressure"


def overlap(query: str, text: str) -> float:
    words = set(query.lower().split())
    return float(sum(w in words for w in text.lower().split()))


async def tei_rerank(request: Request) -> Response:
    body = await request.json()
    assert set(body) >= {"query", "texts"}
    scores = [{"index": i, "score": overlap(body["query"], t)} for i, t in enumerate(body["texts"])]
    return JSONResponse(sorted(scores, key=lambda s: -s["score"]))


async def v1_rerank(request: Request) -> Response:
    body = await request.json()
    assert set(body) >= {"query", "documents"} and body.get("model") == "rr-1"
    results = [
        {"index": i, "relevance_score": overlap(body["query"], d)}
        for i, d in enumerate(body["documents"])
    ]
    return JSONResponse({"results": results, "model": body["model"]})


async def broken(request: Request) -> Response:
    return Response("not json", media_type="text/plain")


async def failing(request: Request) -> Response:
    return JSONResponse({"error": "overloaded"}, status_code=503)


APP = Starlette(
    routes=[
        Route("/rerank", tei_rerank, methods=["POST"]),
        Route("/v1/rerank", v1_rerank, methods=["POST"]),
        Route("/broken", broken, methods=["POST"]),
        Route("/failing", failing, methods=["POST"]),
    ]
)


def hits() -> list[Hit]:
    texts = ["bread dough", "boiler pressure low", "pressure gauge"]
    out = []
    for rank, text in enumerate(texts, start=1):
        chunk = make_chunk(f"c{rank}")
        chunk = type(chunk)(id=chunk.id, text=text, provenance=chunk.provenance)
        out.append(Hit(chunk=chunk, score=1.0 / rank, legs={"dense": LegScore(rank, 1.0)}))
    return out


@pytest.mark.parametrize(
    ("path", "api", "model"), [("/rerank", "tei", ""), ("/v1/rerank", "v1", "rr-1")]
)
async def test_http_reranker_reorders_by_the_service(path: str, api: str, model: str) -> None:
    async with trio.open_nursery() as nursery:
        base = await nursery.start(serve_on_loopback, APP)
        strategy = HttpRerank(base + path, api=api, model=model)
        try:
            ranked = await strategy.rerank(RerankRequest(QUERY, hits(), limit=2))
        finally:
            await strategy.aclose()
            nursery.cancel_scope.cancel()
    assert [h.chunk.text for h in ranked] == ["boiler pressure low", "pressure gauge"]
    assert ranked[0].legs["rerank"].rank == 1 and ranked[0].score == 2.0
    assert ranked[0].legs["dense"].rank == 2  # the first-stage ranks stay visible


async def test_http_reranker_failures_become_our_errors() -> None:
    async with trio.open_nursery() as nursery:
        base = await nursery.start(serve_on_loopback, APP)
        for path, error in (("/broken", BackendError), ("/failing", BackendError)):
            strategy = HttpRerank(base + path)
            with pytest.raises(error):
                await strategy.rerank(RerankRequest(QUERY, hits(), limit=3))
            await strategy.aclose()
        nursery.cancel_scope.cancel()
    unreachable = HttpRerank(closed_port_url() + "/rerank")
    with pytest.raises(BackendUnavailable):
        await unreachable.rerank(RerankRequest(QUERY, hits(), limit=3))
    await unreachable.aclose()
    with pytest.raises(ConfigError):
        HttpRerank("")


async def test_mmr_demotes_a_near_duplicate() -> None:
    backend = ScriptedBackend({}, extra=frozenset())
    vectors = {"c1": [1.0, 0.0], "c2": [0.99, 0.14], "c3": [0.0, 1.0]}

    async def stored(ids: Any) -> dict[str, list[float]]:
        return {i: vectors[i] for i in ids}

    backend.vectors = stored  # type: ignore[method-assign]
    ranked = await MMRRerank(backend, lambda_=0.5).rerank(RerankRequest(QUERY, hits(), limit=3))
    assert [h.chunk.id for h in ranked] == ["c1", "c3", "c2"]
