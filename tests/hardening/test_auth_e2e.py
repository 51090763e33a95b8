"""Bearer auth against the real server: every refusal row, reload, rotation, revocation."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import trio

from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.token_admin import create_token, revoke_token, rotate_token
from tests.hardening.hardened_server import (
    LIST_TOOLS,
    MCP_HEADERS,
    bearer,
    fresh_http,
)
from tests.transport.server_harness import running_server

SettingsFactory = Callable[..., Settings]
NO_BACKOFF = {"failures_before_backoff": 10_000}


async def test_every_refusal_row_gets_401_and_a_challenge(
    hardened_settings: SettingsFactory,
) -> None:
    settings = hardened_settings(auth=NO_BACKOFF)
    async with running_server(settings) as server, fresh_http() as http:
        url, token = server.info.url, server.token

        async def status(headers: dict[str, str], target: str = url) -> int:
            response = await http.post(target, json=LIST_TOOLS, headers=headers)
            if response.status_code == 401:
                assert response.headers["www-authenticate"] == (
                    'Bearer realm="latence-retrieval-mcp"'
                )
                assert token not in response.text
            return response.status_code

        assert await status(MCP_HEADERS) == 401  # missing token
        assert await status(bearer("lrm_" + "x" * 43)) == 401  # wrong token
        assert await status(bearer(token[:-1])) == 401  # almost right
        assert await status(MCP_HEADERS, f"{url}?access_token={token}") == 401  # in the URL
        assert await status(bearer(token), f"{url}?token={token}") == 401  # URL + header
        assert await status(bearer(token), f"{url}?x={token}") == 401  # any key
        assert await status({**MCP_HEADERS, "authorization": f"Basic {token}"}) == 401
        assert await status({**MCP_HEADERS, "authorization": f"Token {token}"}) == 401
        assert await status({**MCP_HEADERS, "authorization": "Bearer"}) == 401
        assert await status({**MCP_HEADERS, "authorization": f"Bearer {token} extra"}) == 401
        assert await status(bearer(token + "x" * 600)) == 401  # over-long header
        two = [*MCP_HEADERS.items(), ("authorization", f"Bearer {token}")] * 2
        response = await http.post(url, json=LIST_TOOLS, headers=two)
        assert response.status_code == 401  # two Authorization headers are ambiguous
        # The right token in the scheme's other spelling is fine (RFC 7235: case-insensitive).
        assert await status({**MCP_HEADERS, "authorization": f"bearer {token}"}) == 200
        assert await status(bearer(token)) == 200


async def test_tokens_are_created_rotated_and_revoked_while_serving(
    hardened_settings: SettingsFactory,
) -> None:
    settings = hardened_settings(auth=NO_BACKOFF)
    hub = ReloadHub()
    path = settings.token_path
    async with running_server(settings, hub=hub) as server, fresh_http() as http:

        async def status(token: str) -> int:
            response = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(token))
            return response.status_code

        ci = create_token(path, "ci", ["tiny"])
        assert await status(ci) == 401  # not until the server reloads
        [outcome] = [o for o in await hub.reload_all() if o.part == "tokens"]
        assert outcome.ok and outcome.detail == {"tokens": 2}
        assert await status(ci) == 200

        # Rotation inside the grace period: old and new both work.
        ci_new = rotate_token(path, "ci", grace_s=3600)
        await hub.reload_all()
        assert (await status(ci), await status(ci_new)) == (200, 200)

        # Rotation whose grace period is over: only the new secret works.
        long_ago = time.time() - 7200
        desktop = create_token(path, "desktop", now=long_ago)
        desktop_new = rotate_token(path, "desktop", grace_s=3600, now=long_ago)
        await hub.reload_all()
        assert (await status(desktop), await status(desktop_new)) == (401, 200)

        # Revocation: every secret of the token, at once.
        revoke_token(path, "ci")
        await hub.reload_all()
        assert (await status(ci), await status(ci_new)) == (401, 401)
        assert await status(server.token) == 200  # the others are untouched

        # A file made group-readable is refused on reload; the old tokens keep working.
        path.chmod(0o644)
        [outcome] = [o for o in await hub.reload_all() if o.part == "tokens"]
        assert not outcome.ok and "accessible by group or others" in outcome.error
        assert await status(desktop_new) == 200
        path.chmod(0o600)
        # The file never held a secret, only digests.
        text = path.read_text()
        assert all(s[4:] not in text for s in (ci, ci_new, desktop, desktop_new, server.token))
        assert json.loads(text)["format"] == 2


async def test_a_changed_token_file_is_picked_up_without_a_signal(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    settings = hardened_settings(auth={"reload_poll_s": 2.0})
    async with running_server(settings) as server, fresh_http() as http:
        cli = create_token(settings.token_path, "cli")
        await trio.sleep(2.5)  # one poll interval, on the virtual clock
        response = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(cli))
        assert response.status_code == 200
        revoke_token(settings.token_path, "cli")
        await trio.sleep(2.5)
        response = await http.post(server.info.url, json=LIST_TOOLS, headers=bearer(cli))
        assert response.status_code == 401


async def test_failed_auth_backs_off_per_address(
    hardened_settings: SettingsFactory, autojump_clock: trio.testing.MockClock
) -> None:
    settings = hardened_settings(
        auth={"failures_before_backoff": 3, "backoff_initial_s": 2.0, "backoff_max_s": 8.0}
    )
    async with running_server(settings) as server, fresh_http() as http:
        url = server.info.url

        async def post(token: str | None) -> tuple[int, str | None]:
            headers = bearer(token) if token else MCP_HEADERS
            response = await http.post(url, json=LIST_TOOLS, headers=headers)
            return response.status_code, response.headers.get("retry-after")

        wrong = "lrm_" + "w" * 43
        assert [await post(wrong) for _ in range(3)] == [(401, None)] * 3  # free failures
        assert await post(wrong) == (401, None)  # the fourth: now the address waits 2 s
        assert await post(server.token) == (429, "2")  # not even checked while it waits
        assert await post(None) == (401, None)  # no credential: nothing to throttle
        await trio.sleep(2.0)
        assert await post(wrong) == (401, None)  # the fifth: 4 s
        assert await post(wrong) == (429, "4")
        await trio.sleep(4.0)
        assert await post(server.token) == (200, None)
        # The Unix socket is another address: a TCP guesser does not lock it out.
        assert await post(wrong) == (401, None)
        assert (await post(server.token))[0] == 429
        async with server.client(unix=True) as client:
            assert (await client.list_tools()).tools
        await trio.sleep(60)  # quiet for backoff_max_s: forgiven
        assert await post(wrong) == (401, None)
