"""Session records: every tool call leaves an audit record in the WAL, without its text."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import trio
import trio.testing

from retrieval_mcp.settings import Settings
from retrieval_mcp.wal.filesystem import OsFileSystem
from retrieval_mcp.wal.recovery import iter_log
from retrieval_mcp.wal.wal_records import SessionRecord
from tests.test_cli import run
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]
QUERY = "what does the boiler fault code E1234 mean"


def wal_bytes(settings: Settings) -> bytes:
    out = []
    for path in sorted(settings.wal_path.iterdir()):
        try:
            out.append(path.read_bytes())
        except (FileNotFoundError, IsADirectoryError):
            continue  # retired by the writer since it was listed
    return b"".join(out)


async def wal_without(settings: Settings, *needles: bytes) -> bytes:
    """The WAL's bytes once none of ``needles`` is in them: the ingest's segment holds
    chunk text until the writer retires it, right after the batch that wrote the first
    session records. Fails (after 10 s) if a session record itself holds one."""
    with trio.fail_after(10):
        while any(n in (raw := wal_bytes(settings)) for n in needles):
            await trio.to_thread.run_sync(lambda: None)  # let the writer's thread run
        return raw


async def sessions(settings: Settings) -> list[SessionRecord]:
    def read() -> list[SessionRecord]:
        return [
            r.payload
            for r in iter_log(settings.wal_path, OsFileSystem())
            if isinstance(r.payload, SessionRecord)
        ]

    return await trio.to_thread.run_sync(read)


async def test_each_call_is_recorded_without_its_text(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings()
    await ingest_folder(settings, corpus_dir, "tiny")
    async with running_server(settings) as server, server.client() as client:
        found = await client.call_tool("search", {"query": QUERY, "top_k": 3})
        hit_ids = [h["id"] for h in found.structured_content["data"]["hits"]]
        await client.call_tool("get_context", {"ids": hit_ids[:1]})
        await client.call_tool("search", {"query": ""})  # a failing call is recorded too
        with trio.fail_after(10):
            while len(await sessions(settings)) < 3:  # appended without waiting for fsync
                await server.wait_idle()
        records = await sessions(settings)
        assert [(r.tool, r.outcome) for r in records] == [
            ("search", "ok"),
            ("get_context", "ok"),
            ("search", "invalid_argument"),
        ]
        assert all(r.token_name == "default" and r.content is None for r in records)
        assert list(records[0].hit_ids) == hit_ids
        assert records[0].legs_used == ("dense", "bm25")
        assert records[1].hit_ids == (hit_ids[0],)
        raw = await wal_without(settings, QUERY.encode(), b"E1234")
        assert raw.count(b'"kind":"session"') == 3  # the records are there, without it
        exported = run(
            "sessions",
            "--tool",
            "search",
            "--limit",
            "1",
            env={**os.environ, "LATENCE_STATE_DIR": str(settings.state_dir)},
        )
        lines = [json.loads(line) for line in exported.stdout.splitlines()]
        assert [line["outcome"] for line in lines] == ["invalid_argument"]


async def test_log_content_keeps_the_query_and_hit_text(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    settings = make_settings(wal={"log_content": True})
    await ingest_folder(settings, corpus_dir, "tiny")
    async with running_server(settings) as server, server.client() as client:
        await client.call_tool("search", {"query": QUERY, "top_k": 2})
        with trio.fail_after(10):
            while not await sessions(settings):
                await server.wait_idle()
        [record] = await sessions(settings)
        assert record.content is not None
        assert record.content.arguments["query"] == QUERY
        assert any("E1234" in text for text in record.content.hit_texts)
