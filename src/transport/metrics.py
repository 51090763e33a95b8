"""``/metrics`` in the Prometheus text format, for operators (a ``metrics``-scoped token).

Mostly a *pull* model: a custom collector reads the ``statistics()`` every part already
keeps (actors and their supervisor, the WAL writer, the rate limiter, the auth gate,
the admission app, the reload hub) at scrape time, so the hot path pays nothing for
them. Only what must be seen per call is observed as it happens, each a dict lookup
and an increment: calls by tool and outcome, latency per tool, latency per retrieval
leg, and legs dropped by reason.

The registry is this server's own (never the library's global one), so two servers in
one process (the tests) never share or collide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Seconds; from a cached in-process search (ms) to a request at its deadline.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Statistics(Protocol):
    def statistics(self) -> Any: ...


class ServerMetrics:
    """Owns the registry; the dispatcher and the pipeline report into it per call."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._calls = Counter(
            "lrm_tool_calls",
            "Tool calls by tool and outcome (ok or the error code).",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self._latency = Histogram(
            "lrm_tool_latency_seconds",
            "Tool call latency, by tool.",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._legs = Histogram(
            "lrm_leg_latency_seconds",
            "First-stage retrieval latency, by leg (answered, late or failed).",
            ["leg"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._dropped = Counter(
            "lrm_legs_dropped",
            "Legs dropped from a request, by leg and reason.",
            ["leg", "reason"],
            registry=self.registry,
        )

    def observe_call(
        self, tool: str, outcome: str, seconds: float, dropped: Sequence[tuple[str, str]]
    ) -> None:
        self._calls.labels(tool, outcome).inc()
        self._latency.labels(tool).observe(seconds)
        for leg, reason in dropped:
            self._dropped.labels(leg, reason).inc()

    def observe_leg(self, leg: str, seconds: float) -> None:
        self._legs.labels(leg).observe(seconds)

    def watch(self, **parts: Statistics | Callable[[], Any]) -> None:
        """Read these parts' statistics at every scrape (see ``StatisticsCollector``)."""
        self.registry.register(StatisticsCollector(parts))

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _stats(part: Statistics | Callable[[], Any]) -> Any:
    return part.statistics() if hasattr(part, "statistics") else part()


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


class StatisticsCollector(Collector):
    """Turns the parts' ``statistics()`` into metric families, at scrape time."""

    def __init__(self, parts: Mapping[str, Statistics | Callable[[], Any]]) -> None:
        self._parts = dict(parts)

    def describe(self) -> list[Metric]:
        return []  # families depend on what the parts report; describe nothing up front

    def collect(self) -> Iterator[Metric]:
        parts = self._parts
        if "pipeline" in parts:
            yield from self._actors(_stats(parts["pipeline"]).get("actors", {}))
        if "wal" in parts:
            yield from self._wal(_stats(parts["wal"]))
        if "limiter" in parts:
            yield from self._limiter(_stats(parts["limiter"]))
        if "gate" in parts:
            yield from self._gate(_stats(parts["gate"]))
        if "app" in parts:
            yield from self._app(_stats(parts["app"]))
        if "hub" in parts:
            yield from self._reloads(_stats(parts["hub"]))

    def _actors(self, actors: Mapping[str, Mapping[str, Any]]) -> Iterator[Metric]:
        restarts = CounterMetricFamily(
            "lrm_actor_restarts", "Pipeline actor restarts by its supervisor.", labels=["actor"]
        )
        queued = GaugeMetricFamily(
            "lrm_actor_queue_depth", "Jobs waiting in an actor's inbox.", labels=["actor"]
        )
        in_flight = GaugeMetricFamily(
            "lrm_actor_in_flight", "Jobs an actor is running.", labels=["actor"]
        )
        for name, stats in sorted(actors.items()):
            restarts.add_metric([name], _number(stats.get("restarts")))
            queued.add_metric([name], _number(stats.get("queued")))
            in_flight.add_metric([name], _number(stats.get("in_flight")))
        yield from (restarts, queued, in_flight)

    def _wal(self, wal: Any) -> Iterator[Metric]:
        healthy = GaugeMetricFamily("lrm_wal_healthy", "1 while the WAL can acknowledge writes.")
        healthy.add_metric([], 1.0 if wal.healthy else 0.0)
        depth = GaugeMetricFamily("lrm_wal_queue_depth", "Records waiting for the WAL writer.")
        depth.add_metric([], _number(wal.queue_depth))
        fsyncs = CounterMetricFamily("lrm_wal_fsyncs", "WAL fsyncs (one per group commit).")
        fsyncs.add_metric([], _number(wal.fsyncs))
        last = GaugeMetricFamily("lrm_wal_fsync_last_seconds", "Duration of the last WAL fsync.")
        last.add_metric([], _number(wal.last_fsync_s))
        worst = GaugeMetricFamily("lrm_wal_fsync_max_seconds", "Longest WAL fsync so far.")
        worst.add_metric([], _number(wal.max_fsync_s))
        records = CounterMetricFamily("lrm_wal_records", "Records written to the WAL.")
        records.add_metric([], _number(wal.records))
        yield from (healthy, depth, fsyncs, last, worst, records)

    def _limiter(self, limiter: Mapping[str, Any]) -> Iterator[Metric]:
        refused = CounterMetricFamily(
            "lrm_rate_limit_refusals",
            "Requests refused by a rate limit, by limit.",
            labels=["limit"],
        )
        for kind, count in sorted((limiter.get("refused") or {}).items()):
            refused.add_metric([str(kind)], _number(count))
        admitted = CounterMetricFamily("lrm_rate_limit_admitted", "Requests a rate limit admitted.")
        admitted.add_metric([], _number(limiter.get("admitted")))
        yield from (refused, admitted)

    def _gate(self, gate: Mapping[str, Any]) -> Iterator[Metric]:
        tokens = GaugeMetricFamily("lrm_auth_tokens", "Bearer tokens the server accepts.")
        tokens.add_metric([], _number(gate.get("tokens")))
        backoff = GaugeMetricFamily(
            "lrm_auth_addresses_backing_off", "Client addresses in failed-auth backoff."
        )
        backoff.add_metric([], _number(gate.get("addresses_backing_off")))
        yield from (tokens, backoff)

    def _app(self, app: Mapping[str, Any]) -> Iterator[Metric]:
        refused = CounterMetricFamily(
            "lrm_http_refusals", "Requests refused before MCP, by HTTP status.", labels=["status"]
        )
        for status, count in sorted((app.get("refused") or {}).items()):
            refused.add_metric([str(status)], _number(count))
        in_flight = GaugeMetricFamily("lrm_http_in_flight", "HTTP requests being served.")
        in_flight.add_metric([], _number(app.get("in_flight")))
        yield from (refused, in_flight)

    def _reloads(self, hub: Mapping[str, Mapping[str, Any]]) -> Iterator[Metric]:
        ok = GaugeMetricFamily(
            "lrm_reload_last_ok",
            "1 if the part's last reload succeeded, 0 if not.",
            labels=["part"],
        )
        at = GaugeMetricFamily(
            "lrm_reload_last_timestamp_seconds", "When the part last reloaded.", labels=["part"]
        )
        for part, outcome in sorted(hub.items()):
            ok.add_metric([part], 1.0 if outcome.get("ok") else 0.0)
            at.add_metric([part], _number(outcome.get("at")))
        yield from (ok, at)
