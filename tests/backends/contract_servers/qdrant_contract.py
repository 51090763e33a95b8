"""CONTRACT TESTS: an in-memory server speaking the subset of Qdrant's REST API that
``backends/qdrant_remote.py`` uses. Not Qdrant: request and response shapes follow
Qdrant's published API reference; ranking is ``scoring.py``'s toy.

Query shapes: a dense vector, a sparse vector (``{indices, values}``, IDF applied), a
multivector (a list of token vectors, scored by MaxSim) and an inference ``Document``
(``{text, model}``: ``qdrant/bm25`` scores keywords; other models are those given in
``inference``, as on a Qdrant Cloud cluster with inference enabled).

Endpoints: ``GET /collections``, ``GET /collections/{c}``,
``POST /collections/{c}/points/query``,
``POST /collections/{c}/points`` (retrieve), ``POST /collections/{c}/points/scroll``,
``POST /collections/{c}/points/count``, ``POST /collections/{c}/facet``. Auth: the
``api-key`` header when the server has a key. Errors: ``{"status": {"error": …}}``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.backends.contract_servers.faults import FaultingApp, Faults
from tests.backends.contract_servers.scoring import Embed, cosine, keyword_scores

Json = dict[str, Any]


@attrs.define
class Point:
    id: str | int
    payload: Json
    vectors: dict[str, list[float]]
    sparse: dict[str, tuple[list[int], list[float]]] = attrs.field(factory=dict)
    multi: dict[str, list[list[float]]] = attrs.field(factory=dict)


@attrs.define
class Collection:
    dense: dict[str, int]  # vector name ("" = unnamed) -> size
    sparse: tuple[str, ...] = ()
    points: list[Point] = attrs.field(factory=list)
    text_key: str = "text"  # what server-side BM25 inference reads
    multi: dict[str, int] = attrs.field(factory=dict)  # multivector name -> token size
    payload_schema: dict[str, str] = attrs.field(factory=dict)  # indexed key -> data_type


class QdrantContract:
    """Holds collections in memory; ``app`` is the ASGI app to serve."""

    def __init__(
        self,
        *,
        api_key: str = "",
        embed: Embed | None = None,
        inference: Mapping[str, Callable[[str], Any]] | None = None,
    ) -> None:
        self.api_key = api_key
        self.embed = embed
        # model name -> text to a sparse (indices, values) or a multivector (rows)
        self.inference = dict(inference or {})
        self.collections: dict[str, Collection] = {}
        self.faults = Faults()
        self.requests: list[tuple[str, Json]] = []
        routes = [
            Route("/collections", self._list, methods=["GET"]),
            Route("/collections/{name}", self._info, methods=["GET"]),
            Route("/collections/{name}/points/query", self._query, methods=["POST"]),
            Route("/collections/{name}/points", self._retrieve, methods=["POST"]),
            Route("/collections/{name}/points/scroll", self._scroll, methods=["POST"]),
            Route("/collections/{name}/points/count", self._count, methods=["POST"]),
            Route("/collections/{name}/facet", self._facet, methods=["POST"]),
        ]
        self.app = FaultingApp(Starlette(routes=routes), self.faults)

    # -- plumbing ----------------------------------------------------------------

    async def _begin(self, request: Request) -> tuple[Collection | JSONResponse, Json]:
        if self.api_key and request.headers.get("api-key") != self.api_key:
            return _error(401, "Must provide an API key or an Authorization bearer token"), {}
        body: Json = await request.json() if request.method == "POST" else {}
        self.requests.append((request.url.path, body))
        name = request.path_params["name"]
        collection = self.collections.get(name)
        if collection is None:
            return _error(404, f"Not found: Collection `{name}` doesn't exist!"), body
        return collection, body

    # -- endpoints -----------------------------------------------------------------

    async def _list(self, request: Request) -> JSONResponse:
        if self.api_key and request.headers.get("api-key") != self.api_key:
            return _error(401, "Must provide an API key or an Authorization bearer token")
        return _ok({"collections": [{"name": n} for n in sorted(self.collections)]})

    async def _info(self, request: Request) -> JSONResponse:
        c, _ = await self._begin(request)
        if isinstance(c, JSONResponse):
            return c
        vectors: Json
        if list(c.dense) == [""]:
            vectors = {"size": c.dense[""], "distance": "Cosine"}
        else:
            vectors = {name: {"size": size, "distance": "Cosine"} for name, size in c.dense.items()}
            for name, size in c.multi.items():
                vectors[name] = {
                    "size": size,
                    "distance": "Cosine",
                    "multivector_config": {"comparator": "max_sim"},
                    "hnsw_config": {"m": 0},
                }
        params = {
            "vectors": vectors,
            "sparse_vectors": {name: {"modifier": "idf"} for name in c.sparse},
        }
        schema = {
            key: {"data_type": kind, "points": len(c.points)}
            for key, kind in c.payload_schema.items()
        }
        return _ok(
            {
                "status": "green",
                "points_count": len(c.points),
                "config": {"params": params},
                "payload_schema": schema,
            }
        )

    async def _query(self, request: Request) -> JSONResponse:
        c, body = await self._begin(request)
        if isinstance(c, JSONResponse):
            return c
        query = body.get("query")
        using = body.get("using", "")
        candidates = [p for p in c.points if _matches(body.get("filter"), p)]
        scored_or_error = self._score(c, query, using, candidates)
        if isinstance(scored_or_error, JSONResponse):
            return scored_or_error
        scored = scored_or_error
        scored.sort(key=lambda sp: -sp[0])
        limit = int(body.get("limit", 10))
        with_payload = bool(body.get("with_payload", False))
        points = [_scored_point(p, s, with_payload) for s, p in scored[:limit]]
        return _ok({"points": points})

    def _score(
        self, c: Collection, query: Any, using: str, candidates: list[Point]
    ) -> list[tuple[float, Point]] | JSONResponse:
        if isinstance(query, Mapping) and "text" in query:
            model = str(query.get("model", ""))
            if model.lower() == "qdrant/bm25":
                if using not in c.sparse:
                    return _error(400, f"Wrong input: Sparse vector `{using}` is not configured")
                texts = [str(p.payload.get(c.text_key, "")) for p in candidates]
                scores = keyword_scores(str(query["text"]), texts)
                return [(s, p) for s, p in zip(scores, candidates, strict=True) if s > 0]
            infer = self.inference.get(model)
            if infer is None:
                return _error(400, f"Wrong input: Inference model `{model}` is not available")
            produced = infer(str(query["text"]))
            if isinstance(produced, tuple):
                query = {"indices": produced[0], "values": produced[1]}
            else:
                query = produced
        if isinstance(query, list) and query and isinstance(query[0], list):
            if using not in c.multi:
                return _error(400, f"Wrong input: Vector with name `{using}` is not configured")
            if any(len(row) != c.multi[using] for row in query):
                return _error(
                    400, f"Wrong input: Vector dimension error: expected dim: {c.multi[using]}"
                )
            return [(_max_sim(query, p.multi[using]), p) for p in candidates if using in p.multi]
        if isinstance(query, list):
            if using not in c.dense:
                return _error(400, f"Wrong input: Vector with name `{using}` is not configured")
            return [(cosine(query, p.vectors[using]), p) for p in candidates]
        if isinstance(query, Mapping) and "indices" in query:
            if using not in c.sparse:
                return _error(400, f"Wrong input: Sparse vector `{using}` is not configured")
            scored = _sparse_scores(query, using, candidates, c.points)
            return [(s, p) for s, p in scored if s > 0]
        return _error(400, "Format error in JSON body: unsupported query")

    async def _retrieve(self, request: Request) -> JSONResponse:
        c, body = await self._begin(request)
        if isinstance(c, JSONResponse):
            return c
        wanted = [str(i) for i in body.get("ids", [])]
        by_id = {str(p.id): p for p in c.points}
        with_vector = body.get("with_vector", False)
        records = []
        for i in wanted:
            point = by_id.get(i)
            if point is None:
                continue
            record: Json = {"id": point.id}
            if body.get("with_payload", True):
                record["payload"] = point.payload
            if with_vector:
                if list(c.dense) == [""]:
                    record["vector"] = point.vectors[""]
                else:
                    names = with_vector if isinstance(with_vector, list) else list(c.dense)
                    record["vector"] = {n: point.vectors[n] for n in names if n in point.vectors}
            records.append(record)
        return _ok(records)

    async def _scroll(self, request: Request) -> JSONResponse:
        c, body = await self._begin(request)
        if isinstance(c, JSONResponse):
            return c
        found = [p for p in c.points if _matches(body.get("filter"), p)]
        found.sort(key=lambda p: str(p.id))
        limit = int(body.get("limit", 10))
        points = [{"id": p.id, "payload": p.payload} for p in found[:limit]]
        next_offset = found[limit].id if len(found) > limit else None
        return _ok({"points": points, "next_page_offset": next_offset})

    async def _count(self, request: Request) -> JSONResponse:
        c, body = await self._begin(request)
        if isinstance(c, JSONResponse):
            return c
        return _ok({"count": sum(1 for p in c.points if _matches(body.get("filter"), p))})

    async def _facet(self, request: Request) -> JSONResponse:
        c, body = await self._begin(request)
        if isinstance(c, JSONResponse):
            return c
        key = str(body["key"])
        counts: dict[Any, int] = {}
        for p in c.points:
            value = _lookup(p.payload, key)
            if value is not None and _matches(body.get("filter"), p):
                counts[value] = counts.get(value, 0) + 1
        hits = [{"value": v, "count": n} for v, n in sorted(counts.items(), key=lambda kv: -kv[1])]
        return _ok({"hits": hits[: int(body.get("limit", 10))]})


def _ok(result: Any) -> JSONResponse:
    return JSONResponse({"result": result, "status": "ok", "time": time.perf_counter() % 1e-3})


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"status": {"error": message}, "time": 0.0}, status_code=status)


def _scored_point(point: Point, score: float, with_payload: bool) -> Json:
    out: Json = {"id": point.id, "version": 1, "score": score}
    if with_payload:
        out["payload"] = point.payload
    return out


def _lookup(payload: Mapping[str, Any], key: str) -> Any:
    value: Any = payload
    for part in key.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _condition(cond: Mapping[str, Any], point: Point) -> bool:
    if "has_id" in cond:
        return str(point.id) in {str(i) for i in cond["has_id"]}
    if any(k in cond for k in ("must", "should", "must_not")):
        return _matches(cond, point)
    value = _lookup(point.payload, str(cond["key"]))
    values = value if isinstance(value, list) else [value]
    if "match" in cond:
        match = cond["match"]
        if "value" in match:
            return any(_same(v, match["value"]) for v in values)
        if "any" in match:
            return any(_same(v, m) for v in values for m in match["any"])
        raise ValueError(f"unsupported match {match}")
    if "range" in cond:
        rng = cond["range"]
        ok = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        return any(
            ("gte" not in rng or v >= rng["gte"]) and ("lte" not in rng or v <= rng["lte"])
            for v in ok
        )
    raise ValueError(f"unsupported condition {cond}")


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)


def _matches(flt: Mapping[str, Any] | None, point: Point) -> bool:
    if not flt:
        return True
    if not all(_condition(c, point) for c in flt.get("must") or []):
        return False
    if any(_condition(c, point) for c in flt.get("must_not") or []):
        return False
    should = flt.get("should") or []
    return not should or any(_condition(c, point) for c in should)


def _max_sim(query: Sequence[Sequence[float]], document: Sequence[Sequence[float]]) -> float:
    """Late interaction: each query token's best match in the document, summed."""
    return sum(max(cosine(q, d) for d in document) for q in query) if document else 0.0


def _sparse_scores(
    query: Mapping[str, Any], name: str, candidates: Sequence[Point], everything: Sequence[Point]
) -> list[tuple[float, Point]]:
    """Dot product with IDF on the query side (Qdrant's ``modifier: idf``)."""
    n = len(everything)
    df: dict[int, int] = {}
    for p in everything:
        for i in p.sparse.get(name, ([], []))[0]:
            df[i] = df.get(i, 0) + 1
    q = dict(zip(query["indices"], query["values"], strict=True))
    out = []
    for p in candidates:
        indices, values = p.sparse.get(name, ([], []))
        score = 0.0
        for i, v in zip(indices, values, strict=True):
            if i in q:
                idf = math.log(1 + (n - df[i] + 0.5) / (df[i] + 0.5))
                score += q[i] * v * idf
        out.append((score, p))
    return out
