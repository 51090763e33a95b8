"""The auth gate and the origin policy as units: no server, the virtual clock where it matters."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from retrieval_mcp.errors import ConfigError, SourceOutOfScope
from retrieval_mcp.mcp_surface.dispatch import ToolDispatcher
from retrieval_mcp.mcp_surface.registry import RegistryHolder, ToolRegistry
from retrieval_mcp.settings import AuthSettings, LimitsSettings, RateSettings, load_settings
from retrieval_mcp.transport.asgi_types import client_address
from retrieval_mcp.transport.auth_gate import (
    Admitted,
    AuthGate,
    Refused,
    Throttled,
    credential_in_url,
)
from retrieval_mcp.transport.bearer_tokens import ensure_token_file
from retrieval_mcp.transport.caller import ANONYMOUS, Caller
from retrieval_mcp.transport.origin_policy import OriginPolicy
from retrieval_mcp.transport.rate_limiter import RateLimiter
from retrieval_mcp.transport.token_admin import create_token, revoke_token


@pytest.fixture
def token_path(tmp_path: Path) -> Path:
    (tmp_path / "st").mkdir(mode=0o700)
    return tmp_path / "st" / "tokens.json"


def header(token: str) -> list[bytes]:
    return [f"Bearer {token}".encode()]


async def test_check_decides_every_header_shape(token_path: Path) -> None:
    secret = ensure_token_file(token_path)
    assert secret is not None
    gate = AuthGate(token_path, AuthSettings(failures_before_backoff=1000))
    addr = "127.0.0.0/8"
    assert gate.check(header(secret), b"", addr) == Admitted(Caller("default"))
    assert gate.check([f"BEARER   {secret}  ".encode()], b"", addr) == Admitted(Caller("default"))
    for headers, query, reason in [
        ([], b"", "missing"),
        ([b"Bearer"], b"", "malformed"),
        ([b"Bearer "], b"", "malformed"),
        ([f"Basic {secret}".encode()], b"", "malformed"),
        ([f"Bearer {secret} {secret}".encode()], b"", "malformed"),
        (header(secret) * 2, b"", "malformed"),
        ([b"Bearer " + b"a" * 600], b"", "malformed"),
        ([b"Bearer \xff\xfe"], b"", "invalid"),
        (header(secret[:-1]), b"", "invalid"),
        ([], f"access_token={secret}".encode(), "token_in_url"),
        (header(secret), b"x=lrm_abc", "token_in_url"),
    ]:
        assert gate.check(headers, query, addr) == Refused(reason), (headers, query)
    assert gate.statistics()["admitted"] == 2


def test_credentials_in_urls_are_recognised() -> None:
    for query in [b"token=x", b"ACCESS_TOKEN=1", b"a=1&api_key=2", b"q=lrm_zzz", b"lrm_x"]:
        assert credential_in_url(query), query
    for query in [b"", b"page=2", b"q=hello"]:
        assert not credential_in_url(query), query


async def test_backoff_is_per_address(
    token_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    secret = ensure_token_file(token_path)
    assert secret is not None
    gate = AuthGate(token_path, AuthSettings(failures_before_backoff=2, backoff_initial_s=4.0))
    wrong = header("lrm_" + "x" * 43)
    for _ in range(3):
        assert isinstance(gate.check(wrong, b"", "tcp"), Refused)
    throttled = gate.check(header(secret), b"", "tcp")
    assert isinstance(throttled, Throttled) and throttled.retry_after_s == 4.0
    assert gate.check(header(secret), b"", "unix") == Admitted(Caller("default"))
    assert gate.check([], b"", "tcp") == Refused("missing")  # no credential, no throttle
    await trio.sleep(4.0)
    assert gate.check(header(secret), b"", "tcp") == Admitted(Caller("default"))


def corrupt(path: Path) -> None:
    path.write_text("{broken")


async def test_reload_keeps_the_old_tokens_when_the_new_file_is_bad(
    token_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    first = ensure_token_file(token_path)
    assert first is not None
    gate = AuthGate(token_path, AuthSettings(reload_poll_s=1.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(gate.run)
        ci = create_token(token_path, "ci")
        await trio.sleep(1.5)
        assert gate.check(header(ci), b"", "a") == Admitted(Caller("ci"))
        corrupt(token_path)
        await trio.sleep(1.5)
        assert gate.check(header(ci), b"", "a") == Admitted(Caller("ci"))
        assert "cannot read the token file" in gate.statistics()["last_reload_error"]
        with pytest.raises(ConfigError):
            await gate.reload()
        os.remove(token_path)
        create_token(token_path, "fresh")  # recreated from scratch
        revoke_token(token_path, "fresh")
        await trio.sleep(1.5)
        assert gate.check(header(first), b"", "a") == Refused("invalid")
        assert gate.statistics()["tokens"] == 0
        nursery.cancel_scope.cancel()


async def test_auth_off_admits_everyone_as_anonymous(token_path: Path) -> None:
    gate = AuthGate(token_path, AuthSettings(), require_auth=False)
    assert gate.check([], b"", "a") == Admitted(ANONYMOUS)
    assert await gate.reload() == {"tokens": 0, "auth": "off"}


def scope(host: str | None, *, unix: bool = False, **headers: str) -> dict[str, Any]:
    pairs = [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    if host is not None:
        pairs.append((b"host", host.encode()))
    return {
        "headers": pairs,
        "server": None if unix else ("127.0.0.1", 8765),
        "client": None if unix else ("127.0.0.5", 5000),
    }


def test_origin_policy_rows() -> None:
    policy = OriginPolicy.for_port(8765, extra_origins=["https://ok.example"])
    assert policy.check(scope("127.0.0.1:8765")) is None
    assert policy.check(scope("LOCALHOST:8765")) is None
    assert policy.check(scope("[::1]:8765")) is None
    assert policy.check(scope("localhost", unix=True)) is None
    for bad in [None, "localhost", "127.0.0.1:8766", "evil:8765", "127.0.0.1"]:
        refusal = policy.check(scope(bad))
        assert refusal is not None and refusal.status == 421, bad
    assert policy.check(scope("127.0.0.1:8765", unix=True)) is not None  # socket: localhost
    for origin, status in [
        ("http://localhost:8765", None),
        ("https://ok.example", None),
        ("null", 403),
        ("http://localhost:8766", 403),
        ("https://localhost:8765", 403),
        ("", 403),  # present but empty: no browser sends that
    ]:
        refusal = policy.check(scope("localhost:8765", origin=origin))
        assert (refusal.status if refusal else None) == status, origin
    for site, status in [("none", None), ("same-origin", None), ("same-site", 403)]:
        refusal = policy.check(scope("localhost:8765", sec_fetch_site=site))
        assert (refusal.status if refusal else None) == status, site
    configured = OriginPolicy.for_port(1, extra_hosts=["Mcp.Internal:443"])
    assert configured.check(scope("mcp.internal:443")) is None


def test_client_address_keys() -> None:
    assert client_address({"client": None}) == "unix"
    assert client_address({"client": ("127.0.0.1", 1)}) == "127.0.0.0/8"
    assert client_address({"client": ("127.9.8.7", 1)}) == "127.0.0.0/8"  # no rotating past
    assert client_address({"client": ("::ffff:127.0.0.2", 1)}) == "127.0.0.0/8"
    assert client_address({"client": ("::1", 1)}) == "::1"
    assert client_address({"client": ("10.1.2.3", 1)}) == "10.1.2.3"


def test_caller_scope_rules() -> None:
    scoped = Caller("ci", frozenset({"a", "b"}))
    assert scoped.scope_sources(()) == ("a", "b")
    assert scoped.scope_sources(("b",)) == ("b",)
    with pytest.raises(SourceOutOfScope, match="may not read source"):
        scoped.scope_sources(("a", "c"))
    assert Caller("all").scope_sources(()) == ()
    assert Caller("all").scope_sources(("z",)) == ("z",)


async def test_a_call_without_a_caller_fails_closed(tmp_path: Path) -> None:
    dispatcher = ToolDispatcher(RegistryHolder(ToolRegistry(instructions="", tools=())), {})
    result = await dispatcher.call("search", {"query": "x"}, None)
    assert result.is_error and result.structured_content is not None
    assert result.structured_content["error"]["code"] == "unauthorized"


async def test_in_line_checks_cost_microseconds(token_path: Path) -> None:
    """The hot path is synchronous: measure it. (ADR 0010 records the numbers.)"""
    secret = ensure_token_file(token_path)
    assert secret is not None
    for n in range(19):
        create_token(token_path, f"t{n}")
    gate = AuthGate(token_path, AuthSettings())
    unlimited = RateSettings(per_minute=1_000_000, burst=1_000_000)
    limiter = RateLimiter(LimitsSettings(per_address=unlimited, per_token=unlimited))
    settings = load_settings(state_dir=token_path.parent)
    policy = OriginPolicy.for_port(8765, extra_origins=settings.server.allowed_origins)
    request = scope("127.0.0.1:8765")
    rounds = 2000
    began = time.perf_counter()
    for _ in range(rounds):
        assert policy.check(request) is None
        assert limiter.admit_address("127.0.0.0/8") == 0.0
        outcome = gate.check(header(secret), b"", "127.0.0.0/8")
        assert isinstance(outcome, Admitted)
        assert limiter.admit_token(outcome.caller.token_name) == 0.0
    per_request_us = (time.perf_counter() - began) / rounds * 1e6
    print(f"policy + buckets + auth over 20 tokens: {per_request_us:.1f} µs per request")
    assert per_request_us < 300  # a generous bound on a loaded 2-core machine
