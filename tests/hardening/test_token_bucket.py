"""Token-bucket and backoff arithmetic, tested directly: no Trio, no clock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.transport.token_bucket import (
    BackoffPolicy,
    BucketRate,
    blocked_for,
    forgotten,
    full_bucket,
    is_full,
    record_failure,
    retry_after_header,
    take,
)

RATE = BucketRate(per_minute=60, burst=5)  # one token a second, five at once


def test_exactly_the_burst_is_admitted_then_the_refill_rate() -> None:
    level = full_bucket(RATE, now=100.0)
    for _ in range(5):
        level, wait = take(level, RATE, 100.0)
        assert wait == 0.0
    level, wait = take(level, RATE, 100.0)
    assert wait == 1.0  # the sixth waits exactly one refill
    level, wait = take(level, RATE, 100.5)
    assert wait == 0.5  # a refused request spends nothing: the wait only shrinks
    level, wait = take(level, RATE, 101.0)
    assert wait == 0.0
    level, wait = take(level, RATE, 101.0)
    assert wait > 0


def test_no_double_burst_at_a_window_boundary() -> None:
    """A fixed window admits a burst at 59.9 s and another at 60.0 s; a bucket cannot."""
    level = full_bucket(RATE, now=0.0)
    admitted = 0
    for now in (59.9, 60.0):
        for _ in range(5):
            level, wait = take(level, RATE, now)
            admitted += wait == 0.0
    assert admitted == 5


def test_refill_is_capped_and_a_clock_going_back_refills_nothing() -> None:
    level = full_bucket(RATE, now=0.0)
    level, _ = take(level, RATE, 0.0)
    assert is_full(level, RATE, 3600.0) and not is_full(level, RATE, 0.5)
    level, wait = take(level, RATE, -50.0)
    assert wait == 0.0 and level.tokens == 3.0


@given(
    per_minute=st.floats(0.5, 10_000),
    burst=st.integers(1, 500),
    gaps=st.lists(st.floats(0, 30), min_size=1, max_size=200),
)
def test_admissions_never_exceed_burst_plus_refill(
    per_minute: float, burst: int, gaps: list[float]
) -> None:
    rate = BucketRate(per_minute=per_minute, burst=burst)
    level = full_bucket(rate, 0.0)
    now, admitted = 0.0, 0
    for gap in gaps:
        now += gap
        level, wait = take(level, rate, now)
        if wait == 0.0:
            admitted += 1
        else:
            assert wait > 0 and level.tokens < 1.0
        assert 0.0 <= level.tokens <= burst
    assert admitted <= burst + now * rate.per_second + 1e-6


def test_retry_after_header_is_whole_seconds_never_zero() -> None:
    assert [retry_after_header(s) for s in (0.0, 0.01, 1.0, 1.2, 59.99)] == [
        "1",
        "1",
        "1",
        "2",
        "60",
    ]


POLICY = BackoffPolicy(free=3, initial_s=1.0, max_s=8.0, forget_after_s=8.0)


def test_backoff_doubles_after_the_free_failures_up_to_the_cap() -> None:
    record = None
    waits = []
    now = 0.0
    for _ in range(8):
        record = record_failure(record, POLICY, now)
        waits.append(blocked_for(record, now))
    assert waits == [0.0, 0.0, 0.0, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert blocked_for(record, now + 3.0) == 5.0


def test_a_quiet_address_is_forgiven() -> None:
    record = None
    for _ in range(5):
        record = record_failure(record, POLICY, 0.0)
    assert record is not None and not forgotten(record, POLICY, 4.0)
    assert forgotten(record, POLICY, 8.0)
    record = record_failure(record, POLICY, 8.0)
    assert record.failures == 1 and blocked_for(record, 8.0) == 0.0


def test_huge_failure_counts_do_not_overflow() -> None:
    record = None
    for _ in range(5000):
        record = record_failure(record, POLICY, 0.0)
    assert blocked_for(record, 0.0) == 8.0
