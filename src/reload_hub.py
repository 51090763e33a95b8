"""SIGHUP reload: every reloadable part registers a callback; one signal runs them all.

Each callback must validate completely before it swaps anything, so a failing reload
leaves its part as it was. Outcomes are kept for ``index_status`` and logged.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import structlog
import trio

from retrieval_mcp.errors import RetrievalMCPError

log = structlog.get_logger(__name__)

ReloadFn = Callable[[], Awaitable[dict[str, Any]]]


@attrs.define
class ReloadOutcome:
    part: str
    ok: bool
    at: float
    detail: dict[str, Any] = attrs.field(factory=dict)
    error: str = ""


class ReloadHub:
    def __init__(self) -> None:
        self._parts: dict[str, ReloadFn] = {}
        self.last: dict[str, ReloadOutcome] = {}
        self._reloaded = trio.Event()

    async def wait_reloaded(self) -> None:
        """Return after the next ``reload_all`` finishes (whatever its outcome)."""
        await self._reloaded.wait()

    def register(self, part: str, reload: ReloadFn) -> None:
        self._parts[part] = reload

    async def reload_all(self) -> list[ReloadOutcome]:
        outcomes = []
        for part, reload in self._parts.items():
            try:
                detail = await reload()
            except RetrievalMCPError as exc:
                outcome = ReloadOutcome(part=part, ok=False, at=time.time(), error=exc.message)
                log.error("reload_failed", part=part, error=exc.message)
            else:
                outcome = ReloadOutcome(part=part, ok=True, at=time.time(), detail=detail)
                log.info("reloaded", part=part, **detail)
            self.last[part] = outcome
            outcomes.append(outcome)
        self._reloaded.set()
        self._reloaded = trio.Event()
        return outcomes

    def statistics(self) -> dict[str, Any]:
        return {part: attrs.asdict(outcome) for part, outcome in self.last.items()}
