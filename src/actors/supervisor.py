"""Keep actors running: start each with ``nursery.start``, restart a crashed one with backoff.

An actor crash never reaches the server: the supervisor logs it, counts it, waits
(exponential backoff, reset once the actor has stayed up for ``stable_after_s``) and
starts it again on the same inbox, so queued requests are served by the new run.
Cancelling the supervisor stops every actor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import structlog
import trio

log = structlog.get_logger(__name__)


class Actor(Protocol):
    name: str
    restarts: int

    async def run(self, *, task_status: trio.TaskStatus[None] = ...) -> None: ...

    def statistics(self) -> dict[str, Any]: ...


class Supervisor:
    def __init__(
        self,
        actors: Sequence[Actor],
        *,
        backoff_initial_s: float = 0.05,
        backoff_max_s: float = 5.0,
        stable_after_s: float = 30.0,
    ) -> None:
        self.actors = list(actors)
        self._backoff_initial = backoff_initial_s
        self._backoff_max = backoff_max_s
        self._stable_after = stable_after_s

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start every actor, report started once all are up, and keep them up."""
        async with trio.open_nursery() as nursery:
            for actor in self.actors:
                await nursery.start(self._keep_running, actor, name=f"supervise:{actor.name}")
            task_status.started()

    async def _keep_running(
        self, actor: Actor, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        backoff = self._backoff_initial
        reported = False
        while True:
            began = trio.current_time()
            crash: BaseException | None = None
            try:
                async with trio.open_nursery() as nursery:
                    await nursery.start(actor.run, name=f"actor:{actor.name}")
                    if not reported:
                        task_status.started()
                        reported = True
            except* Exception as group:
                crash = group.exceptions[0]
            if crash is None:
                return  # the actor's inbox was closed: a clean stop
            actor.restarts += 1
            if trio.current_time() - began >= self._stable_after:
                backoff = self._backoff_initial
            log.warning(
                "actor_restarting",
                actor=actor.name,
                restarts=actor.restarts,
                error=repr(crash),
                backoff_s=backoff,
            )
            await trio.sleep(backoff)
            backoff = min(backoff * 2, self._backoff_max)

    def statistics(self) -> dict[str, dict[str, Any]]:
        return {actor.name: actor.statistics() for actor in self.actors}
