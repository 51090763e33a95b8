"""The ASGI app in front of the SDK's Streamable HTTP app: every check before the SDK.

Routes: ``GET /healthz`` (liveness, no auth, no limits), ``GET /readyz`` (backend ready,
no auth), ``POST /mcp`` (the checks below, then the SDK, which applies its own Host and
Origin allowlists again). A stateless server has no stream to offer, so ``GET`` and
``DELETE /mcp`` answer 405 instead of hanging open. Anything else is 404.

``POST /mcp`` passes these in order, cheapest and least informative first; the first
that fails answers:

0. request headers over ``limits.max_header_bytes`` → 431
1. concurrency cap (``limits.max_concurrent_requests``) → 503 + ``Retry-After``
2. Host / Origin / fetch metadata (``OriginPolicy``) → 421 / 403
3. bearer token (``AuthGate``), checked for every request that presents one. A request
   that fails it (missing, malformed, wrong, in the URL) is charged to the per-address
   bucket → 429 + ``Retry-After`` when that is empty; a failing credential or address in
   failed-auth backoff → 429 + ``Retry-After``; otherwise 401 + ``WWW-Authenticate``.
   A valid token passes whatever other clients on the same address did.
4. body: declared or streamed past ``limits.max_body_bytes`` → 413; not complete within
   ``limits.body_timeout_s`` (a slow client) → 408; both close the connection
5. per-token bucket: over it, the caller is answered in JSON-RPC with the delay
   (``over_budget.py``): a ``rate_limited`` tool error for ``tools/call``, a JSON-RPC
   error for other requests; HTTP 429 + ``Retry-After`` only when the body is not one
   JSON-RPC request (a notification, a batch)

The caller (token name and scope) then travels to the dispatcher in
``scope["state"]["retrieval_mcp.caller"]``; a token without the ``mcp`` scope is
refused with 403.

``POST /operator/ingest`` (when the server can ingest) exists only on the Unix socket
(404 on TCP): steps 0–4 as above, then a token with the ``ingest`` scope (403
otherwise), then the ingest's NDJSON stream (``operator_channel.py``, ADR 0037).

``GET /metrics`` (when metrics are served) passes steps 0–3 the same way and then
needs a token with the ``metrics`` scope (403 otherwise): the Prometheus text format.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
import trio

from retrieval_mcp.ingest.live_ingest import IngestDesk
from retrieval_mcp.settings import LimitsSettings
from retrieval_mcp.transport.asgi_types import (
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    client_address,
    header_values,
    send_json,
)
from retrieval_mcp.transport.auth_gate import Admitted, AuthGate, Refused, Throttled
from retrieval_mcp.transport.caller import (
    CALLER_STATE_KEY,
    INGEST_SCOPE,
    MCP_SCOPE,
    METRICS_SCOPE,
    Caller,
)
from retrieval_mcp.transport.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from retrieval_mcp.transport.operator_channel import (
    INGEST_PATH,
    on_unix_socket,
    parse_request,
    stream_ingest,
)
from retrieval_mcp.transport.origin_policy import OriginPolicy
from retrieval_mcp.transport.over_budget import over_budget_reply
from retrieval_mcp.transport.rate_limiter import RateLimiter
from retrieval_mcp.transport.refusal_log import RefusalLog
from retrieval_mcp.transport.token_bucket import retry_after_header

log = structlog.get_logger(__name__)

_LACKS = "this token lacks the {0} scope (token create NAME --scopes {0})"

ReadinessProbe = Callable[[], Awaitable[tuple[bool, dict[str, Any]]]]
MetricsPage = Callable[[], bytes]

_CHALLENGE = [(b"www-authenticate", b'Bearer realm="latence-retrieval-mcp"')]
_CLOSE = [(b"connection", b"close")]


class RootApp:
    def __init__(
        self,
        mcp_app: ASGIApp,
        readiness: ReadinessProbe,
        gate: AuthGate,
        limiter: RateLimiter,
        policy: OriginPolicy,
        limits: LimitsSettings,
        *,
        mcp_path: str = "/mcp",
        metrics: MetricsPage | None = None,
        operator: IngestDesk | None = None,
    ) -> None:
        self._metrics = metrics
        self._operator = operator
        self._mcp_app = mcp_app
        self._readiness = readiness
        self._gate = gate
        self._limiter = limiter
        self._policy = policy
        self._limits = limits
        self._mcp_path = mcp_path
        self._refusals = RefusalLog()
        self.in_flight = 0
        self.refused: dict[int, int] = {}  # by HTTP status
        self.over_budget = 0  # answered in JSON-RPC (HTTP 200) with the delay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._mcp_app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # websockets are not served; closing without accept refuses them
        path, method = scope["path"], scope["method"]
        if path == "/healthz":
            await send_json(send, 200, {"status": "ok"})
            return
        if path == "/metrics" and self._metrics is not None:
            await self._serve_metrics(scope, send)
            return
        operator = path == INGEST_PATH and self._operator is not None and on_unix_socket(scope)
        if path not in ("/readyz", self._mcp_path) and not operator:
            await send_json(send, 404, {"error": "not_found"})
            return
        if (path == self._mcp_path or operator) and method != "POST":
            await send_json(
                send,
                405,
                {
                    "error": "method_not_allowed",
                    "message": "this server is stateless: use POST for every MCP message",
                },
                [(b"allow", b"POST")],
            )
            return
        if sum(len(k) + len(v) for k, v in scope["headers"]) > self._limits.max_header_bytes:
            # h11 caps only a head that arrives in pieces; a head read whole is ours to cap.
            await self._refuse(send, scope, 431, "headers_too_large", "request headers too large")
            return
        if self.in_flight >= self._limits.max_concurrent_requests:
            await self._refuse(send, scope, 503, "busy", "too many requests in flight", 1.0)
            return
        self.in_flight += 1
        try:
            if path == "/readyz":
                await self._ready(scope, send)
            elif operator:
                await self._operator_ingest(scope, receive, send)
            else:
                await self._mcp(scope, receive, send)
        finally:
            self.in_flight -= 1

    async def _ready(self, scope: Scope, send: Send) -> None:
        refusal = self._policy.check(scope)
        if refusal is not None:
            await self._refuse(send, scope, refusal.status, refusal.error, refusal.message)
            return
        ready, detail = await self._readiness()
        await send_json(send, 200 if ready else 503, {"ready": ready, **detail})

    async def _mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = await self._admit(scope, send, MCP_SCOPE, "this token may not call MCP")
        if caller is None:
            return
        over_budget_s = self._limiter.admit_token(caller.token_name)
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        if over_budget_s:
            await self._answer_over_budget(send, scope, caller.token_name, body, over_budget_s)
            return
        scope["state"] = {**scope.get("state", {}), CALLER_STATE_KEY: caller}
        await self._mcp_app(scope, _replay(body, receive), send)

    async def _operator_ingest(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self._operator is not None
        caller = await self._admit(scope, send, INGEST_SCOPE, _LACKS.format("ingest"))
        if caller is None:
            return
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        request = parse_request(body)
        if isinstance(request, str):
            await self._refuse(send, scope, 400, "bad_request", request)
            return
        log.info(
            "operator_ingest",
            token_name=caller.token_name,
            source=request.source,
            prune=request.prune,
        )
        await stream_ingest(self._operator, request, send)

    async def _admit(self, scope: Scope, send: Send, required: str, lacking: str) -> Caller | None:
        """The caller of an authenticated route, or None once it has been refused: Host
        and Origin first, then the credential (a failure is charged to the failer, never
        to the next success, ADR 0010), then the route's scope."""
        refusal = self._policy.check(scope)
        if refusal is not None:
            await self._refuse(send, scope, refusal.status, refusal.error, refusal.message)
            return None
        address = client_address(scope)
        outcome = self._gate.check(
            header_values(scope, b"authorization"), scope.get("query_string", b""), address
        )
        if not isinstance(outcome, Admitted):
            await self._refuse_unauthenticated(send, scope, address, outcome)
            return None
        if required not in outcome.caller.scopes:
            await self._refuse(send, scope, 403, "forbidden", lacking)
            return None
        return outcome.caller

    async def _refuse_unauthenticated(
        self, send: Send, scope: Scope, address: str, outcome: Refused | Throttled
    ) -> None:
        """Charge a failed request to its address (the flood guard), then answer 429
        (over that budget, or in failed-auth backoff) or 401. A valid credential never
        comes here, so other clients' failures cannot refuse it."""
        wait = self._limiter.admit_address(address)
        if wait:
            await self._refuse(send, scope, 429, "rate_limited", "too many failed requests", wait)
            return
        if isinstance(outcome, Throttled):
            await self._refuse(
                send, scope, 429, outcome.reason, "too many failed attempts", outcome.retry_after_s
            )
            return
        self._refusals.note("request_refused", f"auth_{outcome.reason}", address, status=401)
        self.refused[401] = self.refused.get(401, 0) + 1
        await send_json(
            send,
            401,
            {
                "error": "unauthorized",
                "message": "send 'Authorization: Bearer <token>' (never the token in the URL)",
            },
            _CHALLENGE,
        )

    async def _answer_over_budget(
        self, send: Send, scope: Scope, token_name: str, body: bytes, wait: float
    ) -> None:
        """An authenticated caller over its per-token budget: a JSON-RPC answer that
        carries the delay (``over_budget.py`` says why), else HTTP 429."""
        reply = over_budget_reply(body, token_name, wait)
        if reply is None:
            await self._refuse(send, scope, 429, "rate_limited", "token over its budget", wait)
            return
        self.over_budget += 1
        self._refusals.note("request_refused", "token_over_budget", token_name, status=200)
        await send_json(send, 200, reply)

    async def _serve_metrics(self, scope: Scope, send: Send) -> None:
        assert self._metrics is not None
        if scope["method"] != "GET":
            await send_json(send, 405, {"error": "method_not_allowed"}, [(b"allow", b"GET")])
            return
        caller = await self._admit(scope, send, METRICS_SCOPE, _LACKS.format("metrics"))
        if caller is None:
            return
        body = self._metrics()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", METRICS_CONTENT_TYPE.encode("ascii")),
                    (b"content-length", str(len(body)).encode("ascii")),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None once a refusal (or nothing, if the client left) was sent."""
        limit = self._limits.max_body_bytes
        declared = header_values(scope, b"content-length")
        if declared:
            try:
                too_big = int(declared[0]) > limit
            except ValueError:
                too_big = False  # h11 has already refused a malformed length
            if too_big:
                await self._refuse(send, scope, 413, "body_too_large", f"over {limit} bytes")
                return None
        chunks: list[bytes] = []
        size = 0
        with trio.move_on_after(self._limits.body_timeout_s):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return None  # the client went away: nobody to answer
                chunk = bytes(message.get("body", b""))
                size += len(chunk)
                if size > limit:
                    await self._refuse(send, scope, 413, "body_too_large", f"over {limit} bytes")
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        await self._refuse(send, scope, 408, "body_timeout", "the request body came too slowly")
        return None

    async def _refuse(
        self,
        send: Send,
        scope: Scope,
        status: int,
        error: str,
        message: str,
        retry_after_s: float | None = None,
    ) -> None:
        self.refused[status] = self.refused.get(status, 0) + 1
        self._refusals.note("request_refused", error, client_address(scope), status=status)
        headers: list[tuple[bytes, bytes]] = []
        body: dict[str, Any] = {"error": error, "message": message}
        if retry_after_s is not None:
            headers.append((b"retry-after", retry_after_header(retry_after_s).encode("ascii")))
            body["retry_after_s"] = round(retry_after_s, 3)
        if status in (408, 413):
            headers += _CLOSE  # the rest of the body is never read: end the connection
        await send_json(send, status, body, headers)

    def statistics(self) -> dict[str, Any]:
        return {
            "in_flight": self.in_flight,
            "refused": dict(self.refused),
            "over_budget": self.over_budget,
        }


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that yields the body already read, then defers to the real one (which
    reports the client's disconnect to the SDK)."""
    pending = True

    async def replay() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
