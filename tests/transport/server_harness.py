"""Start the real server in-process and connect the MCP SDK's own client to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import httpx2
import trio
import trio.testing
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.server_run import ServerInfo, run_server
from retrieval_mcp.services import ingest_path, open_backend
from retrieval_mcp.settings import Settings


@attrs.define
class RunningServer:
    info: ServerInfo
    shutdown: trio.Event
    known_token: str | None = None

    async def wait_idle(self) -> None:
        """Let the server's tasks (e.g. the WAL writer) run until all are blocked."""
        await trio.testing.wait_all_tasks_blocked()

    @property
    def token(self) -> str:
        token = self.info.new_token or self.known_token
        assert token is not None, "pass token= when restarting on an existing state dir"
        return token

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @asynccontextmanager
    async def client(self, *, unix: bool = False, mode: str = "legacy") -> AsyncIterator[Client]:
        if unix:
            assert self.info.socket_path is not None
            http = httpx2.AsyncClient(
                transport=httpx2.AsyncHTTPTransport(uds=str(self.info.socket_path)),
                headers=self.headers(),
            )
            url = "http://localhost/mcp"
        else:
            http = httpx2.AsyncClient(headers=self.headers())
            url = self.info.url
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as c:
            yield c


async def ingest_folder(settings: Settings, folder: Path, source: str) -> None:
    async with open_backend(settings) as backend:
        await ingest_path(backend, settings, folder, source=source)


@asynccontextmanager
async def running_server(
    settings: Settings,
    *,
    token: str | None = None,
    hub: ReloadHub | None = None,
    handle_signals: bool = False,
) -> AsyncIterator[RunningServer]:
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        info = await nursery.start(
            lambda task_status: run_server(
                settings,
                shutdown=shutdown,
                hub=hub,
                handle_signals=handle_signals,
                task_status=task_status,
            )
        )
        try:
            yield RunningServer(info=info, shutdown=shutdown, known_token=token)
        finally:
            shutdown.set()
