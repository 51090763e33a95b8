"""Screen verdicts by content hash, so a foreign store's passage is screened once.

Our own stores keep the flags written at ingest. Chunks from a store this server did
not write (``flags is None``: Postgres tables, remote Qdrant, Databricks, Azure) are
screened on read; the learned layer makes that about a millisecond per passage, so
each verdict is kept under the SHA-256 of the raw text and the model version. The
cache is bounded (least recently used out) and, once ``persist_to`` names a file in the
state dir, appended to it, so a restart does not screen the same passages again. A
damaged or foreign line in the file is skipped, never fatal: the worst case is a
passage screened twice.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

DEFAULT_CAPACITY = 100_000


class VerdictCache:
    """content hash -> flags, bounded; thread-safe (hit views run on the Trio thread,
    ingest and tests may call from workers)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, *, version: str = "") -> None:
        self._capacity = max(1, capacity)
        self._version = version
        self._entries: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._file: Path | None = None
        self._appended = 0
        self.hits = 0
        self.misses = 0

    def key(self, text: str) -> str:
        digest = hashlib.sha256(self._version.encode("utf-8") + b"\x00")
        digest.update(text.encode("utf-8", errors="surrogatepass"))
        return digest.hexdigest()[:32]

    def flags(self, text: str, compute: Callable[[str], tuple[str, ...]]) -> tuple[str, ...]:
        """The cached verdict for ``text``, or ``compute(text)`` stored as one."""
        key = self.key(text)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        flags = compute(text)
        with self._lock:
            self._put(key, flags)
            self._append(key, flags)
        return flags

    def persist_to(self, path: Path) -> None:
        """Load verdicts from ``path`` (if it exists) and append new ones to it."""
        with self._lock:
            self._file = path
            if path.is_file():
                for line in path.read_text("utf-8", errors="replace").splitlines():
                    try:
                        key, version, flags = json.loads(line)
                    except (ValueError, TypeError):
                        continue
                    if version == self._version and isinstance(flags, list):
                        self._put(str(key), tuple(str(f) for f in flags))
            self._compact()

    def statistics(self) -> dict[str, int]:
        return {"size": len(self._entries), "hits": self.hits, "misses": self.misses}

    def __len__(self) -> int:
        return len(self._entries)

    def _put(self, key: str, flags: tuple[str, ...]) -> None:
        self._entries[key] = flags
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def _append(self, key: str, flags: tuple[str, ...]) -> None:
        if self._file is None:
            return
        try:
            with self._file.open("a", encoding="utf-8") as out:
                out.write(json.dumps([key, self._version, list(flags)]) + "\n")
        except OSError:
            self._file = None  # a read-only or full state dir costs re-screening, no more
            return
        self._appended += 1
        if self._appended > self._capacity:
            self._compact()

    def _compact(self) -> None:
        """Rewrite the file with the live entries only, so it stays bounded too."""
        if self._file is None:
            return
        lines = "".join(
            json.dumps([k, self._version, list(v)]) + "\n" for k, v in self._entries.items()
        )
        temporary = self._file.with_suffix(".tmp")
        try:
            temporary.write_text(lines, encoding="utf-8")
            temporary.replace(self._file)
        except OSError:
            self._file = None
            return
        self._appended = 0
