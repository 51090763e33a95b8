"""Hypothesis fuzz of tool arguments and raw JSON-RPC bodies: ≥ 10,000 requests per run.

Every answer must be a JSON-RPC error, a 4xx, or a tool envelope (``ok`` true, or false
with a code other than ``internal_error``) — never a 5xx, never an unhandled exception,
never a connection the server dropped — and ``/healthz`` must still answer afterwards.
Most cases go through the ASGI app in-process (our checks, the SDK, the real tools and
store); a sample goes over the real server's socket.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_mcp.settings import Settings
from tests.hardening.fuzz_rig import Answer, FuzzRig, start_rig, stop_rig
from tests.hardening.hardened_server import with_store

#: Hypothesis examples per test. Each tool-argument example is sent to every tool, so the
#: three tests answer TOOL_EXAMPLES * 6 + BODY_EXAMPLES + SOCKET_EXAMPLES requests.
TOOL_EXAMPLES = 1200
BODY_EXAMPLES = 2600
SOCKET_EXAMPLES = 300
assert TOOL_EXAMPLES * 6 + BODY_EXAMPLES + SOCKET_EXAMPLES >= 10_000

FUZZ_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
UNLIMITED = {"per_minute": 1_000_000, "burst": 1_000_000}
TOOLS = [
    "search",
    "expand_neighbors",
    "more_like_this",
    "get_context",
    "list_sources",
    "index_status",
]
ARGUMENT_NAMES = [
    "query",
    "top_k",
    "sources",
    "filter",
    "chunk_id",
    "before",
    "after",
    "ids",
    "budget_tokens",
]
#: Valid queries come mostly from here, so the encoder's query cache keeps the run fast.
QUERIES = [
    "boiler E1234",
    "what does E1234 mean",
    "sourdough starter",
    "laminar flow drag",
    "tomatoes side shoots",
    "vault",
    "a",
    "the of and",
    "E1234 " * 50,
]
#: Chunk ids of the two-source store are random-looking UUIDs; these probe the edges.
CHUNK_IDS = ["0" * 32, "00000000-0000-0000-0000-000000000000", "", "../x", "*"]


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory, two_source_store: Path) -> Iterator[FuzzRig]:
    import tempfile

    from retrieval_mcp.settings import load_settings

    def make(name: str) -> Settings:
        # Unix socket paths must stay short: use a short temp dir, not pytest's.
        root = Path(tempfile.mkdtemp(prefix=f"lrm-{name}-"))
        root.chmod(0o700)
        settings = load_settings(
            state_dir=root / "state",
            overrides={
                "server": {"port": 0},
                "demo": {"ingest_on_first_start": False},
                "logging": {"level": "warning"},
                "limits": {"per_address": UNLIMITED, "per_token": UNLIMITED},
            },
        )
        return with_store(settings, two_source_store)

    started, thread = start_rig(make("app"), make("srv"))
    yield started
    stop_rig(started, thread)


#: Values that break things, drawn far more cheaply than arbitrary text or integers.
NASTY_STRINGS = [
    "",
    " ",
    "\x00",
    "\ud800",
    "\udfff",
    "\u202e\u2066",
    "\ufeff",
    "é",
    "日本語",
    "🙂" * 40,
    "a" * 2001,
    "\n" * 300,
    "\t\r\n",
    '{"x": 1}',
    "'; DROP TABLE chunks; --",
    "../../etc/passwd",
    "%s%n%x",
    "${jndi:ldap://x}",
    "<script>alert(1)</script>",
    "lrm_" + "a" * 43,
    "tiny",
    "vault",
    "doc_id",
    "title",
    "a.b.c.d.e",
    "bad key!",
    "x" * 65,
    "0" * 32,
    "00000000-0000-0000-0000-000000000000",
    "*",
]
NASTY_INTS = [0, 1, -1, 2, 5, 8, 16, 49, 50, 51, 199, 200, 201, 8000, 8001, 2**31, 2**53 + 1]
NASTY_INTS += [-(2**63), 2**64, 10**100]


def strings() -> st.SearchStrategy[str]:
    return st.sampled_from(NASTY_STRINGS) | st.sampled_from(NASTY_STRINGS) | st.text(max_size=20)


def ints() -> st.SearchStrategy[int]:
    return st.sampled_from(NASTY_INTS) | st.integers(-5, 300)


def json_values(max_leaves: int = 4) -> st.SearchStrategy[Any]:
    """Any JSON value; kept small, because drawing is what a fuzz case costs here."""
    scalars = (
        st.none()
        | st.booleans()
        | ints()
        | st.sampled_from([0.5, -0.0, 1e308, -1e-308, 3.0, 5e-324])
        | strings()
    )
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(strings(), children, max_size=3)
        ),
        max_leaves=max_leaves,
    )


def queries() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(QUERIES),
        st.sampled_from(QUERIES),
        strings(),
        st.text(st.characters(codec=None), max_size=60),  # any code point, surrogates too
        json_values(2),
    )


def chunk_ids() -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from(CHUNK_IDS), strings(), json_values(2))


def near_valid_arguments() -> st.SearchStrategy[dict[str, Any]]:
    """Arguments shaped like the tools' own, with values that stray."""
    numbers = ints() | json_values(1)
    listish = json_values(2)
    return st.fixed_dictionaries(
        {},
        optional={
            "query": queries(),
            "top_k": numbers,
            "sources": st.lists(strings(), max_size=40) | listish,
            "filter": st.dictionaries(strings(), json_values(2), max_size=20) | listish,
            "chunk_id": chunk_ids(),
            "before": numbers,
            "after": numbers,
            "ids": st.lists(chunk_ids(), max_size=60) | listish,
            "budget_tokens": numbers,
        },
    )


