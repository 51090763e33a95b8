"""Ingest: load → chunk → skip what is already stored → embed and upsert in batches.

Resumable at document granularity: the target reports which documents are stored in
full (``document_hashes``), those are skipped without re-embedding, and a document
whose content changed has its old chunks deleted before the new ones are written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

import attrs

from retrieval_mcp.backends.protocol import IngestTarget
from retrieval_mcp.ingest.chunk_builder import build_chunks, document_hash
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.records import Chunk

BATCH_CHUNKS = 64


class CommittableTarget(IngestTarget, Protocol):
    async def commit(self) -> None: ...


@attrs.define
class IngestReport:
    source: str
    documents_seen: int = 0
    documents_written: int = 0
    documents_unchanged: int = 0
    documents_replaced: int = 0
    documents_pruned: int = 0
    chunks_written: int = 0


ProgressFn = Callable[[IngestReport, int], None]


async def ingest_documents(
    target: CommittableTarget,
    documents: Iterable[Document],
    *,
    source: str,
    chunk_chars: int,
    overlap_chars: int,
    prune: bool = False,
    progress: ProgressFn | None = None,
    commit_every: int = 0,
) -> IngestReport:
    """Write ``documents`` into ``target`` under ``source``; return what was done.

    ``prune`` also deletes stored documents of ``source`` that are not in ``documents``.
    ``progress(report, chunks_pending)`` is called after each batch. ``commit_every``
    (chunks; 0: only at the end) commits along the way, so an embedded store indexes
    each segment as it fills instead of one graph over everything at the end (ADR 0027).
    """
    report = IngestReport(source=source)
    committed_at = 0
    stored = await target.document_hashes(source)
    seen: set[str] = set()
    pending: list[Chunk] = []
    replaced: list[str] = []
    for doc in documents:
        report.documents_seen += 1
        seen.add(doc.doc_id)
        doc_hash = document_hash(doc, chunk_chars=chunk_chars, overlap_chars=overlap_chars)
        if stored.get(doc.doc_id) == doc_hash:
            report.documents_unchanged += 1
            continue
        # Delete whatever is stored under this id first (an old version, or a partial
        # copy of this one) so a document never mixes versions.
        replaced.append(doc.doc_id)
        chunks = build_chunks(
            doc, source=source, chunk_chars=chunk_chars, overlap_chars=overlap_chars
        )
        report.documents_written += 1
        pending.extend(chunks)
        if len(pending) >= BATCH_CHUNKS:
            await _flush(target, source, stored, pending, replaced, report, progress)
            if commit_every and report.chunks_written - committed_at >= commit_every:
                await target.commit()
                committed_at = report.chunks_written
    await _flush(target, source, stored, pending, replaced, report, progress)
    stale = sorted(d for d in stored if d not in seen)
    if prune and stale:
        await target.delete_documents(source, stale)
        report.documents_pruned = len(stale)
    await target.commit()
    return report


async def _flush(
    target: CommittableTarget,
    source: str,
    stored: dict[str, str],
    pending: list[Chunk],
    replaced: list[str],
    report: IngestReport,
    progress: ProgressFn | None,
) -> None:
    if replaced:
        await target.delete_documents(source, replaced)
        report.documents_replaced += sum(1 for d in replaced if d in stored)
        replaced.clear()
    while pending:
        batch = pending[:BATCH_CHUNKS]
        await target.upsert(batch)
        del pending[:BATCH_CHUNKS]
        report.chunks_written += len(batch)
        if progress is not None:
            progress(report, len(pending))
