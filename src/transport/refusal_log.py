"""Sampled warnings: a flood of refusals must not become a flood of log lines.

The first line per (event, reason, client) is written; later ones within ``interval_s`` are only
counted, and the next line written says how many were skipped. A client that fails a
thousand times a second therefore costs one line per interval per reason, and the
operator still sees that it happened and how often.
"""

from __future__ import annotations

from typing import Any

import structlog
import trio

log = structlog.get_logger(__name__)

#: At most one line per (event, reason, client) in this many seconds; the rest are counted.
REFUSAL_LOG_INTERVAL_S = 10.0
#: Keys remembered at once; past this the table starts again (a flood of fresh keys).
MAX_KEYS = 4096


class RefusalLog:
    def __init__(self, interval_s: float = REFUSAL_LOG_INTERVAL_S) -> None:
        self._interval_s = interval_s
        self._last: dict[tuple[str, str, str], tuple[float, int]] = {}
        self.written = 0
        self.skipped = 0

    def note(
        self, event: str, reason: str, client: str, *, level: str = "info", **fields: Any
    ) -> bool:
        """Log ``event`` unless one with this reason and client was logged within the
        interval; True when a line was written."""
        now = trio.current_time()
        key = (event, reason, client)
        last, skipped = self._last.get(key, (-float("inf"), 0))
        if now - last < self._interval_s:
            self._last[key] = (last, skipped + 1)
            self.skipped += 1
            return False
        if len(self._last) >= MAX_KEYS:
            self._last.clear()
        self._last[key] = (now, 0)
        self.written += 1
        getattr(log, level)(event, reason=reason, client=client, skipped=skipped, **fields)
        return True
