"""What a Postgres relation looks like, read from ``pg_catalog``: columns, indexes, grants.

Both the mapped-relation adapter (which checks an operator's map against it at open)
and ``config suggest`` (which proposes a map from it) read a relation through
``read_relation``. Only catalog queries run here; nothing is written and no lock
beyond ``AccessShareLock`` on catalog rows is taken.
"""

from __future__ import annotations

from typing import Any

import attrs
import psycopg

#: pg_class.relkind -> what we call it.
RELATION_KINDS = {
    "r": "table",
    "p": "partitioned table",
    "v": "view",
    "m": "materialized view",
    "f": "foreign table",
}

#: Type families by pg_type.typname, for coercing values in Python before they are
#: bound (so a malformed id is "not found", never a Postgres cast error).
INTEGER_TYPES = frozenset({"int2", "int4", "int8"})
FLOAT_TYPES = frozenset({"float4", "float8", "numeric"})
TEXT_TYPES = frozenset({"text", "varchar", "bpchar", "name", "citext"})
VECTOR_TYPES = frozenset({"vector", "halfvec"})


@attrs.frozen
class Column:
    name: str
    type: str  # format_type(): "vector(384)", "character varying(64)", "jsonb"
    typname: str  # pg_type.typname: "vector", "varchar", "jsonb"
    not_null: bool = False

    @property
    def dimension(self) -> int | None:
        """The declared dimension of a vector/halfvec column; None when unconstrained."""
        if self.typname not in VECTOR_TYPES or "(" not in self.type:
            return None
        return int(self.type[self.type.index("(") + 1 : self.type.index(")")])


@attrs.frozen
class Index:
    name: str
    method: str  # btree, gin, gist, hnsw, ivfflat, …
    columns: tuple[str, ...]  # "" for an expression
    opclasses: tuple[str, ...]
    unique: bool
    primary: bool
    definition: str  # pg_get_indexdef()


@attrs.frozen
class RelationSchema:
    schema: str
    name: str
    kind: str  # a value of RELATION_KINDS
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...] = ()
    privileges: frozenset[str] = frozenset()  # what current_user may do: SELECT, INSERT, …

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def column_names(self) -> str:
        return ", ".join(c.name for c in self.columns) or "none"

    def indexes_on(self, column: str) -> list[Index]:
        return [i for i in self.indexes if column in i.columns]


_WRITE_PRIVILEGES = ("INSERT", "UPDATE", "DELETE", "TRUNCATE")
PRIVILEGES = ("SELECT", *_WRITE_PRIVILEGES)


def write_privileges(schema: RelationSchema) -> list[str]:
    """The write privileges the connected role holds on the relation (should be none)."""
    return [p for p in _WRITE_PRIVILEGES if p in schema.privileges]


Cursor = psycopg.Cursor[tuple[Any, ...]] | psycopg.Connection[tuple[Any, ...]]


def read_relation(conn: Cursor, name: str) -> RelationSchema | None:
    """The relation ``name`` resolves to on this connection's search_path, or None."""
    found = conn.execute(
        "SELECT c.oid, n.nspname, c.relname, c.relkind FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(%s)",
        (name,),
    ).fetchone()
    if found is None or found[3] not in RELATION_KINDS:
        return None
    oid, schema, relname, relkind = found
    columns = tuple(
        Column(name=str(n), type=str(t), typname=str(tn), not_null=bool(nn))
        for n, t, tn, nn in conn.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typname, a.attnotnull "
            "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            (oid,),
        ).fetchall()
    )
    indexes = tuple(
        Index(
            name=str(iname),
            method=str(method),
            columns=tuple(str(c) for c in cols),
            opclasses=tuple(str(o) for o in ops),
            unique=bool(unique),
            primary=bool(primary),
            definition=str(definition),
        )
        for iname, method, unique, primary, definition, cols, ops in conn.execute(
            "SELECT i.relname, am.amname, x.indisunique, x.indisprimary, "
            "pg_get_indexdef(x.indexrelid), "
            "ARRAY(SELECT coalesce(a.attname, '') FROM unnest(x.indkey::int2[]) "
            "  WITH ORDINALITY AS k(attnum, ord) LEFT JOIN pg_attribute a "
            "  ON a.attrelid = x.indrelid AND a.attnum = k.attnum ORDER BY k.ord), "
            "ARRAY(SELECT o.opcname FROM unnest(x.indclass::oid[]) WITH ORDINALITY AS k(oc, ord) "
            "  JOIN pg_opclass o ON o.oid = k.oc ORDER BY k.ord) "
            "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_am am ON am.oid = i.relam WHERE x.indrelid = %s ORDER BY i.relname",
            (oid,),
        ).fetchall()
    )
    privileges = frozenset(
        p
        for p in PRIVILEGES
        if conn.execute("SELECT has_table_privilege(%s, %s)", (oid, p)).fetchone() == (True,)
    )
    return RelationSchema(
        schema=str(schema),
        name=str(relname),
        kind=RELATION_KINDS[str(relkind)],
        columns=columns,
        indexes=indexes,
        privileges=privileges,
    )


def list_relations(conn: Cursor) -> list[tuple[str, str, bool]]:
    """(schema.name, kind, holds a vector column) of every table and view the role may
    read, outside the system schemas, those holding a vector column first."""
    rows = conn.execute(
        "SELECT n.nspname || '.' || c.relname, c.relkind, "
        "EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "  AND t.typname IN ('vector', 'halfvec')) AS has_vector "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg_toast%%' AND NOT c.relispartition "
        "AND has_table_privilege(c.oid, 'SELECT') "
        "ORDER BY has_vector DESC, 1"
    ).fetchall()
    return [(str(name), RELATION_KINDS[str(kind)], bool(vec)) for name, kind, vec in rows]


def vector_extension_version(conn: Cursor) -> tuple[int, ...] | None:
    found = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if found is None:
        return None
    parts = []
    for part in str(found[0]).split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)
