"""Propose ``[backend.postgres.map]`` for an existing table or view, from ``pg_catalog``.

``suggest_relation`` is pure (a ``RelationSchema`` in, a ``Suggestion`` out);
``read_suggestions`` connects read-only, reads the named relation (or every readable
one that holds a vector column) and a sample of tenant values, and suggests for each.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from retrieval_mcp.backends.pg_catalog import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    TEXT_TYPES,
    VECTOR_TYPES,
    Column,
    RelationSchema,
    list_relations,
    read_relation,
    write_privileges,
)
from retrieval_mcp.backends.pgvector import map_pg_error
from retrieval_mcp.backends.pgvector_sql import table_identifier
from retrieval_mcp.backends.schema_suggestion import (
    DOC_ID_NAMES,
    EMBEDDING_NAMES,
    ID_NAMES,
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
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import PostgresSettings

SECTION = "backend.postgres.map"
_SCALAR = (
    TEXT_TYPES | INTEGER_TYPES | FLOAT_TYPES | {"bool", "uuid", "date", "timestamptz", "timestamp"}
)
_TIME = ("created_at", "updated_at", "created", "updated", "modified_at", "timestamp")


def _of(schema: RelationSchema, families: set[str] | frozenset[str]) -> list[str]:
    return [c.name for c in schema.columns if c.typname in families]


def suggest_relation(
    schema: RelationSchema,
    *,
    encoder_dimension: int | None,
    ts_config: str = "english",
    tenant_values: list[str] | None = None,
) -> Suggestion:
    """Guess which column is which, and say what the guess cannot fix."""
    notes: list[str] = []
    optional: list[Choice] = []
    names = [c.name for c in schema.columns]
    texts = _of(schema, TEXT_TYPES)

    vectors = _of(schema, VECTOR_TYPES)
    embedding = pick(vectors, EMBEDDING_NAMES) or (vectors[0] if vectors else "")
    if len(vectors) > 1:
        notes.append(f"several vector columns ({', '.join(vectors)}); {embedding} was picked")

    tenant = pick([c for c in names if c in texts or c in _of(schema, INTEGER_TYPES)], TENANT_NAMES)
    id_column, id_scope = _id_column(schema, tenant)
    taken = {id_column, tenant, embedding}
    text = pick(texts, TEXT_NAMES, taken=taken) or next((t for t in texts if t not in taken), "")
    taken.add(text)
    title = pick(texts, TITLE_NAMES, taken=taken)
    taken.add(title)
    doc_id = pick(texts + _of(schema, INTEGER_TYPES | {"uuid"}), DOC_ID_NAMES, taken=taken)
    taken.add(doc_id)
    ordinal = pick(_of(schema, INTEGER_TYPES), ORDINAL_NAMES, taken=taken)
    taken.add(ordinal)
    uri = pick(texts, URI_NAMES, taken=taken)
    taken.add(uri)
    jsons = _of(schema, {"jsonb"})
    metadata = pick(jsons, METADATA_NAMES) or (jsons[0] if len(jsons) == 1 else "")
    taken.add(metadata)
    tsvectors = _of(schema, {"tsvector"})
    tsvector = tsvectors[0] if tsvectors else ""
    taken.add(tsvector)
    scalars = [c.name for c in schema.columns if c.typname in _SCALAR and c.name not in taken]
    # Timestamps first: agents filter on them less than on short labels, but operators
    # of a memory table want them shown.
    scalars.sort(key=lambda n: (n not in _TIME, names.index(n)))
    metadata_columns = scalars[:MAX_METADATA_FIELDS]

    values: dict[str, Any] = {"relation": schema.qualified, "id": id_column}
    if id_scope == "tenant":
        values["id_scope"] = "tenant"
    values["text"] = text
    for key, value in (
        ("embedding", embedding),
        ("tsvector", tsvector),
        ("title", title),
        ("doc_id", doc_id),
        ("ordinal", ordinal),
        ("uri", uri),
        ("metadata", metadata),
    ):
        values[key] = value
    values["metadata_columns"] = metadata_columns
    values["tenant"] = tenant
    if not text:
        notes.append("no text column found: set map.text by hand")
    if not id_column:
        notes.append("no key column found: set map.id to a column that identifies a row")

    legs = ["bm25"]
    if embedding:
        legs.insert(0, "dense")
        column = schema.column(embedding)
        assert column is not None
        dims = column.dimension
        if dims is not None and encoder_dimension is not None and dims != encoder_dimension:
            notes.append(
                f"{embedding} is {column.type} but the configured encoder makes "
                f"{encoder_dimension}-d vectors: configure the encoder that built it "
                f"([encoder] kind = 'openai-compatible', dimension = {dims}) or the server "
                "refuses to start"
            )
        if dims is None:
            notes.append(f"{embedding} has no declared dimension; the server checks one row")
        notes += _dense_index_notes(schema, embedding)
        null_ok = not column.not_null
        if null_ok:
            notes.append(
                f"rows with a NULL {embedding} are skipped by the dense leg and still found "
                "by keyword"
            )
    else:
        notes.append("no vector column: keyword leg only")
    notes += _keyword_notes(schema, text, tsvector, ts_config)
    features = ["filter"] if metadata or metadata_columns else []
    if embedding:
        features += ["similar", "vectors"]
    if doc_id and ordinal:
        features.insert(0, "neighbors")
    else:
        notes.append(
            "no document id + ordinal pair: expand_neighbors is not offered (set map.doc_id "
            "and map.ordinal if the rows are chunks of documents)"
        )
    if tenant:
        seen = ", ".join(tenant_values or []) or "none sampled"
        notes.append(
            f"{tenant}'s values are the sources (a token scoped to one sees only its rows); "
            f"values seen: {seen}"
        )
        optional.append(
            Choice(SECTION, "tenants", tenant_values or [], "the values this deployment may read")
        )
    else:
        optional.append(
            Choice(SECTION, "source_name", schema.name, "the name this one source goes by")
        )
    writes = write_privileges(schema)
    if writes:
        notes.append(
            f"this role may {', '.join(writes)} on {schema.qualified}: the server never "
            f"writes, but grant its role SELECT only (REVOKE {', '.join(writes)} ON "
            f"{schema.qualified} FROM <role>)"
        )
    if schema.kind == "view":
        notes.append("a view: the planner uses its base tables' indexes; this cannot see them")
    return Suggestion(
        kind="postgres",
        target=f"{schema.kind} {schema.qualified}",
        tables=(("backend", {"kind": "postgres"}), (SECTION, values)),
        legs=tuple(legs),
        features=tuple(features),
        notes=tuple(notes),
        optional=tuple(optional),
    )


def _id_column(schema: RelationSchema, tenant: str) -> tuple[str, str]:
    """(id column, id scope): a one-column key; a (tenant, x) key; else by name."""
    for index in schema.indexes:
        if index.primary or index.unique:
            columns = [c for c in index.columns if c]
            if len(columns) == 1 and len(index.columns) == 1:
                return columns[0], "relation"
            if len(columns) == 2 and tenant in columns:
                return next(c for c in columns if c != tenant), "tenant"
    return pick([c.name for c in schema.columns], ID_NAMES), "relation"


def _dense_index_notes(schema: RelationSchema, embedding: str) -> list[str]:
    indexes = [i for i in schema.indexes_on(embedding) if i.method in ("hnsw", "ivfflat")]
    if any(any("cosine" in o for o in i.opclasses) for i in indexes):
        return []
    if indexes:
        ops = ", ".join(o for i in indexes for o in i.opclasses)
        return [
            f"the vector index on {embedding} uses {ops}: cosine (<=>) queries cannot use it "
            "and scan exactly"
        ]
    if schema.kind in ("table", "partitioned table", "materialized view"):
        return [
            f"no HNSW cosine index on {embedding}: the dense leg scans exactly. The server "
            f"never creates one; its owner can: CREATE INDEX ON {schema.qualified} USING hnsw "
            f"({embedding} vector_cosine_ops)"
        ]
    return []


def _keyword_notes(schema: RelationSchema, text: str, tsvector: str, ts_config: str) -> list[str]:
    if tsvector:
        if not any(i.method == "gin" for i in schema.indexes_on(tsvector)):
            return [f"the keyword leg reads {tsvector}; it has no GIN index"]
        return []
    expression = any(
        i.method == "gin" and "to_tsvector" in i.definition and text in i.definition
        for i in schema.indexes
    )
    if expression:
        return [f"keyword leg: to_tsvector('{ts_config}', {text}) per query, matched by an index"]
    return [
        f"no tsvector column: the keyword leg computes to_tsvector('{ts_config}', {text}) per "
        "query, a scan of every row (see bench/RESULTS.md for its cost); an expression index "
        f"makes it cheap: CREATE INDEX ON {schema.qualified} USING gin "
        f"(to_tsvector('{ts_config}', {text}))"
    ]


def _tenant_sample(
    conn: psycopg.Connection[tuple[Any, ...]], schema: RelationSchema, column: Column
) -> list[str]:
    statement = sql.SQL(
        "SELECT DISTINCT {c}::text FROM {t} WHERE {c} IS NOT NULL ORDER BY 1 LIMIT 20"
    ).format(c=sql.Identifier(column.name), t=table_identifier(schema.qualified))
    return [str(row[0]) for row in conn.execute(statement).fetchall()]


def read_suggestions(
    settings: PostgresSettings,
    *,
    password: str | None,
    relation: str | None,
    encoder_dimension: int | None,
    limit: int = 5,
) -> list[Suggestion]:
    """Connect read-only and suggest a map for ``relation`` (or for the readable
    relations that hold a vector column, up to ``limit``). Blocking: run in a thread."""
    if not settings.conninfo:
        raise ConfigError(
            "backend.postgres.conninfo is empty",
            remedy="Set it in the settings file passed with --config.",
        )
    kwargs: dict[str, Any] = {
        "connect_timeout": max(2, int(settings.connect_timeout_s)),
        "application_name": "latence-retrieval-mcp suggest",
        "options": f"-c statement_timeout={int(settings.statement_timeout_s * 1000)} "
        "-c default_transaction_read_only=on",
    }
    if password:
        kwargs["password"] = password
    try:
        with psycopg.connect(settings.conninfo, **kwargs) as conn:
            if relation:
                names = [relation]
            else:
                found = list_relations(conn)
                with_vectors = [n for n, _, vector in found if vector]
                names = (with_vectors or [n for n, _, _ in found])[:limit]
            out = []
            for name in names:
                schema = read_relation(conn, name)
                if schema is None:
                    raise ConfigError(
                        f"Postgres relation {name!r} does not exist or is not readable"
                    )
                suggestion = suggest_relation(
                    schema,
                    encoder_dimension=encoder_dimension,
                    ts_config=settings.text_search_config,
                )
                tenant = dict(suggestion.tables)[SECTION].get("tenant")
                column = schema.column(str(tenant)) if tenant else None
                if column is not None:
                    suggestion = suggest_relation(
                        schema,
                        encoder_dimension=encoder_dimension,
                        ts_config=settings.text_search_config,
                        tenant_values=_tenant_sample(conn, schema, column),
                    )
                out.append(suggestion)
            return out
    except psycopg.Error as exc:
        raise map_pg_error("read the schema", exc) from exc
