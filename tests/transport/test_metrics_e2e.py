"""``/metrics``: Prometheus text behind its own token scope, parsed by the client library."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.token_admin import create_token, list_tokens
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


async def test_metrics_are_scraped_with_a_metrics_token_only(
    make_settings: SettingsFactory, corpus_dir: Path
) -> None:
    # Session records commit at once (not batched for up to a second), so the WAL's
    # counters have moved by the time of the scrape.
    settings = make_settings(wal={"unacknowledged_max_delay_s": 0.0})
    await ingest_folder(settings, corpus_dir, "tiny")
    hub = ReloadHub()
    async with running_server(settings, hub=hub) as server:
        scraper = create_token(settings.token_path, "prometheus", scopes=["metrics"])
        await hub.reload_all()
        rows = {row["name"]: row for row in list_tokens(settings.token_path)}
        assert rows["prometheus"]["scopes"] == ["metrics"]
        assert rows["default"]["scopes"] == ["mcp"]
        async with server.client() as client:
            for _ in range(3):
                await client.call_tool("search", {"query": "what does E1234 mean"})
            await client.call_tool("search", {"query": ""})  # invalid_argument
            await client.call_tool("index_status", {})
        base = server.info.url.removesuffix("/mcp")
        async with httpx2.AsyncClient() as http:
            bearer = {"Authorization": f"Bearer {scraper}"}
            assert (await http.get(f"{base}/metrics")).status_code == 401
            mcp_token = {"Authorization": f"Bearer {server.token}"}
            assert (await http.get(f"{base}/metrics", headers=mcp_token)).status_code == 403
            listed = await http.post(
                server.info.url,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={**bearer, "accept": "application/json, text/event-stream"},
            )
            assert listed.status_code == 403  # a scraper cannot call tools
            page = await http.get(f"{base}/metrics", headers=bearer)
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
        seen = samples(page.text)

    def value(name: str, **labels: str) -> float:
        return seen[(name, tuple(sorted(labels.items())))]

    assert value("lrm_tool_calls_total", tool="search", outcome="ok") == 3
    assert value("lrm_tool_calls_total", tool="search", outcome="invalid_argument") == 1
    assert value("lrm_tool_calls_total", tool="index_status", outcome="ok") == 1
    assert value("lrm_tool_latency_seconds_count", tool="search") == 4
    assert value("lrm_tool_latency_seconds_bucket", tool="search", le="+Inf") == 4
    for leg in ("dense", "bm25"):
        assert value("lrm_leg_latency_seconds_count", leg=leg) == 3
    assert value("lrm_actor_restarts_total", actor="fuser") == 0
    assert value("lrm_actor_queue_depth", actor="fetcher:dense") == 0
    assert value("lrm_wal_healthy") == 1 and value("lrm_wal_fsyncs_total") >= 1
    assert value("lrm_wal_fsync_max_seconds") >= value("lrm_wal_fsync_last_seconds") >= 0
    assert value("lrm_wal_queue_depth") >= 0
    assert value("lrm_reload_last_ok", part="tokens") == 1
    assert value("lrm_http_refusals_total", status="401") >= 1
    assert value("lrm_http_refusals_total", status="403") >= 2
    assert ("lrm_rate_limit_admitted_total", ()) in seen
    assert value("lrm_auth_tokens") == 2
