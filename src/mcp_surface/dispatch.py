"""MCP request handlers: list the current registry, run a tool, wrap it in the envelope.

Every failure becomes an envelope with ``ok=false`` and a remedy; nothing a tool
raises reaches the SDK as a traceback, and the server keeps serving.

The caller owns time: each call runs in one cancel scope with the request deadline
(``pipeline.request_timeout_s``), which every step inherits
(``trio.current_effective_deadline()``). Steps that can degrade stop a little before it
(the pipeline's answer reserve); a tool with nothing to degrade to is cancelled at the
deadline and answered with a ``timeout`` error.

Each call runs as the ``Caller`` the transport authenticated (token name and source
scope, from the HTTP request's scope state); a request that arrives without one is
refused, so a transport that forgot to authenticate fails closed. Per-tool budgets
(``limits.tools``) are checked here and answered with a ``rate_limited`` ToolError that
carries ``retry_after_s``. Every call ends with one ``tool_call`` telemetry line: tool,
token name, latency, legs, hit count, outcome — never the arguments or the retrieved
text unless ``logging.log_content`` is on.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs
import mcp_types as types
import structlog
import trio
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

from retrieval_mcp import __version__
from retrieval_mcp.envelope import (
    DroppedLeg,
    Meta,
    SkippedStep,
    failure,
    make_meta,
    new_request_id,
    success,
)
from retrieval_mcp.errors import (
    RateLimited,
    RetrievalMCPError,
    StepTimeout,
    Unauthenticated,
    UnknownTool,
)
from retrieval_mcp.mcp_surface.registry import RegistryHolder, ToolHandler
from retrieval_mcp.mcp_surface.resource_links import resource_links
from retrieval_mcp.mcp_surface.resources import ResourceReader
from retrieval_mcp.mcp_surface.session_log import SessionRecorder
from retrieval_mcp.settings import PipelineConfig
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import CALLER_STATE_KEY, Caller

log = structlog.get_logger(__name__)

SERVER_NAME = "latence-retrieval-mcp"
DEFAULT_REQUEST_TIMEOUT_S: float = PipelineConfig().request_timeout_s


class CallMetrics(Protocol):
    def observe_call(
        self, tool: str, outcome: str, seconds: float, dropped: Sequence[tuple[str, str]]
    ) -> None: ...


class ToolLimiter(Protocol):
    def admit_tool(self, token_name: str, tool: str) -> float: ...


def caller_from_context(ctx: Any) -> Caller | None:
    """The caller the transport stored in the HTTP request's scope, if any."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    if not isinstance(scope, Mapping):
        return None
    caller = (scope.get("state") or {}).get(CALLER_STATE_KEY)
    return caller if isinstance(caller, Caller) else None


def _hit_count(output: ToolOutput) -> int | None:
    for key in ("hits", "passages", "chunks", "sources"):
        items = output.data.get(key)
        if isinstance(items, list):
            return len(items)
    return None


@attrs.frozen
class LegNote:
    """Why a leg is unavailable and how to fix it, shown beside its "unsupported" drop."""

    detail: str
    remedy: str


