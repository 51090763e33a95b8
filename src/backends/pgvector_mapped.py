"""Postgres: an existing table or view, read as it is and never written.

``[backend.postgres.map]`` names the relation and which column holds what (see
``pg_relation_map``); ``open`` reads the relation from ``pg_catalog`` and refuses a map
that cannot work, naming the column. Legs and features follow from the map: ``dense``
with an embedding column (``<=>``, ``hnsw.ef_search`` set per transaction and never
below the candidates asked for; rows without an embedding are skipped), ``bm25`` by
full-text search over a ``tsvector`` column or ``to_tsvector`` computed per query,
``neighbors`` with a document id and an ordinal, ``filter`` with jsonb or scalar
metadata columns. The tenant column's values are the sources: every statement starts
with the tenant clause, bounded by ``map.tenants`` and narrowed by the caller's scope.

Read-only by construction: the adapter only ever runs ``SELECT``; its sessions set
``default_transaction_read_only``; it creates no extension, index, table or comment.
The role should hold ``SELECT`` alone (design/adapter-guide.md shows the grants);
write privileges it holds anyway are logged and shown in ``index_status``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeVar

import psycopg
import structlog
import trio
from psycopg_pool import ConnectionPool, PoolTimeout

from retrieval_mcp.backends import pgvector_sql as q
from retrieval_mcp.backends.pg_catalog import (
    Index,
    RelationSchema,
    list_relations,
    read_relation,
    vector_extension_version,
    write_privileges,
)
from retrieval_mcp.backends.pg_relation_map import RelationMap, dimension_mismatch
from retrieval_mcp.backends.pgvector import connection_lost, map_pg_error
from retrieval_mcp.backends.protocol import (
    BackendStatus,
    Capability,
    LegQuery,
    SearchFilter,
    SourceInfo,
)
from retrieval_mcp.encoders.embedding_provider import (
    EmbeddingProvider,
    MiniLMLoader,
    QueryVectors,
    open_embedder,
)
from retrieval_mcp.errors import (
    BackendError,
    BackendUnavailable,
    CapabilityMissing,
    ConfigError,
    InvalidArgument,
    RetrievalMCPError,
)
from retrieval_mcp.records import Candidate, Chunk
from retrieval_mcp.settings import PostgresSettings, Settings

log = structlog.get_logger(__name__)

T = TypeVar("T")
VIEW_INDEXES = "a view: its base tables' indexes apply (not visible here)"
Cursor = psycopg.Cursor[tuple[Any, ...]]
Pool = ConnectionPool[psycopg.Connection[tuple[Any, ...]]]


def map_mapped_error(action: str, exc: Exception, relation: str) -> RetrievalMCPError:
    """psycopg errors of a mapped relation: what changed under us is the operator's to fix."""
    state = exc.sqlstate if isinstance(exc, psycopg.Error) else None
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if state in ("42P01", "42703", "42501"):
        return BackendError(
            f"Postgres relation {relation} no longer matches backend.postgres.map ({action}): "
            f"{message}",
            remedy="Check the relation, its columns and the role's SELECT grant, or run "
            "`latence-retrieval-mcp config suggest` to propose a new map.",
        )
    if state is not None and state.startswith("22"):
        return InvalidArgument(
            f"a value did not fit its column ({action}): {message}",
            remedy="Pass filter values of the column's type.",
        )
    return map_pg_error(action, exc)


