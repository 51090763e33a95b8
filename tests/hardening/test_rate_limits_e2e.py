"""Rate limits against the real server, on the virtual clock: buckets, not windows."""

from __future__ import annotations

from collections.abc import Callable

import trio

from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.token_admin import create_token
from tests.hardening.hardened_server import LIST_TOOLS, bearer, fresh_http, tool_call
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]


async def test_burst_over_the_token_bucket_then_the_refill_rate(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    settings = hardened_settings(limits={"per_token": {"per_minute": 60, "burst": 5}})
    async with running_server(settings) as server, fresh_http() as http:

        async def post(token: str) -> tuple[int, str | None]:
            response = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(token))
            return response.status_code, response.headers.get("retry-after")

        token = server.token
        assert [await post(token) for _ in range(5)] == [(200, None)] * 5  # exactly the burst
        assert await post(token) == (429, "1")
        assert await post(token) == (429, "1")  # refusals spend nothing
        # Then exactly the refill rate: one a second, for as long as the client keeps going.
        for _ in range(5):
            await trio.sleep(1.0)
            assert await post(token) == (200, None)
            assert await post(token) == (429, "1")
        # Another token has its own bucket.
        other = create_token(settings.token_path, "other")
        await trio.sleep(2.5)  # the token file poll; also refills two for the first token
        assert [await post(other) for _ in range(6)] == [(200, None)] * 5 + [(429, "1")]
        assert [await post(token) for _ in range(3)] == [(200, None)] * 2 + [(429, "1")]


async def test_per_address_bucket_applies_before_auth(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    settings = hardened_settings(limits={"per_address": {"per_minute": 30, "burst": 3}})
    async with running_server(settings) as server, fresh_http() as http:
        anonymous = {"content-type": "application/json"}
        codes = [
            (await http.post(server.info.url, json=LIST_TOOLS, headers=anonymous)).status_code
            for _ in range(4)
        ]
        assert codes == [401, 401, 401, 429]
        refused = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(server.token))
        assert refused.status_code == 429 and refused.headers["retry-after"] == "2"
        await trio.sleep(2.0)
        ok = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(server.token))
        assert ok.status_code == 200


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
