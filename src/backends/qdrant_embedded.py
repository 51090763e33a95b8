"""The default store: Qdrant's Rust engine in-process (``qdrant-edge``), no server to run.

Layout of the store directory::

    LOCK            flock held while open; holds the owner's pid
    manifest.json   encoder name and dimension, BM25 parameters (format 1)
    shard/          the EdgeShard: named vectors "dense" (cosine) and "bm25" (sparse, IDF)

Without the dense model's files (a plain ``pip install``) the store opens with the BM25
leg only and reports the dense leg unavailable with its remedy; chunks written then
carry no dense vector and the manifest's ``encoder`` becomes null. The next open with
the model embeds every chunk again (a backfill) before it serves, and records the
encoder, so a store never answers the dense leg with vectors missing.

A replaced document is swapped whole (``stage`` then ``publish``, ADR 0038): its new
chunks are written with the payload flag ``staged`` that every search filters out, and
``publish`` flips the ``VersionGate`` before un-flagging them and deleting the old
version, so a search sees one whole version of each document, never a mix.

Blocking engine calls run in worker threads, except small bounded reads (points by
id, a hit's neighbours), which cost less than waking a thread and run on the event
loop. ``qdrant-edge`` holds the GIL while it searches (py-spy ``--gil`` shows its
frames), so a thread buys leg queries no parallelism either; ``inline_max_points``
runs them inline on stores up to that size, off by default because on a busy shared
host the extra runnable thread measured more calls/s (design/decisions/0025). A leg
batch also runs inline when nothing else is runnable on the event loop
(``inline_when_idle``): a lone request gains nothing from the hop (ADR 0025 amendment 2).
Threaded reads run concurrently and may be abandoned when their leg is cancelled;
writes are serialised by a lock and are never abandoned half-way.
"""

from __future__ import annotations

import functools
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import qdrant_edge as qe
import structlog
import trio

from retrieval_mcp.backends.chunk_payload import TOKENS_KEY, from_payload, indexed_text, to_payload
from retrieval_mcp.backends.engine_batch import EngineBatcher
from retrieval_mcp.backends.page_prewarm import (
    PrewarmReport,
    read_into_page_cache,
    shard_cold_files,
)
from retrieval_mcp.backends.protocol import (
    BackendStatus,
    Capability,
    LegQuery,
    Scalar,
    SearchFilter,
    SourceInfo,
    UnavailableLeg,
    id_only,
)
from retrieval_mcp.backends.search_pool import load_config, search_threads
from retrieval_mcp.backends.version_gate import DocKey, VersionGate
from retrieval_mcp.encoders.embedding_provider import MiniLMLoader
from retrieval_mcp.encoders.minilm import DIMENSION, MiniLMEncoder
from retrieval_mcp.encoders.query_cache import LRUCache
from retrieval_mcp.errors import (
    BackendError,
    BackendUnavailable,
    CapabilityMissing,
    ConfigError,
    EncoderUnavailable,
    StoreLocked,
)
from retrieval_mcp.process_lock import ProcessLock
from retrieval_mcp.records import Candidate, Chunk
from retrieval_mcp.settings import Settings

T = TypeVar("T")
log = structlog.get_logger(__name__)

MANIFEST_FORMAT = 1
DENSE = "dense"
BM25 = "bm25"
_DEFAULT_AVG_LEN = 256.0
STAGED = "staged"
#: A version no chunk has: publishing it hides a document until it is deleted.
NO_VERSION = "-"
#: ``fetch`` reads up to this many points on the event loop instead of a worker thread.
INLINE_FETCH_IDS = 64
#: ``hnsw_ef`` is the search breadth for an HNSW graph of up to this many points; larger
#: graphs search proportionally wider (``effective_hnsw_ef``, ADR 0054).
EF_REFERENCE_POINTS = 200_000
MAX_HNSW_EF = 4096


