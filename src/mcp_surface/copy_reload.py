"""Build the registry from copy (start-up) and swap it atomically (SIGHUP).

A reload validates and lints the whole copy and renders the whole registry before it
swaps anything, so a broken or hostile file changes nothing: the old copy stays, the
reason is logged, and ``index_status`` shows the last outcome. Every successful reload
logs the hash of what agents now see and a diff summary, and tells subscribed
2026-07-28 clients that the tool list changed.
"""

from __future__ import annotations

from typing import Any

import trio
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged

from retrieval_mcp.agent_copy.lint import lint_copy
from retrieval_mcp.agent_copy.loader import CopyRejected, load_copy
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.mcp_surface.registry import (
    RegistryHolder,
    ToolRegistry,
    build_registry,
    registry_diff,
    registry_hash,
)
from retrieval_mcp.settings import Settings


def render_registry(settings: Settings, capabilities: frozenset[Capability]) -> ToolRegistry:
    """Load, validate, lint and render: the registry agents would see, or CopyRejected."""
    copy = load_copy(settings.copy_dir)
    where = settings.copy_dir or "shipped copy"
    findings = lint_copy(copy)
    if findings:
        raise CopyRejected(f"{where}: " + "; ".join(findings))
    try:
        return build_registry(copy, capabilities, settings)
    except ConfigError as exc:  # an unknown placeholder, found while rendering
        raise CopyRejected(f"{where}: {exc.message}") from exc


class CopyReloader:
    def __init__(
        self,
        settings: Settings,
        capabilities: frozenset[Capability],
        holder: RegistryHolder,
        server: Server[Any],
        bus: InMemorySubscriptionBus,
    ) -> None:
        self._settings = settings
        self._capabilities = capabilities
        self._holder = holder
        self._server = server
        self._bus = bus

    async def __call__(self) -> dict[str, Any]:
        registry = await trio.to_thread.run_sync(
            render_registry, self._settings, self._capabilities
        )
        old = self._holder.current
        diff = registry_diff(old, registry)
        self._holder.swap(registry)
        self._server.instructions = registry.instructions
        await self._bus.publish(ToolsListChanged())
        return {"hash": registry_hash(registry), "previous_hash": registry_hash(old), "diff": diff}
