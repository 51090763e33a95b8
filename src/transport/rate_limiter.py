"""The rate limiter actor: token buckets per client address, per token and per (token, tool).

Admission is an in-line, synchronous call (``admit_*``): in Trio nothing else runs
between reading a bucket and writing it back, so no lock and no channel round trip is
needed on the hot path (ADR 0010 has the measurements). The actor's ``run`` task does
the housekeeping: it forgets buckets that have refilled completely (a full bucket is
the same as no bucket), so the table stays as small as the set of recently busy
callers. A Supervisor restarts it if it ever crashes; admissions keep working meanwhile.

Under ``serve --workers N`` the buckets are not this process's: ``shared`` is the
table every worker maps (``shared_limits.py``, ADR 0045), read and written under one
lock with the system-wide monotonic clock, so a budget holds for the whole server.
The arithmetic is the same ``token_bucket.take``; only where the level lives differs.

Three scopes, checked in this order by the transport and the dispatcher:

- ``per_address`` — every MCP request that fails authentication, by client address
  (``transport.client_address``): the flood guard. A request with a valid token is
  never charged here, so one client's failures cannot refuse another's valid token
  even when both share the loopback key;
- ``per_token`` — every authenticated MCP request, by token name → a JSON-RPC answer
  carrying the delay (``over_budget.py``), HTTP 429 only for non-requests;
- ``tools[<tool>]`` — each tool call, by token and tool → ToolError ``rate_limited``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import structlog
import trio

from retrieval_mcp.settings import LimitsSettings, RateSettings
from retrieval_mcp.transport.token_bucket import (
    BucketLevel,
    BucketRate,
    full_bucket,
    is_full,
    take,
)

if TYPE_CHECKING:
    from retrieval_mcp.transport.shared_limits import SharedBuckets

log = structlog.get_logger(__name__)

#: Seconds between sweeps of refilled buckets.
SWEEP_INTERVAL_S = 60.0


def _rate(settings: RateSettings) -> BucketRate:
    return BucketRate(per_minute=settings.per_minute, burst=float(settings.burst))


class RateLimiter:
    """Owns every bucket. ``admit_*`` return 0.0 when admitted, else the seconds until
    the caller may try again; a refused request spends nothing."""

    name = "rate-limiter"

    def __init__(self, limits: LimitsSettings, *, shared: SharedBuckets | None = None) -> None:
        self._per_address = _rate(limits.per_address)
        self._per_token = _rate(limits.per_token)
        self._per_tool: Mapping[str, BucketRate] = {
            tool: _rate(rate) for tool, rate in limits.tools.items()
        }
        self._buckets: dict[tuple[str, str], tuple[BucketLevel, BucketRate]] = {}
        self._shared = shared
        # Trio's clock has a per-process offset; only the OS monotonic clock is shared.
        self._clock: Callable[[], float] = (
            time.monotonic if shared is not None else trio.current_time
        )
        self.restarts = 0
        self.admitted = 0
        self.refused: dict[str, int] = {"address": 0, "token": 0, "tool": 0}

    def acquire_nowait(self, key: tuple[str, str], rate: BucketRate, now: float) -> float:
        """Take one token from the bucket ``key`` (created full) at ``now``."""
        if self._shared is not None:
            wait = self._shared.take(key, rate, now)
        else:
            entry = self._buckets.get(key)
            level = entry[0] if entry is not None else full_bucket(rate, now)
            level, wait = take(level, rate, now)
            self._buckets[key] = (level, rate)
        if wait:
            self.refused[key[0]] = self.refused.get(key[0], 0) + 1
        else:
            self.admitted += 1
        return wait

    def admit_address(self, address: str) -> float:
        return self.acquire_nowait(("address", address), self._per_address, self._clock())

    def admit_token(self, token_name: str) -> float:
        return self.acquire_nowait(("token", token_name), self._per_token, self._clock())

    def admit_tool(self, token_name: str, tool: str) -> float:
        """Per-tool budgets apply only to the tools configured under ``limits.tools``."""
        rate = self._per_tool.get(tool)
        if rate is None:
            return 0.0
        return self.acquire_nowait(("tool", f"{token_name}\x00{tool}"), rate, self._clock())

    def sweep(self, now: float) -> int:
        """Forget every bucket that has refilled to full; return how many went."""
        full = [key for key, (level, rate) in self._buckets.items() if is_full(level, rate, now)]
        for key in full:
            del self._buckets[key]
        return len(full)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Sweep refilled buckets every minute until cancelled."""
        task_status.started()
        while True:
            await trio.sleep(SWEEP_INTERVAL_S)
            self.sweep(trio.current_time())

    def statistics(self) -> dict[str, Any]:
        return {
            "restarts": self.restarts,
            "shared": self._shared is not None,
            "buckets": len(self._buckets)
            if self._shared is None
            else self._shared.occupied(self._clock()),
            "admitted": self.admitted,
            "refused": dict(self.refused),
        }
