"""The ASGI app in front of the SDK's Streamable HTTP app.

Routes: ``GET /healthz`` (liveness, no auth), ``GET /readyz`` (backend ready, no
auth), ``POST /mcp`` (bearer auth, then the SDK, which applies its Host/Origin
allowlists). A stateless server has no stream to offer, so ``GET``/``DELETE /mcp``
answer 405 instead of hanging open. Anything else is 404.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from retrieval_mcp.transport.bearer_tokens import TokenVerifier

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ReadinessProbe = Callable[[], Awaitable[tuple[bool, dict[str, Any]]]]

MAX_AUTH_HEADER = 512


async def send_json(
    send: Send,
    status: int,
    body: dict[str, Any],
    headers: list[tuple[bytes, bytes]] = (),  # type: ignore[assignment]
) -> None:
    payload = json.dumps(body).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode("ascii")),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return None


class RootApp:
    def __init__(
        self,
        mcp_app: ASGIApp,
        readiness: ReadinessProbe,
        verifier: TokenVerifier | None,
        *,
        mcp_path: str = "/mcp",
    ) -> None:
        self._mcp_app = mcp_app
        self._readiness = readiness
        self._verifier = verifier
        self._mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._mcp_app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # websockets are not served; closing without accept refuses them
        path, method = scope["path"], scope["method"]
        if path == "/healthz":
            await send_json(send, 200, {"status": "ok"})
        elif path == "/readyz":
            ready, detail = await self._readiness()
            await send_json(send, 200 if ready else 503, {"ready": ready, **detail})
        elif path == self._mcp_path:
            if method != "POST":
                await send_json(
                    send,
                    405,
                    {
                        "error": "method_not_allowed",
                        "message": "this server is stateless: use POST for every MCP message",
                    },
                    [(b"allow", b"POST")],
                )
            elif not self._authorised(scope):
                await send_json(
                    send,
                    401,
                    {"error": "unauthorized", "message": "send 'Authorization: Bearer <token>'"},
                    [(b"www-authenticate", b'Bearer realm="latence-retrieval-mcp"')],
                )
            else:
                await self._mcp_app(scope, receive, send)
        else:
            await send_json(send, 404, {"error": "not_found"})

    def _authorised(self, scope: Scope) -> bool:
        if self._verifier is None:
            return True
        header = _header(scope, b"authorization")
        if header is None or len(header) > MAX_AUTH_HEADER:
            return False
        scheme, _, token = header.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        name = self._verifier.verify(token.strip())
        if name is None:
            return False
        scope.setdefault("state", {})["token_name"] = name
        return True
