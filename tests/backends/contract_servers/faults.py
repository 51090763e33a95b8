"""CONTRACT TESTS: failures a contract server can be told to produce, as ASGI middleware."""

from __future__ import annotations

import json
from typing import Any, Literal

import attrs
import trio

FaultMode = Literal["401", "403", "500", "malformed", "not_json", "hang"]

Scope = dict[str, Any]


@attrs.define
class Faults:
    """``mode`` applies to every request while set. ``hang`` blocks until ``release``."""

    mode: FaultMode | None = None
    release: trio.Event = attrs.field(factory=trio.Event)
    requests: int = 0


class FaultingApp:
    """Wrap an ASGI app: answer with the configured fault instead of calling it."""

    def __init__(self, app: Any, faults: Faults) -> None:
        self._app = app
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        self.faults.requests += 1
        mode = self.faults.mode
        if mode is None:
            await self._app(scope, receive, send)
        elif mode == "hang":
            await self.faults.release.wait()
            await _respond(send, 503, b"{}", "application/json")
        elif mode in ("401", "403", "500"):
            body = json.dumps({"error": f"injected {mode}"}).encode()
            await _respond(send, int(mode), body, "application/json")
        elif mode == "malformed":
            await _respond(send, 200, b'{"unexpected": [1, 2, 3]}', "application/json")
        else:
            await _respond(send, 200, b"<html>gateway page</html>", "text/html")


async def _respond(send: Any, status: int, body: bytes, content_type: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
