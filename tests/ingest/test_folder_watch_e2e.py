"""A watched folder, end to end: a running server answers ``search`` for a file soon
after it is written and stops returning it once the file is deleted; a file that cannot
be read is reported in ``index_status`` with its path and reason and blocks nothing.

Waits poll the server until a bounded deadline: file events arrive when the OS sends
them, so there is no fixed delay to sleep for."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client

from retrieval_mcp.settings import Settings
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]
DEADLINE_S = 30.0


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    with trio.move_on_after(DEADLINE_S):
        while True:
            if await check():
                return
            await trio.sleep(0.05)  # the polling interval, not a synchroniser
    pytest.fail(f"not within {DEADLINE_S}s: {what}")


async def hits(client: Client, query: str) -> dict[str, set[str]]:
    """doc id -> the chunk ids of it that a search returns."""
    result = await client.call_tool("search", {"query": query, "sources": ["notes"]})
    envelope = result.structured_content
    assert envelope is not None
    if envelope.get("error"):
        return {}  # e.g. unknown_source before the first sync
    out: dict[str, set[str]] = {}
    for hit in envelope["data"]["hits"]:
        out.setdefault(hit["provenance"]["doc_id"], set()).add(hit["id"])
    return out


async def hit_files(client: Client, query: str) -> list[str]:
    return sorted(await hits(client, query))


async def watch_status(client: Client) -> dict[str, Any]:
    envelope = (await client.call_tool("index_status", {})).structured_content
    assert envelope is not None
    ingest: dict[str, Any] = envelope["data"]["ingest"]
    notes: dict[str, Any] = ingest.get("notes", {})
    return notes


async def test_a_watched_folder_is_searchable_soon_after_a_write_and_pruned_after_a_delete(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "kettle.md").write_text("# Kettle\n\nDescale the kettle with citric acid.\n")
    settings = make_settings(
        ingest={"watch": [{"path": str(folder), "source": "notes", "debounce_ms": 50}]}
    )
    async with running_server(settings) as server, server.client() as client:

        async def kettle_found() -> bool:
            return "kettle.md" in await hit_files(client, "descale the kettle")

        await eventually(kettle_found, "the first sync")

        (folder / "quartz.md").write_text(
            "# Quartz clock\n\nA quartz clock drifts by seconds a month; set it on Sundays.\n"
        )

        async def quartz_found() -> bool:
            return "quartz.md" in await hit_files(client, "quartz clock drift")

        await eventually(quartz_found, "the new file to be searchable")

        os.mkfifo(folder / "pipe.md")  # reading it would block: reported, never read

        async def pipe_reported() -> bool:
            errors = (await watch_status(client)).get("errors", [])
            return any(e["path"] == "pipe.md" for e in errors)

        (folder / "later.md").write_text("# Later\n\nWritten after the pipe: still ingested.\n")

        async def later_found() -> bool:
            return "later.md" in await hit_files(client, "written after the pipe")

        await eventually(pipe_reported, "the unreadable file in index_status")
        await eventually(later_found, "the files after a bad one")
        status = await watch_status(client)
        (error,) = status["errors"]
        assert error == {"path": "pipe.md", "reason": "not a regular file"}
        assert status["files_seen"] == 4 and status["pending"] == 0
        assert status["last_sync"] is not None

        (folder / "quartz.md").unlink()

        async def quartz_gone() -> bool:
            return "quartz.md" not in await hit_files(client, "quartz clock drift")

        await eventually(quartz_gone, "the deleted file to stop being returned")
        before = await hits(client, "descale the kettle")
        assert "kettle.md" in before

        (folder / "kitchen").mkdir()
        (folder / "kettle.md").rename(folder / "kitchen" / "kettle.md")

        async def kettle_moved() -> bool:
            found = await hits(client, "descale the kettle")
            return "kitchen/kettle.md" in found and "kettle.md" not in found

        await eventually(kettle_moved, "the renamed file under its new name")
        after = await hits(client, "descale the kettle")
        assert after["kitchen/kettle.md"] == before["kettle.md"]  # the same chunk ids
