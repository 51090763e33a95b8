"""Keep a folder in sync with one source while the server serves (``[ingest] watch``).

Each watched folder is one actor in the server's supervision tree. It syncs once at
start, then after every debounced batch of file events (``watchfiles``): files that
are new or changed (by size and mtime, then by content hash in the runner) are
ingested, documents whose file is gone are deleted, unchanged ones cost a ``stat``.
A file that cannot be read is reported (path and reason, in ``index_status``) and
skipped; its previously stored version stays, and the rest of the folder goes on.

Document ids are the file's path relative to the folder, as for ``ingest FOLDER``, so
the watcher and a manual ingest of the same folder agree on what is stored.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import attrs
import structlog
import trio
import watchfiles

from retrieval_mcp.ingest.live_ingest import MAX_ERRORS_SHOWN, IngestDesk, SourceSync
from retrieval_mcp.ingest.loaders import SUFFIXES, Document, load_documents
from retrieval_mcp.settings import WatchSettings

log = structlog.get_logger(__name__)

#: Yields once as soon as the folder is being watched, then once per debounced batch
#: of changes under it (tests may pass their own).
ChangeFeed = Callable[[Path, int], AsyncIterator[object]]
#: How long one wait for events may last before the feed checks in (empty batches
#: are dropped, except the first, which says that watching has begun).
_EVENT_WAIT_MS = 500


async def watchfiles_feed(folder: Path, debounce_ms: int) -> AsyncIterator[object]:
    """``watchfiles``' events. The OS watch is registered before the first yield, so
    the sync that follows it misses nothing: a change during a sync is buffered and
    comes in the next batch."""
    first = True
    async for changes in watchfiles.awatch(
        folder,
        debounce=debounce_ms,
        recursive=True,
        yield_on_timeout=True,
        rust_timeout=_EVENT_WAIT_MS,
    ):
        if changes or first:
            first = False
            yield changes


@attrs.frozen
class _Seen:
    """A file as last read: its identity, and the documents it gave."""

    identity: tuple[int, int]  # (size, mtime_ns)
    documents: tuple[Document, ...]


class FolderWatcher:
    """One ``[[ingest.watch]]`` entry as a supervised actor (restart: always)."""

    def __init__(
        self, watch: WatchSettings, desk: IngestDesk, *, feed: ChangeFeed = watchfiles_feed
    ) -> None:
        self.name = f"watch:{watch.source}"
        self.restarts = 0
        self._watch = watch
        self._folder = Path(watch.path).expanduser()
        self._desk = desk
        self._feed = feed
        self._seen: dict[str, _Seen] = {}

    @property
    def status(self) -> SourceSync:
        return self._desk.sync_of(self._watch.source)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await self._desk.ready.wait()
        if not self._folder.is_dir():
            self._note_error(str(self._folder), "the watched folder does not exist")
            raise FileNotFoundError(f"watched folder {self._folder} does not exist")
        # The first sync runs once the folder is watched (the feed's first yield), so no
        # change between the listing and the watch can be missed.
        async for _ in self._feed(self._folder, self._watch.debounce_ms):
            await self.sync()

    async def sync(self) -> None:
        """Bring the source in line with the folder as it is now."""
        files, errors = await trio.to_thread.run_sync(self._list_files)
        status = self.status
        status.files_seen = len(files) + len(errors)
        status.pending = sum(1 for rel, identity in files.items() if self._changed(rel, identity))
        for rel, identity in files.items():
            if not self._changed(rel, identity):
                continue
            try:
                read = await trio.to_thread.run_sync(self._read, rel)
            except Exception as exc:  # any reader's failure: report it, go on
                errors[rel] = f"{type(exc).__name__}: {exc}"
                continue
            self._seen[rel] = _Seen(identity, read)
        for rel in [r for r in self._seen if r not in files and r not in errors]:
            del self._seen[rel]
        documents = [d for seen in self._seen.values() for d in seen.documents]
        source = self._watch.source
        await self._rename_moved(documents, set(errors))
        await self._desk.ingest(documents, source=source)
        stored = await self._desk.stored(source)
        present = {d.doc_id for d in documents}
        # A file that failed to read keeps its stored version: its id is still present.
        present |= {d for d in stored for rel in errors if d == rel or d.startswith(rel + "#")}
        gone = sorted(set(stored) - present)
        if gone:
            await self._desk.delete(source, gone)
        status.pending = 0
        status.error_count = len(errors)
        status.errors = dict(sorted(errors.items())[:MAX_ERRORS_SHOWN])
        if errors:
            log.warning("watch_files_failed", source=self._watch.source, files=len(errors))

    async def _rename_moved(self, documents: list[Document], unreadable: set[str]) -> None:
        """A new document whose content is stored under an id that is gone from the
        folder is that file, renamed: re-key it in place so its chunk ids are kept."""
        stored = await self._desk.stored(self._watch.source)
        ids = {d.doc_id for d in documents}
        gone_by_hash: dict[str, str] = {}
        for doc_id, doc_hash in stored.items():
            if doc_hash and doc_id not in ids and doc_id.split("#", 1)[0] not in unreadable:
                gone_by_hash.setdefault(doc_hash, doc_id)
        renames = []
        for doc in documents:
            if doc.doc_id in stored or not gone_by_hash:
                continue
            doc_hash = self._desk.document_hash(doc)
            old = gone_by_hash.pop(doc_hash, None)
            if old is not None:
                renames.append((old, doc.doc_id, doc_hash, doc.uri))
        if renames and await self._desk.rename(self._watch.source, renames):
            log.info("watch_renamed", source=self._watch.source, documents=len(renames))

    def _changed(self, rel: str, identity: tuple[int, int]) -> bool:
        seen = self._seen.get(rel)
        return seen is None or seen.identity != identity

    def _note_error(self, path: str, reason: str) -> None:
        self.status.errors = {path: reason}
        self.status.error_count = 1

    def _list_files(self) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
        """Relative path -> (size, mtime_ns) of every regular file the entry selects, and
        the selected paths that cannot be read as one (a FIFO would block the reader, a
        symlink loop has no content), each with its reason."""
        out: dict[str, tuple[int, int]] = {}
        errors: dict[str, str] = {}
        for root, dirs, names in os.walk(self._folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if name.startswith("."):
                    continue
                path = Path(root, name)
                rel = path.relative_to(self._folder).as_posix()
                if not self._selected(rel):
                    continue
                try:
                    st = path.stat()
                except FileNotFoundError:
                    continue  # gone between the listing and the stat: the next sync sees it
                except OSError as exc:
                    errors[rel] = f"{type(exc).__name__}: {exc.strerror}"
                    continue
                if not stat.S_ISREG(st.st_mode):
                    errors[rel] = "not a regular file"
                    continue
                out[rel] = (st.st_size, st.st_mtime_ns)
        return out, errors

    def _selected(self, rel: str) -> bool:
        include = self._watch.include
        if include:
            if not any(fnmatch.fnmatch(rel, p) for p in include):
                return False
        elif not rel.lower().endswith(SUFFIXES):
            return False
        return not any(fnmatch.fnmatch(rel, p) for p in self._watch.exclude)

    def _read(self, rel: str) -> tuple[Document, ...]:
        documents = list(load_documents(self._folder / rel, self._desk.formats))
        if len(documents) == 1:
            return (attrs.evolve(documents[0], doc_id=rel),)
        return tuple(attrs.evolve(d, doc_id=f"{rel}#{d.doc_id}") for d in documents)
