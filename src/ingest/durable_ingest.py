"""Ingest through the write-ahead log: nothing acknowledged is lost, nothing applied twice.

``DurableIngestTarget`` wraps a store (an ``IngestTarget`` with ``commit``) so that
``runner.ingest_documents`` writes through the WAL without knowing it::

    upsert / delete_documents / stage / publish
                                append the record → acknowledged once fsynced
                                → apply it to the store
    commit                      commit the store (it flushes) → append one applied
                                marker naming every record applied since the last
                                commit → wait until the marker is durable

A marker follows the store's commit, not each apply: a marker must never be durable
before the effect it vouches for, and the store makes its writes durable when it
flushes. A crash between an apply and the next commit leaves records without markers;
``recover()`` redoes them in log order. On a store that can look chunks up by id
(``fetch``), the redo re-embeds only chunks that are missing or differ, so a killed
ingest is not embedded twice; the runner's ``document_hashes`` check then skips every
document already stored whole when the ingest is run again.

Writes through one target are serialised (a lock), so the store sees them in log
order. Use one ``DurableIngestTarget`` per store and WAL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs
import trio

from retrieval_mcp.ingest.runner import CommittableTarget
from retrieval_mcp.records import Chunk
from retrieval_mcp.wal.wal_records import (
    Applied,
    DataRecord,
    DeleteDocuments,
    IngestBatch,
    Payload,
    PublishDocuments,
    RenameDocuments,
    StageBatch,
    WalRecord,
    delete_documents,
    ingest_batch,
    publish_documents,
    rename_documents,
    stage_batch,
)


class WalAppender(Protocol):
    """What durable ingest needs from the WAL writer (``actors.wal_writer.WalWriter``)."""

    async def append(self, *payloads: Payload) -> tuple[int, ...]: ...

    def take_replay(self) -> list[WalRecord]: ...


@runtime_checkable
class ChunkLookup(Protocol):
    """A store that can return stored chunks by id (the embedded store can)."""

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]: ...


@runtime_checkable
class DocumentSwap(Protocol):
    """A store that swaps a document's versions whole (embedded, Postgres: ADR 0038)."""

    async def stage(self, chunks: Sequence[Chunk]) -> None: ...

    async def publish(self, source: str, versions: Mapping[str, str]) -> None: ...

    async def rename_documents(
        self, source: str, renames: Sequence[tuple[str, str, str, str]]
    ) -> None: ...


@attrs.define
class ReplayReport:
    """What ``recover()`` redid."""

    records: int = 0
    chunks_upserted: int = 0
    chunks_already_stored: int = 0
    documents_deleted: int = 0
    documents_settled: int = 0
    marked_applied: int = 0


AckHook = Callable[[WalRecord], None]