class MappedPgBackend:
    """Owns its connection pool from ``open`` until ``aclose``; uses, never closes, its
    embedding provider (``open_pgvector_mapped`` owns both)."""

    name = "postgres"

    def __init__(
        self,
        settings: PostgresSettings,
        embedder: EmbeddingProvider | None,
        *,
        password: str | None = None,
        query_cache_size: int = 1024,
    ) -> None:
        if not settings.conninfo:
            raise ConfigError("backend.kind is 'postgres' but backend.postgres.conninfo is empty")
        if settings.map.embedding and embedder is None:
            raise ConfigError(
                "backend.postgres.map.embedding is set: the dense leg needs an encoder"
            )
        self._settings = settings
        self._relation = settings.map.relation
        self._embedder = embedder if settings.map.embedding else None
        self._queries = QueryVectors(self._embedder, query_cache_size) if self._embedder else None
        timeout_ms = int(settings.statement_timeout_s * 1000)
        self._connect_kwargs: dict[str, Any] = {
            "connect_timeout": max(2, int(settings.connect_timeout_s)),
            "application_name": "latence-retrieval-mcp",
            # Belt and braces: a session that cannot write, whatever the role may do.
            "options": f"-c statement_timeout={timeout_ms} -c default_transaction_read_only=on",
        }
        if password:
            self._connect_kwargs["password"] = password
        self._pool: Pool | None = None
        self._map: RelationMap | None = None
        self._iterative_scan = False
        self._dense_index = ""
        self._keyword_index = ""
        self._role_writes: list[str] = []
        self.retries = 0

    # -- lifecycle -------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        settings: PostgresSettings,
        embedder: EmbeddingProvider | None,
        *,
        password: str | None = None,
        query_cache_size: int = 1024,
    ) -> MappedPgBackend:
        """Connect, check the map against the catalog, open the pool. Errors are ours,
        with remedies."""
        backend = cls(settings, embedder, password=password, query_cache_size=query_cache_size)
        await trio.to_thread.run_sync(backend._open_sync)
        m = backend._map
        if m is not None and m.keyword and not backend._keyword_index:
            log.warning(
                "postgres_keyword_leg_scans",
                relation=backend._relation,
                keyword=m.keyword_source,
                remedy="a tsvector column or an expression GIN index makes the keyword leg "
                "cheap (bench/RESULTS.md: about 0.7 ms per row per query without one)",
            )
        if backend._role_writes:
            log.warning(
                "postgres_role_can_write",
                relation=backend._relation,
                privileges=backend._role_writes,
                remedy="grant the server's role SELECT only (design/adapter-guide.md)",
            )
        return backend

    def _open_sync(self) -> None:
        try:
            with psycopg.connect(self._settings.conninfo, **self._connect_kwargs) as conn:
                self._map = self._resolve(conn)
                conn.rollback()
        except psycopg.Error as exc:
            raise map_mapped_error("connect", exc, self._relation) from exc
        pool: Pool = ConnectionPool(
            self._settings.conninfo,
            min_size=self._settings.pool_min_size,
            max_size=self._settings.pool_max_size,
            kwargs=self._connect_kwargs,
            timeout=self._settings.connect_timeout_s,
            name=f"latence-mapped-{self._relation}",
            open=False,
        )
        try:
            pool.open(wait=True, timeout=self._settings.connect_timeout_s)
        except PoolTimeout as exc:
            pool.close()
            raise map_pg_error("open the connection pool", exc) from exc
        self._pool = pool

    def _resolve(self, conn: psycopg.Connection[tuple[Any, ...]]) -> RelationMap:
        schema = read_relation(conn, self._relation)
        if schema is None:
            readable = ", ".join(name for name, _, _ in list_relations(conn)[:12]) or "none"
            raise ConfigError(
                f"Postgres relation {self._relation!r} does not exist or this role cannot "
                f"see it (readable relations: {readable})",
                remedy="Set backend.postgres.map.relation to one of those, or grant the "
                "role USAGE on the schema and SELECT on the relation.",
            )
        if "SELECT" not in schema.privileges:
            raise ConfigError(
                f"this role may not SELECT from Postgres {schema.kind} {schema.qualified}",
                remedy=f"GRANT SELECT ON {schema.qualified} TO <the server's role>;",
            )
        self._role_writes = write_privileges(schema)
        dimension = self._embedder.dimension if self._embedder is not None else None
        mapped = RelationMap.resolve(
            self._settings.map,
            schema,
            dimension=dimension,
            ts_config=self._settings.text_search_config,
        )
        self._keyword_index = _keyword_index(schema, mapped)
        if mapped.embedding is not None:
            assert dimension is not None
            if mapped.dimension is None:
                # An unconstrained vector column: look at one stored vector.
                found = conn.execute(mapped.sample_dimension()).fetchone()
                if found is not None and int(found[0]) != dimension:
                    raise dimension_mismatch(
                        schema, mapped.embedding.name, int(found[0]), dimension
                    )
            self._dense_index = (
                VIEW_INDEXES
                if schema.kind == "view"
                else _dense_index(schema.indexes_on(mapped.embedding.name))
            )
            version = vector_extension_version(conn)
            self._iterative_scan = version is not None and version >= (0, 8)
        return mapped

    async def aclose(self) -> None:
        """Close the pool (shielded: in-flight reads finish first). Safe to call twice."""
        pool, self._pool = self._pool, None
        if pool is not None:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(pool.close)

    # -- plumbing --------------------------------------------------------------------

    def _open_map(self) -> tuple[Pool, RelationMap]:
        if self._pool is None or self._map is None:
            raise BackendUnavailable("the Postgres backend is closed")
        return self._pool, self._map

    async def _read(self, action: str, work: Callable[[Cursor], T]) -> T:
        pool, _ = self._open_map()
        # Abandoned on cancel: a late leg is dropped at once; the thread finishes alone.
        return await trio.to_thread.run_sync(
            self._read_sync, pool, action, work, abandon_on_cancel=True
        )

    def _read_sync(self, pool: Pool, action: str, work: Callable[[Cursor], T]) -> T:
        for attempt in (1, 2):
            try:
                with pool.connection() as conn, conn.cursor() as cur:
                    return work(cur)
            except psycopg.Error as exc:
                if attempt == 1 and connection_lost(exc):
                    self.retries += 1
                    pool.check()
                    continue
                raise map_mapped_error(action, exc, self._relation) from exc
            except PoolTimeout as exc:
                raise map_pg_error(action, exc) from exc
        raise AssertionError("unreachable")

    # -- reads -----------------------------------------------------------------------

    def capabilities(self) -> frozenset[Capability]:
        m = self._map
        if m is None:
            return frozenset()
        caps: set[Capability] = set()
        if m.embedding is not None:
            caps |= {Capability.DENSE, Capability.SIMILAR, Capability.VECTORS}
        if m.keyword:
            caps.add(Capability.BM25)
        if m.filterable:
            caps.add(Capability.FILTER)
        if m.has_reading_order:
            caps.add(Capability.NEIGHBORS)
        return frozenset(caps)

    async def search(self, query: LegQuery) -> list[Candidate]:
        _, m = self._open_map()
        if query.leg not in self.capabilities() or query.leg not in (
            Capability.DENSE,
            Capability.BM25,
        ):
            raise CapabilityMissing(f"{self.name} does not declare the {query.leg} leg")
        scope = m.scope(query.sources)
        if scope is None:
            return []
        where = m.filter(m.where(scope), query.filter)
        if query.leg == Capability.DENSE:
            assert self._queries is not None
            vector = q.vector_literal(await self._queries.vector(query.text))
            return await self._dense(vector, where, query.limit, "search (dense)")
        statement = m.keyword_query(where)
        params = [query.text, *where.params, query.limit]

        def run(cur: Cursor) -> list[Candidate]:
            cur.execute(statement, params)
            return self._candidates(m, cur.fetchall())

        return await self._read("search (keyword)", run)

    async def _dense(self, vector: str, where: q.Where, limit: int, action: str) -> list[Candidate]:
        _, m = self._open_map()
        statement = m.dense_query(where)
        params = [vector, *where.params, vector, limit]
        ef_search = str(ef_search_for(self._settings.hnsw_ef_search, limit))
        iterative = self._iterative_scan

        def run(cur: Cursor) -> list[Candidate]:
            # Transaction-local (SET LOCAL): the pooled connection keeps no setting.
            cur.execute("SELECT set_config('hnsw.ef_search', %s, true)", (ef_search,))
            if iterative:
                cur.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
            cur.execute(statement, params)
            return self._candidates(m, cur.fetchall())

        return await self._read(action, run)

    @staticmethod
    def _candidates(m: RelationMap, rows: Sequence[Sequence[Any]]) -> list[Candidate]:
        return [
            Candidate(chunk=m.row_to_chunk(row), score=float(row[-1]), rank=rank)
            for rank, row in enumerate(rows, start=1)
        ]

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        _, m = self._open_map()
        scope = m.scope(())
        found = m.ids_clause(ids)
        if found is None or scope is None:
            return []
        clause, params = found
        where = m.where(scope).add(clause, *params)
        statement = m.select_where(where)

        def run(cur: Cursor) -> list[Chunk]:
            cur.execute(statement, where.params)
            return [m.row_to_chunk(row) for row in cur.fetchall()]

        by_id = {c.id: c for c in await self._read("fetch", run)}
        return [by_id[i] for i in ids if i in by_id]

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        _, m = self._open_map()
        if not m.has_reading_order:
            raise CapabilityMissing(
                f"{self.name}: map.doc_id and map.ordinal are not both set, so chunks have "
                "no reading order"
            )
        where = m.neighbours_where(chunk, before, after)
        if where is None:
            return []
        statement = m.select_where(where, order_by_ordinal=True)

        def run(cur: Cursor) -> list[Chunk]:
            cur.execute(statement, where.params)
            return [m.row_to_chunk(row) for row in cur.fetchall()]

        return await self._read("read neighbours", run)

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        _, m = self._open_map()
        scope = m.scope(())
        found = m.ids_clause(ids) if m.embedding is not None else None
        if found is None or scope is None:
            return {}
        clause, params = found
        where = m.where(scope).add(clause, *params)
        statement = m.vectors_query(where)

        def run(cur: Cursor) -> dict[str, list[float]]:
            return {
                m.chunk_id(raw, tenant): _unit(q.parse_vector(str(text)))
                for raw, tenant, text in cur.execute(statement, where.params).fetchall()
            }

        return await self._read("read vectors", run)

    async def similar(
        self,
        chunk_id: str,
        *,
        limit: int,
        sources: tuple[str, ...] = (),
        filter: SearchFilter | None = None,
    ) -> list[Candidate]:
        _, m = self._open_map()
        anchor = (await self.vectors([chunk_id])).get(chunk_id)
        scope = m.scope(sources)
        if anchor is None or scope is None:
            return []
        where = m.exclude(m.filter(m.where(scope), filter), chunk_id)
        return await self._dense(q.vector_literal(anchor), where, limit, "find similar")

    async def sources(self) -> list[SourceInfo]:
        _, m = self._open_map()
        scope = m.scope(())
        where = m.where(scope or ())
        statement = m.count_by_source(where)

        def run(cur: Cursor) -> list[SourceInfo]:
            rows = cur.execute(statement, where.params).fetchall()
            if m.tenant is None:
                return [SourceInfo(name=m.source_name, chunks=int(rows[0][0]))]
            return [SourceInfo(name=str(s), chunks=int(n)) for s, n in rows]

        return await self._read("list sources", run)

    async def status(self) -> BackendStatus:
        pool, m = self._pool, self._map
        if pool is None or m is None:
            return BackendStatus(ready=False, backend=self.name, chunks=0, detail="closed")
        chunks = sum(s.chunks for s in await self.sources())
        stats = pool.get_stats()
        return BackendStatus(
            ready=True,
            backend=self.name,
            chunks=chunks,
            detail=f"{m.relation.kind} {m.relation.qualified} (mapped, read-only)",
            extra={
                "mapped_relation": m.relation.qualified,
                "dense": (
                    {"column": m.embedding.name, "index": self._dense_index or "none (exact scan)"}
                    if m.embedding is not None
                    else None
                ),
                "keyword": m.keyword_source if m.keyword else None,
                "keyword_index": self._keyword_index or "none (every row, every query)",
                "tenant_column": m.tenant.name if m.tenant is not None else None,
                "tenants": list(m.tenants),
                "role_write_privileges": self._role_writes,
                "pool": {
                    k: stats.get(k, 0) for k in ("pool_size", "pool_available", "requests_waiting")
                },
                "read_retries": self.retries,
                "hnsw_ef_search": self._settings.hnsw_ef_search,
                "hnsw_iterative_scan": self._iterative_scan,
                "query_cache": self._queries.statistics() if self._queries else {},
            },
        )


