"""Keep actors running: start each with ``nursery.start``, restart a crashed one with backoff.

A supervisor is itself an actor (``name``, ``restarts``, ``run``), so supervisors nest:
the server's tree is one root ``Supervisor`` over the WAL writer, the pipeline (whose
own supervisor holds the stage actors), the auth gate and the rate limiter
(design/decisions/0009). An actor crash never reaches the server: the supervisor logs
it, counts it and, for a child that may restart, waits (exponential backoff, reset once
the child has stayed up for ``stable_after_s``) and starts it again. A ``once`` child is
never restarted: its crash is recorded and it stays down, saying why in its own state
(the WAL writer: an unknown file state must not be written over). Children start in the
order given; cancelling the supervisor stops every child.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs
import structlog
import trio

log = structlog.get_logger(__name__)

Restart = Literal["always", "once"]


class Actor(Protocol):
    name: str
    restarts: int

    async def run(self, *, task_status: trio.TaskStatus[None] = ...) -> None: ...


@runtime_checkable
class Subtree(Protocol):
    """A child that supervises children of its own (a Supervisor, the Pipeline)."""

    def states(self) -> dict[str, dict[str, Any]]: ...


@attrs.frozen
class Child:
    """An actor and its restart policy: ``always`` (the default) or ``once``."""

    actor: Actor
    restart: Restart = "always"


@attrs.define
class _ChildState:
    child: Child
    state: str = "starting"  # running | restarting | failed | stopped
    last_error: str | None = None


class Supervisor:
    def __init__(
        self,
        children: Sequence[Actor | Child],
        *,
        name: str = "supervisor",
        backoff_initial_s: float = 0.05,
        backoff_max_s: float = 5.0,
        stable_after_s: float = 30.0,
    ) -> None:
        self.name = name
        self.restarts = 0
        self._children = [_ChildState(c if isinstance(c, Child) else Child(c)) for c in children]
        self._backoff_initial = backoff_initial_s
        self._backoff_max = backoff_max_s
        self._stable_after = stable_after_s

    @property
    def actors(self) -> list[Actor]:
        return [c.child.actor for c in self._children]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start every child in order, report started once all are up, and keep them up."""
        async with trio.open_nursery() as nursery:
            for child in self._children:
                await nursery.start(
                    self._keep_running, child, name=f"supervise:{child.child.actor.name}"
                )
            task_status.started()

    async def _keep_running(
        self, child: _ChildState, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        actor = child.child.actor
        backoff = self._backoff_initial
        reported = False
        while True:
            began = trio.current_time()
            crash: BaseException | None = None
            try:
                async with trio.open_nursery() as nursery:
                    await nursery.start(actor.run, name=f"actor:{actor.name}")
                    child.state = "running"
                    if not reported:
                        task_status.started()
                        reported = True
            except* Exception as group:
                crash = group.exceptions[0]
            if crash is None:
                child.state = "stopped"
                return  # the actor's inbox was closed: a clean stop
            actor.restarts += 1
            child.last_error = repr(crash)
            if child.child.restart == "once":
                child.state = "failed"
                log.error("actor_failed", actor=actor.name, error=repr(crash))
                if not reported:
                    task_status.started()
                return
            child.state = "restarting"
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

    def states(self) -> dict[str, dict[str, Any]]:
        """Per child: state, restarts, last error (and its own children, for a subtree)."""
        out: dict[str, dict[str, Any]] = {}
        for child in self._children:
            actor = child.child.actor
            entry: dict[str, Any] = {
                "state": child.state,
                "restarts": actor.restarts,
                "last_error": child.last_error,
            }
            if isinstance(actor, Subtree):
                entry["children"] = actor.states()
            out[actor.name] = entry
        return out

    def failed(self) -> list[str]:
        """Names of the children (anywhere in the tree) that are down for good."""
        down = []
        for name, entry in self.states().items():
            down += _failed(name, entry)
        return down


def _failed(name: str, entry: Mapping[str, Any]) -> list[str]:
    found = [name] if entry["state"] == "failed" else []
    for child, sub in (entry.get("children") or {}).items():
        found += _failed(child, sub)
    return found