class DurableIngestTarget:
    """A ``CommittableTarget`` that writes through the WAL before touching the store.

    Owns neither the store nor the writer. ``on_acknowledged(record)`` is called as
    soon as a record is durable, before it is applied (for progress reports and tests).
    Cancellation: an append cancelled after it was queued may still become durable;
    an apply cancelled half-way is redone (in order) before the next write, at the
    next ``commit`` or by recovery after a restart.
    """

    def __init__(
        self,
        target: CommittableTarget,
        wal: WalAppender,
        *,
        on_acknowledged: AckHook | None = None,
    ) -> None:
        self._target = target
        self._wal = wal
        self._on_acknowledged = on_acknowledged
        self._lock = trio.Lock()
        # Acknowledged and not yet applied, in log order (recovered ones first).
        self._unapplied: list[WalRecord] = []
        # Applied since the last commit: no marker yet.
        self._applied: list[int] = []

    async def recover(self) -> ReplayReport:
        """Redo every acknowledged record recovery found unapplied, commit the store
        and mark them applied (durably). Call once after opening the WAL, before
        serving or ingesting; a second call finds nothing to do."""
        report = ReplayReport()
        async with self._lock:
            self._take_replay()
            report.records = len(self._unapplied)
            await self._apply_unapplied(report, look_up=True)
            report.marked_applied = await self._commit_locked()
        return report

    async def document_hashes(self, source: str) -> dict[str, str]:
        """What the store holds, after redoing anything acknowledged and not yet applied
        (so an ingest never skips a document on the strength of a stale answer)."""
        async with self._lock:
            self._take_replay()
            await self._apply_unapplied(ReplayReport(), look_up=True)
            return await self._target.document_hashes(source)

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        """Log the chunks, wait until durable, then embed and store them."""
        if chunks:
            await self._write(ingest_batch(chunks))

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None:
        """Log the deletion, wait until durable, then delete."""
        if doc_ids:
            await self._write(delete_documents(source, doc_ids))

    @property
    def swaps_documents(self) -> bool:
        """Whether ``stage`` and ``publish`` are available (the store can swap)."""
        return isinstance(self._target, DocumentSwap)

    async def stage(self, chunks: Sequence[Chunk]) -> None:
        """Log the chunks, wait until durable, then store them hidden (staged)."""
        if chunks:
            await self._write(stage_batch(chunks))

    async def publish(self, source: str, versions: Mapping[str, str]) -> None:
        """Log the swap, wait until durable, then make these versions current."""
        if versions:
            await self._write(publish_documents(source, versions))

    async def rename_documents(
        self, source: str, renames: Sequence[tuple[str, str, str, str]]
    ) -> None:
        """Log the renames, wait until durable, then re-key the stored documents."""
        if renames:
            await self._write(rename_documents(source, renames))

    async def commit(self) -> None:
        """Commit the store, then durably mark everything applied so far."""
        async with self._lock:
            self._take_replay()
            await self._apply_unapplied(ReplayReport(), look_up=True)
            await self._commit_locked()

    @property
    def pending(self) -> int:
        """Records acknowledged but not yet applied, plus applied but not yet marked."""
        return len(self._unapplied) + len(self._applied)

    async def _write(self, payload: DataRecord) -> None:
        async with self._lock:
            # Anything older that is acknowledged but unapplied goes first: log order.
            self._take_replay()
            await self._apply_unapplied(ReplayReport(), look_up=True)
            (seq,) = await self._wal.append(payload)
            record = WalRecord(seq=seq, payload=payload)
            self._unapplied.append(record)
            if self._on_acknowledged is not None:
                self._on_acknowledged(record)
            await self._apply_unapplied(ReplayReport(), look_up=False)

    def _take_replay(self) -> None:
        # Recovered records are older than anything appended through this target.
        self._unapplied[:0] = self._wal.take_replay()

    async def _apply_unapplied(self, report: ReplayReport, *, look_up: bool) -> None:
        if look_up and self._unapplied:
            sources = sorted(
                {
                    r.payload.source
                    for r in self._unapplied
                    if isinstance(r.payload, DeleteDocuments)
                }
            )
            stored = {source: await self._target.document_hashes(source) for source in sources}
            self._unapplied = skip_settled_documents(self._unapplied, stored, report)
        while self._unapplied:
            record = self._unapplied[0]
            await self._apply(record.payload, report, look_up=look_up)
            self._unapplied.pop(0)
            self._applied.append(record.seq)

    async def _apply(self, payload: Payload, report: ReplayReport, *, look_up: bool) -> None:
        if isinstance(payload, IngestBatch | StageBatch):
            chunks: Sequence[Chunk] = payload.chunks
            if look_up and isinstance(self._target, ChunkLookup):
                # Same id means same source, document version and position; comparing
                # the stored chunk also catches a metadata-only difference.
                stored = set(await self._target.fetch([c.id for c in chunks]))
                chunks = [c for c in chunks if c not in stored]
            report.chunks_already_stored += len(payload.chunks) - len(chunks)
            report.chunks_upserted += len(chunks)
            if chunks and isinstance(payload, StageBatch):
                await self._swap_target().stage(chunks)
            elif chunks:
                await self._target.upsert(chunks)
        elif isinstance(payload, PublishDocuments):
            await self._swap_target().publish(payload.source, dict(payload.versions))
        elif isinstance(payload, RenameDocuments):
            await self._swap_target().rename_documents(payload.source, payload.renames)
        elif isinstance(payload, DeleteDocuments):
            if payload.doc_ids:
                await self._target.delete_documents(payload.source, payload.doc_ids)
            report.documents_deleted += len(payload.doc_ids)
        else:
            raise TypeError(f"not a record that changes the store: {type(payload).__name__}")

    def _swap_target(self) -> DocumentSwap:
        if not isinstance(self._target, DocumentSwap):
            raise TypeError("a staged record for a store that cannot swap documents")
        return self._target

    async def _commit_locked(self) -> int:
        await self._target.commit()
        if not self._applied:
            return 0
        seqs = tuple(self._applied)
        await self._wal.append(Applied(seqs=seqs))
        del self._applied[: len(seqs)]
        return len(seqs)