def effective_hnsw_ef(hnsw_ef: int, points: int, segment_cap: int | None) -> int:
    """The ef to search with: ``hnsw_ef`` scaled by the largest graph's size over
    ``EF_REFERENCE_POINTS``.

    Why: recall at a fixed ef falls as a graph grows. Measured at 1M chunks, ef 128
    gave recall@50 0.989 over 200k-point segments but 0.949 over 500k ones, and
    2.5 × 128 = 320 gave 0.987 there, in 1.3 ms against 2.1 ms for the 200k build. The
    largest graph holds ``min(points, segment_cap)`` points (the cap as the store was
    created; None: one graph)."""
    largest = points if segment_cap is None else min(points, segment_cap)
    scaled = -(-hnsw_ef * largest // EF_REFERENCE_POINTS)  # ceiling
    return min(MAX_HNSW_EF, max(hnsw_ef, scaled))


def segment_cap_points(shard: Path) -> int | None:
    """The segment cap in points that the shard at ``shard`` was created with, read from
    its ``edge_config.json`` (the engine sizes segments in KiB of float32 vectors); None
    when it has none (built as one graph) or the file cannot be read."""
    try:
        config = json.loads((shard / "edge_config.json").read_text("utf-8"))
        kib = int(config["optimizers"]["max_segment_size"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return max(1, kib * 1024 // (DIMENSION * 4))


def _map_engine_error(action: str, exc: Exception) -> BackendError:
    return BackendError(f"embedded Qdrant failed to {action}: {exc}")


class QdrantEmbeddedBackend:
    """Owns the shard, its lock and its encoders from ``open`` until ``aclose``."""

    name = "qdrant-embedded"
    #: Replacements are staged and published (``runner`` and ``durable_ingest`` ask).
    swaps_documents = True
    #: Legs may return ids and scores only; the pipeline fetches the fused top-k.
    late_payloads = True

    def __init__(
        self,
        path: Path,
        encoder: MiniLMEncoder | None,
        *,
        hnsw_ef: int = 128,
        query_cache_size: int = 1024,
        dense_missing: EncoderUnavailable | None = None,
        max_segment_points: int = 500_000,
        inline_max_points: int = 0,
        batch_legs: bool = True,
        prewarm_max_bytes: int = 0,
        inline_when_idle: bool = False,
        search_threads: int = 0,
    ) -> None:
        self._path = path
        self._prewarm_max_bytes = prewarm_max_bytes
        self.last_prewarm: PrewarmReport | None = None
        #: Set when ``prewarm`` has returned, however it ended (the tests wait on it).
        self.prewarm_done = trio.Event()
        self._inline_max_points = inline_max_points
        self._search_threads_setting = search_threads
        #: The engine's search pool as loaded (ADR 0055); None: the engine's own default.
        self.search_threads: int | None = None
        # Leg queries of one scheduler pass share one engine call and one thread hop.
        self._legs: EngineBatcher[_LegCall, list[Candidate]] | None = (
            EngineBatcher(
                self._query_legs,
                deferred=_LegCall.unembedded,
                inline_when_idle=inline_when_idle,
            )
            if batch_legs
            else None
        )
        self._point_count = 0  # as of open and the last commit: picks inline or threaded legs
        self._segment_cap: int | None = None  # as the store was created (edge_config.json)
        self._encoder = encoder
        self._dense_missing = dense_missing or (
            EncoderUnavailable("no dense encoder was given") if encoder is None else None
        )
        self._hnsw_ef = hnsw_ef
        self._max_segment_points = max_segment_points
        self._lock = ProcessLock(path, refused=StoreLocked, what="store")
        self._shard: Any = None
        self._manifest: dict[str, Any] = {}
        self._bm25: Any = None
        self._write_lock = trio.Lock()
        self._query_vectors: LRUCache[list[float]] = LRUCache(query_cache_size)
        self._gate = VersionGate()

    # -- lifecycle -------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path: Path,
        encoder: MiniLMEncoder | None,
        *,
        hnsw_ef: int = 128,
        query_cache_size: int = 1024,
        dense_missing: EncoderUnavailable | None = None,
        max_segment_points: int = 500_000,
        inline_max_points: int = 0,
        batch_legs: bool = True,
        prewarm_max_bytes: int = 0,
        inline_when_idle: bool = False,
        search_threads: int = 0,
    ) -> QdrantEmbeddedBackend:
        """Open (creating if needed) the store at ``path``; StoreLocked if another has it.

        ``encoder`` None opens it without the dense leg (``dense_missing`` says why)."""
        backend = cls(
            path,
            encoder,
            hnsw_ef=hnsw_ef,
            query_cache_size=query_cache_size,
            dense_missing=dense_missing,
            max_segment_points=max_segment_points,
            inline_max_points=inline_max_points,
            batch_legs=batch_legs,
            prewarm_max_bytes=prewarm_max_bytes,
            inline_when_idle=inline_when_idle,
            search_threads=search_threads,
        )
        await trio.to_thread.run_sync(backend._open_sync)
        return backend

    def _open_sync(self) -> None:
        self._path.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock.acquire()
        try:
            self._manifest = self._load_manifest()
            shard_path = self._path / "shard"
            threads = search_threads(shard_path, self._search_threads_setting)
            if (shard_path / "edge_config.json").exists() or _has_segments(shard_path):
                config = load_config(shard_path, DENSE, BM25, threads)
                if config is None:  # vectors this server does not write: load as it is
                    self._shard = qe.EdgeShard.load(str(shard_path))
                else:
                    self._shard = qe.EdgeShard.load(str(shard_path), config)
                    self.search_threads = threads
            else:
                self._shard = qe.EdgeShard.create(str(shard_path), self._edge_config(threads))
                self.search_threads = threads
            # Filtered on by every search (staged, source), every swap (doc_hash) and the
            # neighbour scan (doc_id). Creating an index that exists is a no-op, and one
            # with other parameters is converted in place, so older stores get these too.
            for operation in payload_index_operations():
                self._shard.update(operation)
            self._bm25 = self._make_bm25()
            if self._encoder is not None and self._manifest.get("encoder") is None:
                self._backfill_dense_sync(self._encoder)
            self._point_count = int(self._shard.info().points_count)
            self._segment_cap = segment_cap_points(shard_path)
        except ConfigError:
            self._lock.release()
            raise
        except Exception as exc:
            self._lock.release()
            raise BackendUnavailable(f"cannot open the store at {self._path}: {exc}") from exc

    def _edge_config(self, threads: int | None = None) -> Any:
        # The engine sizes segments in KiB of (float32) vector data.
        segment_kib = self._max_segment_points * DIMENSION * 4 // 1024
        return qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=DIMENSION, distance=qe.Distance.Cosine)},
            sparse_vectors={BM25: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            optimizers=qe.EdgeOptimizersConfig(max_segment_size=segment_kib),
            max_search_threads=threads,
        )

    def hnsw_ef(self) -> int:
        """The ef dense searches use now (``effective_hnsw_ef`` of the configured one)."""
        return effective_hnsw_ef(self._hnsw_ef, self._point_count, self._segment_cap)

    def segment_count(self) -> int:
        """Segments in the shard: how the index was built (ADR 0027; tests read it)."""
        return int(self._require_open().info().segments_count)

    def _load_manifest(self) -> dict[str, Any]:
        manifest_path = self._path / "manifest.json"
        if manifest_path.exists():
            manifest: dict[str, Any] = json.loads(manifest_path.read_text("utf-8"))
            recorded = manifest.get("encoder")  # None: built (partly) without dense vectors
            if self._encoder is not None and recorded not in (None, self._encoder.name):
                raise ConfigError(
                    f"the store at {self._path} was built with encoder "
                    f"{recorded!r}, not {self._encoder.name!r}",
                    remedy="Use a new state directory, or re-ingest into an empty store.",
                )
            return manifest
        manifest = {
            "format": MANIFEST_FORMAT,
            "encoder": self._encoder.name if self._encoder is not None else None,
            "dimension": DIMENSION,
            "bm25": {"language": "english", "k": 1.2, "b": 0.75, "avg_len": None},
        }
        self._write_manifest(manifest)
        return manifest

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        target = self._path / "manifest.json"
        tmp = target.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)

    def _backfill_dense_sync(self, encoder: MiniLMEncoder) -> None:
        """Embed every stored chunk: the store was written (at least partly) without the
        dense model. Re-embedding all of them is idempotent, so an interrupted backfill
        simply runs again at the next open; the manifest records the encoder only after
        the vectors are flushed."""
        shard = self._shard
        offset = None
        done = 0
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(offset=offset, limit=64, with_payload=True, with_vector=False)
            )
            if records:
                chunks = [from_payload(str(r.id), r.payload or {}) for r in records]
                vectors = encoder.embed([indexed_text(c) for c in chunks])
                shard.update(
                    qe.UpdateOperation.update_vectors(
                        [
                            qe.PointVectors(c.id, {DENSE: vectors[i].tolist()})
                            for i, c in enumerate(chunks)
                        ]
                    )
                )
                done += len(chunks)
            if offset is None:
                break
        shard.flush()
        self._manifest["encoder"] = encoder.name
        self._write_manifest(self._manifest)
        log.info("dense_backfilled", chunks=done, encoder=encoder.name)

    def unavailable_legs(self) -> tuple[UnavailableLeg, ...]:
        if self._dense_missing is None:
            return ()
        return (
            UnavailableLeg(
                leg=Capability.DENSE,
                reason=self._dense_missing.message,
                remedy=self._dense_missing.remedy,
            ),
        )

    def _make_bm25(self) -> Any:
        params = self._manifest["bm25"]
        return qe.Bm25(
            qe.Bm25Config(
                k=params["k"],
                b=params["b"],
                avg_len=params["avg_len"] or _DEFAULT_AVG_LEN,
                language=params["language"],
            )
        )

    def cold_files(self) -> list[Path]:
        """``page_prewarm.shard_cold_files`` of this store's shard: what ``prewarm`` reads."""
        return shard_cold_files(self._path / "shard")

    async def prewarm(self) -> PrewarmReport | None:
        """Read ``cold_files`` once, up to ``prewarm_max_bytes`` (0: off; ADR 0053).

        The server runs this after it is ready and cancels it when it stops."""
        try:
            if self._prewarm_max_bytes <= 0 or self._shard is None:
                return None
            paths = await trio.to_thread.run_sync(self.cold_files)
            self.last_prewarm = await read_into_page_cache(paths, max_bytes=self._prewarm_max_bytes)
            return self.last_prewarm
        finally:
            self.prewarm_done.set()

    async def aclose(self) -> None:
        """Flush and close the shard, then release the lock. Safe to call twice."""
        if self._shard is None:
            return
        shard, self._shard = self._shard, None
        with trio.CancelScope(shield=True):
            async with self._write_lock:
                await trio.to_thread.run_sync(self._close_sync, shard)

    def _close_sync(self, shard: Any) -> None:
        try:
            shard.flush()
            shard.close()
        finally:
            self._lock.release()

    # -- reads -----------------------------------------------------------------

    def capabilities(self) -> frozenset[Capability]:
        keyword = {Capability.BM25, Capability.FILTER, Capability.NEIGHBORS, Capability.INGEST}
        if self._encoder is None:  # the dense leg and what rests on its vectors are off
            return frozenset(keyword)
        return frozenset({*keyword, Capability.DENSE, Capability.SIMILAR, Capability.VECTORS})

    def _require_open(self) -> Any:
        if self._shard is None:
            raise BackendUnavailable("the embedded store is closed")
        return self._shard

    def _small_store(self) -> bool:
        """Whether a bounded read runs on the event loop (``inline_max_points``)."""
        return 0 < self._point_count <= self._inline_max_points

    async def _read(self, action: str, fn: Callable[[], T], *, inline: bool = False) -> T:
        self._require_open()
        try:
            if inline:  # bounded and short: cheaper than waking a worker thread
                await trio.lowlevel.checkpoint()
                return fn()
            # Reads may be abandoned: a late leg is dropped, the thread finishes alone.
            return await trio.to_thread.run_sync(fn, abandon_on_cancel=True)
        except BackendError:
            raise
        except Exception as exc:
            raise _map_engine_error(action, exc) from exc

    async def search(self, query: LegQuery) -> list[Candidate]:
        shard = self._require_open()
        with self._gate.reading() as current:
            return await self._search(
                shard, query, _engine_filter(query.sources, query.filter, current)
            )

    async def _search(self, shard: Any, query: LegQuery, engine_filter: Any) -> list[Candidate]:
        inline = self._small_store()
        if query.leg == Capability.DENSE:

            def dense(vector: list[float]) -> Any:
                return qe.QueryRequest(
                    limit=query.limit,
                    query=qe.Query.Nearest(vector, using=DENSE),
                    filter=engine_filter,
                    with_payload=query.payloads,
                    params=qe.SearchParams(hnsw_ef=max(self.hnsw_ef(), query.limit)),
                )

            cached = self._query_vectors.get(query.text)
            if cached is None and self._legs is not None and not inline:
                # Not cached: the encoder runs in the engine batch's own thread hop,
                # after the other legs of the pass have been answered (ADR 0051).
                return await self._batched(_LegCall(None, query.payloads, query.text, dense))
            request = dense(cached if cached is not None else await self._query_vector(query.text))
        elif query.leg == Capability.BM25:
            sparse = self._bm25.embed_query(query.text)
            if not sparse.indices:
                return []  # only stopwords: BM25 has nothing to match on
            request = qe.QueryRequest(
                limit=query.limit,
                query=qe.Query.Nearest(sparse, using=BM25),
                filter=engine_filter,
                with_payload=query.payloads,
            )
        else:
            raise CapabilityMissing(f"{self.name} does not declare the {query.leg} leg")
        if self._legs is not None:  # with the other legs of this pass, in one engine call
            return await self._batched(_LegCall(request, query.payloads), inline=inline)
        if not query.payloads:
            return await self._read("search", lambda: _ranked(shard.query(request)), inline=inline)
        return await self._read("search", lambda: _candidates(shard.query(request)), inline=inline)

    async def _batched(self, call: _LegCall, *, inline: bool = False) -> list[Candidate]:
        assert self._legs is not None
        try:
            answer = await self._legs.query(call, inline=inline)
        except BackendError:
            raise
        except Exception as exc:
            raise _map_engine_error("search", exc) from exc
        if call.text is not None and call.vector is not None:  # back on the Trio thread
            self._query_vectors.put(call.text, call.vector)
        return answer

    def _query_legs(self, queries: Sequence[_LegCall]) -> list[list[Candidate]]:
        """One batch of leg queries (``EngineBatcher``): a single ``query`` for one, else
        ``query_batch``, which shares one pass over the segments. Dense queries without
        a vector are embedded first, all in one encoder call."""
        shard = self._require_open()
        unembedded = [q for q in queries if q.request is None]
        if unembedded:
            encoder = self._encoder
            if encoder is None:
                raise CapabilityMissing(f"{self.name} has no dense encoder")
            for call, row in zip(
                unembedded, encoder.embed_queries([q.text or "" for q in unembedded]), strict=True
            ):
                call.embedded(row.tolist())
        requests = [q.request for q in queries]
        if len(requests) == 1:
            answers = [shard.query(requests[0])]
        else:
            answers = shard.query_batch(qe.QueryBatchRequest(requests))
        return [
            _candidates(points) if q.payloads else _ranked(points)
            for q, points in zip(queries, answers, strict=True)
        ]

    async def _query_vector(self, text: str) -> list[float]:
        cached = self._query_vectors.get(text)
        if cached is not None:
            return cached
        encoder = self._encoder
        if encoder is None:
            raise CapabilityMissing(f"{self.name} has no dense encoder")
        matrix = await self._read("embed the query", lambda: encoder.embed_queries([text]))
        vector: list[float] = matrix[0].tolist()
        self._query_vectors.put(text, vector)
        return vector

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        shard = self._require_open()
        wanted = [i for i in ids if _is_uuid(i)]
        if not wanted:
            return []
        unique = list(dict.fromkeys(wanted))
        records = await self._read(
            "fetch",
            lambda: shard.retrieve(unique, with_payload=True, with_vector=False),
            # The fused top-k after id-only legs: a few point reads by id, on the
            # event loop (a thread hop costs more than the read; ADR 0025).
            inline=len(unique) <= INLINE_FETCH_IDS,
        )
        by_id = {c.id: c for c in (from_payload(str(r.id), r.payload or {}) for r in records)}
        return [by_id[i] for i in wanted if i in by_id]

    async def neighbors(self, chunk: Chunk, *, before: int, after: int) -> list[Chunk]:
        shard = self._require_open()
        p = chunk.provenance
        low, high = p.ordinal - max(0, before), p.ordinal + max(0, after)
        flt = qe.Filter(
            must=[
                qe.FieldCondition("source", match=qe.MatchValue(p.source)),
                qe.FieldCondition("doc_id", match=qe.MatchValue(p.doc_id)),
                # Only this chunk's version: during a swap two versions are stored.
                qe.FieldCondition("doc_hash", match=qe.MatchValue(chunk.doc_hash)),
                qe.FieldCondition("ordinal", range=qe.RangeFloat(gte=low, lte=high)),
            ],
            must_not=[qe.HasIdCondition({chunk.id})],
        )
        limit = before + after + 1

        def scan() -> list[Any]:
            records, _ = shard.scroll(
                qe.ScrollRequest(limit=limit, filter=flt, with_payload=True, with_vector=False)
            )
            return list(records)

        # At most before + after + 1 points of one document, by indexed fields.
        records = await self._read("read neighbours", scan, inline=True)
        chunks = [from_payload(str(r.id), r.payload or {}) for r in records]
        return sorted(chunks, key=lambda c: c.provenance.ordinal)

    async def neighbors_many(
        self, chunks: Sequence[Chunk], *, before: int, after: int
    ) -> list[list[Chunk]]:
        """Every chunk's ``neighbors`` from one engine read, split back per chunk here.

        Within one chunk of a hit (the default window), the ingest's ``prev_id`` and
        ``next_id`` links name the neighbours: they are read by id, ~3x cheaper than the
        filtered scroll. A chunk whose links are missing (a store written before them)
        or a wider window takes the scroll: the union of the windows, one ``should``
        clause per chunk. Either way every neighbour is checked against the window, so
        a link can never bring in another document or version (ADR 0025)."""
        shard = self._require_open()
        if not chunks:
            return []
        low_by, high_by = max(0, before), max(0, after)
        own = {c.id: c for c in chunks}
        links = {
            c.id: _links(c, before=low_by, after=high_by)
            for c in chunks
            if max(low_by, high_by) <= 1
        }
        wanted = list(
            dict.fromkeys(
                i for ids in links.values() if ids for i in ids if i not in own and _is_uuid(i)
            )
        )
        read = await self._read(
            "read neighbours",
            lambda: shard.retrieve(wanted, with_payload=True, with_vector=False),
            inline=True,  # two per hit at most
        )
        found = {
            **own,
            **{c.id: c for c in (from_payload(str(r.id), r.payload or {}) for r in read)},
        }
        # A link that is missing, stale or points elsewhere sends its chunk to the scan.
        scanned = [c for c in chunks if not _links_hold(c, links.get(c.id), found)]
        scan = self._window_scan(scanned, low_by, high_by)
        if scan is not None:
            records, _ = await self._read(
                "read neighbours", lambda: shard.scroll(scan), inline=True
            )
            found.update((str(r.id), from_payload(str(r.id), r.payload or {})) for r in records)
        by_doc: dict[tuple[str, str, str], list[Chunk]] = {}
        for n in found.values():
            p = n.provenance
            by_doc.setdefault((p.source, p.doc_id, n.doc_hash), []).append(n)
        out: list[list[Chunk]] = []
        for c in chunks:
            p = c.provenance
            low, high = p.ordinal - low_by, p.ordinal + high_by
            around = [
                n
                for n in by_doc.get((p.source, p.doc_id, c.doc_hash), ())
                if n.id != c.id and low <= n.provenance.ordinal <= high
            ]
            out.append(sorted(around, key=lambda n: n.provenance.ordinal))
        return out

    def _window_scan(self, chunks: Sequence[Chunk], low_by: int, high_by: int) -> Any:
        """The scroll over the union of ``chunks``' windows by indexed fields, or None."""
        if not chunks:
            return None
        windows: list[Any] = [
            qe.Filter(
                must=[
                    qe.FieldCondition("source", match=qe.MatchValue(c.provenance.source)),
                    qe.FieldCondition("doc_id", match=qe.MatchValue(c.provenance.doc_id)),
                    qe.FieldCondition("doc_hash", match=qe.MatchValue(c.doc_hash)),
                    qe.FieldCondition(
                        "ordinal",
                        range=qe.RangeFloat(
                            gte=c.provenance.ordinal - low_by, lte=c.provenance.ordinal + high_by
                        ),
                    ),
                ]
            )
            for c in chunks
        ]
        return qe.ScrollRequest(
            limit=len(chunks) * (low_by + high_by + 1),
            filter=qe.Filter(should=windows),
            with_payload=True,
            with_vector=False,
        )

    async def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        shard = self._require_open()
        unique = list(dict.fromkeys(i for i in ids if _is_uuid(i)))
        if not unique:
            return {}
        records = await self._read(
            "read vectors",
            lambda: shard.retrieve(unique, with_payload=False, with_vector=[DENSE]),
            inline=len(unique) <= INLINE_FETCH_IDS,
        )
        out: dict[str, list[float]] = {}
        for r in records:
            vector = (r.vector or {}).get(DENSE) if isinstance(r.vector, dict) else None
            if vector is not None:  # the engine hands a fresh list of floats: no copy
                out[str(r.id)] = vector if isinstance(vector, list) else list(vector)
        return out

    async def similar(
        self,
        chunk_id: str,
        *,
        limit: int,
        sources: tuple[str, ...] = (),
        filter: SearchFilter | None = None,
    ) -> list[Candidate]:
        shard = self._require_open()
        vector = (await self.vectors([chunk_id])).get(chunk_id)
        if vector is None:
            return []
        with self._gate.reading() as current:
            flt = _engine_filter(sources, filter, current)
            exclude = qe.HasIdCondition({chunk_id})
            flt = qe.Filter(must=[flt] if flt else None, must_not=[exclude])
            request = qe.QueryRequest(
                limit=limit,
                query=qe.Query.Nearest(vector, using=DENSE),
                filter=flt,
                with_payload=True,
                params=qe.SearchParams(hnsw_ef=max(self.hnsw_ef(), limit)),
            )
            return await self._read("find similar", lambda: _candidates(shard.query(request)))

    async def sources(self) -> list[SourceInfo]:
        shard = self._require_open()
        response = await self._read(
            "list sources",
            lambda: shard.facet(
                qe.FacetRequest(key="source", limit=10_000, exact=True, filter=_NOT_STAGED)
            ),
        )
        return sorted(
            (SourceInfo(name=str(hit.value), chunks=int(hit.count)) for hit in response.hits),
            key=lambda s: s.name,
        )

    async def status(self) -> BackendStatus:
        if self._shard is None:
            return BackendStatus(ready=False, backend=self.name, chunks=0, detail="closed")
        shard = self._shard
        info = await self._read("read status", shard.info)
        return BackendStatus(
            ready=True,
            backend=self.name,
            chunks=int(info.points_count),
            detail=f"store {self._path}",
            extra={
                "segments": int(info.segments_count),
                "indexed_vectors": int(info.indexed_vectors_count),
                "encoder": self._encoder.name if self._encoder is not None else None,
                # Which graph embeds queries (ADR 0052): int8-matmul once prepared.
                "query_graph": self._encoder.query_graph if self._encoder is not None else None,
                # Leg queries and the engine calls that answered them (``batch_legs``).
                "leg_batches": self._legs.statistics() if self._legs is not None else None,
                "query_cache": {
                    "size": len(self._query_vectors),
                    "hits": self._query_vectors.hits,
                    "misses": self._query_vectors.misses,
                },
                # How wide dense searches look, and the cap it follows from (ADR 0054).
                "hnsw_ef": self.hnsw_ef(),
                # The engine's search pool, as loaded (ADR 0055); None: its own default.
                "search_threads": self.search_threads,
                "segment_cap_points": self._segment_cap,
                # The page-cache pre-read after ready (ADR 0053): None until it is done.
                "prewarm": None
                if self.last_prewarm is None
                else {
                    "files": self.last_prewarm.files,
                    "mib": round(self.last_prewarm.bytes_read / 2**20, 1),
                    "seconds": round(self.last_prewarm.seconds, 2),
                },
            },
        )

    # -- writes ----------------------------------------------------------------

    async def document_hashes(self, source: str) -> dict[str, str]:
        """Every stored document of ``source`` -> its content hash.

        The hash is "" for a document that is not stored whole (an upsert interrupted
        half-way, two versions mixed, or a staged version never published), so the next
        ingest rewrites it instead of trusting a partial copy.
        """
        shard = self._require_open()

        def scan() -> dict[str, str]:
            counts: dict[tuple[str, str], list[int]] = {}  # (doc, hash) -> [expected, seen]
            staged: set[str] = set()
            flt = _engine_filter((source,), None)
            offset = None
            while True:
                records, offset = shard.scroll(
                    qe.ScrollRequest(
                        offset=offset,
                        limit=1024,
                        filter=flt,
                        with_payload=["doc_id", "doc_hash", "doc_chunks", STAGED],
                    )
                )
                for record in records:
                    payload = record.payload or {}
                    key = (str(payload.get("doc_id")), str(payload.get("doc_hash")))
                    entry = counts.setdefault(key, [int(payload.get("doc_chunks", 0)), 0])
                    entry[1] += 1
                    if payload.get(STAGED):
                        staged.add(key[0])
                if offset is None:
                    break
            versions: dict[str, int] = {}
            for doc_id, _ in counts:
                versions[doc_id] = versions.get(doc_id, 0) + 1
            return {
                doc_id: doc_hash
                if versions[doc_id] == 1 and seen == expected and doc_id not in staged
                else ""
                for (doc_id, doc_hash), (expected, seen) in counts.items()
            }

        return await self._read("scan documents", scan)

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        await self._upsert(chunks, staged=False)

    async def stage(self, chunks: Sequence[Chunk]) -> None:
        """Embed and store hidden from every search until ``publish``; idempotent by id."""
        await self._upsert(chunks, staged=True)

    async def _upsert(self, chunks: Sequence[Chunk], *, staged: bool) -> None:
        if not chunks:
            return
        shard = self._require_open()
        async with self._write_lock:
            if self._manifest["bm25"]["avg_len"] is None:
                # BM25 length normalisation needs the corpus's typical length: take it
                # from the first batch written and keep it for the life of the store.
                words = [len(indexed_text(c).split()) for c in chunks]
                self._manifest["bm25"]["avg_len"] = max(1.0, float(np.mean(words)))
                await trio.to_thread.run_sync(self._write_manifest, self._manifest)
                self._bm25 = self._make_bm25()
            texts = [indexed_text(c) for c in chunks]
            points = await self._points(chunks, texts, staged=staged)
            try:
                await trio.to_thread.run_sync(
                    shard.update, qe.UpdateOperation.upsert_points(points)
                )
            except Exception as exc:
                raise _map_engine_error("upsert", exc) from exc

    async def _points(
        self, chunks: Sequence[Chunk], texts: list[str], *, staged: bool
    ) -> list[Any]:
        payloads = [to_payload(c) | ({STAGED: True} if staged else {}) for c in chunks]
        if self._encoder is None:
            if self._manifest.get("encoder") is not None:
                # From now on some chunks lack a dense vector: say so before writing any,
                # so the next open with the model backfills them.
                self._manifest["encoder"] = None
                await trio.to_thread.run_sync(self._write_manifest, self._manifest)
            return [
                qe.Point(c.id, {BM25: self._bm25.embed_document(texts[i])}, payloads[i])
                for i, c in enumerate(chunks)
            ]
        encoder = self._encoder
        bodies = [c.text for c in chunks]
        # The token counts ride the embedding's thread hop: the packer reads them
        # instead of tokenising every chunk it is offered (records.Chunk.tokens).
        vectors, counts = await trio.to_thread.run_sync(
            lambda: (encoder.embed(texts), encoder.count_tokens_many(bodies))
        )
        for payload, count in zip(payloads, counts, strict=True):
            payload[TOKENS_KEY] = count
        return [
            qe.Point(
                c.id,
                {DENSE: vectors[i].tolist(), BM25: self._bm25.embed_document(texts[i])},
                payloads[i],
            )
            for i, c in enumerate(chunks)
        ]

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None:
        """Delete every version of these documents, each at once for searches."""
        if doc_ids:
            await self.publish(source, dict.fromkeys(doc_ids, NO_VERSION))

    async def publish(self, source: str, versions: Mapping[str, str]) -> None:
        """Make version ``doc_hash`` of each document current and delete every other
        version (``NO_VERSION``: delete them all). Idempotent.

        The gate flips first, so searches starting now see only the new versions; the
        store is changed once the searches that started before the flip are done."""
        if not versions:
            return
        shard = self._require_open()
        epoch = self._gate.flip(source, versions)
        await self._gate.wait_for_readers(epoch)
        operations: list[Any] = []
        for doc_id, doc_hash in versions.items():
            this_doc: list[Any] = [
                qe.FieldCondition("source", match=qe.MatchValue(source)),
                qe.FieldCondition("doc_id", match=qe.MatchValue(doc_id)),
            ]
            keep = qe.FieldCondition("doc_hash", match=qe.MatchValue(doc_hash))
            operations.append(
                qe.UpdateOperation.delete_points_by_filter(
                    qe.Filter(must=this_doc, must_not=[keep])
                )
            )
            if doc_hash != NO_VERSION:
                operations.append(
                    qe.UpdateOperation.delete_payload_by_filter(
                        qe.Filter(must=[*this_doc, keep]), [STAGED]
                    )
                )
        await self._apply(shard, "publish", operations)
        self._gate.settle(source, versions)

    async def _apply(self, shard: Any, action: str, operations: Sequence[Any]) -> None:
        """Run ``operations`` in order under the write lock; writes are never abandoned."""

        def work() -> None:
            for operation in operations:
                shard.update(operation)

        async with self._write_lock:
            try:
                await trio.to_thread.run_sync(work)
            except Exception as exc:
                raise _map_engine_error(action, exc) from exc

    async def rename_documents(
        self, source: str, renames: Sequence[tuple[str, str, str, str]]
    ) -> None:
        """Move version ``doc_hash`` of ``old_id`` to ``new_id`` and ``uri``, keeping the
        chunks and their ids (a renamed file). Both ids are hidden from searches while
        the payloads change, so no search sees the document twice or half-renamed."""
        if not renames:
            return
        shard = self._require_open()
        hidden = {doc: NO_VERSION for old, new, _, _ in renames for doc in (old, new)}
        epoch = self._gate.flip(source, hidden)
        await self._gate.wait_for_readers(epoch)
        operations = [
            qe.UpdateOperation.set_payload_by_filter(
                qe.Filter(
                    must=[
                        qe.FieldCondition("source", match=qe.MatchValue(source)),
                        qe.FieldCondition("doc_id", match=qe.MatchValue(old)),
                        qe.FieldCondition("doc_hash", match=qe.MatchValue(doc_hash)),
                    ]
                ),
                {"doc_id": new, "uri": uri},
            )
            for old, new, doc_hash, uri in renames
        ]
        await self._apply(shard, "rename", operations)
        self._gate.settle(source, hidden)

    async def commit(self) -> None:
        """Flush to disk and build indexes; call after a batch of writes."""
        shard = self._require_open()
        async with self._write_lock:

            def work() -> int:
                shard.flush()
                shard.optimize()
                return int(shard.info().points_count)

            try:
                self._point_count = await trio.to_thread.run_sync(work)
            except Exception as exc:
                raise _map_engine_error("commit", exc) from exc


