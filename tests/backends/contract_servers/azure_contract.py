"""CONTRACT TESTS: an in-memory server speaking the subset of the Azure AI Search REST
API that ``backends/azure_ai_search.py`` uses. Not Azure: shapes follow the published
"Search Documents (POST)" reference; ranking is ``scoring.py``'s toy, and the OData
``$filter`` grammar is the subset the adapter writes (eq/ne/ge/le/gt/lt, and, or,
parentheses, ``search.in``).

Endpoints: ``GET /indexes/{index}?api-version=…`` (the definition: ``fields`` with
``type``, ``key``, ``filterable``, ``dimensions``, ``vectorSearchProfile``; ``vectorSearch``
profiles and vectorizers; ``semantic`` configurations), and
``POST /indexes/{index}/docs/search?api-version=…`` with ``search``,
``queryType`` (simple | semantic + ``semanticConfiguration``), ``vectorQueries``
(``kind`` vector | text), ``filter``, ``orderby``, ``top``, ``select``, ``facets``,
``count``. Auth: the ``api-key`` header.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.backends.contract_servers.faults import FaultingApp, Faults
from tests.backends.contract_servers.scoring import Embed, cosine, keyword_scores

Json = dict[str, Any]
API_VERSIONS = ("2024-07-01", "2024-11-01-preview", "2025-09-01")


@attrs.define
class SearchIndex:
    key: str
    text_fields: tuple[str, ...]
    vector_field: str
    semantic_configurations: tuple[str, ...] = ()
    docs: list[Json] = attrs.field(factory=list)
    vectorizer: bool = True  # the vector field's profile has a vectorizer (text queries)
    not_filterable: tuple[str, ...] = ()

    def definition(self, name: str) -> Json:
        """The index definition, with field types read off the first document."""
        sample = self.docs[0] if self.docs else {}
        fields: list[Json] = []
        for field, value in sample.items():
            if field == "__vector":
                continue
            kind = "Edm.Int32" if isinstance(value, int) else "Edm.String"
            fields.append(
                {
                    "name": field,
                    "type": kind,
                    "key": field == self.key,
                    "searchable": field in self.text_fields,
                    "filterable": field not in self.not_filterable,
                    "facetable": True,
                    "sortable": kind == "Edm.Int32",
                    "retrievable": True,
                }
            )
        if self.vector_field:
            fields.append(
                {
                    "name": self.vector_field,
                    "type": "Collection(Edm.Single)",
                    "searchable": True,
                    "retrievable": False,
                    "dimensions": len(sample.get("__vector", [])),
                    "vectorSearchProfile": "vector-profile",
                }
            )
        profile: Json = {"name": "vector-profile", "algorithm": "hnsw-1"}
        if self.vectorizer:
            profile["vectorizer"] = "contract-vectorizer"
        return {
            "name": name,
            "fields": fields,
            "vectorSearch": {"profiles": [profile], "algorithms": [{"name": "hnsw-1"}]},
            "semantic": {"configurations": [{"name": c} for c in self.semantic_configurations]},
        }


class AzureSearchContract:
    def __init__(self, *, api_key: str, embed: Embed) -> None:
        self.api_key = api_key
        self.embed = embed
        self.indexes: dict[str, SearchIndex] = {}
        self.faults = Faults()
        self.bodies: list[Json] = []
        routes = [
            Route("/indexes/{index}", self._definition, methods=["GET"]),
            Route("/indexes/{index}/docs/search", self._search, methods=["POST"]),
        ]
        self.app = FaultingApp(Starlette(routes=routes), self.faults)

    async def _definition(self, request: Request) -> JSONResponse:
        if request.headers.get("api-key") != self.api_key:
            return _error(401, "Access denied due to invalid subscription key.")
        if request.query_params.get("api-version") not in API_VERSIONS:
            return _error(400, "Invalid or missing api-version query string parameter.")
        name = request.path_params["index"]
        index = self.indexes.get(name)
        if index is None:
            return _error(404, f"The index '{name}' was not found.")
        return JSONResponse(index.definition(name))

    async def _search(self, request: Request) -> JSONResponse:
        if request.headers.get("api-key") != self.api_key:
            return _error(401, "Access denied due to invalid subscription key.")
        if request.query_params.get("api-version") not in API_VERSIONS:
            return _error(400, "Invalid or missing api-version query string parameter.")
        index = self.indexes.get(request.path_params["index"])
        if index is None:
            return _error(404, f"The index '{request.path_params['index']}' was not found.")
        body: Json = await request.json()
        self.bodies.append(body)
        try:
            keep = _odata(body["filter"]) if body.get("filter") else (lambda doc: True)
        except ValueError as exc:
            return _error(400, f"Invalid expression: {exc}")
        docs = [d for d in index.docs if keep(d)]
        scored: list[tuple[float, Json, float | None]] = []
        search = body.get("search")
        vector_queries = body.get("vectorQueries") or []
        if vector_queries:
            vq = vector_queries[0]
            if vq.get("fields") != index.vector_field:
                return _error(400, f"Unknown vector field '{vq.get('fields')}'.")
            qv = vq["vector"] if vq.get("kind") == "vector" else self.embed(str(vq["text"]))
            ranked = sorted(
                ((0.5 + 0.5 * cosine(qv, d["__vector"]), d) for d in docs), key=lambda x: -x[0]
            )
            scored = [(s, d, None) for s, d in ranked[: int(vq.get("k", 50))]]
        elif search in (None, "", "*"):
            scored = [(1.0, d, None) for d in docs]
        else:
            texts = [" ".join(str(d.get(f, "")) for f in index.text_fields) for d in docs]
            scores = keyword_scores(str(search), texts)
            scored = [(s, d, None) for s, d in zip(scores, docs, strict=True) if s > 0]
            if body.get("queryType") == "semantic":
                if body.get("semanticConfiguration") not in index.semantic_configurations:
                    return _error(400, "Unknown semantic configuration.")
                # A different ordering than BM25's: favour short, focused documents.
                scored = [
                    (s, d, 4.0 * s / (1 + len(str(d.get("text", ""))) / 200)) for s, d, _ in scored
                ]
        scored.sort(key=lambda x: -x[0])
        if body.get("orderby"):
            field, _, direction = str(body["orderby"]).partition(" ")
            scored.sort(key=lambda x: x[1].get(field, 0), reverse=direction.strip() == "desc")
        answer: Json = {}
        if body.get("count"):
            answer["@odata.count"] = len(scored)
        if body.get("facets"):
            answer["@search.facets"] = _facets(body["facets"], [d for _, d, _ in scored])
        select = [f.strip() for f in str(body.get("select", "")).split(",") if f.strip()]
        unknown = [f for f in select if docs and f not in docs[0]]
        if unknown:
            return _error(400, f"Could not find a property named '{unknown[0]}'.")
        top = int(body.get("top", 50))
        values = []
        for score, doc, reranker in scored[:top]:
            item: Json = {"@search.score": score}
            if reranker is not None:
                item["@search.rerankerScore"] = reranker
            fields = select or [f for f in doc if not f.startswith("__")]
            item.update({f: doc.get(f) for f in fields})
            values.append(item)
        answer["value"] = values
        return JSONResponse(answer)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": "", "message": message}}, status_code=status)


def _facets(specs: list[str], docs: list[Json]) -> Json:
    out: Json = {}
    for spec in specs:
        field = spec.split(",")[0]
        counts: dict[Any, int] = {}
        for doc in docs:
            counts[doc.get(field)] = counts.get(doc.get(field), 0) + 1
        out[field] = [{"value": v, "count": n} for v, n in counts.items() if v is not None]
    return out


# -- the OData subset ------------------------------------------------------------------

_TOKEN = re.compile(r"\s*('(?:[^']|'')*'|-?\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_/.]*|[(),])")
Predicate = Callable[[Mapping[str, Any]], bool]


def _odata(text: str) -> Predicate:
    tokens = _tokens(text)
    predicate, rest = _or(tokens)
    if rest:
        raise ValueError(f"unexpected {rest[0]!r}")
    return predicate


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot parse at {text[pos:]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


def _or(tokens: list[str]) -> tuple[Predicate, list[str]]:
    left, tokens = _and(tokens)
    while tokens and tokens[0] == "or":
        right, tokens = _and(tokens[1:])
        left = (lambda a, b: lambda d: a(d) or b(d))(left, right)
    return left, tokens


def _and(tokens: list[str]) -> tuple[Predicate, list[str]]:
    left, tokens = _atom(tokens)
    while tokens and tokens[0] == "and":
        right, tokens = _atom(tokens[1:])
        left = (lambda a, b: lambda d: a(d) and b(d))(left, right)
    return left, tokens


def _atom(tokens: list[str]) -> tuple[Predicate, list[str]]:
    if tokens[0] == "(":
        inner, rest = _or(tokens[1:])
        if not rest or rest[0] != ")":
            raise ValueError("missing )")
        return inner, rest[1:]
    if tokens[0] == "search.in":
        # search.in(field, 'a|b', '|')
        field, values, delim = tokens[2], _literal(tokens[4]), _literal(tokens[6])
        if tokens[1] != "(" or tokens[7] != ")":
            raise ValueError("malformed search.in")
        allowed = set(str(values).split(str(delim)))
        return (lambda d: str(_get(d, field)) in allowed), tokens[8:]
    field, op, raw = tokens[0], tokens[1], tokens[2]
    value = _literal(raw)
    ops: dict[str, Callable[[Any, Any], bool]] = {
        "eq": lambda a, b: type(a) is type(b) and a == b,
        "ne": lambda a, b: not (type(a) is type(b) and a == b),
        "ge": lambda a, b: a is not None and a >= b,
        "le": lambda a, b: a is not None and a <= b,
        "gt": lambda a, b: a is not None and a > b,
        "lt": lambda a, b: a is not None and a < b,
    }
    if op not in ops:
        raise ValueError(f"unknown operator {op!r}")
    compare = ops[op]
    return (lambda d: compare(_get(d, field), value)), tokens[3:]


def _literal(raw: str) -> Any:
    if raw.startswith("'"):
        return raw[1:-1].replace("''", "'")
    if raw in ("true", "false"):
        return raw == "true"
    if raw == "null":
        return None
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?\d+\.\d+", raw):
        return float(raw)
    raise ValueError(f"not a literal: {raw!r}")


def _get(doc: Mapping[str, Any], field: str) -> Any:
    value: Any = doc
    for part in field.split("/"):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value
