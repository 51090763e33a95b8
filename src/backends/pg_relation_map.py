"""An operator's map of an existing Postgres relation, checked against the catalog, and
the read-only SQL that follows from it.

``RelationMap.resolve`` takes ``[backend.postgres.map]`` and the relation as
``pg_catalog`` describes it, refuses what cannot work (a column that is not there, an
embedding of another dimension, an ordinal that is not an integer) naming the column,
and keeps each mapped column's type so values are coerced in Python and bound with a
cast to the column's own type: indexes stay usable and a malformed id is simply "not
found". Every statement is a ``SELECT``; identifiers are quoted by psycopg, values are
always parameters. The tenant clause comes first in every ``WHERE``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

import attrs
from psycopg import sql
from psycopg.types.json import Jsonb

from retrieval_mcp.backends.pg_catalog import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    TEXT_TYPES,
    VECTOR_TYPES,
    Column,
    RelationSchema,
)
from retrieval_mcp.backends.pgvector_sql import Where, table_identifier
from retrieval_mcp.backends.protocol import Scalar, SearchFilter
from retrieval_mcp.errors import ConfigError, InvalidArgument
from retrieval_mcp.records import Chunk, Provenance
from retrieval_mcp.settings import PostgresMapSettings

_INTEGER = re.compile(r"^-?\d{1,19}$")
_JSON_TYPES = frozenset({"jsonb", "json"})
_TIME_TYPES = frozenset({"timestamptz", "timestamp", "date"})
_SCORE = sql.Identifier("lrm_score")  # our alias, unlikely to shadow a mapped column
_TSQUERY = sql.Identifier("lrm_q")


def _coerce(column: Column, value: object) -> object | None:
    """``value`` as the Python type psycopg binds for ``column``; None when it cannot be
    one (the caller decides whether that is "no match" or an error)."""
    family = column.typname
    text = str(value)
    if family in INTEGER_TYPES:
        if isinstance(value, bool):
            return None
        if isinstance(value, int) or _INTEGER.match(text):
            number = int(text)
            return number if -(2**63) <= number < 2**63 else None
        return None
    if family in FLOAT_TYPES:
        if isinstance(value, bool):
            return None
        try:
            return float(text)
        except ValueError:
            return None
    if family == "uuid":
        try:
            return uuid.UUID(text)
        except ValueError:
            return None
    if family == "bool":
        if isinstance(value, bool):
            return value
        return {"true": True, "false": False}.get(text.lower())
    if family in _TIME_TYPES:
        if isinstance(value, bool | int):
            return None
        try:
            return (
                dt.date.fromisoformat(text) if family == "date" else dt.datetime.fromisoformat(text)
            )
        except ValueError:
            return None
    return text


def json_safe(value: Any) -> Any:
    """A column value as something the envelope can serialise."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return str(value)