class _LegCall:
    """One leg query for the engine batch: its request, or, for a dense leg whose query
    vector is not cached, the text and how to build the request once it is embedded."""

    __slots__ = ("build", "payloads", "request", "text", "vector")

    def __init__(
        self,
        request: Any,
        payloads: bool,
        text: str | None = None,
        build: Callable[[list[float]], Any] | None = None,
    ) -> None:
        self.request = request
        self.payloads = payloads
        self.text = text
        self.build = build
        self.vector: list[float] | None = None

    def unembedded(self) -> bool:
        return self.request is None

    def embedded(self, vector: list[float]) -> None:
        assert self.build is not None
        self.vector = vector
        self.request = self.build(vector)


def _ranked(points: Sequence[Any]) -> list[Candidate]:
    return [
        Candidate(chunk=_placeholder(p.id), score=float(p.score), rank=rank)
        for rank, p in enumerate(points, start=1)
    ]


@functools.lru_cache(maxsize=65_536)
def _placeholder(point_id: Any) -> Chunk:
    """``id_only`` by the engine's own id (a ``uuid.UUID`` or an int): formatting a UUID
    costs more than the cache lookup, and a leg returns 50 of them per query."""
    return id_only(str(point_id))


def _candidates(points: Sequence[Any]) -> list[Candidate]:
    return [
        Candidate(chunk=from_payload(str(p.id), p.payload or {}), score=float(p.score), rank=rank)
        for rank, p in enumerate(points, start=1)
    ]


