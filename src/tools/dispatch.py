"""MCP request handlers: list the current registry, run a tool, wrap it in the envelope.

Every failure becomes an envelope with ``ok=false`` and a remedy; nothing a tool
raises reaches the SDK as a traceback, and the server keeps serving.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import mcp_types as types
import structlog
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

from retrieval_mcp import __version__
from retrieval_mcp.envelope import (
    DroppedLeg,
    LegsMeta,
    Meta,
    SkippedStep,
    failure,
    new_request_id,
    success,
)
from retrieval_mcp.errors import RetrievalMCPError, UnknownTool
from retrieval_mcp.tools.registry import RegistryHolder, ToolHandler

log = structlog.get_logger(__name__)

SERVER_NAME = "latence-retrieval-mcp"


class ToolDispatcher:
    def __init__(self, holder: RegistryHolder, handlers: Mapping[str, ToolHandler]) -> None:
        self._holder = holder
        self._handlers = dict(handlers)

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self._holder.current.list_result()

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await self.call(params.name, params.arguments)

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        request_id = new_request_id()
        started = time.perf_counter()
        registry = self._holder.current
        spec = registry.by_name(name)

        def meta(**fields: Any) -> Meta:
            return Meta(
                request_id=request_id,
                took_ms=round((time.perf_counter() - started) * 1000, 3),
                **fields,
            )

        try:
            if spec is None:
                names = ", ".join(s.name for s in registry.tools)
                raise UnknownTool(f"no tool named {name!r}", remedy=f"Call one of: {names}.")
            output = await self._handlers[spec.key](arguments or {})
        except RetrievalMCPError as exc:
            log.info("tool_failed", tool=name, request_id=request_id, code=exc.code)
            return failure(exc, meta())
        except Exception:
            log.exception("tool_crashed", tool=name, request_id=request_id)
            return failure(RetrievalMCPError("the tool failed unexpectedly"), meta())
        log.info("tool_ok", tool=name, request_id=request_id, legs=output.legs_used)
        return success(
            output.data,
            output.text,
            meta(
                steps_run=output.steps_run,
                steps_skipped=[SkippedStep(step=s, reason=r) for s, r in output.steps_skipped],
                legs=LegsMeta(
                    used=output.legs_used,
                    dropped=[DroppedLeg(leg=leg, reason=why) for leg, why in output.legs_dropped],
                ),
                degraded=bool(output.legs_dropped or output.steps_skipped),
            ),
        )


def build_mcp_server(
    holder: RegistryHolder, dispatcher: ToolDispatcher, bus: InMemorySubscriptionBus
) -> Server[Any]:
    """The low-level SDK server. ``instructions`` follows the registry on every swap;
    2026-07-28 clients may listen on ``bus`` for ``tools/list_changed``."""
    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=holder.current.instructions,
        on_list_tools=dispatcher.list_tools,
        on_call_tool=dispatcher.call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    return server
