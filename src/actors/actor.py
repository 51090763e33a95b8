"""The request/reply actor: a bounded inbox, one task per job, replies over one-shot channels.

Why this shape: each pipeline stage is an independent Trio actor that the supervisor
can restart, yet a slow job must not block the next one, so the actor runs every job
in its own task inside its nursery. The requester owns the job's cancel scope: leaving
``ask`` for any reason (deadline, client gone) cancels the work. An
actor that dies closes every reply channel it holds and fails every job still queued,
and while it waits out its restart backoff ``ask`` fails at once with ActorRestarted
(design/decisions/0009), so no requester ever waits on a dead actor.
"""

from __future__ import annotations

import contextlib
from typing import Any, Generic, TypeVar

import attrs
import outcome
import structlog
import trio

from retrieval_mcp.actors.faults import FaultInjector, InjectedCrash
from retrieval_mcp.errors import ActorRestarted, RetrievalMCPError, StepTimeout

log = structlog.get_logger(__name__)

Req = TypeVar("Req")
Rep = TypeVar("Rep")


@attrs.frozen
class Job(Generic[Req, Rep]):
    request: Req
    reply: trio.MemorySendChannel[outcome.Outcome[Rep]]
    scope: trio.CancelScope


class RequestActor(Generic[Req, Rep]):
    """Subclasses implement ``handle``; callers use ``ask``; a Supervisor runs ``run``."""

    def __init__(
        self, name: str, *, faults: FaultInjector | None = None, inbox_size: int = 64
    ) -> None:
        self.name = name
        self.faults = faults or FaultInjector()
        self._inbox_send, self._inbox = trio.open_memory_channel[Job[Req, Rep]](inbox_size)
        self.restarts = 0
        self.handled = 0
        self.failed = 0
        self.in_flight = 0
        self.refused_down = 0
        self._down = False
        self._running = trio.Event()

    async def handle(self, request: Req) -> Rep:
        raise NotImplementedError

    @property
    def down(self) -> bool:
        """True from a crash (or stop) until the supervisor has started the actor again."""
        return self._down

    async def wait_running(self) -> None:
        """Return once the actor is running (at once if it is)."""
        await self._running.wait()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the inbox until it is closed. An InjectedCrash (or a bug in this loop)
        ends the run with an exception; the supervisor restarts it. However the run
        ends, every job still queued is failed at once (its requester sees
        ActorRestarted) and ``ask`` refuses new jobs until the next run starts."""
        try:
            async with trio.open_nursery() as nursery:
                self._down = False
                self._running.set()
                task_status.started()
                self.faults.checkpoint(self.name)  # a crash while starting up
                async for job in self._inbox:
                    try:
                        self.faults.checkpoint(self.name)
                    except BaseException:
                        job.reply.close()  # dying with a job in hand: tell its requester now
                        raise
                    nursery.start_soon(self._serve, job, name=f"{self.name}:job")
        finally:
            self._down = True
            self._running = trio.Event()
            self._fail_queued()

    def _fail_queued(self) -> None:
        while True:
            try:
                job = self._inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            job.reply.close()

    async def _serve(self, job: Job[Req, Rep]) -> None:
        with job.reply:  # closed on every exit: a requester never waits on a dead job
            self.in_flight += 1
            try:
                result: outcome.Outcome[Rep] | None = None
                with job.scope:
                    self.faults.checkpoint(self.name)
                    try:
                        result = outcome.Value(await self.handle(job.request))
                    except RetrievalMCPError as exc:
                        result = outcome.Error(exc)
                    except InjectedCrash:
                        raise
                    except Exception as exc:  # a bug in one job must not kill the others
                        log.exception("actor_job_failed", actor=self.name)
                        result = outcome.Error(
                            RetrievalMCPError(f"{self.name} failed: {type(exc).__name__}")
                        )
                    self.faults.checkpoint(self.name)
                if result is None:  # the job's own deadline passed
                    result = outcome.Error(StepTimeout(f"{self.name} ran out of time"))
                if isinstance(result, outcome.Error):
                    self.failed += 1
                else:
                    self.handled += 1
                with contextlib.suppress(trio.BrokenResourceError):  # requester left
                    job.reply.send_nowait(result)
            finally:
                self.in_flight -= 1

    async def ask(self, request: Req, *, deadline: float) -> Rep:
        """Send ``request`` and wait for the reply, at most until ``deadline``.

        Raises the handler's RetrievalMCPError, StepTimeout when the deadline passes
        in the actor, ActorRestarted when the actor died with the job or is down
        (waiting out its restart backoff) when asked. Cancellation of the caller
        cancels the job.
        """
        if self._down:
            await trio.lowlevel.checkpoint()
            self.refused_down += 1
            raise ActorRestarted(f"{self.name} is restarting")
        send, receive = trio.open_memory_channel[outcome.Outcome[Rep]](1)
        scope = trio.CancelScope(deadline=deadline)
        try:
            with receive:
                await self._inbox_send.send(Job(request=request, reply=send, scope=scope))
                try:
                    result = await receive.receive()
                except trio.EndOfChannel:
                    raise ActorRestarted(f"{self.name} stopped before answering") from None
        finally:
            scope.cancel()  # nobody waits any more: stop the work
        return result.unwrap()

    def close(self) -> None:
        """Close the inbox: the actor finishes its jobs and its run returns."""
        self._inbox_send.close()

    def statistics(self) -> dict[str, Any]:
        return {
            "restarts": self.restarts,
            "handled": self.handled,
            "failed": self.failed,
            "in_flight": self.in_flight,
            "queued": self._inbox.statistics().current_buffer_used,
            "down": self._down,
            "refused_down": self.refused_down,
        }