def arguments() -> st.SearchStrategy[Any]:
    return st.one_of(
        near_valid_arguments(),
        near_valid_arguments(),
        st.dictionaries(st.sampled_from(ARGUMENT_NAMES) | strings(), json_values()),
        json_values(),
    )


def tool_names() -> st.SearchStrategy[Any]:
    return st.sampled_from(TOOLS) | st.sampled_from(TOOLS) | strings() | json_values(1)


def mcp_headers(token: str) -> list[tuple[str, str]]:
    return [
        ("host", "127.0.0.1:8765"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
        ("authorization", f"Bearer {token}"),
    ]


def check_answer(status: int | None, body: bytes) -> None:
    """The property: a JSON-RPC error, a 4xx, or an envelope — nothing else."""
    assert status is not None, "the app returned without answering"
    assert status < 500, (status, body[:400])
    if status >= 400 or not body:
        return
    message = json.loads(body)
    for reply in message if isinstance(message, list) else [message]:
        assert reply.get("jsonrpc") == "2.0", reply
        if "error" in reply:
            assert isinstance(reply["error"].get("code"), int), reply
            continue
        result = reply["result"]
        envelope = result.get("structuredContent") if isinstance(result, dict) else None
        if envelope is None:
            continue  # tools/list, initialize, ping …
        assert envelope["ok"] is not result.get("isError"), envelope
        if not envelope["ok"]:
            assert envelope["error"]["code"] != "internal_error", envelope["error"]
            assert envelope["error"]["remedy"], envelope["error"]


def tool_call_body(name: Any, args: Any, request_id: Any = 1) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": args},
        },
        ensure_ascii=True,  # lone surrogates travel as \ud800 escapes, as JSON allows
    ).encode()


def test_fuzz_tool_arguments(rig: FuzzRig) -> None:
    @settings(FUZZ_SETTINGS, max_examples=TOOL_EXAMPLES)
    @given(name=tool_names(), args=arguments())
    def case(name: Any, args: Any) -> None:
        # The drawn name, then every real tool: the same hostile arguments for each.
        for tool in (name, *TOOLS):
            answer = rig.call_app(tool_call_body(tool, args), mcp_headers(rig.app_token))
            check_answer(answer.status, answer.body)

    case()
    assert rig.call_app(b"", [("host", "127.0.0.1:8765")], method="GET", path="/healthz") == (
        Answer(200, b'{"status": "ok"}')
    )


