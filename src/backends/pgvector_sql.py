"""The SQL of the Postgres + pgvector adapter: schema, queries and filter clauses.

Pure functions building ``psycopg.sql`` objects (identifiers quoted by psycopg, values
always bound as parameters), kept apart from the adapter so the statements can be
read in one place. Nothing here touches a connection.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from retrieval_mcp.backends.protocol import Scalar, SearchFilter
from retrieval_mcp.records import Chunk, Provenance

TABLE_COMMENT_PREFIX = "latence-retrieval-mcp chunks; encoder="

#: Columns read back into a Chunk, in this order (see ``row_to_chunk``).
CHUNK_COLUMNS = (
    "id",
    "source",
    "doc_id",
    "ordinal",
    "title",
    "text",
    "char_start",
    "char_end",
    "doc_chunks",
    "uri",
    "prev_id",
    "next_id",
    "doc_hash",
    "flags",
    "metadata",
)
_WRITE_COLUMNS = (*CHUNK_COLUMNS, "embedding", "staged")


def table_identifier(table: str) -> sql.Identifier:
    return sql.Identifier(*table.split("."))


def _index_name(table: str, suffix: str) -> sql.Identifier:
    return sql.Identifier(f"{table.split('.')[-1]}_{suffix}")


def schema_statements(table: str, dimension: int, ts_config: str) -> list[sql.Composed]:
    """Idempotent DDL: the chunks table, its HNSW (cosine), GIN and lookup indexes."""
    t = table_identifier(table)
    config = sql.Literal(ts_config)
    return [
        sql.SQL(
            """CREATE TABLE IF NOT EXISTS {t} (
    id text PRIMARY KEY,
    source text NOT NULL,
    doc_id text NOT NULL,
    ordinal integer NOT NULL,
    title text NOT NULL DEFAULT '',
    text text NOT NULL,
    char_start integer NOT NULL DEFAULT 0,
    char_end integer NOT NULL DEFAULT 0,
    doc_chunks integer NOT NULL DEFAULT 0,
    uri text NOT NULL DEFAULT '',
    prev_id text,
    next_id text,
    doc_hash text NOT NULL DEFAULT '',
    flags text[],
    metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,
    staged boolean NOT NULL DEFAULT false,
    embedding vector({dim}) NOT NULL,
    tsv tsvector GENERATED ALWAYS AS
        (to_tsvector({config}::regconfig, title || ' ' || text)) STORED
)"""
        ).format(t=t, dim=sql.Literal(dimension), config=config),
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {i} ON {t} USING hnsw (embedding vector_cosine_ops)"
        ).format(i=_index_name(table, "embedding_hnsw"), t=t),
        sql.SQL("CREATE INDEX IF NOT EXISTS {i} ON {t} USING gin (tsv)").format(
            i=_index_name(table, "tsv_gin"), t=t
        ),
        sql.SQL("CREATE INDEX IF NOT EXISTS {i} ON {t} USING gin (metadata jsonb_path_ops)").format(
            i=_index_name(table, "metadata_gin"), t=t
        ),
        sql.SQL("CREATE INDEX IF NOT EXISTS {i} ON {t} (source, doc_id, ordinal)").format(
            i=_index_name(table, "source_doc"), t=t
        ),
    ]


def add_staged_column(table: str) -> sql.Composed:
    """For a table created before documents were swapped (ADR 0038): a no-op when present."""
    return sql.SQL(
        "ALTER TABLE {t} ADD COLUMN IF NOT EXISTS staged boolean NOT NULL DEFAULT false"
    ).format(t=table_identifier(table))


def comment_statement(table: str, encoder: str) -> sql.Composed:
    return sql.SQL("COMMENT ON TABLE {t} IS {c}").format(
        t=table_identifier(table), c=sql.Literal(TABLE_COMMENT_PREFIX + encoder)
    )


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form; cast with ``::vector`` in the statement."""
    return "[" + ",".join(f"{x:.8g}" for x in vector) + "]"


def parse_vector(text: str) -> list[float]:
    values: list[float] = json.loads(text)
    return [float(x) for x in values]


