"""Databricks Mosaic AI Vector Search over its REST API (httpx), read-only.

Each configured source is one index (``indexes = {source = "catalog.schema.index"}``).
The dense leg queries by text when the index computes its own embeddings (managed
embeddings, ``query = "text"``) or by a vector we embed (``query = "vector"``), as
``ANN`` or server-fused ``HYBRID``. Databricks' rule for ``HYBRID``: ``query_text`` is
always required (the keyword half searches it), and an index with self-managed
embeddings also needs ``query_vector`` (it cannot embed the text), so with
``query = "vector"`` a HYBRID query sends both. With ``keyword_leg`` a ``FULL_TEXT``
query is the bm25 leg. Filters go in ``filters_json``; columns come from the field map. Auth is a
bearer token: a PAT or OAuth token from the environment, or OAuth machine-to-machine
(client credentials against the workspace's ``/oidc/v1/token``).

At start ``check_indexes`` reads each index's spec and refuses what cannot work,
naming the column: a vector query against an index that embeds for itself (or a text
query against one that does not), an embedding column of another dimension than the
encoder's, a mapped column the index does not hold (where the spec lists them).

Endpoints used: ``POST /api/2.0/vector-search/indexes/{index}/query`` and
``GET /api/2.0/vector-search/indexes/{index}``. The API has no get-by-key for every
index type, so fetch and neighbours are queries restricted by a primary-key or
document filter, with ``num_results`` equal to the rows wanted.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Any

import trio

from retrieval_mcp.backends.fan_out import query_each
from retrieval_mcp.backends.field_map import FieldMap
from retrieval_mcp.backends.protocol import (
    BackendStatus,
    Capability,
    LegQuery,
    SearchFilter,
    SourceInfo,
)
from retrieval_mcp.encoders.embedding_provider import (
    EmbeddingProvider,
    MiniLMLoader,
    QueryVectors,
    open_embedder,
)
from retrieval_mcp.errors import BackendUnavailable, CapabilityMissing, ConfigError
from retrieval_mcp.json_http import HeaderSource, JsonHttp, bad_response
from retrieval_mcp.records import Candidate, Chunk
from retrieval_mcp.settings import Settings

SERVICE = "Databricks Vector Search"
API = "/api/2.0/vector-search/indexes"
_LOOKUP_TEXT = "lookup"  # the text of a filter-only lookup; the filter decides the rows

Json = dict[str, Any]


class DatabricksOAuth:
    """OAuth machine-to-machine: a client-credentials token, refreshed before it expires."""

    def __init__(self, http: JsonHttp, client_id: str, client_secret: str) -> None:
        self._http = http
        self._client = (client_id, client_secret)
        self._token = ""
        self._expires_at = 0.0
        self._lock = trio.Lock()

    async def headers(self) -> dict[str, str]:
        async with self._lock:
            if trio.current_time() >= self._expires_at:
                answer = await self._http.request(
                    "POST",
                    "/oidc/v1/token",
                    form={"grant_type": "client_credentials", "scope": "all-apis"},
                    auth=self._client,
                    action="get an OAuth token",
                )
                with bad_response(SERVICE, "get an OAuth token"):
                    self._token = str(answer["access_token"])
                    lifetime = float(answer.get("expires_in", 3600))
                self._expires_at = trio.current_time() + max(0.0, lifetime - 60)
        return {"Authorization": f"Bearer {self._token}"}


def _spec_columns(spec: Json) -> list[str]:
    """The columns an index spec lists ([] when it does not say, e.g. sync all columns)."""
    if spec.get("schema_json"):
        return list(json.loads(str(spec["schema_json"])))
    return [str(c) for c in spec.get("columns_to_sync") or []]


class DatabricksVectorSearchBackend:
    """Uses, never closes, its HTTP client, OAuth helper and embedding provider:
    ``open_databricks`` owns them."""

    name = "databricks"

    def __init__(
        self,
        http: JsonHttp,
        *,
        indexes: Mapping[str, str],
        fields: FieldMap,
        embedder: EmbeddingProvider | None = None,
        query: str = "text",
        dense_query_type: str = "ANN",
        keyword_leg: bool = False,
        query_cache_size: int = 1024,
    ) -> None:
        if not indexes:
            raise ConfigError(
                "backend.databricks.indexes is empty",
                remedy='Map each source to an index: indexes = {docs = "catalog.schema.index"}.',
            )
        if query == "vector" and embedder is None:
            raise ConfigError("backend.databricks.query = 'vector' needs an encoder")
        self._http = http
        self._indexes = dict(indexes)
        self._fields = fields
        self._embedder = embedder if query == "vector" else None
        self._queries = (
            QueryVectors(self._embedder, query_cache_size) if self._embedder is not None else None
        )
        self._dense_query_type = dense_query_type
        self._keyword_leg = keyword_leg

    def _require_open(self) -> None:
        if self._http.closed:
            raise BackendUnavailable("the Databricks backend is closed")

    async def check_indexes(self) -> None:
        """Read every index's spec; ConfigError naming the column that cannot work."""
        for source, index in self._indexes.items():
            answer = await self._http.request("GET", f"{API}/{index}", action="read the index")
            with bad_response(SERVICE, "read the index"):
                kind = (
                    "delta_sync_index_spec"
                    if "delta_sync_index_spec" in answer
                    else "direct_access_index_spec"
                )
                spec: Json = dict(answer[kind])  # one of the two is always there
                managed = [str(c["name"]) for c in spec.get("embedding_source_columns") or []]
                vectors = {
                    str(c["name"]): int(c.get("embedding_dimension") or 0)
                    for c in spec.get("embedding_vector_columns") or []
                }
                columns = _spec_columns(spec)
            where = f"Databricks index {index!r} (source {source!r})"
            if self._embedder is not None:
                if not vectors:
                    raise ConfigError(
                        f"{where} computes its own embeddings (from {', '.join(managed)}); it "
                        "takes query text, not vectors",
                        remedy="Set backend.databricks.query = 'text'.",
                    )
                for column, dims in vectors.items():
                    if dims and dims != self._embedder.dimension:
                        raise ConfigError(
                            f"{where}: embedding column {column!r} holds {dims}-d vectors, but "
                            f"the encoder {self._embedder.name} makes "
                            f"{self._embedder.dimension}-d ones",
                            remedy="Configure the encoder that built the index, or use "
                            "query = 'text' on an index with managed embeddings.",
                        )
            elif not managed:
                raise ConfigError(
                    f"{where} has no managed embeddings (embedding_source_columns), so it cannot "
                    "embed query text",
                    remedy="Set backend.databricks.query = 'vector' and configure the encoder "
                    "that built the index.",
                )
            missing = [c for c in self._fields.columns() if columns and c not in columns]
            if missing:
                raise ConfigError(
                    f"{where} has no column {missing[0]!r} (its columns: {', '.join(columns)})",
                    remedy="Fix backend.databricks.fields, or sync the column into the index.",
                )

    def capabilities(self) -> frozenset[Capability]:
        caps = {Capability.DENSE, Capability.FILTER}
        if self._keyword_leg:
            caps.add(Capability.BM25)
        if self._fields.has_reading_order:
            caps.add(Capability.NEIGHBORS)
        return frozenset(caps)

    # -- queries ---------------------------------------------------------------

    async def _query(
        self, index: str, source: str, body: Json, action: str
    ) -> list[tuple[float, Chunk]]:
        request = {"columns": self._fields.columns(), **body}
        answer = await self._http.request(
            "POST", f"{API}/{index}/query", json=request, action=action
        )
        with bad_response(SERVICE, action):
            names = [str(c["name"]) for c in answer["manifest"]["columns"]]
            rows = (answer.get("result") or {}).get("data_array") or []
            out = []
            for row in rows:
                record = dict(zip(names, row, strict=True))
                score = float(record.get("score", row[-1]))
                chunk_id = str(record[self._fields.id])
                out.append((score, self._fields.to_chunk(record, chunk_id=chunk_id, source=source)))
        return out

    async def _lookup_body(self, filters: Json, limit: int) -> Json:
        body: Json = {"num_results": limit, "filters_json": json.dumps(filters)}
        if self._queries is not None:
            body["query_vector"] = await self._queries.vector(_LOOKUP_TEXT)
        else:
            body["query_text"] = _LOOKUP_TEXT
        return body

    async def search(self, query: LegQuery) -> list[Candidate]:
        self._require_open()
        if query.leg == Capability.DENSE:
            body: Json = {"query_type": self._dense_query_type}
            if self._queries is not None:
                body["query_vector"] = await self._queries.vector(query.text)
                if self._dense_query_type == "HYBRID":
                    # HYBRID's keyword half always searches query_text; with
                    # self-managed embeddings the index cannot embed it, so the
                    # similarity half needs our vector as well (both are required).
                    body["query_text"] = query.text
            else:
                body["query_text"] = query.text
        elif query.leg == Capability.BM25 and self._keyword_leg:
            body = {"query_type": "FULL_TEXT", "query_text": query.text}
        else:
            raise CapabilityMissing(f"{self.name} does not declare the {query.leg} leg")
        body["num_results"] = query.limit
        filters = self._filters(query.filter)
        if filters:
            body["filters_json"] = json.dumps(filters)
        targets = [
            (s, i) for s, i in self._indexes.items() if not query.sources or s in query.sources
        ]
        action = f"query ({query.leg})"
        results = await query_each(
            [partial(self._query, index, source, body, action) for source, index in targets]
        )
        merged = sorted((hit for hits in results for hit in hits), key=lambda h: -h[0])
        return [
            Candidate(chunk=c, score=s, rank=r)
            for r, (s, c) in enumerate(merged[: query.limit], start=1)
        ]

    def _filters(self, flt: SearchFilter | None) -> Json:
        filters: Json = {}
        if flt:
            for key, values in flt.equals.items():
                column = self._fields.filter_field(key)
                filters[column] = values[0] if len(values) == 1 else list(values)
        return filters

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        self._require_open()
        unique = list(dict.fromkeys(ids))
        if not unique:
            return []
        by_id: dict[str, Chunk] = {}
        for source, index in self._indexes.items():
            body = await self._lookup_body({self._fields.id: unique}, len(unique))
            for _, chunk in await self._query(index, source, body, "fetch"):
                by_id.setdefault(chunk.id, chunk)
        return [by_id[i] for i in ids if i in by_id]

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        self._require_open()
        p = chunk.provenance
        index = self._indexes.get(p.source)
        if index is None or not self._fields.has_reading_order:
            return []
        f = self._fields
        filters = {
            f.doc_id: p.doc_id,
            f"{f.ordinal} >=": p.ordinal - max(0, before),
            f"{f.ordinal} <=": p.ordinal + max(0, after),
            f"{f.id} NOT": chunk.id,
        }
        body = await self._lookup_body(filters, before + after + 1)
        found = [c for _, c in await self._query(index, p.source, body, "read neighbours")]
        return sorted((c for c in found if c.id != chunk.id), key=lambda c: c.provenance.ordinal)

    async def _index_info(self, index: str) -> Json:
        answer = await self._http.request("GET", f"{API}/{index}", action="read the index")
        with bad_response(SERVICE, "read the index"):
            status: Json = dict(answer["status"])
        return status

    async def sources(self) -> list[SourceInfo]:
        self._require_open()
        infos = []
        for source, index in self._indexes.items():
            status = await self._index_info(index)
            with bad_response(SERVICE, "read the index"):
                infos.append(
                    SourceInfo(name=source, chunks=int(status.get("indexed_row_count", 0)))
                )
        return sorted(infos, key=lambda s: s.name)

    async def status(self) -> BackendStatus:
        if self._http.closed:
            return BackendStatus(ready=False, backend=self.name, chunks=0, detail="closed")
        chunks, ready, messages = 0, True, []
        for index in self._indexes.values():
            status = await self._index_info(index)
            with bad_response(SERVICE, "read the index"):
                chunks += int(status.get("indexed_row_count", 0))
                ready = ready and bool(status.get("ready", False))
                if status.get("message"):
                    messages.append(f"{index}: {status['message']}")
        return BackendStatus(
            ready=ready,
            backend=self.name,
            chunks=chunks,
            detail="; ".join(messages) or f"indexes {', '.join(self._indexes.values())}",
            extra={"query_cache": self._queries.statistics() if self._queries else {}},
        )


