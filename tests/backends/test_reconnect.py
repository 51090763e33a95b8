"""Transparent reconnect: a read that loses its connection is replayed once, fresh.

The server here is a raw loopback TCP server that drops the first N connections
without answering (what a restarted proxy or an idle-timeout does to a pooled
connection), then answers JSON.
"""

from __future__ import annotations

import pytest
import trio

from retrieval_mcp.errors import BackendUnavailable
from retrieval_mcp.json_http import JsonHttp

ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n"
    b'connection: close\r\n\r\n{"ok":true}'
)


async def flaky_server(drops: int, *, task_status: trio.TaskStatus[int]) -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    served = 0

    async def handle(stream: trio.SocketStream) -> None:
        nonlocal served
        async with stream:
            await stream.receive_some(65536)
            served += 1
            if served > drops:
                await stream.send_all(ANSWER)
            # else: close without a byte, as a dead pooled connection looks

    await trio.serve_listeners(handle, listeners)


async def test_a_lost_connection_is_retried_once_on_a_fresh_one() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(flaky_server, 1)
        client = JsonHttp("test service", f"http://127.0.0.1:{port}", timeout_s=5)
        assert await client.request("POST", "/query", json={"q": 1}) == {"ok": True}
        assert client.reconnects == 1
        await client.aclose()
        nursery.cancel_scope.cancel()


async def test_a_second_loss_is_reported_not_retried_forever() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(flaky_server, 2)
        client = JsonHttp("test service", f"http://127.0.0.1:{port}", timeout_s=5)
        with pytest.raises(BackendUnavailable, match="connection failed"):
            await client.request("POST", "/query", json={"q": 1})
        assert client.reconnects == 1
        await client.aclose()
        nursery.cancel_scope.cancel()
