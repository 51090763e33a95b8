"""Fault injection for chaos tests: make a named actor die at its Nth checkpoint.

Actors call ``faults.checkpoint(name)`` at the points where a real crash could
happen (before and after each await that does work). In production the injector is
never armed and a checkpoint is a dict lookup. Tests arm it with ``crash_at`` and walk
N = 1, 2, … over every checkpoint an actor passes in one request, as Trio's own tests
do with its checkpoints.
"""

from __future__ import annotations


class InjectedCrash(Exception):
    """Raised at an armed checkpoint: the actor dies as if it had a bug there."""


class FaultInjector:
    def __init__(self) -> None:
        self._armed: dict[str, int] = {}
        self.counts: dict[str, int] = {}

    def crash_at(self, actor: str, nth: int) -> None:
        """Crash ``actor`` when it passes its ``nth`` checkpoint from now (1-based)."""
        self.counts[actor] = 0
        self._armed[actor] = nth

    def disarm(self) -> None:
        self._armed.clear()

    def checkpoint(self, actor: str) -> None:
        count = self.counts.get(actor, 0) + 1
        self.counts[actor] = count
        if self._armed.get(actor) == count:
            del self._armed[actor]
            raise InjectedCrash(f"{actor} killed at checkpoint {count}")
