"""Which version of a document a search may see while the document is being replaced.

A new version is written *staged* (stored, hidden from every search), then published:
the gate flips the document to the new version in one step on the Trio thread, and
only then does the store make the new chunks visible and delete the old ones. A search
builds its engine filter from the gate when it starts (``exclusions``), so for every
document it sees exactly one whole version: the old one, or the new one.

The flip must not change what a search that started before it reads: such a search's
filter hides the staged chunks by their flag alone, so un-staging them under it would
mix versions. ``publish`` therefore waits (``wait_for_readers``) until every search
that started before the flip has finished before the store is touched. Searches count
as finished when their coroutine ends, even if the engine thread they abandoned runs
on: its answer reaches nobody.

A crash loses the gate, not the guarantee: staged chunks stay flagged in the store
and hidden until a later ingest publishes their document (ADR 0038).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import trio

DocKey = tuple[str, str]  # (source, doc_id)


class VersionGate:
    """Documents being published, and the searches in flight, by the epoch they began."""

    def __init__(self) -> None:
        self._epoch = 0
        self._current: dict[DocKey, str] = {}  # published, store not yet settled
        self._readers: dict[int, int] = {}  # epoch -> searches begun then, still running
        self._changed = trio.Event()  # set, then replaced, whenever a search ends

    def exclusions(self) -> dict[DocKey, str]:
        """Documents mid-publish -> the one version a search starting now may see."""
        return dict(self._current)

    @contextmanager
    def reading(self) -> Iterator[dict[DocKey, str]]:
        """Around one search: yields ``exclusions()`` and counts the search as in flight."""
        epoch = self._epoch
        self._readers[epoch] = self._readers.get(epoch, 0) + 1
        try:
            yield dict(self._current)
        finally:
            left = self._readers[epoch] - 1
            if left:
                self._readers[epoch] = left
            else:
                del self._readers[epoch]
                self._notify()

    def flip(self, source: str, versions: Mapping[str, str]) -> int:
        """Make ``versions`` (doc_id -> doc_hash) current for searches starting now;
        returns the epoch to pass to ``wait_for_readers``."""
        for doc_id, doc_hash in versions.items():
            self._current[(source, doc_id)] = doc_hash
        self._epoch += 1
        return self._epoch

    async def wait_for_readers(self, epoch: int) -> None:
        """Until no search that began before ``epoch`` is still running."""
        while True:
            changed = self._changed
            if not any(e < epoch for e in self._readers):
                return
            await changed.wait()

    def settle(self, source: str, versions: Mapping[str, str]) -> None:
        """The store now holds only these versions, unflagged: forget them."""
        for doc_id, doc_hash in versions.items():
            if self._current.get((source, doc_id)) == doc_hash:
                del self._current[(source, doc_id)]

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()
