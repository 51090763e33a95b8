"""A Qdrant server or cluster over its REST API (httpx), read-only.

Sources are either one collection whose payload names the source (``collection`` +
``fields.source``) or one collection per source (``collections``). Vector names and
payload keys come from config, so collections built by other tools work as they are;
``open`` reads each collection's schema and refuses a vector name it does not have,
naming the ones it does. The dense leg embeds the query here (the bundled model or an
OpenAI-compatible endpoint: it must be the model that built the collection); the bm25
leg queries a named sparse vector, encoded here with Qdrant's BM25 (as the embedded
store does) or, with ``sparse_model``, by the server's own inference (``qdrant/bm25``).
Two more legs come from the collection's other vectors (``qdrant_query_legs``): a
learned sparse vector as the ``sparse`` leg and a multivector (late interaction,
MaxSim done by the engine) as the ``multivector`` leg, their queries made by Qdrant's
inference or a TEI-shaped endpoint. A leg is declared only when configured, and a
configured vector the collection lacks is refused at open.

Endpoints used: ``GET /collections/{c}``, ``POST /collections/{c}/points/query``,
``POST /collections/{c}/points`` (retrieve), ``POST /collections/{c}/points/scroll``,
``POST /collections/{c}/points/count``, ``POST /collections/{c}/facet``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Any

import qdrant_edge as qe

from retrieval_mcp.backends.fan_out import query_each
from retrieval_mcp.backends.field_map import FieldMap
from retrieval_mcp.backends.protocol import (
    BackendStatus,
    Capability,
    LegQuery,
    Scalar,
    SearchFilter,
    SourceInfo,
)
from retrieval_mcp.backends.qdrant_query_legs import (
    VectorLeg,
    check_legs,
    is_multivector,
    open_query_legs,
)
from retrieval_mcp.encoders.embedding_provider import (
    EmbeddingProvider,
    MiniLMLoader,
    QueryVectors,
    open_embedder,
)
from retrieval_mcp.errors import BackendUnavailable, CapabilityMissing, ConfigError
from retrieval_mcp.json_http import JsonHttp, bad_response
from retrieval_mcp.records import Candidate, Chunk
from retrieval_mcp.settings import Settings

SERVICE = "Qdrant"

Json = dict[str, Any]


class QdrantRemoteBackend:
    """Uses, never closes, its HTTP client and embedding provider: ``open_qdrant_remote``
    owns them."""

    name = "qdrant-remote"

    def __init__(
        self,
        http: JsonHttp,
        *,
        embedder: EmbeddingProvider | None,
        fields: FieldMap,
        collection: str = "",
        collections: Mapping[str, str] | None = None,
        dense: bool = True,
        dense_vector: str = "dense",
        sparse_vector: str = "",
        sparse_model: str = "",
        sparse_leg: VectorLeg | None = None,
        multivector_leg: VectorLeg | None = None,
        hnsw_ef: int = 128,
        query_cache_size: int = 1024,
    ) -> None:
        collections = dict(collections or {})
        if bool(collection) == bool(collections):
            raise ConfigError(
                "backend.qdrant_remote: set exactly one of collection (sources in the "
                "payload) and collections (one collection per source)"
            )
        if collection and not fields.source:
            raise ConfigError(
                "backend.qdrant_remote.collection needs fields.source (the payload key "
                "naming each point's source)"
            )
        if dense and embedder is None:
            raise ConfigError("backend.qdrant_remote: the dense leg needs an encoder")
        self._http = http
        self._fields = fields
        self._collection = collection
        self._collections = collections
        self._dense = dense
        self._dense_vector = dense_vector
        self._sparse_vector = sparse_vector
        self._sparse_model = sparse_model
        self._sparse_leg = sparse_leg
        self._multivector_leg = multivector_leg
        self._hnsw_ef = hnsw_ef
        self._embedder = embedder
        self._queries = QueryVectors(embedder, query_cache_size) if embedder else None
        self._bm25: Any = None

    # -- lifecycle -------------------------------------------------------------

    async def check_collections(self) -> None:
        """Read every collection's schema; ConfigError naming what does not match."""
        for name in self._all_collections():
            body = await self._http.request("GET", f"/collections/{name}", action="read schema")
            with bad_response(SERVICE, "read schema"):
                params = body["result"]["config"]["params"]
                vectors = params.get("vectors") or {}
                sparse = params.get("sparse_vectors") or {}
            named = isinstance(vectors, Mapping) and "size" not in vectors
            if self._dense and named and is_multivector(vectors.get(self._dense_vector) or {}):
                raise ConfigError(
                    f"Qdrant collection {name!r}: {self._dense_vector!r} is a multivector",
                    remedy="Name it in backend.qdrant_remote.multivector_leg.vector and set "
                    "dense_vector to a single-vector name.",
                )
            if self._dense:
                if self._dense_vector and (not named or self._dense_vector not in vectors):
                    raise ConfigError(
                        f"Qdrant collection {name!r} has no dense vector named "
                        f"{self._dense_vector!r} (it has: {_names(vectors, named)})",
                        remedy="Set backend.qdrant_remote.dense_vector to one of those names.",
                    )
                if not self._dense_vector and named:
                    raise ConfigError(
                        f"Qdrant collection {name!r} has only named vectors "
                        f"({_names(vectors, named)}); set backend.qdrant_remote.dense_vector"
                    )
                size = int((vectors[self._dense_vector] if named else vectors)["size"])
                assert self._embedder is not None
                if size != self._embedder.dimension:
                    raise ConfigError(
                        f"Qdrant collection {name!r} holds {size}-d vectors; the encoder "
                        f"{self._embedder.name} makes {self._embedder.dimension}-d ones",
                        remedy="Configure the encoder that built the collection "
                        "([encoder] kind = 'openai-compatible' with its model).",
                    )
            if self._sparse_vector and self._sparse_vector not in sparse:
                raise ConfigError(
                    f"Qdrant collection {name!r} has no sparse vector named "
                    f"{self._sparse_vector!r} (it has: {', '.join(sparse) or 'none'})",
                    remedy="Set backend.qdrant_remote.sparse_vector to one of those, or to "
                    "'' to run without the bm25 leg.",
                )
            checked = check_legs(
                name, vectors if named else {}, sparse, (self._sparse_leg, self._multivector_leg)
            )
            if checked is not None:
                self._multivector_leg = checked
        if self._sparse_vector and not self._sparse_model:
            # Query-side BM25 weights do not depend on avg_len; the server applies IDF.
            self._bm25 = qe.Bm25(qe.Bm25Config(language="english"))
        multi = self._multivector_leg
        if multi is not None and multi.encoder is not None:
            # Refused at start, not at the first query: the endpoint's token vectors must
            # be the size the collection holds.
            await multi.query("probe")

    # -- scope -----------------------------------------------------------------

    def _all_collections(self) -> list[str]:
        return [self._collection] if self._collection else list(self._collections.values())

    def _targets(self, sources: Sequence[str]) -> list[tuple[str, str | None, tuple[str, ...]]]:
        """(collection, source it stands for or None, payload source filter) per query."""
        if self._collection:
            return [(self._collection, None, tuple(sources))]
        wanted = sources or tuple(self._collections)
        return [(self._collections[s], s, ()) for s in wanted if s in self._collections]

    def _source_of(self, collection: str) -> str | None:
        for source, name in self._collections.items():
            if name == collection:
                return source
        return None

    def _require_open(self) -> None:
        if self._http.closed:
            raise BackendUnavailable("the remote Qdrant backend is closed")

    # -- reads -----------------------------------------------------------------

    def capabilities(self) -> frozenset[Capability]:
        caps = {Capability.FILTER}
        if self._dense:
            caps |= {Capability.DENSE, Capability.SIMILAR, Capability.VECTORS}
        if self._sparse_vector:
            caps.add(Capability.BM25)
        if self._sparse_leg is not None:
            caps.add(Capability.SPARSE)
        if self._multivector_leg is not None:
            caps.add(Capability.MULTIVECTOR)
        if self._fields.has_reading_order:
            caps.add(Capability.NEIGHBORS)
        return frozenset(caps)

    async def search(self, query: LegQuery) -> list[Candidate]:
        self._require_open()
        if query.leg == Capability.DENSE and self._dense:
            assert self._queries is not None
            body: Json = {
                "query": await self._queries.vector(query.text),
                "params": {"hnsw_ef": max(self._hnsw_ef, query.limit)},
            }
            if self._dense_vector:
                body["using"] = self._dense_vector
        elif query.leg == Capability.BM25 and self._sparse_vector:
            if self._sparse_model:
                sparse: Json = {"text": query.text, "model": self._sparse_model}
            else:
                embedded = self._bm25.embed_query(query.text)
                if not embedded.indices:
                    return []  # only stopwords: nothing to match on
                sparse = {"indices": list(embedded.indices), "values": list(embedded.values)}
            body = {"query": sparse, "using": self._sparse_vector}
        elif (leg := self._vector_leg(query.leg)) is not None:
            vector_query = await leg.query(query.text)
            if vector_query is None:
                return []  # the encoder found nothing to match on
            body = {"query": vector_query, "using": leg.vector}
        else:
            raise CapabilityMissing(f"{self.name} does not declare the {query.leg} leg")
        return await self._query_all(body, query.sources, query.filter, query.limit, ())

    def _vector_leg(self, leg: Capability) -> VectorLeg | None:
        if leg == Capability.SPARSE:
            return self._sparse_leg
        if leg == Capability.MULTIVECTOR:
            return self._multivector_leg
        return None

    async def _query_all(
        self,
        body: Json,
        sources: Sequence[str],
        flt: SearchFilter | None,
        limit: int,
        exclude: Sequence[str],
    ) -> list[Candidate]:
        targets = self._targets(sources)

        async def one(
            collection: str, source: str | None, payload_sources: tuple[str, ...]
        ) -> list[tuple[float, Chunk]]:
            request = {
                **body,
                "limit": limit,
                "with_payload": True,
                "filter": self._filter(payload_sources, flt, exclude),
            }
            answer = await self._http.request(
                "POST", f"/collections/{collection}/points/query", json=request, action="query"
            )
            with bad_response(SERVICE, "query"):
                points = answer["result"]["points"]
                return [(float(p["score"]), self._chunk(p, source)) for p in points]

        if not targets:
            return []
        results = await query_each([partial(one, *target) for target in targets])
        # One model built every collection, so scores compare across them.
        merged = sorted((hit for hits in results for hit in hits), key=lambda h: -h[0])[:limit]
        return [Candidate(chunk=c, score=s, rank=r) for r, (s, c) in enumerate(merged, start=1)]

    def _chunk(self, point: Mapping[str, Any], source: str | None) -> Chunk:
        return self._fields.to_chunk(
            point.get("payload") or {}, chunk_id=str(point["id"]), source=source
        )

    def _filter(
        self, sources: Sequence[str], flt: SearchFilter | None, exclude: Sequence[str] = ()
    ) -> Json | None:
        must: list[Json] = []
        if sources:
            must.append({"key": self._fields.source, "match": {"any": list(sources)}})
        if flt:
            for key, values in flt.equals.items():
                must.append(_match_any(self._fields.filter_field(key), values))
        out: Json = {}
        if must:
            out["must"] = must
        if exclude:
            out["must_not"] = [{"has_id": [_point_id(i) for i in exclude]}]
        return out or None

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        self._require_open()
        wanted = [i for i in dict.fromkeys(ids) if _valid_id(i)]
        if not wanted:
            return []
        by_id: dict[str, Chunk] = {}
        for collection in self._all_collections():
            records = await self._retrieve(collection, wanted, with_vector=False)
            for record in records:
                chunk = self._chunk(record, self._source_of(collection))
                by_id.setdefault(chunk.id, chunk)
        return [by_id[i] for i in ids if i in by_id]

    async def _retrieve(
        self, collection: str, ids: Sequence[str], *, with_vector: bool
    ) -> list[Json]:
        vector: Any = False
        if with_vector:
            vector = [self._dense_vector] if self._dense_vector else True
        answer = await self._http.request(
            "POST",
            f"/collections/{collection}/points",
            json={
                "ids": [_point_id(i) for i in ids],
                "with_payload": not with_vector,
                "with_vector": vector,
            },
            action="retrieve",
        )
        with bad_response(SERVICE, "retrieve"):
            records: list[Json] = list(answer["result"])
        return records

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        self._require_open()
        f = self._fields
        p = chunk.provenance
        targets = self._targets((p.source,))
        if not targets:
            return []
        collection, source, payload_sources = targets[0]
        must: list[Json] = [
            {"key": f.doc_id, "match": {"value": p.doc_id}},
            {
                "key": f.ordinal,
                "range": {"gte": p.ordinal - max(0, before), "lte": p.ordinal + max(0, after)},
            },
        ]
        if payload_sources:
            must.append({"key": f.source, "match": {"value": p.source}})
        request = {
            "filter": {"must": must, "must_not": [{"has_id": [_point_id(chunk.id)]}]},
            "limit": before + after + 1,
            "with_payload": True,
            "with_vector": False,
        }
        answer = await self._http.request(
            "POST", f"/collections/{collection}/points/scroll", json=request, action="scroll"
        )
        with bad_response(SERVICE, "scroll"):
            chunks = [self._chunk(point, source) for point in answer["result"]["points"]]
        return sorted(chunks, key=lambda c: c.provenance.ordinal)

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        self._require_open()
        wanted = [i for i in dict.fromkeys(ids) if _valid_id(i)]
        out: dict[str, list[float]] = {}
        if not wanted or not self._dense:
            return out
        for collection in self._all_collections():
            for record in await self._retrieve(collection, wanted, with_vector=True):
                with bad_response(SERVICE, "retrieve vectors"):
                    raw = record.get("vector")
                    vector = raw.get(self._dense_vector) if isinstance(raw, Mapping) else raw
                    if vector is not None:
                        out[str(record["id"])] = _unit([float(x) for x in vector])
        return out

    async def similar(
        self,
        chunk_id: str,
        *,
        limit: int,
        sources: tuple[str, ...] = (),
        filter: SearchFilter | None = None,
    ) -> list[Candidate]:
        vector = (await self.vectors([chunk_id])).get(chunk_id)
        if vector is None:
            return []
        body: Json = {"query": vector, "params": {"hnsw_ef": max(self._hnsw_ef, limit)}}
        if self._dense_vector:
            body["using"] = self._dense_vector
        return await self._query_all(body, sources, filter, limit, (chunk_id,))

    async def sources(self) -> list[SourceInfo]:
        self._require_open()
        if self._collection:
            answer = await self._http.request(
                "POST",
                f"/collections/{self._collection}/facet",
                json={"key": self._fields.source, "limit": 10_000, "exact": True},
                action="facet",
            )
            with bad_response(SERVICE, "facet"):
                infos = [
                    SourceInfo(name=str(hit["value"]), chunks=int(hit["count"]))
                    for hit in answer["result"]["hits"]
                ]
            return sorted(infos, key=lambda s: s.name)
        infos = []
        for source, collection in self._collections.items():
            infos.append(SourceInfo(name=source, chunks=await self._count(collection)))
        return sorted(infos, key=lambda s: s.name)

    async def _count(self, collection: str) -> int:
        answer = await self._http.request(
            "POST", f"/collections/{collection}/points/count", json={"exact": True}, action="count"
        )
        with bad_response(SERVICE, "count"):
            return int(answer["result"]["count"])

    async def status(self) -> BackendStatus:
        if self._http.closed:
            return BackendStatus(ready=False, backend=self.name, chunks=0, detail="closed")
        chunks = 0
        for collection in self._all_collections():
            chunks += await self._count(collection)
        return BackendStatus(
            ready=True,
            backend=self.name,
            chunks=chunks,
            detail=f"{self._http.base_url} collections {', '.join(self._all_collections())}",
            extra={
                "query_cache": self._queries.statistics() if self._queries else {},
                "legs": {
                    leg.kind: leg.statistics()
                    for leg in (self._sparse_leg, self._multivector_leg)
                    if leg is not None
                },
            },
        )


