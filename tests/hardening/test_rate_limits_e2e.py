"""Rate limits against the real server, on the virtual clock: buckets, not windows."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import trio
from mcp import MCPError

from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.over_budget import RATE_LIMITED_CODE
from retrieval_mcp.transport.token_admin import create_token
from tests.hardening.hardened_server import (
    LIST_TOOLS,
    bearer,
    call,
    fresh_http,
    mcp_client,
    tool_call,
)
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]


async def test_burst_over_the_token_bucket_then_the_refill_rate(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    settings = hardened_settings(limits={"per_token": {"per_minute": 60, "burst": 5}})
    async with running_server(settings) as server, fresh_http() as http:

        async def post(token: str) -> tuple[str, float | None]:
            response = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(token))
            assert response.status_code == 200  # over budget is a JSON-RPC answer
            body = response.json()
            if "result" in body:
                return "ok", None
            assert body["error"]["code"] == RATE_LIMITED_CODE
            assert body["error"]["data"]["code"] == "rate_limited"
            return "limited", body["error"]["data"]["retry_after_s"]

        token = server.token
        assert [await post(token) for _ in range(5)] == [("ok", None)] * 5  # exactly the burst
        assert await post(token) == ("limited", 1.0)
        assert await post(token) == ("limited", 1.0)  # refusals spend nothing
        # Then exactly the refill rate: one a second, for as long as the client keeps going.
        for _ in range(5):
            await trio.sleep(1.0)
            assert await post(token) == ("ok", None)
            assert await post(token) == ("limited", 1.0)
        # Another token has its own bucket.
        other = create_token(settings.token_path, "other")
        await trio.sleep(2.5)  # the token file poll; also refills two for the first token
        assert [await post(other) for _ in range(6)] == [("ok", None)] * 5 + [("limited", 1.0)]
        assert [(await post(token))[0] for _ in range(3)] == ["ok", "ok", "limited"]


async def test_over_budget_callers_are_told_the_delay_in_their_protocol(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    """The SDK client hides an HTTP 429 behind "Server returned an error response"; an
    authenticated caller over budget is answered in JSON-RPC so the delay reaches it."""
    settings = hardened_settings(limits={"per_token": {"per_minute": 6, "burst": 1}})
    async with running_server(settings) as server:
        async with mcp_client(server, server.token) as client:  # initialize: the one token
            envelope = await call(client, "search", {"query": "boiler"})
            assert envelope["ok"] is False and envelope["error"]["code"] == "rate_limited"
            assert envelope["error"]["retry_after_s"] == 10.0
            assert "Wait 10 s" in envelope["error"]["remedy"]
            with pytest.raises(MCPError) as caught:
                await client.list_tools()
            assert caught.value.error.code == RATE_LIMITED_CODE
            assert "retry after 10 s" in caught.value.error.message
            assert caught.value.error.data["retry_after_s"] == 10.0
        async with fresh_http() as http:  # a notification has no id to answer: HTTP 429
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            response = await http.post(server.info.url, json=note, headers=bearer(server.token))
            assert response.status_code == 429 and response.headers["retry-after"] == "10"
            await trio.sleep(10.0)
            ok = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(server.token))
            assert "result" in ok.json()


async def test_per_address_bucket_charges_only_failures(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    settings = hardened_settings(limits={"per_address": {"per_minute": 30, "burst": 3}})
    async with running_server(settings) as server, fresh_http() as http:
        anonymous = {"content-type": "application/json"}

        async def status(headers: dict[str, str]) -> int:
            return (await http.post(server.info.url, json=LIST_TOOLS, headers=headers)).status_code

        assert [await status(anonymous) for _ in range(3)] == [401, 401, 401]
        refused = await http.post(server.info.url, json=LIST_TOOLS, headers=anonymous)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "2"
        # The address is over its failure budget; a valid token is still served.
        assert [await status(bearer(server.token)) for _ in range(10)] == [200] * 10
        assert await status(bearer("lrm_" + "w" * 43)) == 429  # but not another failure
        await trio.sleep(2.0)
        assert await status(anonymous) == 401


async def test_per_tool_budget_is_a_tool_error_with_retry_after(
    hardened_settings: SettingsFactory,
) -> None:
    settings = hardened_settings(limits={"tools": {"index_status": {"per_minute": 1, "burst": 2}}})
    async with running_server(settings) as server, fresh_http() as http:

        async def envelope(name: str) -> dict[str, object]:
            response = await http.post(
                server.info.url, json=tool_call(name, {}), headers=bearer(server.token)
            )
            assert response.status_code == 200  # inside MCP: an answer, not an HTTP error
            content: dict[str, object] = response.json()["result"]["structuredContent"]
            return content

        assert [(await envelope("index_status"))["ok"] for _ in range(2)] == [True, True]
        limited = await envelope("index_status")
        assert limited["ok"] is False
        error = limited["error"]
        assert isinstance(error, dict) and error["code"] == "rate_limited"
        assert 55 < error["retry_after_s"] <= 60 and "Wait" in error["remedy"]
        assert (await envelope("list_sources"))["ok"] is True  # other tools: unaffected