class ToolDispatcher:
    """Runs tool calls: everything it needs is given here, once, by the composition root.

    ``limiter`` applies per-tool budgets (none: unlimited); ``sessions`` appends one
    session record per call through the WAL (none: no records); ``log_content`` adds
    the arguments to telemetry (debugging only); ``request_timeout_s`` is the deadline
    of every call (``pipeline.request_timeout_s``); ``metrics`` counts every call (tool,
    outcome, latency, dropped legs); ``leg_notes`` add ``detail`` and ``remedy`` to
    every "unsupported" drop of those legs; ``local_caller`` is who a request that
    arrives with no HTTP request at all runs as (the embedded stdio transport, where the
    operator's own process is the client) — over HTTP a request without an
    authenticated caller is still refused.
    """

    def __init__(
        self,
        holder: RegistryHolder,
        handlers: Mapping[str, ToolHandler],
        *,
        limiter: ToolLimiter | None = None,
        sessions: SessionRecorder | None = None,
        log_content: bool = False,
        request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
        metrics: CallMetrics | None = None,
        leg_notes: Mapping[str, LegNote] | None = None,
        local_caller: Caller | None = None,
    ) -> None:
        self._holder = holder
        self._handlers = dict(handlers)
        self._limiter = limiter
        self._sessions = sessions
        self._log_content = log_content
        self.request_timeout_s = request_timeout_s
        self._metrics = metrics
        self._leg_notes = dict(leg_notes or {})
        self._local_caller = local_caller

    def caller_of(self, ctx: Any) -> Caller | None:
        caller = caller_from_context(ctx)
        if caller is None and getattr(ctx, "request", None) is None:
            return self._local_caller
        return caller

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self._holder.current.list_result()

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await self.call(params.name, params.arguments, self.caller_of(ctx))

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, caller: Caller | None
    ) -> types.CallToolResult:
        request_id = new_request_id()
        started = time.perf_counter()
        registry = self._holder.current
        spec = registry.by_name(name)

        def meta(**fields: Any) -> Meta:
            took_ms = round((time.perf_counter() - started) * 1000, 3)
            return make_meta(request_id, took_ms, **fields)

        def telemetry(outcome: str, output: ToolOutput | None = None) -> None:
            if self._metrics is not None:
                self._metrics.observe_call(
                    spec.key if spec is not None else "unknown",
                    outcome,
                    time.perf_counter() - started,
                    output.legs_dropped if output is not None else (),
                )
            if self._sessions is not None and caller is not None:
                self._sessions.record(
                    request_id=request_id,
                    token_name=caller.token_name,
                    tool=spec.key if spec is not None else name,
                    arguments=arguments or {},
                    output=output,
                    latency_ms=round((time.perf_counter() - started) * 1000, 3),
                    outcome=outcome,
                )
            extra: dict[str, Any] = {"arguments": arguments} if self._log_content else {}
            log.info(
                "tool_call",
                tool=name,
                token_name=caller.token_name if caller is not None else None,
                request_id=request_id,
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
                outcome=outcome,
                legs=output.legs_used if output is not None else [],
                legs_dropped=[leg for leg, _ in output.legs_dropped] if output else [],
                hit_count=_hit_count(output) if output is not None else None,
                **extra,
            )

        try:
            if caller is None:
                raise Unauthenticated("this call carries no authenticated caller")
            if spec is None:
                names = ", ".join(s.name for s in registry.tools)
                raise UnknownTool(f"no tool named {name!r}", remedy=f"Call one of: {names}.")
            wait = self._limiter.admit_tool(caller.token_name, spec.key) if self._limiter else 0.0
            if wait:
                raise RateLimited(
                    f"token {caller.token_name!r} is over its budget for {spec.name}",
                    retry_after_s=wait,
                )
            output = await self._within_deadline(spec.name, spec.key, arguments or {}, caller)
        except RetrievalMCPError as exc:
            telemetry(exc.code)
            return failure(exc, meta())
        except Exception:
            log.exception("tool_crashed", tool=name, request_id=request_id)
            telemetry("internal_error")
            return failure(RetrievalMCPError("the tool failed unexpectedly"), meta())
        telemetry("ok", output)
        skipped: list[SkippedStep] = [{"step": s, "reason": r} for s, r in output.steps_skipped]
        return success(
            output.data,
            output.text,
            meta(
                steps_run=output.steps_run,
                steps_skipped=skipped,
                used=output.legs_used,
                dropped=[self._dropped(leg, why) for leg, why in output.legs_dropped],
            ),
            resource_links(output.data),
        )

    async def _within_deadline(
        self, name: str, key: str, arguments: Mapping[str, Any], caller: Caller
    ) -> ToolOutput:
        with trio.move_on_after(self.request_timeout_s):
            return await self._handlers[key](arguments, caller)
        raise StepTimeout(
            f"{name} did not finish within the {self.request_timeout_s:g} s request deadline",
            remedy="Retry, or ask for less (fewer ids, a smaller top_k or budget); if it "
            "keeps happening the operator should check index_status and the backend.",
        )

    def _dropped(self, leg: str, reason: str) -> DroppedLeg:
        dropped: DroppedLeg = {"leg": leg, "reason": reason}
        note = self._leg_notes.get(leg) if reason == "unsupported" else None
        if note is not None:
            dropped["detail"] = note.detail
            dropped["remedy"] = note.remedy
        return dropped


def build_mcp_server(
    holder: RegistryHolder,
    dispatcher: ToolDispatcher,
    bus: InMemorySubscriptionBus,
    resources: ResourceReader | None = None,
) -> Server[Any]:
    """The low-level SDK server. ``instructions`` follows the registry on every swap;
    2026-07-28 clients may listen on ``bus`` for ``tools/list_changed``; ``resources``
    serves cited chunks, documents and sources."""
    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=holder.current.instructions,
        on_list_tools=dispatcher.list_tools,
        on_call_tool=dispatcher.call_tool,
        on_subscriptions_listen=ListenHandler(bus),
        on_list_resources=resources.list_resources if resources else None,
        on_list_resource_templates=resources.list_templates if resources else None,
        on_read_resource=resources.read if resources else None,
    )
    return server
