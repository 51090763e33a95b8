"""The pool's pure parts: what a worker runs with, what is refused, how often it restarts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.cli.sessions_command import session_logs
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.worker_pool import (
    RestartBudget,
    check_worker_count,
    worker_settings,
)

PG = {"kind": "postgres", "postgres": {"conninfo": "host=/nowhere"}}


def test_each_worker_gets_its_own_wal_and_log_and_only_worker_0_fills_the_store(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(backend=PG, demo={"ingest_on_first_start": True})
    first, second = (Settings.model_validate(worker_settings(settings, k)) for k in (0, 1))
    assert first.wal_path == settings.wal_path / "worker-0"
    assert second.wal_path == settings.wal_path / "worker-1"
    assert first.logging.file != second.logging.file
    assert first.demo.ingest_on_first_start and not second.demo.ingest_on_first_start
    assert second.backend == settings.backend and second.limits == settings.limits


def test_the_embedded_store_and_watchers_are_refused_with_a_remedy(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    check_worker_count(make_settings(), 1)  # one process: always fine
    with pytest.raises(ConfigError, match="qdrant-embedded") as refused:
        check_worker_count(make_settings(), 2)
    assert "postgres" in refused.value.remedy
    watch = {"watch": [{"path": str(tmp_path), "source": "notes"}]}
    with pytest.raises(ConfigError, match="watch"):
        check_worker_count(make_settings(backend=PG, ingest=watch), 2)
    with pytest.raises(ConfigError):
        check_worker_count(make_settings(backend=PG), 0)


@given(st.lists(st.floats(min_value=0, max_value=30), max_size=60))
def test_restarts_never_exceed_the_budget_in_any_window(gaps: list[float]) -> None:
    budget = RestartBudget(limit=3, window_s=60.0)
    now, allowed = 0.0, []
    for gap in gaps:
        now += gap
        if budget.allow(now):
            allowed.append(now)
    for i, at in enumerate(allowed):
        assert sum(1 for other in allowed[i:] if other - at < 60.0) <= 3


def test_a_quiet_minute_restores_the_budget() -> None:
    budget = RestartBudget(limit=2, window_s=60.0)
    assert budget.allow(0) and budget.allow(1) and not budget.allow(2)
    assert budget.allow(61)


def test_sessions_reads_the_server_log_and_every_workers(tmp_path: Path) -> None:
    wal = tmp_path / "wal"
    assert session_logs(wal) == []
    for name in ("worker-10", "worker-2", "worker-x", "other"):
        (wal / name).mkdir(parents=True)
    assert session_logs(wal) == [wal, wal / "worker-2", wal / "worker-10"]
