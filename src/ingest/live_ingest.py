"""Ingest inside a running server: one desk for the operator channel and the watchers.

The server owns the store and its WAL, so everything that writes while it serves comes
here: ``latence-retrieval-mcp ingest`` over the Unix socket (``transport.operator_channel``)
and the folder watchers (``ingest.folder_watch``). Runs are serialised (one lock): two
runs over the same source would each judge "unchanged" against what the other is
rewriting. Searches go on meanwhile; the store swaps each document whole (ADR 0038).

Per source the desk keeps what ``index_status`` shows: files seen, pending, last sync
and the files that failed, each with its reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs
import trio

from retrieval_mcp.ingest.chunk_builder import document_hash
from retrieval_mcp.ingest.formats.format_settings import ColumnMapping, FormatSettings
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.ingest.runner import (
    CommittableTarget,
    IngestReport,
    ProgressFn,
    PublishedFn,
    ingest_documents,
    read_documents,
)
from retrieval_mcp.settings import ChunkingSettings


@runtime_checkable
class RenamingTarget(Protocol):
    async def rename_documents(
        self, source: str, renames: Sequence[tuple[str, str, str, str]]
    ) -> None: ...


#: Failures kept per source (the newest); the count is kept in full.
MAX_ERRORS_SHOWN = 20


@attrs.define
class SourceSync:
    """What ``index_status`` reports for one source written while serving."""

    files_seen: int = 0
    pending: int = 0
    last_sync: float | None = None  # wall-clock seconds
    syncs: int = 0
    errors: dict[str, str] = attrs.field(factory=dict)  # path -> reason
    error_count: int = 0

    def view(self) -> dict[str, Any]:
        return {
            "files_seen": self.files_seen,
            "pending": self.pending,
            "last_sync": self.last_sync,
            "syncs": self.syncs,
            "errors": [{"path": p, "reason": r} for p, r in self.errors.items()],
            "error_count": self.error_count,
        }


class IngestDesk:
    """Serialised ingest into the server's durable target, with per-source status."""

    def __init__(
        self,
        chunking: ChunkingSettings,
        target: CommittableTarget | None = None,
        *,
        formats: FormatSettings | None = None,
        commit_every: int = 0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._target = target
        #: How files are read (bounds, column mappings): the operator channel and the
        #: watchers read with the same settings as a direct ``ingest``.
        self.formats = formats or FormatSettings()
        #: Commit (index) every this many chunks, as a direct ingest does (ADR 0027).
        self._commit_every = commit_every
        #: Set once the target is attached: the server attaches it after WAL recovery,
        #: and the watchers (started earlier, in the one tree) wait for it.
        self.ready = trio.Event()
        if target is not None:
            self.ready.set()
        self._chunking = chunking
        self._lock = trio.Lock()
        self._wall_clock = wall_clock
        self.sources: dict[str, SourceSync] = {}

    def attach(self, target: CommittableTarget) -> None:
        self._target = target
        self.ready.set()

    async def _ready_target(self) -> CommittableTarget:
        await self.ready.wait()
        assert self._target is not None
        return self._target

    def sync_of(self, source: str) -> SourceSync:
        return self.sources.setdefault(source, SourceSync())

    async def ingest_path(
        self,
        path: Path,
        *,
        source: str,
        prune: bool = False,
        progress: ProgressFn | None = None,
        published: PublishedFn | None = None,
        columns: ColumnMapping | None = None,
    ) -> IngestReport:
        """What ``latence-retrieval-mcp ingest PATH`` does, applied by this server."""
        formats = self.formats
        if columns is not None:
            formats = formats.model_copy(update={"columns": columns})
        documents, errors = await read_documents(path, formats)
        report = await self.ingest(
            documents, source=source, prune=prune, progress=progress, published=published
        )
        report.errors.extend(errors)
        return report

    async def ingest(
        self,
        documents: Iterable[Document],
        *,
        source: str,
        prune: bool = False,
        progress: ProgressFn | None = None,
        published: PublishedFn | None = None,
    ) -> IngestReport:
        target = await self._ready_target()
        async with self._lock:
            report = await ingest_documents(
                target,
                documents,
                source=source,
                chunk_chars=self._chunking.chunk_chars,
                overlap_chars=self._chunking.overlap_chars,
                prune=prune,
                progress=progress,
                published=published,
                commit_every=self._commit_every,
            )
        sync = self.sync_of(source)
        sync.syncs += 1
        sync.last_sync = self._wall_clock()
        return report

    async def stored(self, source: str) -> dict[str, str]:
        """doc_id -> doc_hash of what the store holds for ``source``."""
        target = await self._ready_target()
        async with self._lock:
            return await target.document_hashes(source)

    def document_hash(self, doc: Document) -> str:
        return document_hash(
            doc, chunk_chars=self._chunking.chunk_chars, overlap_chars=self._chunking.overlap_chars
        )

    async def rename(self, source: str, renames: list[tuple[str, str, str, str]]) -> bool:
        """Re-key stored documents, chunk ids kept: (old_id, new_id, doc_hash, uri) each.
        False (nothing done) when the store cannot; the caller then re-ingests."""
        target = await self._ready_target()
        if not isinstance(target, RenamingTarget) or not getattr(target, "swaps_documents", False):
            return False
        async with self._lock:
            await target.rename_documents(source, renames)
            await target.commit()
        return True

    async def delete(self, source: str, doc_ids: list[str]) -> None:
        """Delete these documents (a watched file was removed)."""
        target = await self._ready_target()
        async with self._lock:
            await target.delete_documents(source, doc_ids)
            await target.commit()

    def statistics(self) -> dict[str, Any]:
        return {source: sync.view() for source, sync in sorted(self.sources.items())}
