"""One supervision tree: nesting, restart policies, and a WAL writer that crashes.

The server's tree is one root Supervisor over the WAL writer (``once``: never
restarted), the pipeline (a subtree of stage actors), the auth gate and the rate
limiter. A crashed WAL writer must turn readiness and ``index_status`` unhealthy, and
the server must keep answering tools; records it can no longer write are refused and
counted, never queued for nobody.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing
from mcp_types import TextContent

from retrieval_mcp.actors.faults import FaultInjector, InjectedCrash
from retrieval_mcp.actors.supervisor import Child, Supervisor
from retrieval_mcp.errors import WalFailed
from retrieval_mcp.services import ingest_path, open_services
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.caller import Caller
from retrieval_mcp.wal.filesystem import OsFileSystem
from retrieval_mcp.wal.recovery import iter_log
from retrieval_mcp.wal.wal_records import SessionRecord
from tests.transport.server_harness import ingest_folder

SettingsFactory = Callable[..., Settings]
CALLER = Caller(token_name="tree-test")


class Flaky:
    """An actor that crashes on demand and counts its starts."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.restarts = 0
        self.starts = 0
        self.crash = trio.Event()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self.starts += 1
        task_status.started()
        await self.crash.wait()
        self.crash = trio.Event()
        raise InjectedCrash(f"{self.name} crashed")


async def test_supervisors_nest_and_honour_restart_policies(
    autojump_clock: trio.testing.MockClock,
) -> None:
    again, once, leaf = Flaky("again"), Flaky("once"), Flaky("leaf")
    subtree = Supervisor([leaf], name="sub")
    root = Supervisor([again, Child(once, restart="once"), subtree], name="root")
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        assert {n: s["state"] for n, s in root.states().items()} == {
            "again": "running",
            "once": "running",
            "sub": "running",
        }
        assert root.states()["sub"]["children"]["leaf"]["state"] == "running"

        once.crash.set()
        again.crash.set()
        leaf.crash.set()
        await trio.testing.wait_all_tasks_blocked()
        states = root.states()
        assert states["once"]["state"] == "failed"
        assert "once crashed" in states["once"]["last_error"]
        assert states["again"]["state"] == "restarting"
        assert root.failed() == ["once"]

        await trio.sleep(0.1)  # past the first backoff (0.05 s), virtual time
        await trio.testing.wait_all_tasks_blocked()
        assert (again.starts, once.starts, leaf.starts) == (2, 1, 2)
        assert root.states()["again"]["state"] == "running"
        assert root.states()["sub"]["children"]["leaf"]["restarts"] == 1
        assert root.failed() == ["once"]  # a once child stays down
        nursery.cancel_scope.cancel()


async def wal_sessions(settings: Settings) -> list[SessionRecord]:
    def read() -> list[SessionRecord]:
        return [
            r.payload
            for r in iter_log(settings.wal_path, OsFileSystem())
            if isinstance(r.payload, SessionRecord)
        ]

    return await trio.to_thread.run_sync(read)


async def test_a_crashed_wal_writer_turns_readiness_and_index_status_unhealthy(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings()
    await ingest_folder(settings, corpus_dir, "tiny")
    faults = FaultInjector()
    async with open_services(settings, faults=faults) as services:
        ready, detail = await services.readiness()
        assert ready and detail["wal"]["healthy"]
        assert services.tree.states()["wal-writer"]["state"] == "running"

        faults.crash_at("wal-writer", 1)  # dies with the next batch in hand
        call = services.dispatcher.call
        first = await call("search", {"query": "boiler E1234"}, CALLER)
        assert first.structured_content is not None and first.structured_content["ok"]
        await services.wal.wait_stopped()

        ready, detail = await services.readiness()
        assert not ready
        assert detail["wal"]["healthy"] is False
        assert "crashed" in detail["wal"]["failure"]
        assert detail["failed_components"] == ["wal-writer"]

        status = await call("index_status", {}, CALLER)
        envelope = status.structured_content
        assert envelope is not None and envelope["ok"]
        data = envelope["data"]
        assert data["ready"] is False and data["wal"]["healthy"] is False
        assert data["supervision"]["wal-writer"]["state"] == "failed"
        assert data["supervision"]["pipeline"]["state"] == "running"
        text = status.content[0]
        assert isinstance(text, TextContent) and "write-ahead log has failed" in text.text

        # The server keeps answering; what it can no longer record is refused and counted.
        dropped = services.sessions.dropped
        again = await call("search", {"query": "sourdough starter"}, CALLER)
        assert again.structured_content is not None and again.structured_content["ok"]
        assert services.sessions.dropped == dropped + 1
        assert services.wal.statistics().queue_depth == 0  # nothing queued for nobody
        # An acknowledged write is refused, not lost: ingest fails with the WAL's error.
        assert services.ingest is not None
        with pytest.raises(WalFailed, match="crashed"):
            await ingest_path(
                services.backend, settings, corpus_dir, source="again", target=services.ingest
            )


async def test_session_records_queued_at_shutdown_are_committed(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings()
    await ingest_folder(settings, corpus_dir, "tiny")
    async with open_services(settings) as services:
        for query in ("boiler", "wing", "bread"):
            result = await services.dispatcher.call("search", {"query": query}, CALLER)
            assert result.structured_content is not None and result.structured_content["ok"]
        # Leave at once: the records may still be queued; shutdown drains them first.
    records = await wal_sessions(settings)
    assert [r.token_name for r in records].count("tree-test") == 3
