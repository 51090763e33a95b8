"""Fault injection for chaos tests: make a named actor die at its Nth checkpoint.

Actors call ``faults.checkpoint(name)`` at the points where a real crash could
happen (before and after each await that does work). In production the injector is
never armed and a checkpoint is a dict lookup. Tests arm it with ``crash_at`` and walk
N = 1, 2, … over every checkpoint an actor passes in one request, as Trio's own tests
do with its checkpoints; ``hold_down`` makes an actor die at every checkpoint (so each
restart dies again at once) until ``release``.
"""

from __future__ import annotations


class InjectedCrash(Exception):
    """Raised at an armed checkpoint: the actor dies as if it had a bug there."""


class FaultInjector:
    def __init__(self) -> None:
        self._armed: dict[str, int] = {}
        self._held: set[str] = set()
        self.counts: dict[str, int] = {}

    def crash_at(self, actor: str, nth: int) -> None:
        """Crash ``actor`` when it passes its ``nth`` checkpoint from now (1-based)."""
        self.counts[actor] = 0
        self._armed[actor] = nth

    def hold_down(self, actor: str) -> None:
        """Crash ``actor`` at every checkpoint from now until ``release``."""
        self._held.add(actor)

    def release(self, actor: str) -> None:
        self._held.discard(actor)

    def disarm(self) -> None:
        self._armed.clear()
        self._held.clear()

    def checkpoint(self, actor: str) -> None:
        count = self.counts.get(actor, 0) + 1
        self.counts[actor] = count
        if actor in self._held:
            raise InjectedCrash(f"{actor} held down (checkpoint {count})")
        if self._armed.get(actor) == count:
            del self._armed[actor]
            raise InjectedCrash(f"{actor} killed at checkpoint {count}")