def json_rpc_messages() -> st.SearchStrategy[Any]:
    methods = (
        st.sampled_from(
            [
                "tools/call",
                "tools/call",
                "tools/list",
                "initialize",
                "ping",
                "notifications/initialized",
                "resources/list",
                "prompts/get",
                "server/discover",
                "subscriptions/listen",
                "completion/complete",
                "logging/setLevel",
            ]
        )
        | strings()
    )
    params = st.fixed_dictionaries(
        {},
        optional={
            "name": tool_names(),
            "arguments": arguments(),
            "_meta": json_values(3),
            "protocolVersion": st.sampled_from(["2025-11-25", "2026-07-28", "1999"]),
            "capabilities": json_values(2),
            "clientInfo": json_values(2),
        },
    )
    well_formed = st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "method": methods},
        optional={"id": ints() | strings() | st.none(), "params": params | json_values(2)},
    )
    stray = st.fixed_dictionaries(
        {},
        optional={
            "jsonrpc": st.sampled_from(["2.0", "1.0", ""]) | json_values(1),
            "id": json_values(1),
            "method": methods | json_values(1),
            "params": params | json_values(2),
            "result": json_values(2),
            "error": json_values(2),
        },
    )
    return st.one_of(well_formed, well_formed, stray, st.lists(well_formed, max_size=3))


def raw_bodies() -> st.SearchStrategy[bytes]:
    encoded = json_rpc_messages().map(lambda m: json.dumps(m, ensure_ascii=True).encode())
    return st.one_of(
        encoded,
        encoded,
        encoded,
        json_values().map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=200),
        encoded.map(lambda b: b[: max(0, len(b) - 3)]),  # truncated JSON
        st.sampled_from([b"", b"null", b"[]", b"{}", b"\xff\xfe", b"{" * 5000, b"[" * 5000]),
    )


def header_sets(token: str) -> st.SearchStrategy[list[tuple[str, str]]]:
    """Mostly the headers a client sends, so bodies reach JSON-RPC; sometimes not."""
    base = mcp_headers(token)
    content_types = st.sampled_from(
        ["application/json", "text/plain", "application/json; charset=latin-1", ""]
    )
    versions = st.sampled_from(["2025-11-25", "2026-07-28", "", "garbage"])
    accepts = st.sampled_from(
        ["application/json, text/event-stream", "application/json", "text/event-stream", "*/*"]
    )
    stray = st.tuples(content_types, versions, accepts, st.booleans()).map(
        lambda t: [
            *(h for h in base if h[0] not in ("content-type", "mcp-protocol-version", "accept")),
            ("content-type", t[0]),
            ("mcp-protocol-version", t[1]),
            ("accept", t[2]),
            *([("mcp-session-id", "forged-session")] if t[3] else []),
        ]
    )
    return st.one_of(st.just(base), st.just(base), st.just(base), stray)


def test_fuzz_raw_json_rpc_bodies(rig: FuzzRig) -> None:
    @settings(FUZZ_SETTINGS, max_examples=BODY_EXAMPLES)
    @given(body=raw_bodies(), headers=header_sets(rig.app_token))
    def case(body: bytes, headers: list[tuple[str, str]]) -> None:
        answer = rig.call_app(body, headers)
        check_answer(answer.status, answer.body)

    case()


def test_fuzz_over_the_real_socket(rig: FuzzRig) -> None:
    base = rig.server.url.removesuffix("/mcp")
    headers = {k: v for k, v in mcp_headers(rig.server_token) if k != "host"}
    with httpx2.Client(timeout=30) as http:

        @settings(FUZZ_SETTINGS, max_examples=SOCKET_EXAMPLES)
        @given(body=st.one_of(raw_bodies(), st.builds(tool_call_body, tool_names(), arguments())))
        def case(body: bytes) -> None:
            response = http.post(rig.server.url, content=body, headers=headers)
            check_answer(response.status_code, response.content)

        case()
        assert http.get(f"{base}/healthz").json() == {"status": "ok"}
        ready = http.get(f"{base}/readyz")
        assert ready.status_code == 200 and ready.json()["ready"] is True
