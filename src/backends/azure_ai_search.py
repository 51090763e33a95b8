"""Azure AI Search over its REST API (httpx), read-only.

One index. The bm25 leg is a full-text ``search`` (with the semantic ranker when a
``semantic_configuration`` is set: its ``@search.rerankerScore`` orders the leg); the
dense leg is a ``vectorQueries`` entry, either a vector we embed (``kind: vector``) or
the query text for the index's own vectorizer (``kind: text``). Hybrid is the
pipeline's fusion of the two legs, so each leg's rank stays visible in every hit.
Filters are OData; sources are a filterable, facetable field (or the index is one
source). Auth is the ``api-key`` header, read from the environment or a 0600 file.

At start ``check_index`` reads the index definition and refuses a field map the index
cannot serve, naming the field: a mapped field it lacks, a vector field of another
dimension than the encoder's, a vectorizer query on a field without one, a filter or
reading-order field that is not filterable, an unknown semantic configuration.

Endpoints used: ``GET /indexes/{index}?api-version=…`` (the definition, at start) and
``POST /indexes/{index}/docs/search?api-version=…`` (searches, lookups by key with
``search.in``, neighbours, facets and counts).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from retrieval_mcp.backends.field_map import FieldMap
from retrieval_mcp.backends.protocol import (
    BackendStatus,
    Capability,
    LegQuery,
    Scalar,
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
from retrieval_mcp.json_http import JsonHttp, bad_response
from retrieval_mcp.records import Candidate, Chunk
from retrieval_mcp.settings import Settings

SERVICE = "Azure AI Search"

Json = dict[str, Any]


def odata_literal(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return "'" + value.replace("'", "''") + "'"


def _any_of(field: str, values: Sequence[Scalar]) -> str:
    clauses = [f"{field} eq {odata_literal(v)}" for v in values]
    return clauses[0] if len(clauses) == 1 else "(" + " or ".join(clauses) + ")"


class AzureAISearchBackend:
    """Uses, never closes, its HTTP client and embedding provider: ``open_azure_search``
    owns them."""

    name = "azure-search"

    def __init__(
        self,
        http: JsonHttp,
        *,
        index: str,
        api_version: str,
        fields: FieldMap,
        source_name: str = "",
        vector_field: str = "",
        vector_query: str = "vector",
        keyword: bool = True,
        semantic_configuration: str = "",
        embedder: EmbeddingProvider | None = None,
        query_cache_size: int = 1024,
    ) -> None:
        if not index:
            raise ConfigError("backend.azure_search.index is empty")
        if vector_field and vector_query == "vector" and embedder is None:
            raise ConfigError("backend.azure_search: vector queries need an encoder")
        self._http = http
        self._index = index
        self._params = {"api-version": api_version}
        self._fields = fields
        self._source_name = source_name or index
        self._vector_field = vector_field
        self._vector_query = vector_query
        self._keyword = keyword
        self._semantic = semantic_configuration
        self._embedder = embedder if vector_field and vector_query == "vector" else None
        self._queries = QueryVectors(self._embedder, query_cache_size) if self._embedder else None

    def _require_open(self) -> None:
        if self._http.closed:
            raise BackendUnavailable("the Azure AI Search backend is closed")

    async def check_index(self) -> None:
        """Read the index definition; ConfigError naming the field that cannot work."""
        definition = await self._http.request(
            "GET", f"/indexes/{self._index}", params=self._params, action="read the index"
        )
        with bad_response(SERVICE, "read the index"):
            fields: dict[str, Json] = {str(f["name"]): f for f in definition["fields"]}
            profiles = {
                str(p["name"]): p
                for p in (definition.get("vectorSearch") or {}).get("profiles") or []
            }
            semantic = {
                str(c["name"])
                for c in (definition.get("semantic") or {}).get("configurations") or []
            }
        where = f"Azure AI Search index {self._index!r}"
        names = ", ".join(fields) or "none"
        f = self._fields
        for role, name in (
            ("id", f.id),
            ("text", f.text),
            ("title", f.title),
            ("source", f.source),
            ("doc_id", f.doc_id),
            ("ordinal", f.ordinal),
            ("uri", f.uri),
            ("metadata", f.metadata),
            *(("metadata_fields", m) for m in f.metadata_fields),
        ):
            if name and name.split("/")[0] not in fields:
                raise ConfigError(
                    f"{where} has no field {name!r} (fields.{role}); its fields are: {names}",
                    remedy=f"Set backend.azure_search.fields.{role} to one of those, or '' "
                    "for none.",
                )
        for role, name in (
            ("source", f.source),
            ("doc_id", f.doc_id),
            ("ordinal", f.ordinal),
            *(("metadata_fields", m) for m in f.metadata_fields),
        ):
            if name and not fields[name].get("filterable", False):
                raise ConfigError(
                    f"{where}: field {name!r} (fields.{role}) is not filterable",
                    remedy="Make it filterable in the index definition, or leave it out of "
                    "the field map.",
                )
        if self._vector_field:
            vector = fields.get(self._vector_field)
            if vector is None or not str(vector.get("type", "")).startswith("Collection(Edm."):
                vectors = [n for n, d in fields.items() if d.get("dimensions")]
                raise ConfigError(
                    f"{where} has no vector field {self._vector_field!r} (its vector fields: "
                    f"{', '.join(vectors) or 'none'})",
                    remedy="Set backend.azure_search.vector_field to one of those, or '' for "
                    "no dense leg.",
                )
            dims = int(vector.get("dimensions") or 0)
            if self._embedder is not None and dims != self._embedder.dimension:
                raise ConfigError(
                    f"{where}: vector field {self._vector_field!r} holds {dims}-d vectors, but "
                    f"the encoder {self._embedder.name} makes {self._embedder.dimension}-d ones",
                    remedy="Configure the encoder that built the index, or set vector_query = "
                    "'text' if the field has a vectorizer.",
                )
            profile = profiles.get(str(vector.get("vectorSearchProfile", "")), {})
            if self._vector_query == "text" and not profile.get("vectorizer"):
                raise ConfigError(
                    f"{where}: vector field {self._vector_field!r} has no vectorizer, so it "
                    "cannot embed query text",
                    remedy="Set backend.azure_search.vector_query = 'vector' (we embed the "
                    "query) or add a vectorizer to the field's vector profile.",
                )
        if self._semantic and self._semantic not in semantic:
            raise ConfigError(
                f"{where} has no semantic configuration {self._semantic!r} (it has: "
                f"{', '.join(sorted(semantic)) or 'none'})",
                remedy="Set backend.azure_search.semantic_configuration to one of those, or ''.",
            )

    def capabilities(self) -> frozenset[Capability]:
        caps = {Capability.FILTER}
        if self._vector_field:
            caps.add(Capability.DENSE)
        if self._keyword:
            caps.add(Capability.BM25)
        if self._fields.has_reading_order:
            caps.add(Capability.NEIGHBORS)
        return frozenset(caps)

    # -- plumbing --------------------------------------------------------------

    async def _search(self, body: Json, action: str) -> Json:
        answer: Json = await self._http.request(
            "POST",
            f"/indexes/{self._index}/docs/search",
            params=self._params,
            json=body,
            action=action,
        )
        return answer

    async def _documents(
        self, body: Json, action: str, *, semantic: bool = False
    ) -> list[tuple[float, Chunk]]:
        answer = await self._search(
            {"select": ",".join(self._fields.columns(extras=False)), **body}, action
        )
        source = None if self._fields.source else self._source_name
        with bad_response(SERVICE, action):
            out = []
            for doc in answer["value"]:
                score = doc.get("@search.rerankerScore") if semantic else None
                score = doc["@search.score"] if score is None else score
                chunk_id = str(doc[self._fields.id])
                out.append(
                    (float(score), self._fields.to_chunk(doc, chunk_id=chunk_id, source=source))
                )
        return out

    def _scope(self, sources: Sequence[str]) -> tuple[bool, list[str]]:
        """(anything to search, OData clauses restricting to ``sources``)."""
        if not sources:
            return True, []
        if not self._fields.source:
            return self._source_name in sources, []
        return True, [_any_of(self._fields.source, sources)]

    def _odata_field(self, key: str) -> str:
        return self._fields.filter_field(key).replace(".", "/")

    def _filter(self, clauses: list[str], flt: SearchFilter | None) -> str | None:
        clauses = list(clauses)
        if flt:
            for key, values in flt.equals.items():
                clauses.append(_any_of(self._odata_field(key), values))
        return " and ".join(clauses) or None

    # -- reads -----------------------------------------------------------------

    async def search(self, query: LegQuery) -> list[Candidate]:
        self._require_open()
        ok, clauses = self._scope(query.sources)
        if query.leg == Capability.DENSE and self._vector_field:
            vq: Json = {"fields": self._vector_field, "k": query.limit}
            if self._queries is not None:
                vq |= {"kind": "vector", "vector": await self._queries.vector(query.text)}
            else:
                vq |= {"kind": "text", "text": query.text}
            body: Json = {"vectorQueries": [vq]}
            semantic = False
        elif query.leg == Capability.BM25 and self._keyword:
            body = {"search": query.text, "queryType": "simple"}
            semantic = bool(self._semantic)
            if semantic:
                body |= {"queryType": "semantic", "semanticConfiguration": self._semantic}
        else:
            raise CapabilityMissing(f"{self.name} does not declare the {query.leg} leg")
        if not ok:
            return []
        body["top"] = query.limit
        odata = self._filter(clauses, query.filter)
        if odata:
            body["filter"] = odata
        hits = await self._documents(body, f"search ({query.leg})", semantic=semantic)
        if semantic:
            hits.sort(key=lambda h: -h[0])
        return [Candidate(chunk=c, score=s, rank=r) for r, (s, c) in enumerate(hits, start=1)]

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        self._require_open()
        unique = [i for i in dict.fromkeys(ids) if "|" not in i]
        if not unique:
            return []
        body = {
            "search": "*",
            "filter": f"search.in({self._fields.id}, {odata_literal('|'.join(unique))}, '|')",
            "top": len(unique),
        }
        by_id = {c.id: c for _, c in await self._documents(body, "fetch")}
        return [by_id[i] for i in ids if i in by_id]

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        self._require_open()
        f = self._fields
        p = chunk.provenance
        ok, clauses = self._scope((p.source,))
        if not ok or not f.has_reading_order:
            return []
        clauses += [
            f"{f.doc_id} eq {odata_literal(p.doc_id)}",
            f"{f.ordinal} ge {p.ordinal - max(0, before)}",
            f"{f.ordinal} le {p.ordinal + max(0, after)}",
            f"{f.id} ne {odata_literal(chunk.id)}",
        ]
        body = {
            "search": "*",
            "filter": " and ".join(clauses),
            "orderby": f"{f.ordinal} asc",
            "top": before + after + 1,
        }
        found = [c for _, c in await self._documents(body, "read neighbours")]
        return sorted(found, key=lambda c: c.provenance.ordinal)

    async def sources(self) -> list[SourceInfo]:
        self._require_open()
        if not self._fields.source:
            return [SourceInfo(name=self._source_name, chunks=await self._count())]
        field = self._fields.source
        answer = await self._search(
            {"search": "*", "top": 0, "facets": [f"{field},count:1000"]}, "facet sources"
        )
        with bad_response(SERVICE, "facet sources"):
            infos = [
                SourceInfo(name=str(f["value"]), chunks=int(f["count"]))
                for f in answer["@search.facets"][field]
            ]
        return sorted(infos, key=lambda s: s.name)

    async def _count(self) -> int:
        answer = await self._search({"search": "*", "top": 0, "count": True}, "count")
        with bad_response(SERVICE, "count"):
            return int(answer["@odata.count"])

    async def status(self) -> BackendStatus:
        if self._http.closed:
            return BackendStatus(ready=False, backend=self.name, chunks=0, detail="closed")
        return BackendStatus(
            ready=True,
            backend=self.name,
            chunks=await self._count(),
            detail=f"{self._http.base_url} index {self._index}",
            extra={
                "semantic_ranker": bool(self._semantic),
                "query_cache": self._queries.statistics() if self._queries else {},
            },
        )


@asynccontextmanager
async def open_azure_search(
    settings: Settings, load_minilm: MiniLMLoader
) -> AsyncIterator[AzureAISearchBackend]:
    """The configured Azure AI Search adapter; on exit its HTTP client and encoder are
    closed, shielded and bounded. The API key is read here, once."""
    az = settings.backend.azure_search
    if not az.endpoint:
        raise ConfigError(
            "backend.azure_search.endpoint is empty",
            remedy="Set backend.azure_search.endpoint in the server config.",
        )
    key = az.api_key.read("backend.azure_search.api_key")
    if not key:
        raise ConfigError(
            "backend.azure_search.api_key names no environment variable or file",
            remedy='Set backend.azure_search.api_key = {env = "AZURE_SEARCH_API_KEY"}.',
        )
    key_header = {"api-key": key}

    async def azure_headers() -> dict[str, str]:
        return key_header

    async with AsyncExitStack() as stack:
        embedder = (
            await stack.enter_async_context(open_embedder(settings.encoder, load_minilm))
            if az.vector_field and az.vector_query == "vector"
            else None
        )
        http = await stack.enter_async_context(
            JsonHttp(SERVICE, az.endpoint, timeout_s=az.timeout_s, headers=azure_headers)
        )
        backend = AzureAISearchBackend(
            http,
            index=az.index,
            api_version=az.api_version,
            fields=FieldMap.from_settings(az.fields),
            source_name=az.source_name,
            vector_field=az.vector_field,
            vector_query=az.vector_query,
            keyword=az.keyword,
            semantic_configuration=az.semantic_configuration,
            embedder=embedder,
            query_cache_size=settings.encoder.query_cache_size,
        )
        await backend.check_index()  # refuse a field map the index cannot serve
        yield backend
