"""CONTRACT TESTS: an in-memory server speaking the subset of the Databricks Vector
Search REST API that ``backends/databricks_vector_search.py`` uses. Not Databricks:
shapes follow the published API reference; ranking is ``scoring.py``'s toy.

Endpoints: ``POST /api/2.0/vector-search/indexes/{name}/query`` (``query_text``,
``query_vector``, ``query_type`` ANN/HYBRID/FULL_TEXT, ``filters_json``, ``columns``,
``num_results``; answer ``manifest.columns`` + ``result.data_array``, score last),
``GET /api/2.0/vector-search/indexes/{name}``, and ``POST /oidc/v1/token`` (OAuth
client credentials). Auth: ``Authorization: Bearer``.

Which query fields a query needs follows Databricks' documentation (the
``vector_search`` function reference and "Query a vector search index"), not what the
adapter happens to send: ``ANN`` takes ``query_text`` or ``query_vector``, and an index
with self-managed embeddings (``Index.managed_embeddings = False``) requires
``query_vector``, since it has no model to embed text; ``HYBRID`` always requires
``query_text`` (its keyword half) and, on a self-managed index, ``query_vector`` too;
``FULL_TEXT`` requires ``query_text``.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Mapping
from typing import Any

import attrs
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.backends.contract_servers.faults import FaultingApp, Faults
from tests.backends.contract_servers.scoring import Embed, cosine, keyword_scores

Json = dict[str, Any]
API = "/api/2.0/vector-search/indexes"


@attrs.define
class Index:
    primary_key: str
    text_column: str
    rows: list[Json] = attrs.field(factory=list)
    vectors: list[list[float]] = attrs.field(factory=list)
    # True: Databricks embeds text_column (and query_text) with the index's model.
    # False: self-managed embeddings; only vectors the caller computed can be matched.
    managed_embeddings: bool = True
    vector_column: str = "__vector"  # self-managed: the embedding column

    def spec(self) -> Json:
        """A Delta Sync index spec, as the GET index endpoint documents it."""
        out: Json = {
            "source_table": "main.rag.source",
            "pipeline_type": "TRIGGERED",
            "columns_to_sync": list(self.rows[0]) if self.rows else [],
        }
        if self.managed_embeddings:
            out["embedding_source_columns"] = [
                {"name": self.text_column, "embedding_model_endpoint_name": "contract-embedder"}
            ]
        else:
            dims = len(self.vectors[0]) if self.vectors else 0
            out["embedding_vector_columns"] = [
                {"name": self.vector_column, "embedding_dimension": dims}
            ]
        return out


class DatabricksContract:
    def __init__(
        self,
        *,
        tokens: set[str],
        embed: Embed,
        clients: Mapping[str, str] | None = None,
    ) -> None:
        self.tokens = set(tokens)
        self.embed = embed
        self.clients = dict(clients or {})  # OAuth client_id -> secret
        self.indexes: dict[str, Index] = {}
        self.faults = Faults()
        self.queries: list[Json] = []
        routes = [
            Route(API + "/{name}/query", self._query, methods=["POST"]),
            Route(API + "/{name}", self._get, methods=["GET"]),
            Route("/oidc/v1/token", self._token, methods=["POST"]),
        ]
        self.app = FaultingApp(Starlette(routes=routes), self.faults)

    def _auth(self, request: Request) -> JSONResponse | None:
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer ") or header[len("Bearer ") :] not in self.tokens:
            return _error(401, "UNAUTHENTICATED", "Invalid access token.")
        return None

    async def _token(self, request: Request) -> JSONResponse:
        header = request.headers.get("authorization", "")
        form = await request.form()
        try:
            client_id, secret = (
                base64.b64decode(header.removeprefix("Basic ")).decode().split(":", 1)
            )
        except ValueError:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if self.clients.get(client_id) != secret or form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        token = "oauth-" + secrets.token_hex(8)
        self.tokens.add(token)
        return JSONResponse(
            {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": "all-apis"}
        )

    async def _get(self, request: Request) -> JSONResponse:
        denied = self._auth(request)
        if denied:
            return denied
        name = request.path_params["name"]
        index = self.indexes.get(name)
        if index is None:
            return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Index {name} does not exist.")
        return JSONResponse(
            {
                "name": name,
                "endpoint_name": "contract",
                "primary_key": index.primary_key,
                "index_type": "DELTA_SYNC",
                "delta_sync_index_spec": index.spec(),
                "status": {
                    "ready": True,
                    "indexed_row_count": len(index.rows),
                    "message": "Index is ready",
                },
            }
        )

    async def _query(self, request: Request) -> JSONResponse:
        denied = self._auth(request)
        if denied:
            return denied
        name = request.path_params["name"]
        index = self.indexes.get(name)
        if index is None:
            return _error(404, "RESOURCE_DOES_NOT_EXIST", f"Index {name} does not exist.")
        body: Json = await request.json()
        self.queries.append(body)
        columns = list(body.get("columns") or [])
        known = set(index.rows[0]) if index.rows else set(columns)
        unknown = [c for c in columns if c not in known]
        if unknown:
            return _error(400, "INVALID_PARAMETER_VALUE", f"Requested columns {unknown} not found")
        text, vector = body.get("query_text"), body.get("query_vector")
        query_type = str(body.get("query_type", "ANN")).upper()
        refusal = _missing_query_fields(query_type, text, vector, index.managed_embeddings)
        if refusal:
            return _error(400, "INVALID_PARAMETER_VALUE", refusal)
        filters = json.loads(body["filters_json"]) if body.get("filters_json") else {}
        keep = [i for i, row in enumerate(index.rows) if _passes(filters, row)]
        if query_type == "FULL_TEXT" or query_type == "HYBRID":
            texts = [str(index.rows[i][index.text_column]) for i in keep]
            kw = keyword_scores(str(text or ""), texts)
        if query_type == "FULL_TEXT":
            scored = [(s, i) for s, i in zip(kw, keep, strict=True) if s > 0]
        else:
            qv = vector if vector is not None else self.embed(str(text))
            dense = [(1.0 / (1.0 + (2 - 2 * cosine(qv, index.vectors[i]))), i) for i in keep]
            scored = dense
            if query_type == "HYBRID":
                ranks_d = {i: r for r, (_, i) in enumerate(sorted(dense, key=lambda x: -x[0]))}
                ranks_k = {
                    i: r
                    for r, (_, i) in enumerate(
                        sorted(zip(kw, keep, strict=True), key=lambda x: -x[0])
                    )
                }
                scored = [(1 / (60 + ranks_d[i]) + 1 / (60 + ranks_k[i]), i) for i in keep]
        scored.sort(key=lambda x: -x[0])
        limit = int(body.get("num_results", 10))
        rows = [[index.rows[i].get(c) for c in columns] + [s] for s, i in scored[:limit]]
        return JSONResponse(
            {
                "manifest": {
                    "column_count": len(columns) + 1,
                    "columns": [{"name": c} for c in columns] + [{"name": "score"}],
                },
                "result": {"row_count": len(rows), "data_array": rows},
            }
        )


def _missing_query_fields(
    query_type: str, text: object, vector: object, managed: bool
) -> str | None:
    """Databricks' documented rule for which of query_text / query_vector a query needs."""
    if query_type not in ("ANN", "HYBRID", "FULL_TEXT"):
        return f"Unsupported query_type {query_type}"
    if query_type in ("HYBRID", "FULL_TEXT") and text is None:
        return f"query_text is required for query_type {query_type}"
    if query_type == "ANN" and text is None and vector is None:
        return "One of query_text, query_vector is required"
    if query_type == "ANN" and text is not None and vector is not None:
        return "Only one of query_text, query_vector may be given for query_type ANN"
    if query_type != "FULL_TEXT" and not managed and vector is None:
        return "query_vector is required: this index uses self-managed embeddings" + (
            " (HYBRID needs both query_text and query_vector)" if query_type == "HYBRID" else ""
        )
    return None


def _passes(filters: Mapping[str, Any], row: Mapping[str, Any]) -> bool:
    for key, wanted in filters.items():
        column, _, op = key.partition(" ")
        value = row.get(column)
        options = wanted if isinstance(wanted, list) else [wanted]
        if op == "":
            ok = any(type(value) is type(o) and value == o for o in options)
        elif op == "NOT":
            ok = all(value != o for o in options)
        elif op == ">=":
            ok = value is not None and value >= wanted
        elif op == "<=":
            ok = value is not None and value <= wanted
        elif op == ">":
            ok = value is not None and value > wanted
        elif op == "<":
            ok = value is not None and value < wanted
        else:
            raise ValueError(f"unsupported filter operator {op!r}")
        if not ok:
            return False
    return True


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error_code": code, "message": message}, status_code=status)
