"""The bucket table every worker maps: same arithmetic as one process, one budget for all."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_mcp.settings import LimitsSettings, RateSettings
from retrieval_mcp.transport.rate_limiter import RateLimiter
from retrieval_mcp.transport.shared_limits import PROBE, SharedBuckets, create_table
from retrieval_mcp.transport.token_bucket import BucketRate, full_bucket, take

RATE = BucketRate(per_minute=60, burst=3)


def _table(tmp_path: Path) -> SharedBuckets:
    path = tmp_path / "limits.bin"
    create_table(path)
    return SharedBuckets(path)


def test_a_second_mapping_sees_what_the_first_spent(tmp_path: Path) -> None:
    first = _table(tmp_path)
    second = SharedBuckets(first.path)
    assert [first.take(("token", "a"), RATE, 10.0) for _ in range(2)] == [0.0, 0.0]
    assert second.take(("token", "a"), RATE, 10.0) == 0.0
    assert second.take(("token", "a"), RATE, 10.0) > 0  # the burst of 3 is spent, for both
    assert first.take(("token", "b"), RATE, 10.0) == 0.0  # another key is its own bucket
    assert first.take(("token", "a"), RATE, 11.0) == 0.0  # one second refills one token
    first.close()
    second.close()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=5), min_size=1, max_size=40))
def test_the_table_agrees_with_the_pure_bucket(gaps: list[float]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        table = _table(Path(folder))
        level, now = full_bucket(RATE, 0.0), 0.0
        for gap in gaps:
            now += gap
            level, expected = take(level, RATE, now)
            assert table.take(("token", "t"), RATE, now) == expected
        table.close()


def test_many_keys_colliding_never_block_a_new_one(tmp_path: Path) -> None:
    table = _table(tmp_path)
    for i in range(PROBE * 600):  # more keys than slots: every probe window fills up
        table.take(("address", f"a{i}"), RATE, 0.0)
    assert table.take(("address", "newcomer"), RATE, 0.0) == 0.0
    table.close()


def test_a_refilled_slot_is_reused(tmp_path: Path) -> None:
    table = _table(tmp_path)
    for i in range(100):
        table.take(("token", f"t{i}"), RATE, 0.0)
    assert table.occupied(0.0) == 100
    assert table.occupied(10.0) == 0  # three seconds refill a burst of three


def _spend(path: str, attempts: int, results: multiprocessing.Queue[int]) -> None:
    table = SharedBuckets(Path(path))
    rate = BucketRate(per_minute=0.001, burst=50)
    admitted = sum(table.take(("token", "shared"), rate, 100.0) == 0.0 for _ in range(attempts))
    results.put(admitted)


def test_processes_racing_for_one_budget_spend_it_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "limits.bin"
    create_table(path)
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue[int] = context.Queue()
    workers = [context.Process(target=_spend, args=(str(path), 400, results)) for _ in range(3)]
    for worker in workers:
        worker.start()
    admitted = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert sum(admitted) == 50  # not 3 x 50: one bucket for all three processes


def test_the_limiter_spends_from_the_shared_table(tmp_path: Path) -> None:
    path = tmp_path / "limits.bin"
    create_table(path)
    limits = LimitsSettings(per_token=RateSettings(per_minute=1, burst=2))
    one = RateLimiter(limits, shared=SharedBuckets(path))
    other = RateLimiter(limits, shared=SharedBuckets(path))
    assert one.admit_token("agent") == 0.0
    assert other.admit_token("agent") == 0.0
    assert one.admit_token("agent") > 0
    assert other.admit_token("agent") > 0
    assert other.statistics()["shared"] is True
    assert other.statistics()["buckets"] == 1


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.floats(allow_nan=True, allow_infinity=True, width=64),
    at=st.floats(allow_nan=True, allow_infinity=True, width=64),
)
def test_a_torn_or_garbage_slot_never_locks_its_key_out(tokens: float, at: float) -> None:
    """A slot holding the key's digest but any doubles (a write torn by ``kill -9``, a
    stray byte) costs the key at most one refill interval, never a lockout."""
    import tempfile

    from retrieval_mcp.transport.shared_limits import SLOT, _digest

    with tempfile.TemporaryDirectory() as tmp:
        table = _table(Path(tmp))
        key = ("token", "a")
        digest = _digest(key)
        start = int.from_bytes(digest[:4], "little") % 4096
        SLOT.pack_into(
            table._map, start * SLOT.size, digest, tokens, at, RATE.burst, RATE.per_minute
        )
        wait = table.take(key, RATE, 100.0)
        assert 0.0 <= wait <= 1.0 / RATE.per_second  # finite, at most one token's refill
        assert table.take(key, RATE, 100.0 + 1.0 / RATE.per_second + 1e-6) == 0.0
        table.close()
