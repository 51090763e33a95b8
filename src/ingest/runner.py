"""Ingest: load → chunk → skip what is already stored → embed and upsert in batches.

Resumable at document granularity: the target reports which documents are stored in
full (``document_hashes``), those are skipped without re-embedding. A document whose
content changed is swapped whole where the target can (``swaps_documents``: its new
chunks are staged, then the document is published, ADR 0038), so searches meanwhile
see the old version or the new one; elsewhere its old chunks are deleted before the
new ones are written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs
import trio

from retrieval_mcp.backends.protocol import IngestTarget
from retrieval_mcp.ingest.chunk_builder import build_chunks, document_hash
from retrieval_mcp.ingest.formats.format_settings import FormatSettings
from retrieval_mcp.ingest.loaders import Document, FileError, load_documents
from retrieval_mcp.records import Chunk

BATCH_CHUNKS = 64


class CommittableTarget(IngestTarget, Protocol):
    async def commit(self) -> None: ...


@runtime_checkable
class SwappingTarget(Protocol):
    """A target that stages new versions and publishes them whole."""

    swaps_documents: bool

    async def stage(self, chunks: Sequence[Chunk]) -> None: ...

    async def publish(self, source: str, versions: Mapping[str, str]) -> None: ...


def swapping(target: object) -> SwappingTarget | None:
    """``target`` as a SwappingTarget when it can swap documents now, else None."""
    if isinstance(target, SwappingTarget) and target.swaps_documents:
        return target
    return None


@attrs.define
class IngestReport:
    source: str
    documents_seen: int = 0
    documents_written: int = 0
    documents_unchanged: int = 0
    documents_replaced: int = 0
    documents_pruned: int = 0
    chunks_written: int = 0
    #: Files (or rows) that could not be read, each with its reason; ingest went on.
    errors: list[FileError] = attrs.field(factory=list)


ProgressFn = Callable[[IngestReport, int], None]
#: Called with the ids of documents whose new version (or deletion) is now durable.
PublishedFn = Callable[[list[str]], None]


async def ingest_documents(
    target: CommittableTarget,
    documents: Iterable[Document],
    *,
    source: str,
    chunk_chars: int,
    overlap_chars: int,
    prune: bool = False,
    progress: ProgressFn | None = None,
    published: PublishedFn | None = None,
    commit_every: int = 0,
) -> IngestReport:
    """Write ``documents`` into ``target`` under ``source``; return what was done.

    ``prune`` also deletes stored documents of ``source`` that are not in ``documents``.
    ``progress(report, chunks_pending)`` is called after each batch, ``published(ids)``
    once those documents' new versions are durable and searchable (swapping targets).
    ``commit_every`` (chunks; 0: only at the end) commits along the way, so an embedded
    store indexes each segment as it fills instead of one graph over everything at the
    end (ADR 0027).
    """
    swap = swapping(target)
    if swap is not None:
        return await _ingest_swapping(
            target,
            swap,
            documents,
            source,
            chunk_chars,
            overlap_chars,
            prune,
            progress,
            published,
            commit_every,
        )
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
            committed_at = await _commit_segment(target, commit_every, report, committed_at)
    await _flush(target, source, stored, pending, replaced, report, progress)
    stale = sorted(d for d in stored if d not in seen)
    if prune and stale:
        await target.delete_documents(source, stale)
        report.documents_pruned = len(stale)
    await target.commit()
    return report


async def _commit_segment(
    target: CommittableTarget, commit_every: int, report: IngestReport, committed_at: int
) -> int:
    """Commit once ``commit_every`` chunks were written since the last commit (ADR 0027:
    the embedded store indexes each segment as it fills); the new mark."""
    if commit_every and report.chunks_written - committed_at >= commit_every:
        await target.commit()
        return report.chunks_written
    return committed_at


async def read_documents(
    path: Path, formats: FormatSettings
) -> tuple[list[Document], list[FileError]]:
    """Every document under ``path`` and the files that could not be read, in a worker
    thread (parsers block); what a direct ingest and a running server both read."""
    errors: list[FileError] = []
    documents = await trio.to_thread.run_sync(lambda: list(load_documents(path, formats, errors)))
    return documents, errors


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


async def _ingest_swapping(
    target: CommittableTarget,
    swap: SwappingTarget,
    documents: Iterable[Document],
    source: str,
    chunk_chars: int,
    overlap_chars: int,
    prune: bool,
    progress: ProgressFn | None,
    published: PublishedFn | None,
    commit_every: int,
) -> IngestReport:
    """Stage each changed document's chunks, then publish the documents staged whole."""
    report = IngestReport(source=source)
    committed_at = 0
    stored = await target.document_hashes(source)
    seen: set[str] = set()
    pending: list[Chunk] = []
    versions: dict[str, str] = {}

    async def flush() -> None:
        while pending:
            batch = pending[:BATCH_CHUNKS]
            await swap.stage(batch)
            del pending[:BATCH_CHUNKS]
            report.chunks_written += len(batch)
            if progress is not None:
                progress(report, len(pending))
        if versions:
            await swap.publish(source, versions)
            report.documents_replaced += sum(1 for d in versions if d in stored)
            if published is not None:
                published(sorted(versions))
            versions.clear()

    for doc in documents:
        report.documents_seen += 1
        seen.add(doc.doc_id)
        doc_hash = document_hash(doc, chunk_chars=chunk_chars, overlap_chars=overlap_chars)
        if stored.get(doc.doc_id) == doc_hash:
            report.documents_unchanged += 1
            continue
        pending.extend(
            build_chunks(doc, source=source, chunk_chars=chunk_chars, overlap_chars=overlap_chars)
        )
        versions[doc.doc_id] = doc_hash
        report.documents_written += 1
        if len(pending) >= BATCH_CHUNKS:
            await flush()
            committed_at = await _commit_segment(target, commit_every, report, committed_at)
    await flush()
    stale = sorted(d for d in stored if d not in seen)
    if prune and stale:
        await target.delete_documents(source, stale)
        report.documents_pruned = len(stale)
        if published is not None:
            published(stale)
    await target.commit()
    return report