@asynccontextmanager
async def open_databricks(
    settings: Settings, load_minilm: MiniLMLoader
) -> AsyncIterator[DatabricksVectorSearchBackend]:
    """The configured Databricks adapter; on exit its HTTP clients (API and OAuth) and
    encoder are closed, shielded and bounded. Credentials are read here, once."""
    db = settings.backend.databricks
    if not db.workspace_url:
        raise ConfigError(
            "backend.databricks.workspace_url is empty",
            remedy="Set backend.databricks.workspace_url in the server config.",
        )
    async with AsyncExitStack() as stack:
        headers: HeaderSource
        if db.auth == "oauth-m2m":
            secret = db.client_secret.read("backend.databricks.client_secret")
            if not db.client_id or not secret:
                raise ConfigError(
                    "backend.databricks.auth = 'oauth-m2m' needs client_id and client_secret"
                )
            token_http = await stack.enter_async_context(
                JsonHttp("Databricks OAuth", db.workspace_url, timeout_s=db.timeout_s)
            )
            headers = DatabricksOAuth(token_http, db.client_id, secret).headers
        else:
            token = db.token.read("backend.databricks.token")
            if not token:
                raise ConfigError(
                    "backend.databricks.token names no environment variable or file",
                    remedy='Set backend.databricks.token = {env = "DATABRICKS_TOKEN"}.',
                )
            bearer = {"Authorization": f"Bearer {token}"}

            async def pat_headers() -> dict[str, str]:
                return bearer

            headers = pat_headers
        embedder = (
            await stack.enter_async_context(open_embedder(settings.encoder, load_minilm))
            if db.query == "vector"
            else None
        )
        http = await stack.enter_async_context(
            JsonHttp(SERVICE, db.workspace_url, timeout_s=db.timeout_s, headers=headers)
        )
        backend = DatabricksVectorSearchBackend(
            http,
            indexes=db.indexes,
            fields=FieldMap.from_settings(db.fields),
            embedder=embedder,
            query=db.query,
            dense_query_type=db.dense_query_type,
            keyword_leg=db.keyword_leg,
            query_cache_size=settings.encoder.query_cache_size,
        )
        await backend.check_indexes()  # refuse a map the indexes cannot serve
        yield backend