def skip_settled_documents(
    records: Sequence[WalRecord],
    stored: Mapping[str, Mapping[str, str]],
    report: ReplayReport,
) -> list[WalRecord]:
    """``records`` without the operations on documents the store already holds in
    their final state, so a redo does not delete and re-embed them.

    Redo runs in log order, and a replaced document is logged as "delete X" then
    "upsert X's chunks": redone naively, the delete would remove chunks that are
    stored and the upsert would embed them again. Operations on different documents
    touch disjoint chunks, so each document can be judged alone. For a document X
    that these records delete, the final state is exactly the chunks upserted after
    its last delete. X is settled when that is already so: those chunks form one
    whole version (``doc_chunks`` of them, one ``doc_hash``) and ``stored`` (the
    store's ``document_hashes``) reports exactly that version of X, whole; or when
    nothing is upserted after the delete and X is not stored at all. Every operation
    on a settled document is dropped; records keep their sequence numbers (an emptied
    one is a no-op that still gets its applied marker).
    """
    last_delete: dict[tuple[str, str], int] = {}
    for index, record in enumerate(records):
        if isinstance(record.payload, DeleteDocuments):
            for doc_id in record.payload.doc_ids:
                last_delete[(record.payload.source, doc_id)] = index
    final: dict[tuple[str, str], list[Chunk]] = {key: [] for key in last_delete}
    for index, record in enumerate(records):
        if isinstance(record.payload, IngestBatch):
            for chunk in record.payload.chunks:
                key = (chunk.provenance.source, chunk.provenance.doc_id)
                if key in last_delete and index > last_delete[key]:
                    final[key].append(chunk)
    settled = {
        key
        for key, chunks in final.items()
        if _already_final(chunks, stored.get(key[0], {}).get(key[1]))
    }
    if not settled:
        return list(records)
    report.documents_settled += len(settled)
    kept: list[WalRecord] = []
    for record in records:
        payload = record.payload
        if isinstance(payload, DeleteDocuments):
            doc_ids = tuple(d for d in payload.doc_ids if (payload.source, d) not in settled)
            payload = attrs.evolve(payload, doc_ids=doc_ids)
        elif isinstance(payload, IngestBatch):
            chunks = tuple(
                c
                for c in payload.chunks
                if (c.provenance.source, c.provenance.doc_id) not in settled
            )
            report.chunks_already_stored += len(payload.chunks) - len(chunks)
            payload = attrs.evolve(payload, chunks=chunks)
        kept.append(WalRecord(seq=record.seq, payload=payload))
    return kept


def _already_final(chunks: Sequence[Chunk], stored_hash: str | None) -> bool:
    if not chunks:
        return stored_hash is None
    hashes = {c.doc_hash for c in chunks}
    ids = {c.id for c in chunks}
    return (
        len(hashes) == 1
        and chunks[0].doc_hash != ""
        and stored_hash == chunks[0].doc_hash
        and len(ids) == chunks[0].provenance.doc_chunks
    )
