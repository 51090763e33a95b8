"""Postgres + pgvector: dense (HNSW, cosine), keyword (full-text search), filters, ingest.

One table of chunks (see ``pgvector_sql.schema_statements``): provenance columns,
``metadata jsonb``, ``embedding vector(d)`` under an HNSW cosine index, and a generated
``tsvector`` under a GIN index. Dense search orders by ``<=>`` with ``hnsw.ef_search``
set per transaction; keyword search ranks ``websearch_to_tsquery`` matches with
``ts_rank_cd``; filters are JSONB containment; neighbours walk ``(source, doc_id,
ordinal)``. Every statement carries the source scope: the requested sources, cut to
the configured namespace (``backend.postgres.sources``), so nothing is read or written
outside it.

A replaced document is swapped whole (ADR 0038): ``stage`` writes its new rows with
``staged = true``, which every read excludes, and ``publish`` deletes the other versions
and un-stages the new rows in one transaction. Each read is one statement, so MVCC
gives it the old version or the new one, never a mix; a crash before the publish
leaves the staged rows hidden, and ``document_hashes`` reports their document as not
stored whole, so the next ingest (or the WAL's replay) replaces them.

psycopg's async mode needs asyncio, so blocking calls run in Trio worker threads over
a ``psycopg_pool.ConnectionPool``. Reads may be abandoned when their leg is cancelled
(the thread finishes alone and returns its connection); writes never are. A read that
loses its connection (SQLSTATE 08xxx, 57P01–57P03, or a dead socket) is retried once
on a fresh connection. psycopg errors become ours in ``map_pg_error``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeVar

import psycopg
import trio
from psycopg_pool import ConnectionPool, PoolTimeout

from retrieval_mcp.backends import pgvector_sql as q
from retrieval_mcp.backends.chunk_payload import indexed_text
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
    BackendAuthFailed,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    CapabilityMissing,
    ConfigError,
    RetrievalMCPError,
)
from retrieval_mcp.records import Candidate, Chunk
from retrieval_mcp.settings import PostgresSettings, Settings

T = TypeVar("T")

_CONNECTION_LOST_STATES = ("57P01", "57P02", "57P03")


def connection_lost(exc: psycopg.Error) -> bool:
    """A genuine connection loss (retried once on a fresh connection), not a refusal."""
    state = exc.sqlstate
    if state is None:
        # libpq-level failures (socket closed, server gone) carry no SQLSTATE.
        return isinstance(exc, psycopg.OperationalError)
    return state.startswith("08") or state in _CONNECTION_LOST_STATES


def map_pg_error(action: str, exc: Exception) -> RetrievalMCPError:
    """One psycopg (or pool) failure as our error, with a remedy for the operator."""
    if isinstance(exc, PoolTimeout):
        return BackendUnavailable(
            f"Postgres: no connection could be had to {action}: {exc}",
            remedy="Check that Postgres is running and reachable (backend.postgres.conninfo), "
            "or raise backend.postgres.pool_max_size.",
        )
    if not isinstance(exc, psycopg.Error):
        return BackendError(f"Postgres adapter failed to {action}: {type(exc).__name__}: {exc}")
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    state = exc.sqlstate or ""
    lowered = message.lower()
    if (
        state.startswith("28")
        or "password authentication failed" in lowered
        or ("role" in lowered and "does not exist" in lowered)
    ):
        return BackendAuthFailed(f"Postgres refused the credentials to {action}: {message}")
    if state == "57014":
        return BackendTimeout(
            f"Postgres statement to {action} ran past backend.postgres.statement_timeout_s: "
            f"{message}"
        )
    if state == "3D000":
        return ConfigError(
            f"Postgres: {message}",
            remedy="Create the database, or fix the dbname in backend.postgres.conninfo.",
        )
    if state in ("42P01", "42703"):
        return BackendError(
            f"Postgres table does not match what this adapter expects ({action}): {message}",
            remedy="Check backend.postgres.table; let the server create its own table, "
            "or migrate yours to the documented schema (design/adapter-guide.md).",
        )
    if connection_lost(exc):
        return BackendUnavailable(
            f"Postgres connection failed to {action}: {message}",
            remedy="Check that Postgres is running and reachable at backend.postgres.conninfo, "
            "then retry.",
        )
    return BackendError(f"Postgres failed to {action}: {message}")


class PgvectorBackend:
    """Owns its connection pool from ``open`` until ``aclose``; uses, never closes, its
    embedding provider (``open_pgvector`` owns both)."""

    name = "postgres"
    #: Replacements are staged and published (``runner`` and ``durable_ingest`` ask).
    swaps_documents = True

    def __init__(
        self,
        settings: PostgresSettings,
        embedder: EmbeddingProvider,
        *,
        password: str | None = None,
        query_cache_size: int = 1024,
    ) -> None:
        if not settings.conninfo:
            raise ConfigError("backend.kind is 'postgres' but backend.postgres.conninfo is empty")
        self._settings = settings
        self._table = settings.table
        self._embedder = embedder
        self._queries = QueryVectors(embedder, query_cache_size)
        self._namespace = tuple(dict.fromkeys(settings.sources))
        self._connect_kwargs: dict[str, Any] = {
            "connect_timeout": max(2, int(settings.connect_timeout_s)),
            "application_name": "latence-retrieval-mcp",
            "options": f"-c statement_timeout={int(settings.statement_timeout_s * 1000)}",
        }
        if password:
            self._connect_kwargs["password"] = password
        self._pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] | None = None
        self.retries = 0
        self._iterative_scan = False  # pgvector >= 0.8: filtered HNSW scans keep going

    # -- lifecycle -------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        settings: PostgresSettings,
        embedder: EmbeddingProvider,
        *,
        password: str | None = None,
        query_cache_size: int = 1024,
    ) -> PgvectorBackend:
        """Connect, create or check the table, open the pool. Errors are ours, with remedies."""
        backend = cls(settings, embedder, password=password, query_cache_size=query_cache_size)
        await trio.to_thread.run_sync(backend._open_sync)
        return backend

    def _open_sync(self) -> None:
        # One plain connection first: a refused connection or a bad role fails here with
        # libpq's own message, instead of as a pool timeout.
        try:
            with psycopg.connect(self._settings.conninfo, **self._connect_kwargs) as conn:
                self._ensure_schema(conn)
        except psycopg.Error as exc:
            raise map_pg_error("connect", exc) from exc
        pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] = ConnectionPool(
            self._settings.conninfo,
            min_size=self._settings.pool_min_size,
            max_size=self._settings.pool_max_size,
            kwargs=self._connect_kwargs,
            timeout=self._settings.connect_timeout_s,
            name=f"latence-{self._table}",
            open=False,
        )
        try:
            pool.open(wait=True, timeout=self._settings.connect_timeout_s)
        except PoolTimeout as exc:
            pool.close()
            raise map_pg_error("open the connection pool", exc) from exc
        self._pool = pool

    def _ensure_schema(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        table = self._table
        exists = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
        if exists is None or exists[0] is None:
            installed = conn.execute(
                "SELECT 1 FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            if installed is None:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            for statement in q.schema_statements(
                table, self._embedder.dimension, self._settings.text_search_config
            ):
                conn.execute(statement)
            conn.execute(q.comment_statement(table, self._embedder.name))
            conn.commit()
        else:
            self._check_table(conn)
            if not _has_column(conn, table, "staged"):
                conn.execute(q.add_staged_column(table))  # a table from before ADR 0038
                conn.commit()
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        found = version.fetchone()
        self._iterative_scan = found is not None and _version(str(found[0])) >= (0, 8)

    def _check_table(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        table = self._table
        row = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attname = 'embedding' AND NOT attisdropped",
            (table,),
        ).fetchone()
        expected = f"vector({self._embedder.dimension})"
        if row is None or row[0] != expected:
            raise ConfigError(
                f"Postgres table {table} has embedding {row[0] if row else 'missing'}, "
                f"but encoder {self._embedder.name} makes {expected}",
                remedy="Point backend.postgres.table at a new table, or configure the encoder "
                "that built this one.",
            )
        comment = conn.execute("SELECT obj_description(%s::regclass, 'pg_class')", (table,))
        found = comment.fetchone()
        text = found[0] if found else None
        if text and text.startswith(q.TABLE_COMMENT_PREFIX):
            built_by = text[len(q.TABLE_COMMENT_PREFIX) :]
            if built_by != self._embedder.name:
                raise ConfigError(
                    f"Postgres table {table} was built with encoder {built_by!r}, "
                    f"not {self._embedder.name!r}",
                    remedy="Use a new table, or configure the encoder that built this one.",
                )

    async def aclose(self) -> None:
        """Close the pool (shielded: in-flight reads finish first). Safe to call twice."""
        pool, self._pool = self._pool, None
        if pool is not None:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(pool.close)

    # -- plumbing --------------------------------------------------------------

    def _require_pool(self) -> ConnectionPool[psycopg.Connection[tuple[Any, ...]]]:
        if self._pool is None:
            raise BackendUnavailable("the Postgres backend is closed")
        return self._pool

    async def _read(self, action: str, work: Callable[[psycopg.Cursor[tuple[Any, ...]]], T]) -> T:
        pool = self._require_pool()
        # Abandoned on cancel: a late leg is dropped at once; the thread finishes alone
        # and the pool gets its connection back.
        return await trio.to_thread.run_sync(
            self._read_sync, pool, action, work, abandon_on_cancel=True
        )

    def _read_sync(
        self,
        pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]],
        action: str,
        work: Callable[[psycopg.Cursor[tuple[Any, ...]]], T],
    ) -> T:
        for attempt in (1, 2):
            try:
                with pool.connection() as conn, conn.cursor() as cur:
                    return work(cur)
            except psycopg.Error as exc:
                if attempt == 1 and connection_lost(exc):
                    # The pool drops the broken connection; make it also test the idle
                    # ones (a server restart kills them all) before the one retry.
                    self.retries += 1
                    pool.check()
                    continue
                raise map_pg_error(action, exc) from exc
            except PoolTimeout as exc:
                raise map_pg_error(action, exc) from exc
        raise AssertionError("unreachable")

    async def _write(
        self, action: str, work: Callable[[psycopg.Cursor[tuple[Any, ...]]], object]
    ) -> None:
        pool = self._require_pool()

        def run() -> None:
            try:
                with pool.connection() as conn, conn.cursor() as cur:
                    work(cur)
            except (psycopg.Error, PoolTimeout) as exc:
                raise map_pg_error(action, exc) from exc

        await trio.to_thread.run_sync(run)  # writes are never abandoned half-way

    def _scope(self, requested: Sequence[str]) -> tuple[str, ...] | None:
        """The sources a statement may touch: () = all; None = none (nothing to do)."""
        if not self._namespace:
            return tuple(requested)
        if not requested:
            return self._namespace
        allowed = tuple(s for s in requested if s in self._namespace)
        return allowed or None

    def _check_writable(self, source: str) -> None:
        if self._namespace and source not in self._namespace:
            raise ConfigError(
                f"source {source!r} is outside this backend's namespace "
                f"({', '.join(self._namespace)})",
                remedy="Ingest under one of the sources in backend.postgres.sources.",
            )

    # -- reads -----------------------------------------------------------------

    def capabilities(self) -> frozenset[Capability]:
        return frozenset(
            {
                Capability.DENSE,
                Capability.BM25,
                Capability.FILTER,
                Capability.NEIGHBORS,
                Capability.SIMILAR,
                Capability.VECTORS,
                Capability.INGEST,
            }
        )

    async def search(self, query: LegQuery) -> list[Candidate]:
        self._require_pool()
        scope = self._scope(query.sources)
        if scope is None:
            return []
        where = q.Where().visible().sources(scope).metadata(query.filter)
        if query.leg == Capability.DENSE:
            vector = q.vector_literal(await self._queries.vector(query.text))
            return await self._dense(vector, where, query.limit, "search (dense)")
        if query.leg == Capability.BM25:
            statement = q.keyword_query(self._table, where)
            params = [self._settings.text_search_config, query.text, *where.params, query.limit]

            def run(cur: psycopg.Cursor[tuple[Any, ...]]) -> list[Candidate]:
                cur.execute(statement, params)
                return _candidates(cur.fetchall())

            return await self._read("search (keyword)", run)
        raise CapabilityMissing(f"{self.name} does not declare the {query.leg} leg")

    async def _dense(self, vector: str, where: q.Where, limit: int, action: str) -> list[Candidate]:
        statement = q.dense_query(self._table, where)
        params = [vector, *where.params, vector, limit]
        ef_search = str(min(1000, max(self._settings.hnsw_ef_search, limit)))

        iterative = self._iterative_scan

        def run(cur: psycopg.Cursor[tuple[Any, ...]]) -> list[Candidate]:
            # Transaction-local: the pooled connection keeps no setting.
            cur.execute("SELECT set_config('hnsw.ef_search', %s, true)", (ef_search,))
            if iterative:
                # Filtered scans continue past ef_search until `limit` rows match.
                cur.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
            cur.execute(statement, params)
            return _candidates(cur.fetchall())

        return await self._read(action, run)

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        self._require_pool()
        scope = self._scope(())
        unique = list(dict.fromkeys(ids))
        if not unique or scope is None:
            return []
        where = q.Where().visible().add("id = ANY(%s)", unique).sources(scope)
        statement = q.select_where(self._table, where)

        def run(cur: psycopg.Cursor[tuple[Any, ...]]) -> list[Chunk]:
            cur.execute(statement, where.params)
            return [q.row_to_chunk(row) for row in cur.fetchall()]

        by_id = {c.id: c for c in await self._read("fetch", run)}
        return [by_id[i] for i in ids if i in by_id]

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        self._require_pool()
        p = chunk.provenance
        if self._scope((p.source,)) is None:
            return []
        where = (
            q.Where()
            .visible()
            .add("source = %s", p.source)
            .add("doc_id = %s", p.doc_id)
            .add("ordinal BETWEEN %s AND %s", p.ordinal - max(0, before), p.ordinal + max(0, after))
            .add("id <> %s", chunk.id)
        )
        if chunk.doc_hash:
            where.add("doc_hash = %s", chunk.doc_hash)  # never a window across two versions
        statement = q.select_where(self._table, where, order="ordinal")

        def run(cur: psycopg.Cursor[tuple[Any, ...]]) -> list[Chunk]:
            cur.execute(statement, where.params)
            return [q.row_to_chunk(row) for row in cur.fetchall()]

        return await self._read("read neighbours", run)

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        self._require_pool()
        scope = self._scope(())
        unique = list(dict.fromkeys(ids))
        if not unique or scope is None:
            return {}
        where = q.Where().visible().add("id = ANY(%s)", unique).sources(scope)
        statement = q.sql_select_vectors(self._table, where)

        def run(cur: psycopg.Cursor[tuple[Any, ...]]) -> dict[str, list[float]]:
            cur.execute(statement, where.params)
            return {str(cid): q.parse_vector(str(text)) for cid, text in cur.fetchall()}

        return await self._read("read vectors", run)

    async def similar(
        self,
        chunk_id: str,
        *,
        limit: int,
        sources: tuple[str, ...] = (),
        filter: SearchFilter | None = None,
    ) -> list[Candidate]:
        anchor = (await self.vectors([chunk_id])).get(chunk_id)
        scope = self._scope(sources)
        if anchor is None or scope is None:
            return []
        where = q.Where().visible().sources(scope).metadata(filter).add("id <> %s", chunk_id)
        return await self._dense(q.vector_literal(anchor), where, limit, "find similar")

    async def sources(self) -> list[SourceInfo]:
        self._require_pool()
        scope = self._scope(())
        where = q.Where().visible().sources(scope or ())
        statement = q.count_by_source(self._table, where)

        def run(cur: psycopg.Cursor[tuple[Any, ...]]) -> list[SourceInfo]:
            cur.execute(statement, where.params)
            return [SourceInfo(name=str(s), chunks=int(n)) for s, n in cur.fetchall()]

        return await self._read("list sources", run)

    async def status(self) -> BackendStatus:
        pool = self._pool
        if pool is None:
            return BackendStatus(ready=False, backend=self.name, chunks=0, detail="closed")
        chunks = sum(s.chunks for s in await self.sources())
        stats = pool.get_stats()
        return BackendStatus(
            ready=True,
            backend=self.name,
            chunks=chunks,
            detail=f"table {self._table}",
            extra={
                "pool": {
                    k: stats.get(k, 0) for k in ("pool_size", "pool_available", "requests_waiting")
                },
                "read_retries": self.retries,
                "hnsw_ef_search": self._settings.hnsw_ef_search,
                "hnsw_iterative_scan": self._iterative_scan,
                "namespace": list(self._namespace),
                "query_cache": self._queries.statistics(),
            },
        )

    # -- writes (IngestTarget) -------------------------------------------------

    async def document_hashes(self, source: str) -> dict[str, str]:
        """doc_id -> doc_hash, "" for a document not stored whole (ADR 0005): written
        half-way, two versions stored, or a staged version never published (ADR 0038),
        so the next ingest rewrites it instead of trusting a partial copy."""
        self._check_writable(source)
        statement = q.document_versions(self._table)

        def run(cur: psycopg.Cursor[tuple[Any, ...]]) -> dict[str, str]:
            cur.execute(statement, (source,))
            versions: dict[str, list[tuple[str, bool]]] = {}
            for doc_id, doc_hash, expected, seen, staged in cur.fetchall():
                whole = expected == seen and not staged
                versions.setdefault(str(doc_id), []).append((str(doc_hash), whole))
            return {
                doc: (found[0][0] if len(found) == 1 and found[0][1] else "")
                for doc, found in versions.items()
            }

        return await self._read("scan documents", run)

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        """Embed and store, visible at once; idempotent by id."""
        await self._upsert(chunks, staged=False)

    async def stage(self, chunks: Sequence[Chunk]) -> None:
        """Embed and store hidden from every read until ``publish``; idempotent by id
        (a row already published stays published)."""
        await self._upsert(chunks, staged=True)

    async def _upsert(self, chunks: Sequence[Chunk], *, staged: bool) -> None:
        if not chunks:
            return
        self._require_pool()
        for source in {c.provenance.source for c in chunks}:
            self._check_writable(source)
        vectors = await self._embedder.embed([indexed_text(c) for c in chunks])
        rows = [q.upsert_row(c, v, staged=staged) for c, v in zip(chunks, vectors, strict=True)]
        statement = q.upsert_statement(self._table)
        action = "stage" if staged else "upsert"
        await self._write(action, lambda cur: cur.executemany(statement, rows))

    async def publish(self, source: str, versions: Mapping[str, str]) -> None:
        """Make version ``doc_hash`` of each document current and delete every other
        version, in one transaction: a read sees all of it or none. Idempotent."""
        if not versions:
            return
        self._check_writable(source)
        doc_ids, hashes = list(versions), [versions[d] for d in versions]
        delete = q.delete_other_versions(self._table)
        unstage = q.unstage_versions(self._table)

        def work(cur: psycopg.Cursor[tuple[Any, ...]]) -> None:
            cur.execute(delete, (doc_ids, hashes, source))
            cur.execute(unstage, (doc_ids, hashes, source))

        await self._write("publish", work)

    async def rename_documents(
        self, source: str, renames: Sequence[tuple[str, str, str, str]]
    ) -> None:
        """Move version ``doc_hash`` of ``old_id`` to ``new_id`` and ``uri`` (a renamed
        file), chunk ids kept, all in one transaction."""
        if not renames:
            return
        self._check_writable(source)
        statement = q.rename_document(self._table)
        rows = [(new, uri, source, old, doc_hash) for old, new, doc_hash, uri in renames]
        await self._write("rename", lambda cur: cur.executemany(statement, rows))

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None:
        if not doc_ids:
            return
        self._check_writable(source)
        statement = q.delete_documents(self._table)
        await self._write("delete", lambda cur: cur.execute(statement, (source, list(doc_ids))))

    async def commit(self) -> None:
        """Every write commits on its own; refresh the planner's statistics after a batch."""
        statement = q.analyze(self._table)
        await self._write("analyze", lambda cur: cur.execute(statement))


def _has_column(conn: psycopg.Connection[tuple[Any, ...]], table: str, column: str) -> bool:
    found = conn.execute(
        "SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s "
        "AND NOT attisdropped",
        (table, column),
    ).fetchone()
    return found is not None


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _candidates(rows: Sequence[Sequence[Any]]) -> list[Candidate]:
    return [
        Candidate(chunk=q.row_to_chunk(row), score=float(row[-1]), rank=rank)
        for rank, row in enumerate(rows, start=1)
    ]


@asynccontextmanager
async def open_pgvector(
    settings: Settings, load_minilm: MiniLMLoader
) -> AsyncIterator[PgvectorBackend]:
    """Connect to the configured Postgres, create or check the table, yield the
    adapter; on exit close its pool, then its encoder (shielded)."""
    pg = settings.backend.postgres
    password = pg.password.read("backend.postgres.password")
    async with AsyncExitStack() as stack:
        embedder = await stack.enter_async_context(open_embedder(settings.encoder, load_minilm))
        backend = await PgvectorBackend.open(
            pg,
            embedder,
            password=password,
            query_cache_size=settings.encoder.query_cache_size,
        )
        stack.push_async_callback(backend.aclose)
        yield backend
