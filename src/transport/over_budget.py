"""What an authenticated caller over its per-token budget is told, in its own protocol.

The SDK's client turns any non-200 answer on ``/mcp`` into a bare "Server returned an
error response": an HTTP 429 and its ``Retry-After`` never reach the agent, which then
cannot tell a throttle from a crash. An authenticated request has a JSON-RPC identity
(its ``id``), so it is answered in JSON-RPC instead, with HTTP 200:

- ``tools/call`` → the tool's own error envelope, ``rate_limited`` with
  ``retry_after_s`` and a remedy, exactly as a per-tool budget answers (the model sees
  it as a tool result and can wait and retry);
- any other request (``initialize``, ``tools/list``, ``server/discover`` …) → a
  JSON-RPC error, code ``RATE_LIMITED_CODE``, whose ``data`` carries ``retry_after_s``;
- a notification or anything that is not one JSON-RPC request (a batch, bad JSON) has
  no ``id`` to answer: ``None``, and the transport answers HTTP 429 + ``Retry-After``.

Unauthenticated refusals stay HTTP (401/429): without a valid token there is no
caller to speak JSON-RPC to, and the less a failing client is told the better.
"""

from __future__ import annotations

import json
from typing import Any

from retrieval_mcp.envelope import failure, make_meta, new_request_id
from retrieval_mcp.errors import RateLimited

#: A JSON-RPC "server error" (the implementation-defined range −32000…−32099); 29 as in 429.
RATE_LIMITED_CODE = -32029


def _request_id(message: Any) -> tuple[bool, Any]:
    """(True, id) for one JSON-RPC request (not a notification), else (False, None)."""
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return False, None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return False, None
    return True, request_id


def over_budget_reply(body: bytes, token_name: str, retry_after_s: float) -> dict[str, Any] | None:
    """The JSON-RPC answer for one over-budget request, or None to answer HTTP 429."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    is_request, request_id = _request_id(message)
    if not is_request:
        return None
    error = RateLimited(
        f"token {token_name!r} is over its request budget", retry_after_s=retry_after_s
    )
    if message["method"] == "tools/call":
        result = failure(error, make_meta(new_request_id(), 0.0))
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return {"jsonrpc": "2.0", "id": request_id, "result": wire}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": RATE_LIMITED_CODE,
            "message": f"rate limited: {error.message}; retry after {error.retry_after_s:g} s",
            "data": {
                "code": error.code,
                "retry_after_s": error.retry_after_s,
                "remedy": error.remedy.replace("calling this tool", "sending"),
            },
        },
    }
