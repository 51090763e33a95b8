"""ASGI shapes and the few helpers every transport module uses to read and answer them."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK_V4 = ipaddress.ip_network("127.0.0.0/8")


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    """Every value of header ``name`` (lowercase), in order; ASGI servers lowercase names."""
    return [bytes(value) for key, value in scope.get("headers", ()) if key.lower() == name]


def client_address(scope: Scope) -> str:
    """The key per-address limits use for this request's client.

    Unix-socket clients have no address (the socket is 0600 in a 0700 directory, so
    they are all the server's own user): they share the key ``unix``. On TCP every
    IPv4 loopback address is one key, ``127.0.0.0/8``: a local process can pick any
    source in 127/8, so keying by address would let it rotate past the limits.
    """
    client = scope.get("client")
    if not client:
        return "unix"
    host = str(client[0])
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in _LOOPBACK_V4:
        return "127.0.0.0/8"
    return str(address)


async def send_json(
    send: Send,
    status: int,
    body: dict[str, Any],
    headers: Sequence[tuple[bytes, bytes]] = (),
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