class Where:
    """A conjunction of clauses with their parameters, built up by the adapter."""

    def __init__(self) -> None:
        self.clauses: list[sql.Composable] = []
        self.params: list[Any] = []

    def add(self, clause: str | sql.Composable, *params: Any) -> Where:
        self.clauses.append(sql.SQL(clause) if isinstance(clause, str) else clause)
        self.params.extend(params)
        return self

    def sources(self, sources: Sequence[str]) -> Where:
        if sources:
            self.add("source = ANY(%s)", list(sources))
        return self

    def metadata(self, flt: SearchFilter | None) -> Where:
        """Each key matches one of its values, by JSONB containment (GIN-indexed)."""
        if not flt:
            return self
        for key, values in flt.equals.items():
            alternatives = [sql.SQL("metadata @> %s") for _ in values]
            self.add(sql.SQL("({})").format(sql.SQL(" OR ").join(alternatives)))
            self.params.extend(Jsonb(_nested(key, value)) for value in values)
        return self

    def visible(self) -> Where:
        """Published rows only: a staged version is hidden until it is published."""
        return self.add("NOT staged")

    def sql(self) -> sql.Composable:
        if not self.clauses:
            return sql.SQL("TRUE")
        return sql.SQL(" AND ").join(self.clauses)


def _nested(key: str, value: Scalar) -> dict[str, Any]:
    """{"a.b": v} -> {"a": {"b": v}}: dotted filter keys reach into nested metadata."""
    out: Any = value
    for part in reversed(key.split(".")):
        out = {part: out}
    nested: dict[str, Any] = out
    return nested


def select_columns() -> sql.Composable:
    return sql.SQL(", ").join(sql.Identifier(c) for c in CHUNK_COLUMNS)


def dense_query(table: str, where: Where) -> sql.Composed:
    """Params: vector, *where.params, vector, limit."""
    return sql.SQL(
        "SELECT {cols}, 1 - (embedding <=> %s::vector) AS score FROM {t} WHERE {w} "
        "ORDER BY embedding <=> %s::vector LIMIT %s"
    ).format(cols=select_columns(), t=table_identifier(table), w=where.sql())


def keyword_query(table: str, where: Where) -> sql.Composed:
    """Params: ts config, text, *where.params, limit."""
    return sql.SQL(
        "SELECT {cols}, ts_rank_cd(tsv, q) AS score "
        "FROM {t}, websearch_to_tsquery(%s::regconfig, %s) AS q "
        "WHERE tsv @@ q AND {w} ORDER BY score DESC, id LIMIT %s"
    ).format(cols=select_columns(), t=table_identifier(table), w=where.sql())


def select_where(table: str, where: Where, *, order: str = "") -> sql.Composed:
    query = sql.SQL("SELECT {cols} FROM {t} WHERE {w}").format(
        cols=select_columns(), t=table_identifier(table), w=where.sql()
    )
    return query + sql.SQL(f" ORDER BY {order}") if order else query


def upsert_statement(table: str) -> sql.Composed:
    """Insert or overwrite by id. A row already published stays published when staged
    again (a replayed or repeated stage of the current version must not hide it)."""
    t = table_identifier(table)
    updates = sql.SQL(", ").join(
        sql.SQL("staged = c.staged AND EXCLUDED.staged")
        if c == "staged"
        else sql.SQL("{c} = EXCLUDED.{c}").format(c=sql.Identifier(c))
        for c in _WRITE_COLUMNS[1:]
    )
    return sql.SQL(
        "INSERT INTO {t} AS c ({cols}) VALUES ({vals}) ON CONFLICT (id) DO UPDATE SET {updates}"
    ).format(
        t=t,
        cols=sql.SQL(", ").join(sql.Identifier(c) for c in _WRITE_COLUMNS),
        vals=sql.SQL(", ").join(
            sql.SQL("%s::vector" if c == "embedding" else "%s") for c in _WRITE_COLUMNS
        ),
        updates=updates,
    )