def _names(vectors: Any, named: bool) -> str:
    return ", ".join(vectors) if named and vectors else "one unnamed vector"


def _valid_id(value: str) -> bool:
    """Qdrant ids are UUIDs or unsigned integers; anything else cannot exist."""
    if value.isdigit():
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _point_id(value: str) -> str | int:
    return int(value) if value.isdigit() else value


def _match_any(key: str, values: Sequence[Scalar]) -> Json:
    if len(values) == 1:
        return {"key": key, "match": {"value": values[0]}}
    if all(isinstance(v, str) for v in values) or all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        return {"key": key, "match": {"any": list(values)}}
    return {"should": [{"key": key, "match": {"value": v}} for v in values]}


def _unit(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector] if norm > 0 else vector


@asynccontextmanager
async def open_qdrant_remote(
    settings: Settings, load_minilm: MiniLMLoader
) -> AsyncIterator[QdrantRemoteBackend]:
    """Connect to the configured Qdrant, check every collection's schema, yield the
    adapter; on exit close its HTTP client and encoder (shielded, bounded)."""
    qd = settings.backend.qdrant_remote
    if not qd.url:
        raise ConfigError(
            "backend.qdrant_remote.url is empty",
            remedy="Set backend.qdrant_remote.url in the server config.",
        )
    api_key = qd.api_key.read("backend.qdrant_remote.api_key")
    headers = {"api-key": api_key} if api_key else {}

    async def qdrant_headers() -> dict[str, str]:
        return headers

    async with AsyncExitStack() as stack:
        embedder = (
            await stack.enter_async_context(open_embedder(settings.encoder, load_minilm))
            if qd.dense
            else None
        )
        http = await stack.enter_async_context(
            JsonHttp(SERVICE, qd.url, timeout_s=qd.timeout_s, headers=qdrant_headers)
        )
        sparse_leg, multivector_leg = await stack.enter_async_context(
            open_query_legs(qd, cache_size=settings.encoder.query_cache_size)
        )
        backend = QdrantRemoteBackend(
            http,
            embedder=embedder,
            fields=FieldMap.from_settings(qd.fields),
            collection=qd.collection,
            collections=qd.collections,
            dense=qd.dense,
            dense_vector=qd.dense_vector,
            sparse_vector=qd.sparse_vector,
            sparse_model=qd.sparse_model,
            sparse_leg=sparse_leg,
            multivector_leg=multivector_leg,
            hnsw_ef=qd.hnsw_ef,
            query_cache_size=settings.encoder.query_cache_size,
        )
        await backend.check_collections()
        yield backend
