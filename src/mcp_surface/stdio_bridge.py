"""MCP over stdin/stdout, bridged onto the running server's Unix socket.

Clients that launch their servers as subprocesses (Claude Desktop, many IDE agents)
speak newline-delimited JSON-RPC on the child's stdin/stdout. The bridge forwards each
message as one ``POST /mcp`` over the server's private Unix socket, with the bearer
token and the headers the Streamable HTTP transport expects (``MCP-Protocol-Version``
from the handshake or the message's envelope; ``Mcp-Method`` / ``Mcp-Name`` for
2026-07-28 requests), and writes every JSON-RPC message of the answer to stdout — a
JSON body, or each event of an SSE stream as it arrives. So the socket's whole
admission path (auth, scopes, rate limits, body limits) applies unchanged, and the
token never appears on a command line.

Each message is forwarded in its own task (a long-lived stream never blocks the next
request); writes to stdout are serialised, one message per line, and nothing else is
ever written there. A request the server refuses (401, 429, …) or cannot be reached
for is answered on stdout with a JSON-RPC error for that id; notifications are
fire-and-forget. The bridge ends when stdin closes and every forwarded request is done.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import httpx
import structlog
import trio
from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value

log = structlog.get_logger(__name__)

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
#: JSON-RPC's own codes for what the bridge answers by itself.
PARSE_ERROR = -32700
INTERNAL_ERROR = -32603
#: One stdin line may not exceed this (the server's own body limit is lower).
MAX_LINE_BYTES = 8 * 1024 * 1024


class ServerNotRunning(Exception):
    """Nothing answers on the socket: the one line the operator needs is the message."""


@attrs.define
class _Negotiated:
    version: str | None = None  # from the initialize handshake (2025-era clients)


def _headers(message: Mapping[str, Any], token: str, negotiated: _Negotiated) -> dict[str, str]:
    headers = {
        "authorization": f"Bearer {token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    modern = isinstance(meta, Mapping) and isinstance(meta.get(PROTOCOL_VERSION_META_KEY), str)
    if modern:
        assert isinstance(meta, Mapping) and isinstance(params, Mapping)
        method = message.get("method")
        headers["mcp-protocol-version"] = meta[PROTOCOL_VERSION_META_KEY]
        if isinstance(method, str):
            headers["mcp-method"] = method
            name_key = NAME_BEARING_METHODS.get(method)
            if name_key is not None and isinstance(params.get(name_key), str):
                headers["mcp-name"] = encode_header_value(params[name_key])
    elif negotiated.version is not None:
        headers["mcp-protocol-version"] = negotiated.version
    return headers


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def _lines(stream: trio.abc.ReceiveStream) -> AsyncIterator[bytes]:
    buffer = bytearray()
    while True:
        data = await stream.receive_some(65536)
        if not data:
            if buffer.strip():
                yield bytes(buffer)
            return
        buffer += data
        while (end := buffer.find(b"\n")) != -1:
            line, buffer = bytes(buffer[:end]), buffer[end + 1 :]
            if line.strip():
                yield line
        if len(buffer) > MAX_LINE_BYTES:
            raise ValueError(f"a stdin line is longer than {MAX_LINE_BYTES} bytes")


class StdioBridge:
    """Owns nothing but the HTTP client it is given; ``run`` returns at stdin's EOF."""

    def __init__(self, http: httpx.AsyncClient, token: str, stdout: trio.abc.SendStream) -> None:
        self._http = http
        self._token = token
        self._stdout = stdout
        self._write_lock = trio.Lock()
        self._negotiated = _Negotiated()

    async def emit(self, message: Mapping[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        async with self._write_lock:
            await self._stdout.send_all(line.encode("utf-8"))

    async def run(self, stdin: trio.abc.ReceiveStream) -> None:
        async with trio.open_nursery() as nursery:
            async for line in _lines(stdin):
                try:
                    message = json.loads(line)
                except ValueError:
                    await self.emit(_error(None, PARSE_ERROR, "stdin line is not JSON"))
                    continue
                if not isinstance(message, dict):
                    await self.emit(_error(None, PARSE_ERROR, "expected one JSON-RPC object"))
                    continue
                nursery.start_soon(self.forward, line, message)

    async def forward(self, body: bytes, message: Mapping[str, Any]) -> None:
        request_id = message.get("id")
        is_request = "method" in message and request_id is not None
        headers = _headers(message, self._token, self._negotiated)
        try:
            async with self._http.stream("POST", "/mcp", content=body, headers=headers) as reply:
                if reply.status_code == 202 or (not is_request and reply.status_code < 400):
                    return
                kind = reply.headers.get("content-type", "")
                if reply.status_code == 200 and kind.startswith("text/event-stream"):
                    await self._relay_events(reply)
                    return
                raw = await reply.aread()
        except httpx.HTTPError as exc:
            log.warning("stdio_forward_failed", method=message.get("method"), error=str(exc))
            if is_request:
                await self.emit(
                    _error(request_id, INTERNAL_ERROR, f"the server did not answer: {exc}")
                )
            return
        await self._relay_body(message, request_id, is_request, reply.status_code, raw)

    async def _relay_body(
        self,
        message: Mapping[str, Any],
        request_id: Any,
        is_request: bool,
        status: int,
        raw: bytes,
    ) -> None:
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and answer.get("jsonrpc") == "2.0":
            if message.get("method") == "initialize" and isinstance(answer.get("result"), dict):
                version = answer["result"].get("protocolVersion")
                self._negotiated.version = version if isinstance(version, str) else None
            await self.emit(answer)
            return
        if not is_request:
            log.warning("stdio_notification_refused", status=status)
            return
        detail = answer.get("message", "") if isinstance(answer, dict) else ""
        hint = " (check the token the client config gives the bridge)" if status == 401 else ""
        await self.emit(
            _error(
                request_id,
                INTERNAL_ERROR,
                f"the server refused the request: HTTP {status} {detail}{hint}".strip(),
            )
        )

    async def _relay_events(self, reply: httpx.Response) -> None:
        data: list[str] = []
        async for line in reply.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                try:
                    event = json.loads("\n".join(data))
                except ValueError:
                    event = None
                data = []
                if isinstance(event, dict):
                    await self.emit(event)


def socket_client(socket_path: Path) -> httpx.AsyncClient:
    """An HTTP client for the server's Unix socket (``Host: localhost``, no time limit:
    the server bounds every request itself, and a stream may stay open)."""
    return httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(uds=str(socket_path)),
        base_url="http://localhost",
        timeout=None,
    )


async def check_server(http: httpx.AsyncClient, socket_path: Path) -> None:
    """Raise ServerNotRunning unless something answers ``/readyz`` on the socket."""
    try:
        await http.get("/readyz")
    except httpx.HTTPError:
        raise ServerNotRunning(
            f"no latence-retrieval-mcp server is running on {socket_path}: start one with "
            "`latence-retrieval-mcp serve`, or pass --embedded to open the store here"
        ) from None
