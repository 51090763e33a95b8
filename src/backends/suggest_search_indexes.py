"""Propose ``[backend.azure_search]`` and ``[backend.databricks]`` for existing indexes:
Azure's index definition (fields, their attributes and dimensions, vector profiles,
semantic configurations) and Databricks' index spec (primary key, embedding columns,
synced columns). Pure ``suggest_*`` functions and the reads that feed them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from retrieval_mcp.backends.schema_suggestion import (
    DOC_ID_NAMES,
    MAX_METADATA_FIELDS,
    ORDINAL_NAMES,
    TENANT_NAMES,
    TEXT_NAMES,
    TITLE_NAMES,
    URI_NAMES,
    Suggestion,
    pick,
)
from retrieval_mcp.json_http import JsonHttp, bad_response

Json = dict[str, Any]
_INT_TYPES = ("Edm.Int32", "Edm.Int64")


def suggest_azure_index(
    name: str, definition: Mapping[str, Any], *, encoder_dimension: int | None
) -> Suggestion:
    fields: dict[str, Mapping[str, Any]] = {str(f["name"]): f for f in definition["fields"]}
    profiles = {
        str(p["name"]): p for p in (definition.get("vectorSearch") or {}).get("profiles") or []
    }
    semantic = [
        str(c["name"]) for c in (definition.get("semantic") or {}).get("configurations") or []
    ]
    notes: list[str] = []
    key = next((n for n, f in fields.items() if f.get("key")), "id")
    strings = [n for n, f in fields.items() if f.get("type") == "Edm.String" and n != key]
    searchable = [n for n in strings if fields[n].get("searchable")]
    filterable = [n for n, f in fields.items() if f.get("filterable") and n != key]
    vectors = [n for n, f in fields.items() if f.get("dimensions")]
    text = pick(searchable, TEXT_NAMES) or (searchable[0] if searchable else "")
    taken = {key, text}
    source = pick(
        [n for n in strings if n in filterable and fields[n].get("facetable")],
        TENANT_NAMES,
        taken=taken,
    )
    taken.add(source)
    title = pick(strings, TITLE_NAMES, taken=taken)
    taken.add(title)
    doc_id = pick([n for n in filterable if n in strings], DOC_ID_NAMES, taken=taken)
    taken.add(doc_id)
    ints = [n for n, f in fields.items() if f.get("type") in _INT_TYPES]
    ordinal = pick([n for n in ints if n in filterable], ORDINAL_NAMES, taken=taken)
    taken.add(ordinal)
    uri = pick(strings, URI_NAMES, taken=taken)
    taken.add(uri)
    metadata_fields = [n for n in filterable if n not in taken and not fields[n].get("dimensions")][
        :MAX_METADATA_FIELDS
    ]
    values: dict[str, Any] = {"index": name}
    legs = []
    if searchable:
        values["keyword"] = True
        legs.append("bm25")
    else:
        values["keyword"] = False
    vector_field = vectors[0] if vectors else ""
    values["vector_field"] = vector_field
    if vector_field:
        legs.insert(0, "dense")
        field = fields[vector_field]
        vectorizer = bool(
            profiles.get(str(field.get("vectorSearchProfile", "")), {}).get("vectorizer")
        )
        dims = int(field.get("dimensions") or 0)
        values["vector_query"] = "text" if vectorizer else "vector"
        if not vectorizer and encoder_dimension is not None and dims != encoder_dimension:
            notes.append(
                f"{vector_field} holds {dims}-d vectors but the configured encoder makes "
                f"{encoder_dimension}-d ones, and the field has no vectorizer: configure the "
                "encoder that built the index"
            )
        if len(vectors) > 1:
            notes.append(f"several vector fields ({', '.join(vectors)}); {vector_field} was picked")
    if semantic:
        values["semantic_configuration"] = semantic[0]
    if not source:
        values["source_name"] = name
    features = ["filter"]
    if doc_id and ordinal:
        features.insert(0, "neighbors")
    else:
        notes.append("no filterable document id + ordinal fields: expand_neighbors is not offered")
    field_map = {
        "id": key,
        "text": text,
        "title": title,
        "source": source,
        "doc_id": doc_id,
        "ordinal": ordinal,
        "uri": uri,
        "metadata_fields": metadata_fields,
    }
    return Suggestion(
        kind="azure-search",
        target=f"index {name}",
        tables=(
            ("backend", {"kind": "azure-search"}),
            ("backend.azure_search", values),
            ("backend.azure_search.fields", field_map),
        ),
        legs=tuple(legs),
        features=tuple(features),
        notes=tuple(notes),
    )


def suggest_databricks_index(
    name: str, index: Mapping[str, Any], *, encoder_dimension: int | None
) -> Suggestion:
    spec: Mapping[str, Any] = (
        index.get("delta_sync_index_spec") or index.get("direct_access_index_spec") or {}
    )
    managed = [str(c["name"]) for c in spec.get("embedding_source_columns") or []]
    vectors = {
        str(c["name"]): int(c.get("embedding_dimension") or 0)
        for c in spec.get("embedding_vector_columns") or []
    }
    if spec.get("schema_json"):
        columns = list(json.loads(str(spec["schema_json"])))
    else:
        columns = [str(c) for c in spec.get("columns_to_sync") or []]
    notes: list[str] = []
    key = str(index.get("primary_key") or "id")
    values: dict[str, Any] = {"indexes": {name.split(".")[-1]: name}}
    if managed:
        values["query"] = "text"
        text = managed[0]
    else:
        values["query"] = "vector"
        text = pick(columns, TEXT_NAMES, taken={key})
        for column, dims in vectors.items():
            if encoder_dimension is not None and dims and dims != encoder_dimension:
                notes.append(
                    f"{column} holds {dims}-d vectors but the configured encoder makes "
                    f"{encoder_dimension}-d ones: configure the encoder that built the index"
                )
    values["keyword_leg"] = True
    taken = {key, text, *vectors}
    title = pick(columns, TITLE_NAMES, taken=taken)
    taken.add(title)
    doc_id = pick(columns, DOC_ID_NAMES, taken=taken)
    taken.add(doc_id)
    ordinal = pick(columns, ORDINAL_NAMES, taken=taken)
    taken.add(ordinal)
    uri = pick(columns, URI_NAMES, taken=taken)
    taken.add(uri)
    metadata_fields = [c for c in columns if c not in taken][:MAX_METADATA_FIELDS]
    if not columns:
        notes.append("the index spec lists no columns (all are synced): check fields by hand")
    features = ["filter"]
    if doc_id and ordinal:
        features.insert(0, "neighbors")
    else:
        notes.append("no document id + ordinal columns: expand_neighbors is not offered")
    notes.append('each index is one source: add more under indexes = {source = "c.s.index"}')
    return Suggestion(
        kind="databricks",
        target=f"index {name}",
        tables=(
            ("backend", {"kind": "databricks"}),
            ("backend.databricks", values),
            (
                "backend.databricks.fields",
                {
                    "id": key,
                    "text": text,
                    "title": title,
                    "source": "",
                    "doc_id": doc_id,
                    "ordinal": ordinal,
                    "uri": uri,
                    "metadata_fields": metadata_fields,
                },
            ),
        ),
        legs=("dense", "bm25"),
        features=tuple(features),
        notes=tuple(notes),
    )


async def read_azure(
    http: JsonHttp, index: str, api_version: str, *, encoder_dimension: int | None
) -> list[Suggestion]:
    definition = await http.request(
        "GET", f"/indexes/{index}", params={"api-version": api_version}, action="read the index"
    )
    with bad_response("Azure AI Search", "read the index"):
        return [suggest_azure_index(index, definition, encoder_dimension=encoder_dimension)]


async def read_databricks(
    http: JsonHttp, indexes: Sequence[str], *, encoder_dimension: int | None
) -> list[Suggestion]:
    out = []
    for name in indexes:
        answer = await http.request(
            "GET", f"/api/2.0/vector-search/indexes/{name}", action="read the index"
        )
        with bad_response("Databricks Vector Search", "read the index"):
            out.append(suggest_databricks_index(name, answer, encoder_dimension=encoder_dimension))
    return out