def _has_segments(shard_path: Path) -> bool:
    return (shard_path / "segments").is_dir() and any((shard_path / "segments").iterdir())


def _links(chunk: Chunk, *, before: int, after: int) -> list[str] | None:
    """The ids of ``chunk``'s neighbours within one position, from its ingest links, or
    None when a link the window needs is missing where a neighbour may exist (a first
    chunk has no ``prev_id``, a last one, when the count is known, no ``next_id``)."""
    p = chunk.provenance
    ids: list[str] = []
    if before:
        if p.prev_id is not None:
            ids.append(p.prev_id)
        elif p.ordinal > 0:
            return None
    if after:
        if p.next_id is not None:
            ids.append(p.next_id)
        elif not (p.doc_chunks and p.ordinal == p.doc_chunks - 1):
            return None
    return ids


def _links_hold(chunk: Chunk, ids: list[str] | None, found: Mapping[str, Chunk]) -> bool:
    """Whether ``chunk``'s linked neighbours were all found, each one position away in
    the same document and version: then they are its whole window of one."""
    if ids is None:
        return False
    p = chunk.provenance
    for i in ids:
        n = found.get(i)
        if n is None or (n.provenance.source, n.provenance.doc_id, n.doc_hash) != (
            p.source,
            p.doc_id,
            chunk.doc_hash,
        ):
            return False
        if abs(n.provenance.ordinal - p.ordinal) != 1:
            return False
    return True


