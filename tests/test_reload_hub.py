"""The reload hub is total: a reload keeps or swaps, and never takes its caller down."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from retrieval_mcp.errors import ConfigError
from retrieval_mcp.reload_hub import ReloadHub


async def test_any_failure_is_a_refusal_and_counted() -> None:
    hub = ReloadHub(wall_clock=lambda: 1234.5)
    state = {"value": "old"}

    async def fine() -> dict[str, Any]:
        state["value"] = "new"
        return {"n": 1}

    async def bad_file() -> dict[str, Any]:
        raise ConfigError("copy.toml: tools: expected a table, got an integer")

    async def bug() -> dict[str, Any]:
        return {"n": len(5)}  # type: ignore[arg-type]  # a TypeError, as a bug would raise

    async def grouped() -> dict[str, Any]:
        raise ExceptionGroup("two", [ValueError("a"), KeyError("b")])

    for part, fn in [("ok", fine), ("file", bad_file), ("bug", bug), ("group", grouped)]:
        hub.register(part, fn)
    outcomes = await hub.reload_all()
    assert [(o.part, o.ok) for o in outcomes] == [
        ("ok", True),
        ("file", False),
        ("bug", False),
        ("group", False),
    ]
    assert state["value"] == "new"
    assert "expected a table" in hub.last["file"].error
    assert hub.last["bug"].error == "unexpected TypeError while reloading; see the server log"
    assert hub.refused_total == 3
    await hub.reload_part("file", trigger="file_change")
    stats = hub.statistics()
    assert stats["file"]["outcome"] == "refused" and stats["file"]["refused_count"] == 2
    assert stats["file"]["trigger"] == "file_change" and stats["file"]["at"] == 1234.5
    assert stats["ok"] == {
        "part": "ok",
        "ok": True,
        "at": 1234.5,
        "detail": {"n": 1},
        "error": "",
        "trigger": "signal",
        "outcome": "ok",
        "refused_count": 0,
    }


async def test_cancellation_and_interrupts_pass_through() -> None:
    hub = ReloadHub()

    async def slow() -> dict[str, Any]:
        await trio.sleep_forever()
        return {}

    async def interrupted() -> dict[str, Any]:
        raise KeyboardInterrupt

    hub.register("slow", slow)
    with trio.move_on_after(0.01) as scope:
        await hub.reload_all()
    assert scope.cancelled_caught and "slow" not in hub.last
    hub = ReloadHub()
    hub.register("interrupted", interrupted)
    with pytest.raises(KeyboardInterrupt):
        await hub.reload_all()