@attrs.frozen
class RelationMap:
    """A map that fits its relation. ``None`` columns are not mapped."""

    relation: RelationSchema
    id: Column
    text: Column
    id_scope: str = "relation"
    embedding: Column | None = None
    dimension: int | None = None  # declared; None = unconstrained (checked on a sample)
    keyword: bool = True
    tsvector: Column | None = None
    ts_config: str = "english"
    title: Column | None = None
    doc_id: Column | None = None
    ordinal: Column | None = None
    uri: Column | None = None
    metadata: Column | None = None
    metadata_columns: tuple[Column, ...] = ()
    tenant: Column | None = None
    tenants: tuple[str, ...] = ()  # readable tenant values; () = every value
    source_name: str = ""

    # -- building ----------------------------------------------------------------------

    @classmethod
    def resolve(
        cls,
        settings: PostgresMapSettings,
        relation: RelationSchema,
        *,
        dimension: int | None,
        ts_config: str,
    ) -> RelationMap:
        """Check ``settings`` against ``relation``; ``dimension`` is the encoder's."""
        where = f"Postgres {relation.kind} {relation.qualified}"

        def column(role: str, name: str, *, required: bool = False) -> Column | None:
            if not name:
                if required:
                    raise ConfigError(
                        f"backend.postgres.map.{role} is empty",
                        remedy=f"Name the column of {relation.qualified} that holds the {role}.",
                    )
                return None
            found = relation.column(name)
            if found is None:
                raise ConfigError(
                    f"{where} has no column {name!r} (map.{role}); "
                    f"its columns are: {relation.column_names()}",
                    remedy=f"Set backend.postgres.map.{role} to one of those, or '' for none.",
                )
            return found

        id_column = column("id", settings.id, required=True)
        text = column("text", settings.text, required=True)
        assert id_column is not None and text is not None
        embedding = column("embedding", settings.embedding)
        declared: int | None = None
        if embedding is not None:
            if embedding.typname not in VECTOR_TYPES:
                raise ConfigError(
                    f"{where}: column {embedding.name!r} is {embedding.type}, not a pgvector "
                    "vector or halfvec",
                    remedy="Map an embedding column of type vector(d) or halfvec(d), or set "
                    "map.embedding = '' to run without the dense leg.",
                )
            declared = embedding.dimension
            if declared is not None and dimension is not None and declared != dimension:
                raise dimension_mismatch(relation, embedding.name, declared, dimension)
        tsvector = column("tsvector", settings.tsvector)
        if tsvector is not None and tsvector.typname != "tsvector":
            raise ConfigError(
                f"{where}: column {tsvector.name!r} is {tsvector.type}, not tsvector",
                remedy="Map a tsvector column, or set map.tsvector = '' to compute "
                "to_tsvector(text) per query.",
            )
        ordinal = column("ordinal", settings.ordinal)
        if ordinal is not None and ordinal.typname not in INTEGER_TYPES:
            raise ConfigError(
                f"{where}: column {ordinal.name!r} (map.ordinal) is {ordinal.type}; "
                "reading order needs an integer column",
                remedy="Map an integer ordinal column, or set map.ordinal = '' (no neighbours).",
            )
        metadata = column("metadata", settings.metadata)
        if metadata is not None and metadata.typname not in _JSON_TYPES:
            raise ConfigError(
                f"{where}: column {metadata.name!r} (map.metadata) is {metadata.type}, not jsonb",
                remedy="Map a jsonb column as map.metadata, or list scalar columns in "
                "map.metadata_columns.",
            )
        extra = tuple(
            c
            for name in dict.fromkeys(settings.metadata_columns)
            if (c := column("metadata_columns", name)) is not None
        )
        tenant = column("tenant", settings.tenant)
        if settings.tenants and tenant is None:
            raise ConfigError(
                "backend.postgres.map.tenants is set but map.tenant names no column",
                remedy="Name the tenant column in map.tenant.",
            )
        if settings.id_scope == "tenant" and tenant is None:
            raise ConfigError(
                "backend.postgres.map.id_scope = 'tenant' needs map.tenant",
                remedy="Name the tenant column, or set id_scope = 'relation'.",
            )
        if tenant is not None:
            for value in settings.tenants:
                if _coerce(tenant, value) is None:
                    raise ConfigError(
                        f"backend.postgres.map.tenants: {value!r} cannot be a value of "
                        f"column {tenant.name!r} ({tenant.type})"
                    )
        return cls(
            relation=relation,
            id=id_column,
            text=text,
            id_scope=settings.id_scope,
            embedding=embedding,
            dimension=declared,
            keyword=settings.keyword,
            tsvector=tsvector,
            ts_config=ts_config,
            title=column("title", settings.title),
            doc_id=column("doc_id", settings.doc_id),
            ordinal=ordinal,
            uri=column("uri", settings.uri),
            metadata=metadata,
            metadata_columns=extra,
            tenant=tenant,
            tenants=tuple(dict.fromkeys(settings.tenants)),
            source_name=settings.source_name or relation.name,
        )

    # -- what it offers ----------------------------------------------------------------

    @property
    def has_reading_order(self) -> bool:
        return self.doc_id is not None and self.ordinal is not None

    @property
    def filterable(self) -> bool:
        return self.metadata is not None or bool(self.metadata_columns)

    @property
    def keyword_source(self) -> str:
        """What the keyword leg searches, for status and suggestions."""
        if self.tsvector is not None:
            return f"tsvector column {self.tsvector.name}"
        return f"to_tsvector('{self.ts_config}', {self.text.name}) per query"

    # -- scope -------------------------------------------------------------------------

    def scope(self, requested: Sequence[str]) -> tuple[str, ...] | None:
        """The sources a statement may read: () = every one; None = none at all."""
        if self.tenant is None:
            if requested and self.source_name not in requested:
                return None
            return ()
        if not self.tenants:
            return tuple(requested)
        if not requested:
            return self.tenants
        allowed = tuple(s for s in requested if s in self.tenants)
        return allowed or None

    def where(self, scope: Sequence[str]) -> Where:
        """A WHERE that starts with the tenant clause: the sources in ``scope``."""
        where = Where()
        if self.tenant is None:
            return where
        column = sql.Identifier(self.tenant.name)
        if not scope:
            return where.add(sql.SQL("{} IS NOT NULL").format(column))
        values = [v for s in scope if (v := _coerce(self.tenant, s)) is not None]
        if not values:
            return where.add("FALSE")
        return where.add(self._any(self.tenant), values)

    def _any(self, column: Column) -> sql.Composed:
        return sql.SQL("{} = ANY(%s::{}[])").format(
            sql.Identifier(column.name), sql.SQL(column.type)
        )

    # -- ids ---------------------------------------------------------------------------

    def chunk_id(self, raw_id: object, tenant: object) -> str:
        if self.id_scope == "tenant":
            return f"{quote(str(tenant), safe='')}:{raw_id}"
        return str(raw_id)

    def split_id(self, chunk_id: str) -> tuple[str | None, object] | None:
        """(tenant or None, the id column's value) of a chunk id; None if it cannot exist."""
        tenant: str | None = None
        raw = chunk_id
        if self.id_scope == "tenant":
            if ":" not in chunk_id:
                return None
            prefix, raw = chunk_id.split(":", 1)
            tenant = unquote(prefix)
            assert self.tenant is not None
            if _coerce(self.tenant, tenant) is None:
                return None
        value = _coerce(self.id, raw)
        return None if value is None else (tenant, value)

    def ids_clause(self, chunk_ids: Sequence[str]) -> tuple[sql.Composable, list[Any]] | None:
        """A clause matching exactly these chunks (None: none of them can exist)."""
        parts = [p for i in dict.fromkeys(chunk_ids) if (p := self.split_id(i)) is not None]
        if not parts:
            return None
        if self.id.typname in TEXT_TYPES or self.id.typname in INTEGER_TYPES | {"uuid"}:
            id_cast = sql.SQL(self.id.type)
            id_column: sql.Composable = sql.Identifier(self.id.name)
            raw = [value for _, value in parts]
        else:  # other id types are compared as text (no index, but correct)
            id_cast = sql.SQL("text")
            id_column = sql.SQL("{}::text").format(sql.Identifier(self.id.name))
            raw = [str(value) for _, value in parts]
        if self.id_scope != "tenant":
            return sql.SQL("{} = ANY(%s::{}[])").format(id_column, id_cast), [raw]
        assert self.tenant is not None
        tenants = [_coerce(self.tenant, t) for t, _ in parts]
        clause = sql.SQL("({}, {}) IN (SELECT * FROM unnest(%s::{}[], %s::{}[]))").format(
            sql.Identifier(self.tenant.name),
            id_column,
            sql.SQL(self.tenant.type),
            id_cast,
        )
        return clause, [tenants, raw]

    # -- statements --------------------------------------------------------------------

    @property
    def _relation(self) -> sql.Composable:
        return table_identifier(self.relation.qualified)

    def _selected(self) -> list[Column]:
        columns = [self.id, self.text]
        for optional in (self.tenant, self.title, self.doc_id, self.ordinal, self.uri):
            if optional is not None:
                columns.append(optional)
        if self.metadata is not None:
            columns.append(self.metadata)
        columns += self.metadata_columns
        return list({c.name: c for c in columns}.values())

    def select_list(self) -> sql.Composable:
        return sql.SQL(", ").join(sql.Identifier(c.name) for c in self._selected())

    def select_where(self, where: Where, *, order_by_ordinal: bool = False) -> sql.Composed:
        statement = sql.SQL("SELECT {cols} FROM {t} WHERE {w}").format(
            cols=self.select_list(), t=self._relation, w=where.sql()
        )
        if order_by_ordinal and self.ordinal is not None:
            statement += sql.SQL(" ORDER BY {}").format(sql.Identifier(self.ordinal.name))
        return statement

    def _vector_cast(self) -> sql.Composable:
        assert self.embedding is not None
        return sql.SQL(self.embedding.typname)

    def dense_query(self, where: Where) -> sql.Composed:
        """Params: vector, *where.params, vector, limit. Rows without an embedding are
        skipped (the HNSW index holds none of them)."""
        assert self.embedding is not None
        emb = sql.Identifier(self.embedding.name)
        return sql.SQL(
            "SELECT {cols}, 1 - ({emb} <=> %s::{cast}) AS {score} FROM {t} "
            "WHERE {w} AND {emb} IS NOT NULL ORDER BY {emb} <=> %s::{cast} LIMIT %s"
        ).format(
            cols=self.select_list(),
            emb=emb,
            cast=self._vector_cast(),
            score=_SCORE,
            t=self._relation,
            w=where.sql(),
        )

    def _tsvector(self) -> sql.Composable:
        if self.tsvector is not None:
            return sql.Identifier(self.tsvector.name)
        # A literal config (not a parameter), so an expression index built as
        # to_tsvector('<config>', <text>) matches this expression.
        return sql.SQL("to_tsvector({}::regconfig, {})").format(
            sql.Literal(self.ts_config), sql.Identifier(self.text.name)
        )

    def keyword_query(self, where: Where) -> sql.Composed:
        """Params: text, *where.params, limit."""
        tsv = self._tsvector()
        return sql.SQL(
            "SELECT {cols}, ts_rank_cd({tsv}, {q}) AS {score} "
            "FROM {t}, websearch_to_tsquery({config}::regconfig, %s) AS {q} "
            "WHERE {w} AND {tsv} @@ {q} ORDER BY {score} DESC, {id} LIMIT %s"
        ).format(
            cols=self.select_list(),
            tsv=tsv,
            q=_TSQUERY,
            score=_SCORE,
            t=self._relation,
            config=sql.Literal(self.ts_config),
            w=where.sql(),
            id=sql.Identifier(self.id.name),
        )

    def vectors_query(self, where: Where) -> sql.Composed:
        assert self.embedding is not None
        tenant = sql.Identifier(self.tenant.name) if self.tenant is not None else sql.SQL("NULL")
        return sql.SQL(
            "SELECT {id}, {tenant}, {emb}::text FROM {t} WHERE {w} AND {emb} IS NOT NULL"
        ).format(
            id=sql.Identifier(self.id.name),
            tenant=tenant,
            emb=sql.Identifier(self.embedding.name),
            t=self._relation,
            w=where.sql(),
        )

    def count_by_source(self, where: Where) -> sql.Composed:
        if self.tenant is None:
            return sql.SQL("SELECT count(*) FROM {t} WHERE {w}").format(
                t=self._relation, w=where.sql()
            )
        return sql.SQL(
            "SELECT {tenant}::text, count(*) FROM {t} WHERE {w} GROUP BY 1 ORDER BY 1"
        ).format(tenant=sql.Identifier(self.tenant.name), t=self._relation, w=where.sql())

    def sample_dimension(self) -> sql.Composed:
        assert self.embedding is not None
        emb = sql.Identifier(self.embedding.name)
        return sql.SQL(
            "SELECT vector_dims({emb}::vector) FROM {t} WHERE {emb} IS NOT NULL LIMIT 1"
        ).format(emb=emb, t=self._relation)

    # -- clauses -----------------------------------------------------------------------

    def neighbours_where(self, chunk: Chunk, before: int, after: int) -> Where | None:
        """The window around ``chunk`` in its document (without it); None: no such chunk."""
        assert self.doc_id is not None and self.ordinal is not None
        split = self.split_id(chunk.id)
        p = chunk.provenance
        if split is None or self.scope((p.source,)) is None:
            return None
        doc = _coerce(self.doc_id, p.doc_id)
        if doc is None:
            return None
        where = self.where((p.source,) if self.tenant is not None else ())
        where.add(
            sql.SQL("{} = %s::{}").format(
                sql.Identifier(self.doc_id.name), sql.SQL(self.doc_id.type)
            ),
            doc,
        )
        where.add(
            sql.SQL("{} BETWEEN %s AND %s").format(sql.Identifier(self.ordinal.name)),
            p.ordinal - max(0, before),
            p.ordinal + max(0, after),
        )
        return self.exclude(where, chunk.id)

    def exclude(self, where: Where, chunk_id: str) -> Where:
        """``where`` without the chunk ``chunk_id`` (unchanged if no such chunk can exist)."""
        found = self.ids_clause([chunk_id])
        if found is not None:
            clause, params = found
            where.add(sql.SQL("NOT ({})").format(clause), *params)
        return where

    def filter(self, where: Where, flt: SearchFilter | None) -> Where:
        """Each key matches one of its values: a metadata column by equality (cast to
        its type), else the jsonb metadata by containment; other keys are refused."""
        if not flt:
            return where
        by_name = {c.name: c for c in self.metadata_columns}
        for key, values in flt.equals.items():
            column = by_name.get(key)
            if column is not None:
                coerced = [_coerce(column, v) for v in values]
                if any(v is None for v in coerced):
                    raise InvalidArgument(
                        f"filter {key!r}: {list(values)!r} do not all fit column {key} "
                        f"({column.type})",
                        remedy=f"Pass values of the column's type ({column.type}).",
                    )
                where.add(self._any(column), coerced)
            elif self.metadata is not None:
                alternatives = [
                    sql.SQL("{} @> %s").format(sql.Identifier(self.metadata.name)) for _ in values
                ]
                where.add(sql.SQL("({})").format(sql.SQL(" OR ").join(alternatives)))
                where.params.extend(Jsonb(_nested(key, v)) for v in values)
            else:
                allowed = ", ".join(by_name) or "none"
                raise InvalidArgument(
                    f"filter key {key!r} is not a filterable column of this relation",
                    remedy=f"Filter on one of: {allowed}.",
                )
        return where

    # -- rows --------------------------------------------------------------------------

    def row_to_chunk(self, row: Sequence[Any]) -> Chunk:
        """A row of ``select_list()`` (extra trailing columns are ignored)."""
        record = dict(zip((c.name for c in self._selected()), row, strict=False))
        tenant = record.get(self.tenant.name) if self.tenant is not None else None
        chunk_id = self.chunk_id(record[self.id.name], tenant)
        text = _text(record.get(self.text.name))
        metadata: dict[str, Any] = {}
        if self.metadata is not None:
            nested = record.get(self.metadata.name)
            if isinstance(nested, Mapping):
                metadata.update(json_safe(nested))
        for column in self.metadata_columns:
            value = record.get(column.name)
            if value is not None:
                metadata[column.name] = json_safe(value)
        ordinal = record.get(self.ordinal.name) if self.ordinal is not None else None
        return Chunk(
            id=chunk_id,
            text=text,
            provenance=Provenance(
                source=_text(tenant) if self.tenant is not None else self.source_name,
                doc_id=(_text(record.get(self.doc_id.name)) if self.doc_id else "") or chunk_id,
                title=_text(record.get(self.title.name)) if self.title else "",
                ordinal=int(ordinal) if ordinal is not None else 0,
                char_start=0,
                char_end=len(text),
                doc_chunks=0,
                uri=_text(record.get(self.uri.name)) if self.uri else "",
            ),
            doc_hash="",
            flags=None,  # not written by our ingest: screened when read
            metadata=metadata,
        )


def dimension_mismatch(
    relation: RelationSchema, column: str, found: int, expected: int
) -> ConfigError:
    return ConfigError(
        f"Postgres {relation.kind} {relation.qualified}: embedding column {column!r} holds "
        f"{found}-d vectors, but the configured encoder makes {expected}-d ones",
        remedy="Configure the encoder that built this column ([encoder] kind = "
        "'openai-compatible' with its model), or map another embedding column.",
    )


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _nested(key: str, value: Scalar) -> dict[str, Any]:
    out: Any = value
    for part in reversed(key.split(".")):
        out = {part: out}
    nested: dict[str, Any] = out
    return nested