#: The form this server writes ids in: most ids checked take this path, not a parse.
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _is_uuid(value: str) -> bool:
    if _CANONICAL_UUID.fullmatch(value):
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


_NOT_STAGED = qe.Filter(must=[qe.IsEmptyCondition(STAGED)])


def payload_index_operations() -> list[Any]:
    """The shard's payload indexes, as engine updates (the server's and the benchmarks').

    Why ``doc_id`` and ``doc_hash`` are memory-mapped: one distinct string per chunk
    each, the engine builds their in-RAM maps at load: most of opening a 1M-chunk shard
    (2.1-2.9 CPU s, 0.5 mapped). Mapped, a neighbour scan (the fallback behind links,
    ADR 0047) costs ~0.3 ms more (ADR 0050).
    ``source`` and ``staged`` are few values, read by every search: in RAM.
    """
    keyword = qe.PayloadSchemaType.Keyword
    return [
        qe.UpdateOperation.create_field_index("source", keyword),
        qe.UpdateOperation.create_field_index("doc_id", qe.KeywordIndexParams(on_disk=True)),
        qe.UpdateOperation.create_field_index("doc_hash", qe.KeywordIndexParams(on_disk=True)),
        qe.UpdateOperation.create_field_index(STAGED, qe.PayloadSchemaType.Bool),
    ]


