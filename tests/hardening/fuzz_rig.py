"""A server for the fuzz tests: started once per module, in a Trio loop on its own thread.

Hypothesis drives synchronous test functions, and starting a server per example would
cost seconds, so one Trio loop on a background thread holds two servers for the whole
module: the ASGI app (our checks + the SDK + the real tools over a real store) called
in-process, which is fast enough for thousands of cases, and a real server on real
sockets for a smaller sample. Each example crosses into the loop with
``trio.from_thread.run``.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio

from retrieval_mcp.server_run import ServerInfo, build_root_app, run_server
from retrieval_mcp.services import open_services
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.asgi_app import RootApp
from retrieval_mcp.transport.asgi_types import Message
from retrieval_mcp.transport.auth_gate import AuthGate
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir, ensure_token_file
from retrieval_mcp.transport.rate_limiter import RateLimiter

#: The port the in-process app believes it serves (it never binds it).
APP_PORT = 8765
Headers = Sequence[tuple[str, str]]


@attrs.frozen
class Answer:
    status: int | None
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@attrs.define
class FuzzRig:
    trio_token: trio.lowlevel.TrioToken
    app: RootApp
    app_token: str
    server: ServerInfo
    server_token: str
    stop: trio.Event
    errors: list[BaseException] = attrs.field(factory=list)

    def call_app(
        self, body: bytes, headers: Headers, *, method: str = "POST", path: str = "/mcp"
    ) -> Answer:
        """One request to the in-process app, from a synchronous test."""
        return trio.from_thread.run(
            asgi_request, self.app, method, path, headers, body, trio_token=self.trio_token
        )


async def asgi_request(
    app: RootApp, method: str, path: str, headers: Headers, body: bytes
) -> Answer:
    """Drive one HTTP request through an ASGI app the way Hypercorn does."""
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", APP_PORT),
        "state": {},
    }
    responded = trio.Event()
    delivered = False
    status: int | None = None
    chunks: list[bytes] = []

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await responded.wait()  # like a client that stays until it has its answer
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))
            if not message.get("more_body", False):
                responded.set()

    with trio.fail_after(30):
        await app(scope, receive, send)
    return Answer(status=status, body=b"".join(chunks))


@asynccontextmanager
async def lifespan(app: RootApp) -> AsyncIterator[None]:
    """Run the ASGI lifespan protocol (the SDK's session manager lives in it)."""
    to_app_send, to_app = trio.open_memory_channel[Message](1)
    from_app_send, from_app = trio.open_memory_channel[Message](1)

    async def receive() -> Message:
        return await to_app.receive()

    async def send(message: Message) -> None:
        await from_app_send.send(message)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(app, {"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
        await to_app_send.send({"type": "lifespan.startup"})
        assert (await from_app.receive())["type"] == "lifespan.startup.complete"
        try:
            yield
        finally:
            await to_app_send.send({"type": "lifespan.shutdown"})
            await from_app.receive()


def start_rig(
    app_settings: Settings, server_settings: Settings
) -> tuple[FuzzRig, threading.Thread]:
    """Start both servers on a background thread; return once they serve."""
    handoff: queue.Queue[FuzzRig | BaseException] = queue.Queue()
    errors: list[BaseException] = []

    async def main() -> None:
        stop = trio.Event()
        ensure_state_dir(app_settings.state_dir)
        app_token = ensure_token_file(app_settings.token_path)
        assert app_token is not None
        gate = AuthGate(app_settings.token_path, app_settings.auth)
        limiter = RateLimiter(app_settings.limits)
        async with open_services(app_settings, limiter=limiter) as services:
            app = build_root_app(app_settings, services, gate, limiter, APP_PORT)
            async with lifespan(app), trio.open_nursery() as nursery:
                info: ServerInfo = await nursery.start(
                    lambda task_status: run_server(
                        server_settings, shutdown=stop, task_status=task_status
                    )
                )
                assert info.new_token is not None
                handoff.put(
                    FuzzRig(
                        trio_token=trio.lowlevel.current_trio_token(),
                        app=app,
                        app_token=app_token,
                        server=info,
                        server_token=info.new_token,
                        stop=stop,
                        errors=errors,
                    )
                )
                await stop.wait()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # hand failures to the test thread
            errors.append(exc)
            handoff.put(exc)

    thread = threading.Thread(target=run, name="fuzz-rig", daemon=True)
    thread.start()
    started = handoff.get(timeout=120)
    if isinstance(started, BaseException):
        raise started
    return started, thread


def stop_rig(rig: FuzzRig, thread: threading.Thread) -> None:
    trio.from_thread.run_sync(rig.stop.set, trio_token=rig.trio_token)
    thread.join(timeout=60)
    assert not thread.is_alive(), "the fuzz servers did not stop"
    assert not rig.errors, rig.errors
