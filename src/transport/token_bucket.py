"""Token-bucket and backoff arithmetic: pure functions over frozen values, no Trio, no clock.

A bucket holds at most ``burst`` tokens and refills continuously at ``per_minute / 60``
tokens per second; a request takes one. Continuous refill has no window boundary, so a
client can never spend two bursts back to back the way a fixed window allows: after
the burst is gone, admissions follow the refill rate exactly.

Failed-auth backoff is the same idea for guesses: ``free`` failures cost nothing, each
further one doubles the time the address must wait, up to a cap, and a quiet address is
forgiven after ``forget_after_s``.
"""

from __future__ import annotations

import math

import attrs

# Clocks are floats: a refill that should give exactly one token may give 0.9999999.
_EPSILON = 1e-9


@attrs.frozen
class BucketRate:
    per_minute: float
    burst: float

    @property
    def per_second(self) -> float:
        return self.per_minute / 60.0


@attrs.frozen
class BucketLevel:
    """Tokens in a bucket as of monotonic time ``at``."""

    tokens: float
    at: float


def full_bucket(rate: BucketRate, now: float) -> BucketLevel:
    return BucketLevel(tokens=rate.burst, at=now)


def level_at(level: BucketLevel, rate: BucketRate, now: float) -> BucketLevel:
    """The level at ``now``: refilled for the time elapsed, never above ``burst``.
    A clock that went backwards refills nothing."""
    elapsed = max(0.0, now - level.at)
    return BucketLevel(tokens=min(rate.burst, level.tokens + elapsed * rate.per_second), at=now)


def take(
    level: BucketLevel, rate: BucketRate, now: float, cost: float = 1.0
) -> tuple[BucketLevel, float]:
    """Try to take ``cost`` tokens at ``now``.

    Returns the new level and 0.0 when admitted, or the unchanged (refilled) level and
    the seconds until ``cost`` tokens will be there when refused. A refused request
    spends nothing, so hammering a full bucket does not push the wait further out.
    """
    current = level_at(level, rate, now)
    if current.tokens + _EPSILON >= cost:
        return BucketLevel(tokens=max(0.0, current.tokens - cost), at=now), 0.0
    return current, (cost - current.tokens) / rate.per_second


def is_full(level: BucketLevel, rate: BucketRate, now: float) -> bool:
    """A full bucket is the same as no bucket: it can be forgotten."""
    return level_at(level, rate, now).tokens + _EPSILON >= rate.burst


def retry_after_header(seconds: float) -> str:
    """HTTP ``Retry-After`` takes whole seconds: round up, and never say 0."""
    return str(max(1, math.ceil(seconds - _EPSILON)))


@attrs.frozen
class BackoffPolicy:
    free: int
    initial_s: float
    max_s: float
    forget_after_s: float


@attrs.frozen
class FailureRecord:
    failures: int
    last: float
    blocked_until: float


def record_failure(
    record: FailureRecord | None, policy: BackoffPolicy, now: float
) -> FailureRecord:
    """Count one failed authentication at ``now`` and set how long the address waits."""
    failures = 1 if record is None or forgotten(record, policy, now) else record.failures + 1
    over = failures - policy.free
    if over <= 0:
        return FailureRecord(failures=failures, last=now, blocked_until=now)
    # 2**over grows without bound; cap the exponent before it overflows a float.
    wait = min(policy.max_s, policy.initial_s * 2.0 ** min(over - 1, 64))
    return FailureRecord(failures=failures, last=now, blocked_until=now + wait)


def blocked_for(record: FailureRecord | None, now: float) -> float:
    """Seconds the address must still wait before its credentials are checked again."""
    if record is None:
        return 0.0
    return max(0.0, record.blocked_until - now)


def forgotten(record: FailureRecord, policy: BackoffPolicy, now: float) -> bool:
    """True once the address has been quiet long enough to start from zero again."""
    return now >= record.blocked_until and now - record.last >= policy.forget_after_s