def _engine_filter(
    sources: Sequence[str], flt: SearchFilter | None, current: Mapping[DocKey, str] | None = None
) -> Any:
    """The engine filter for ``sources`` and ``flt``; with ``current`` (a search's view of
    the ``VersionGate``) also the swap's: staged chunks are hidden unless their version
    was published, and a document being published shows only its published version."""
    if current is not None:
        return qe.Filter(
            must=[f] if (f := _engine_filter(sources, flt)) is not None else None,
            must_not=_swap_exclusions(current),
        )
    must: list[Any] = []
    if sources:
        must.append(qe.FieldCondition("source", match=qe.MatchAny(list(sources))))
    if flt:
        for key, values in flt.equals.items():
            must.append(_match_any(f"meta.{key}", values))
    return qe.Filter(must=must) if must else None


def _swap_exclusions(current: Mapping[DocKey, str]) -> list[Any]:
    published: list[Any] = []
    others: list[Any] = []
    for (source, doc_id), doc_hash in current.items():
        this_doc: list[Any] = [
            qe.FieldCondition("source", match=qe.MatchValue(source)),
            qe.FieldCondition("doc_id", match=qe.MatchValue(doc_id)),
        ]
        keep = qe.FieldCondition("doc_hash", match=qe.MatchValue(doc_hash))
        published.append(qe.Filter(must=[*this_doc, keep]))
        others.append(qe.Filter(must=this_doc, must_not=[keep]))
    # Staged (the flag is present: the engine's MatchValue(True) matches no boolean)
    # and not published.
    not_flagged = qe.IsEmptyCondition(STAGED)
    return [qe.Filter(must_not=[not_flagged, *published]), *others]