def upsert_row(chunk: Chunk, vector: Sequence[float], *, staged: bool) -> tuple[Any, ...]:
    p = chunk.provenance
    return (
        chunk.id,
        p.source,
        p.doc_id,
        p.ordinal,
        p.title,
        chunk.text,
        p.char_start,
        p.char_end,
        p.doc_chunks,
        p.uri,
        p.prev_id,
        p.next_id,
        chunk.doc_hash,
        list(chunk.flags) if chunk.flags is not None else None,
        Jsonb(dict(chunk.metadata)),
        vector_literal(vector),
        staged,
    )


def row_to_chunk(row: Sequence[Any]) -> Chunk:
    """A row of ``CHUNK_COLUMNS`` (extra trailing columns are ignored)."""
    (
        cid,
        source,
        doc_id,
        ordinal,
        title,
        text,
        start,
        end,
        chunks,
        uri,
        prev,
        nxt,
        doc_hash,
        flags,
        meta,
    ) = row[: len(CHUNK_COLUMNS)]
    metadata: Mapping[str, Any] = meta if isinstance(meta, Mapping) else {}
    return Chunk(
        id=str(cid),
        text=str(text),
        provenance=Provenance(
            source=str(source),
            doc_id=str(doc_id),
            title=str(title),
            ordinal=int(ordinal),
            char_start=int(start),
            char_end=int(end),
            doc_chunks=int(chunks),
            uri=str(uri),
            prev_id=prev,
            next_id=nxt,
        ),
        doc_hash=str(doc_hash),
        flags=tuple(str(f) for f in flags) if flags is not None else None,
        metadata=dict(metadata),
    )


def sql_select_vectors(table: str, where: Where) -> sql.Composed:
    return sql.SQL("SELECT id, embedding::text FROM {t} WHERE {w}").format(
        t=table_identifier(table), w=where.sql()
    )


def count_by_source(table: str, where: Where) -> sql.Composed:
    return sql.SQL(
        "SELECT source, count(*) FROM {t} WHERE {w} GROUP BY source ORDER BY source"
    ).format(t=table_identifier(table), w=where.sql())


def document_versions(table: str) -> sql.Composed:
    """Params: source. Rows: doc_id, doc_hash, doc_chunks expected, chunks stored,
    whether any of them is staged."""
    return sql.SQL(
        "SELECT doc_id, doc_hash, max(doc_chunks), count(*), bool_or(staged) FROM {t} "
        "WHERE source = %s GROUP BY doc_id, doc_hash"
    ).format(t=table_identifier(table))


def delete_other_versions(table: str) -> sql.Composed:
    """Params: doc ids, doc hashes (parallel arrays), source. Every row of those
    documents but the given version, staged or not."""
    return sql.SQL(
        "DELETE FROM {t} AS c USING unnest(%s::text[], %s::text[]) AS v(doc_id, doc_hash) "
        "WHERE c.source = %s AND c.doc_id = v.doc_id AND c.doc_hash <> v.doc_hash"
    ).format(t=table_identifier(table))


def unstage_versions(table: str) -> sql.Composed:
    """Params: doc ids, doc hashes (parallel arrays), source."""
    return sql.SQL(
        "UPDATE {t} AS c SET staged = false "
        "FROM unnest(%s::text[], %s::text[]) AS v(doc_id, doc_hash) "
        "WHERE c.source = %s AND c.doc_id = v.doc_id AND c.doc_hash = v.doc_hash AND c.staged"
    ).format(t=table_identifier(table))


def rename_document(table: str) -> sql.Composed:
    """Params: new doc id, uri, source, old doc id, doc hash."""
    return sql.SQL(
        "UPDATE {t} SET doc_id = %s, uri = %s WHERE source = %s AND doc_id = %s AND doc_hash = %s"
    ).format(t=table_identifier(table))


def delete_documents(table: str) -> sql.Composed:
    """Params: source, doc ids."""
    return sql.SQL("DELETE FROM {t} WHERE source = %s AND doc_id = ANY(%s)").format(
        t=table_identifier(table)
    )


def analyze(table: str) -> sql.Composed:
    return sql.SQL("ANALYZE {t}").format(t=table_identifier(table))
