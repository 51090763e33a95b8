"""Reload, totally: every reloadable part registers a callback; a signal runs them all.

Each callback must validate completely before it swaps anything, so a failing reload
leaves its part as it was. The hub is the one place a reload's outcome is decided and
kept: whatever a callback raises — the project's own error, or any other exception (a
bug) — becomes a *refused* outcome, logged, counted and shown by ``index_status``, and
never reaches the task that asked for the reload (the signal watcher, the token file
poller). Only cancellation and KeyboardInterrupt pass through: they are not failures
of the reload but the program stopping.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import attrs
import structlog
import trio

from retrieval_mcp.errors import RetrievalMCPError

log = structlog.get_logger(__name__)

ReloadFn = Callable[[], Awaitable[dict[str, Any]]]
Trigger = Literal["signal", "file_change", "manual"]


@attrs.define
class ReloadOutcome:
    part: str
    ok: bool
    at: float
    detail: dict[str, Any] = attrs.field(factory=dict)
    error: str = ""
    trigger: Trigger = "signal"


class ReloadHub:
    def __init__(self, wall_clock: Callable[[], float] = time.time) -> None:
        self._parts: dict[str, ReloadFn] = {}
        self._wall_clock = wall_clock
        self.last: dict[str, ReloadOutcome] = {}
        self.refused: dict[str, int] = {}
        self._reloaded = trio.Event()

    async def wait_reloaded(self) -> None:
        """Return after the next ``reload_all`` finishes (whatever its outcome)."""
        await self._reloaded.wait()

    def register(self, part: str, reload: ReloadFn) -> None:
        self._parts[part] = reload
        self.refused.setdefault(part, 0)

    async def reload_part(self, part: str, trigger: Trigger = "manual") -> ReloadOutcome:
        """Run one part's reload and keep its outcome. Never raises, except
        ``trio.Cancelled`` and ``KeyboardInterrupt``."""
        try:
            detail = await self._parts[part]()
        except RetrievalMCPError as exc:
            outcome = self._refuse(part, trigger, exc.message)
            log.error("reload_refused", part=part, trigger=trigger, error=exc.message)
        except Exception as exc:
            # A bug, not a bad file; still a refusal: the part kept its old state,
            # because callbacks swap only after everything validated.
            error = f"unexpected {type(exc).__name__} while reloading; see the server log"
            outcome = self._refuse(part, trigger, error)
            log.exception("reload_crashed", part=part, trigger=trigger)
        else:
            outcome = ReloadOutcome(
                part=part, ok=True, at=self._wall_clock(), detail=detail, trigger=trigger
            )
            log.info("reloaded", part=part, trigger=trigger, **detail)
        self.last[part] = outcome
        return outcome

    def _refuse(self, part: str, trigger: Trigger, error: str) -> ReloadOutcome:
        self.refused[part] = self.refused.get(part, 0) + 1
        return ReloadOutcome(
            part=part, ok=False, at=self._wall_clock(), error=error, trigger=trigger
        )

    async def reload_all(self, trigger: Trigger = "signal") -> list[ReloadOutcome]:
        """Reload every part, one after another; each keeps or swaps on its own."""
        outcomes = [await self.reload_part(part, trigger) for part in list(self._parts)]
        self._reloaded.set()
        self._reloaded = trio.Event()
        return outcomes

    def statistics(self) -> dict[str, Any]:
        """Per part: the last outcome (``ok``/``refused`` with the reason, when, what
        triggered it) and how many reloads of it were refused since start."""
        parts: dict[str, Any] = {}
        for part, outcome in self.last.items():
            parts[part] = {
                **attrs.asdict(outcome),
                "outcome": "ok" if outcome.ok else "refused",
                "refused_count": self.refused.get(part, 0),
            }
        return parts

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())
