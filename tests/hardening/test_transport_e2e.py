"""Transport checks against the real server: Host/Origin, body limit, slow clients, caps."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import httpx2
import trio

from retrieval_mcp.settings import Settings
from tests.hardening.hardened_server import LIST_TOOLS, MCP_HEADERS, bearer, fresh_http
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]


async def test_host_origin_and_fetch_metadata(hardened_settings: SettingsFactory) -> None:
    settings = hardened_settings(
        server={"port": 0, "allowed_origins": ["http://localhost:6274"]},
    )
    async with running_server(settings) as server, fresh_http() as http:
        port, auth = server.info.port, bearer(server.token)

        async def status(extra: dict[str, str], path: str = "/mcp") -> int:
            url = server.info.url.removesuffix("/mcp") + path
            response = await (
                http.post(url, json=LIST_TOOLS, headers={**auth, **extra})
                if path == "/mcp"
                else http.get(url, headers=extra)
            )
            return response.status_code

        assert await status({}) == 200  # an agent: no Origin, no fetch metadata
        assert await status({"origin": "http://evil.example"}) == 403  # foreign Origin
        assert await status({"origin": "null"}) == 403  # sandboxed frame, file:// page
        assert await status({"origin": f"http://localhost:{port + 1}"}) == 403  # other port
        assert await status({"origin": f"http://127.0.0.1:{port}"}) == 200
        assert await status({"origin": "http://localhost:6274"}) == 200  # configured
        assert await status({"sec-fetch-site": "cross-site"}) == 403  # <img>, no-cors fetch
        assert await status({"sec-fetch-site": "same-site"}) == 403
        assert await status({"sec-fetch-site": "same-origin"}) == 200
        assert await status({"host": f"attacker.example:{port}"}) == 421  # DNS rebinding
        assert await status({"host": f"127.0.0.1:{port + 1}"}) == 421  # our name, other port
        assert await status({"host": "localhost"}) == 421  # portless Host is the socket's
        assert await status({"host": f"attacker.example:{port}"}, "/readyz") == 421
        assert await status({}, "/readyz") == 200
        assert await status({"host": "attacker.example"}, "/healthz") == 200  # liveness only
        # The Unix socket's clients send Host: localhost, and only that.
        assert settings.socket_path is not None
        transport = httpx2.AsyncHTTPTransport(uds=str(settings.socket_path))
        async with httpx2.AsyncClient(transport=transport) as unix:
            ok = await unix.post("http://localhost/mcp", json=LIST_TOOLS, headers=auth)
            assert ok.status_code == 200
            other = await unix.post(
                "http://localhost/mcp", json=LIST_TOOLS, headers={**auth, "host": "evil:1"}
            )
            assert other.status_code == 421


async def test_body_one_byte_over_the_limit_is_413(hardened_settings: SettingsFactory) -> None:
    settings = hardened_settings(limits={"max_body_bytes": 2048})
    async with running_server(settings) as server, fresh_http() as http:
        body = json.dumps(LIST_TOOLS).encode()
        exact = body + b" " * (2048 - len(body))  # JSON allows trailing whitespace
        headers = bearer(server.token)
        ok = await http.post(server.info.url, content=exact, headers=headers)
        assert ok.status_code == 200
        over = await http.post(server.info.url, content=exact + b" ", headers=headers)
        assert over.status_code == 413 and over.json()["error"] == "body_too_large"

        async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted as it streams
            for _ in range(3):
                yield exact[:1000]

        streamed = await http.post(server.info.url, content=chunked(), headers=headers)
        assert streamed.status_code == 413
        # Headers past limits.max_header_bytes are refused by h11 before the app runs.
        huge = await http.post(
            server.info.url, json=LIST_TOOLS, headers={**headers, "x-pad": "a" * 20_000}
        )
        assert huge.status_code == 431
        # An unauthenticated sender never gets as far as the body.
        anonymous = await http.post(server.info.url, content=exact * 10, headers=MCP_HEADERS)
        assert anonymous.status_code == 401


async def request_head(port: int, token: str, length: int) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n"
        f"Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


async def read_all(stream: trio.SocketStream) -> bytes:
    """Everything until the server closes the connection."""
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data


async def test_slow_clients_are_dropped_and_concurrency_is_capped(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    settings = hardened_settings(
        limits={"body_timeout_s": 10.0, "idle_timeout_s": 5.0, "max_concurrent_requests": 2}
    )
    async with running_server(settings) as server, fresh_http() as http:
        port, token = server.info.port, server.token
        started = trio.current_time()
        replies: list[tuple[float, bytes]] = []

        async def slow_body() -> None:
            async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
                await stream.send_all(await request_head(port, token, 100))
                try:
                    for _ in range(100):  # one byte a second: would take 100 s
                        await stream.send_all(b" ")
                        await trio.sleep(1)
                except trio.BrokenResourceError:
                    pass  # dropped mid-body, as it should be
                replies.append((trio.current_time() - started, await read_all(stream)))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_body)
            nursery.start_soon(slow_body)
            await trio.sleep(1.5)  # both are in flight, trickling
            busy = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(token))
            assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert len(replies) == 2
        for elapsed, reply in replies:
            assert reply.startswith(b"HTTP/1.1 408"), reply
            assert b"connection: close" in reply.lower()
            assert 10.0 <= elapsed <= 13.0  # the body deadline (+ the client noticing), not 100 s
        ok = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(token))
        assert ok.status_code == 200  # both slots are free again

        # Slow headers (slowloris): the connection is closed after the idle timeout.
        async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
            opened = trio.current_time()
            head = await request_head(port, token, 2)
            with trio.move_on_after(60):
                try:
                    for byte in head:
                        await stream.send_all(bytes([byte]))
                        await trio.sleep(1)
                except trio.BrokenResourceError:
                    pass
            assert await read_all(stream) == b""  # closed without an answer
            assert trio.current_time() - opened <= 7.0