def ef_search_for(configured: int, limit: int) -> int:
    """``hnsw.ef_search`` for one query: never below the candidates asked for (HNSW would
    return fewer than ``limit``), within pgvector's bound of 1000."""
    return min(1000, max(configured, limit))


def _keyword_index(schema: RelationSchema, m: RelationMap) -> str:
    """The GIN index the keyword leg's tsvector can use ("" if none is visible)."""
    if schema.kind == "view":
        return VIEW_INDEXES
    if m.tsvector is not None:
        found = [i for i in schema.indexes_on(m.tsvector.name) if i.method == "gin"]
    else:
        found = [
            i
            for i in schema.indexes
            if i.method == "gin"
            and "to_tsvector" in i.definition
            and m.text.name in i.definition
            and f"'{m.ts_config}'" in i.definition
        ]
    return found[0].name if found else ""


def _dense_index(indexes: list[Index]) -> str:
    """The index ``<=>`` can use on the embedding column ("" if none)."""
    for index in indexes:
        if index.method in ("hnsw", "ivfflat") and any("cosine" in o for o in index.opclasses):
            return f"{index.name} ({index.method}, cosine)"
    return ""


def _unit(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector] if norm > 0 else vector


@asynccontextmanager
async def open_pgvector_mapped(
    settings: Settings, load_minilm: MiniLMLoader
) -> AsyncIterator[MappedPgBackend]:
    """Connect to the configured Postgres, check ``map`` against the relation, yield the
    adapter; on exit close its pool, then its encoder (shielded). The encoder is opened
    only when an embedding column is mapped."""
    pg = settings.backend.postgres
    password = pg.password.read("backend.postgres.password")
    async with AsyncExitStack() as stack:
        embedder = (
            await stack.enter_async_context(open_embedder(settings.encoder, load_minilm))
            if pg.map.embedding
            else None
        )
        backend = await MappedPgBackend.open(
            pg,
            embedder,
            password=password,
            query_cache_size=settings.encoder.query_cache_size,
        )
        stack.push_async_callback(backend.aclose)
        yield backend
