"""Propose ``[backend.qdrant_remote]`` for an existing collection: its vectors config
(named dense vectors, multivectors, sparse vectors and their modifier) from
``GET /collections/{c}``, payload keys from a ``scroll`` sample and ``payload_schema``.

``suggest_collection`` is pure; ``read_suggestions`` does the two reads per
collection (or lists them with ``GET /collections`` when none is named).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from retrieval_mcp.backends.schema_suggestion import (
    DOC_ID_NAMES,
    EMBEDDING_NAMES,
    MAX_METADATA_FIELDS,
    METADATA_NAMES,
    ORDINAL_NAMES,
    TENANT_NAMES,
    TEXT_NAMES,
    TITLE_NAMES,
    URI_NAMES,
    Choice,
    Suggestion,
    pick,
)
from retrieval_mcp.json_http import JsonHttp, bad_response

SECTION = "backend.qdrant_remote"
SERVICE = "Qdrant"
SAMPLE_POINTS = 32

Json = dict[str, Any]


def _payload_kinds(points: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, float]]:
    """payload key -> (its kind: str/int/float/bool/list/dict, mean length of strings)."""
    kinds: dict[str, list[Any]] = {}
    for point in points:
        for key, value in (point.get("payload") or {}).items():
            kinds.setdefault(str(key), []).append(value)
    out: dict[str, tuple[str, float]] = {}
    for key, values in kinds.items():
        present = [v for v in values if v is not None]
        if not present:
            continue
        first = present[0]
        kind = (
            "bool"
            if isinstance(first, bool)
            else "int"
            if isinstance(first, int)
            else "float"
            if isinstance(first, float)
            else "str"
            if isinstance(first, str)
            else "dict"
            if isinstance(first, Mapping)
            else "list"
        )
        lengths = [len(v) for v in present if isinstance(v, str)]
        out[key] = (kind, sum(lengths) / len(lengths) if lengths else 0.0)
    return out


def suggest_collection(
    name: str,
    info: Mapping[str, Any],
    sample: Sequence[Mapping[str, Any]],
    *,
    encoder_dimension: int | None,
) -> Suggestion:
    """``info`` is the ``result`` of ``GET /collections/{name}``; ``sample`` scrolled points."""
    params = info["config"]["params"]
    vectors = params.get("vectors") or {}
    sparse: Mapping[str, Any] = params.get("sparse_vectors") or {}
    indexed: Mapping[str, Any] = info.get("payload_schema") or {}
    notes: list[str] = []
    optional: list[Choice] = []
    values: dict[str, Any] = {"collection": name}

    unnamed = isinstance(vectors, Mapping) and "size" in vectors
    named: dict[str, Mapping[str, Any]] = {} if unnamed else dict(vectors)
    dense = {n: int(p["size"]) for n, p in named.items() if not p.get("multivector_config")}
    multi = {n: int(p["size"]) for n, p in named.items() if p.get("multivector_config")}
    legs: list[str] = []
    if unnamed:
        values["dense"] = True
        values["dense_vector"] = ""
        size = int(vectors["size"])
        legs.append("dense")
    elif dense:
        fitting = [n for n, size in dense.items() if size == encoder_dimension]
        chosen = pick(fitting, EMBEDDING_NAMES) or (fitting or list(dense))[0]
        size = dense[chosen]
        values["dense"] = True
        values["dense_vector"] = chosen
        legs.append("dense")
        others = [f"{n} ({s}-d)" for n, s in dense.items() if n != chosen]
        if others:
            notes.append(f"other dense vectors: {', '.join(others)}; dense_vector picks one")
    else:
        values["dense"] = False
        size = 0
    if legs and encoder_dimension is not None and size != encoder_dimension:
        notes.append(
            f"the dense vector holds {size}-d vectors but the configured encoder makes "
            f"{encoder_dimension}-d ones: configure the encoder that built the collection"
        )

    bm25 = [n for n in sparse if "bm25" in n.lower()] or [
        n
        for n, p in sparse.items()
        if (p or {}).get("modifier") == "idf" and "splade" not in n.lower()
    ]
    values["sparse_vector"] = bm25[0] if bm25 else ""
    if bm25:
        legs.append("bm25")
        values["sparse_model"] = ""
        optional.append(
            Choice(
                SECTION,
                "sparse_model",
                "qdrant/bm25",
                "let the server make the BM25 query (same tokens as the local encoder)",
            )
        )
    learned = [n for n in sparse if n not in bm25]
    if learned:
        optional.append(
            Choice(
                f"{SECTION}.sparse_leg",
                "vector",
                learned[0],
                "learned sparse leg: also set model (Qdrant inference) or endpoint "
                "(POST /embed_sparse)",
            )
        )
        notes.append(f"sparse vector {learned[0]} needs a query encoder for the sparse leg")
    if multi:
        first = next(iter(multi))
        optional.append(
            Choice(
                f"{SECTION}.multivector_leg",
                "vector",
                first,
                f"late-interaction leg ({multi[first]}-d tokens): also set endpoint "
                "(POST /embed_all) or model",
            )
        )
        notes.append(f"multivector {first} needs a query encoder for the multivector leg")

    kinds = _payload_kinds(sample)
    strings = [k for k, (kind, _) in kinds.items() if kind == "str"]
    ints = [k for k, (kind, _) in kinds.items() if kind == "int"]
    text = pick(strings, TEXT_NAMES) or max(strings, key=lambda k: kinds[k][1], default="")
    taken = {text}
    source = pick(strings, TENANT_NAMES, taken=taken)
    taken.add(source)
    title = pick(strings, TITLE_NAMES, taken=taken)
    taken.add(title)
    doc_id = pick(strings + ints, DOC_ID_NAMES, taken=taken)
    taken.add(doc_id)
    ordinal = pick(ints, ORDINAL_NAMES, taken=taken)
    taken.add(ordinal)
    uri = pick(strings, URI_NAMES, taken=taken)
    taken.add(uri)
    dicts = [k for k, (kind, _) in kinds.items() if kind == "dict"]
    metadata = pick(dicts, METADATA_NAMES)
    taken.add(metadata)
    scalar = [
        k for k, (kind, _) in kinds.items() if kind in ("str", "int", "bool") and k not in taken
    ]
    scalar.sort(key=lambda k: (k not in indexed, k))
    metadata_fields = [] if metadata else scalar[:MAX_METADATA_FIELDS]
    if not source:
        # A collection without a source key is one source: the per-source form.
        del values["collection"]
        values["collections"] = {name: name}
    fields = {
        "text": text,
        "title": title,
        "source": source,
        "doc_id": doc_id,
        "ordinal": ordinal,
        "uri": uri,
        "metadata": metadata,
        "metadata_fields": metadata_fields,
    }
    if not sample:
        notes.append("the collection is empty: payload keys could not be sampled")
    elif not text:
        notes.append("no text payload key found: set fields.text by hand")
    for key in [source, doc_id, ordinal, *metadata_fields]:
        if key and key not in indexed:
            notes.append(
                f"payload key {key} has no payload index: filters on it scan (its owner can "
                "create one; the server never does)"
            )
    features = ["filter"]
    if "dense" in legs:
        features += ["similar", "vectors"]
    if doc_id and ordinal:
        features.insert(0, "neighbors")
    else:
        notes.append("no document id + ordinal keys: expand_neighbors is not offered")
    return Suggestion(
        kind="qdrant-remote",
        target=f"collection {name}",
        tables=(
            ("backend", {"kind": "qdrant-remote"}),
            (SECTION, values),
            (f"{SECTION}.fields", fields),
        ),
        legs=tuple(legs),
        features=tuple(features),
        notes=tuple(notes),
        optional=tuple(optional),
    )


async def read_suggestions(
    http: JsonHttp, collections: Sequence[str], *, encoder_dimension: int | None, limit: int = 5
) -> list[Suggestion]:
    names = list(collections)
    if not names:
        listed = await http.request("GET", "/collections", action="list collections")
        with bad_response(SERVICE, "list collections"):
            names = [str(c["name"]) for c in listed["result"]["collections"]][:limit]
    out = []
    for name in names:
        info = await http.request("GET", f"/collections/{name}", action="read schema")
        sample = await http.request(
            "POST",
            f"/collections/{name}/points/scroll",
            json={"limit": SAMPLE_POINTS, "with_payload": True, "with_vector": False},
            action="sample points",
        )
        with bad_response(SERVICE, "read schema"):
            out.append(
                suggest_collection(
                    name,
                    info["result"],
                    sample["result"]["points"],
                    encoder_dimension=encoder_dimension,
                )
            )
    return out
