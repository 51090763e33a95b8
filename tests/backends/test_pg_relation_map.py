"""The mapped-relation SQL builder without a database: what a map may name, how ids
round-trip, and how values that cannot fit a column are handled."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.backends.pg_catalog import Column, RelationSchema
from retrieval_mcp.backends.pg_relation_map import RelationMap
from retrieval_mcp.backends.pgvector_mapped import ef_search_for
from retrieval_mcp.backends.protocol import SearchFilter
from retrieval_mcp.errors import ConfigError, InvalidArgument
from retrieval_mcp.settings import PostgresMapSettings

MEMORY = RelationSchema(
    schema="public",
    name="memory",
    kind="table",
    columns=(
        Column("namespace", "text", "text", True),
        Column("key", "text", "text", True),
        Column("value", "text", "text", True),
        Column("n", "integer", "int4"),
        Column("created_at", "timestamp with time zone", "timestamptz"),
        Column("embedding", "vector(384)", "vector"),
        Column("tsv", "tsvector", "tsvector"),
    ),
)


def resolve(**mapping: object) -> RelationMap:
    settings = PostgresMapSettings.model_validate(
        {"relation": "memory", "id": "key", "text": "value", **mapping}
    )
    return RelationMap.resolve(settings, MEMORY, dimension=384, ts_config="english")


@given(tenant=st.text(min_size=1, max_size=20), key=st.text(min_size=1, max_size=40))
def test_tenant_scoped_ids_round_trip(tenant: str, key: str) -> None:
    m = resolve(tenant="namespace", id_scope="tenant")
    assert m.split_id(m.chunk_id(key, tenant)) == (tenant, key)


def test_ids_that_cannot_exist_are_not_queried() -> None:
    m = resolve(id="n", tenant="namespace", id_scope="tenant")
    assert m.split_id("no-separator") is None
    assert m.split_id("acme:not-a-number") is None
    assert m.ids_clause(["acme:x", "nope"]) is None
    found = m.ids_clause(["acme:12", "acme:12", "b%3Ac:7"])
    assert found is not None and found[1] == [["acme", "b:c"], [12, 7]]


def test_a_map_that_does_not_fit_is_refused_naming_the_column() -> None:
    with pytest.raises(ConfigError, match=r"no column 'body'.*namespace, key, value"):
        resolve(text="body")
    with pytest.raises(ConfigError, match=r"'n' .* not a pgvector"):
        resolve(embedding="n")
    with pytest.raises(ConfigError, match=r"holds 384-d vectors.*1024-d"):
        RelationMap.resolve(
            PostgresMapSettings(relation="memory", id="key", text="value", embedding="embedding"),
            MEMORY,
            dimension=1024,
            ts_config="english",
        )
    with pytest.raises(ConfigError, match="integer column"):
        resolve(doc_id="namespace", ordinal="created_at")
    with pytest.raises(ConfigError, match="not tsvector"):
        resolve(tsvector="value")
    with pytest.raises(ConfigError, match=r"needs map\.tenant"):
        resolve(id_scope="tenant")
    with pytest.raises(ConfigError, match="cannot be a value"):
        resolve(tenant="n", tenants=["acme"])


def test_the_keyword_leg_computes_the_tsvector_unless_one_is_mapped() -> None:
    computed = resolve().keyword_query(resolve().where(())).as_string(None)
    assert "to_tsvector('english'::regconfig, \"value\")" in computed
    stored = resolve(tsvector="tsv")
    assert '"tsv" @@ "lrm_q"' in stored.keyword_query(stored.where(())).as_string(None)


def test_the_tenant_clause_comes_first_and_scope_narrows() -> None:
    m = resolve(tenant="namespace", tenants=["a", "b"], metadata_columns=["n"])
    assert m.scope(()) == ("a", "b")
    assert m.scope(("b", "z")) == ("b",)
    assert m.scope(("z",)) is None
    where = m.filter(m.where(("a",)), SearchFilter(equals={"n": (3,)}))
    text = where.sql().as_string(None)
    assert text.index('"namespace"') < text.index('"n" = ANY')
    with pytest.raises(InvalidArgument, match="do not all fit column n"):
        m.filter(m.where(()), SearchFilter(equals={"n": ("three",)}))
    with pytest.raises(InvalidArgument, match="not a filterable column"):
        m.filter(m.where(()), SearchFilter(equals={"team": ("x",)}))
    unscoped = resolve(tenant="namespace")
    assert unscoped.scope(()) == ()
    assert "IS NOT NULL" in unscoped.where(()).sql().as_string(None)


@given(configured=st.integers(1, 1000), limit=st.integers(1, 5000))
def test_ef_search_is_never_below_the_candidates_asked_for(configured: int, limit: int) -> None:
    ef = ef_search_for(configured, limit)
    assert ef >= min(limit, 1000) and ef >= configured and ef <= 1000