def _match_any(key: str, values: Sequence[Scalar]) -> Any:
    """One condition: ``key`` equals any of ``values`` (the engine's MatchAny takes only
    all-string or all-integer lists, so mixed or boolean lists become a ``should``)."""
    if len(values) == 1:
        return qe.FieldCondition(key, match=qe.MatchValue(values[0]))
    strings = [v for v in values if isinstance(v, str)]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if len(strings) == len(values):
        return qe.FieldCondition(key, match=qe.MatchAny(strings))
    if len(ints) == len(values):
        return qe.FieldCondition(key, match=qe.MatchAny(ints))
    return qe.Filter(should=[qe.FieldCondition(key, match=qe.MatchValue(v)) for v in values])


@asynccontextmanager
async def open_qdrant_embedded(
    settings: Settings, load_minilm: MiniLMLoader
) -> AsyncIterator[QdrantEmbeddedBackend]:
    """Open (creating if needed) the embedded store under the state directory; on exit
    flush and close the shard and release its lock (shielded, never abandoned half-way).
    Raises StoreLocked when another process has it. Without the dense model's files it
    opens with the BM25 leg alone and reports the dense leg unavailable (ADR 0031)."""
    encoder: MiniLMEncoder | None = None
    missing: EncoderUnavailable | None = None
    try:
        encoder = await load_minilm()
    except EncoderUnavailable as exc:
        log.warning("dense_model_missing", reason=exc.message, remedy=exc.remedy)
        missing = exc
    backend = await QdrantEmbeddedBackend.open(
        settings.store_path,
        encoder,
        hnsw_ef=settings.backend.qdrant_embedded.hnsw_ef,
        query_cache_size=settings.encoder.query_cache_size,
        dense_missing=missing,
        max_segment_points=settings.backend.qdrant_embedded.max_segment_points,
        inline_max_points=settings.backend.qdrant_embedded.inline_max_points,
        batch_legs=settings.backend.qdrant_embedded.batch_legs,
        prewarm_max_bytes=settings.backend.qdrant_embedded.prewarm_max_mib * 1024 * 1024,
        inline_when_idle=settings.backend.qdrant_embedded.inline_when_idle,
        search_threads=settings.backend.qdrant_embedded.search_threads,
    )
    try:
        yield backend
    finally:
        await backend.aclose()
