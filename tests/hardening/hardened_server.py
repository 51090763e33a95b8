"""Shared by the hardening tests: a store with two sources built once, raw HTTP helpers.

Ingesting costs more than starting a server, so the store is built once per session
and copied into each test's state directory.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from retrieval_mcp.settings import Settings, load_settings
from tests.conftest import TINY_CORPUS
from tests.transport.server_harness import RunningServer, ingest_folder

SettingsFactory = Callable[..., Settings]

#: A second source that a token scoped to "tiny" must never see. It mentions the
#: boiler on purpose: a search for "boiler" matches it strongly.
VAULT_CORPUS = {
    "vault.md": (
        "# Vault procedures\n\n"
        "The boiler room vault combination is kept by facilities. Error code E1234 on "
        "the vault door means the boiler room is locked down; call security, not the "
        "boiler engineer. The vault holds the confidential payroll ledgers."
    ),
}
MCP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def write_corpus(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def build_two_source_store(root: Path) -> Path:
    """Ingest "tiny" and "vault" into ``root/state/store``; return the store path."""
    settings = load_settings(
        state_dir=root / "state", overrides={"demo": {"ingest_on_first_start": False}}
    )
    tiny = write_corpus(root / "tiny", TINY_CORPUS)
    vault = write_corpus(root / "vault", VAULT_CORPUS)

    async def ingest() -> None:
        await ingest_folder(settings, tiny, "tiny")
        await ingest_folder(settings, vault, "vault")

    trio.run(ingest)
    return settings.store_path


def with_store(settings: Settings, store: Path) -> Settings:
    """Put a copy of the prepared store where ``settings`` expects it."""
    settings.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copytree(store, settings.store_path)
    return settings


def tool_call(name: str, arguments: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def bearer(token: str) -> dict[str, str]:
    return {**MCP_HEADERS, "authorization": f"Bearer {token}"}


def fresh_http() -> httpx2.AsyncClient:
    """No pooled connections: every request opens its own, so a server-side idle timeout
    (which fires at once under autojump_clock) never hits a reused one."""
    return httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0))


@asynccontextmanager
async def mcp_client(server: RunningServer, token: str) -> AsyncIterator[Client]:
    """The MCP SDK's own client, authenticated as ``token``."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(server.info.url, http_client=http)) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    envelope: dict[str, Any] | None = result.structured_content
    assert envelope is not None
    assert envelope["ok"] is not result.is_error
    return envelope
