"""Leg composition, deadlines and degradation, with a scriptable in-memory backend."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import trio
import trio.testing

from retrieval_mcp.actors.search_pipeline import PipelineSettings, SearchPipeline, SearchRequest
from retrieval_mcp.backends.protocol import BackendStatus, Capability, LegQuery, SourceInfo
from retrieval_mcp.errors import BackendUnavailable, InvalidArgument, NoLegsAnswered
from retrieval_mcp.records import Candidate, Chunk, Provenance


def chunk(cid: str) -> Chunk:
    return Chunk(id=cid, text=cid, provenance=Provenance("s", cid, "", 0, 0, 1))


class ScriptedBackend:
    """Each leg returns fixed ids after a delay, or raises."""

    name = "scripted"

    def __init__(self, legs: dict[Capability, tuple[float, list[str] | Exception]]) -> None:
        self.legs = legs
        self.cancelled: list[Capability] = []
        self.queries: list[LegQuery] = []

    def capabilities(self) -> frozenset[Capability]:
        return frozenset(self.legs) | {Capability.FILTER}

    async def search(self, query: LegQuery) -> list[Candidate]:
        self.queries.append(query)
        delay, result = self.legs[query.leg]
        try:
            await trio.sleep(delay)
        except trio.Cancelled:
            self.cancelled.append(query.leg)
            raise
        if isinstance(result, Exception):
            raise result
        return [Candidate(chunk(i), 1.0 / r, r) for r, i in enumerate(result, 1)]

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        return []

    async def sources(self) -> list[SourceInfo]:
        return []

    async def status(self) -> BackendStatus:
        return BackendStatus(ready=True, backend=self.name, chunks=0)

    async def aclose(self) -> None:
        return None


SETTINGS = PipelineSettings(candidates_per_leg=20, leg_timeout_s=1.0, rrf_k=60)


async def test_plan_uses_declared_legs_only_in_preferred_order() -> None:
    backend = ScriptedBackend({Capability.BM25: (0, ["a"]), Capability.DENSE: (0, ["b"])})
    pipeline = SearchPipeline(backend, SETTINGS)
    assert pipeline.plan() == (Capability.DENSE, Capability.BM25)
    outcome = await pipeline.run(SearchRequest("q", top_k=5))
    assert outcome.legs_used == ["dense", "bm25"]
    assert outcome.steps_run == ["fetch:dense", "fetch:bm25", "fuse:rrf"]
    assert {q.leg for q in backend.queries} == {Capability.DENSE, Capability.BM25}
    assert all(q.limit == 20 for q in backend.queries)


async def test_legs_run_concurrently(autojump_clock: trio.testing.MockClock) -> None:
    backend = ScriptedBackend({Capability.DENSE: (0.6, ["a"]), Capability.BM25: (0.6, ["b"])})
    start = trio.current_time()
    await SearchPipeline(backend, SETTINGS).run(SearchRequest("q", top_k=5))
    assert trio.current_time() - start == pytest.approx(0.6)


async def test_late_leg_is_dropped_and_cancelled(autojump_clock: trio.testing.MockClock) -> None:
    backend = ScriptedBackend({Capability.DENSE: (5.0, ["a"]), Capability.BM25: (0.1, ["b"])})
    start = trio.current_time()
    outcome = await SearchPipeline(backend, SETTINGS).run(SearchRequest("q", top_k=5))
    assert trio.current_time() - start == pytest.approx(1.0)  # waited for the deadline only
    assert [h.chunk.id for h in outcome.hits] == ["b"]
    assert outcome.legs_used == ["bm25"]
    assert outcome.legs_dropped == [("dense", "timeout")]
    assert outcome.steps_run == ["fetch:bm25"]
    assert backend.cancelled == [Capability.DENSE]


async def test_failing_leg_is_dropped_with_its_code() -> None:
    backend = ScriptedBackend(
        {Capability.DENSE: (0, BackendUnavailable("down")), Capability.BM25: (0, ["b", "c"])}
    )
    outcome = await SearchPipeline(backend, SETTINGS).run(SearchRequest("q", top_k=1))
    assert [h.chunk.id for h in outcome.hits] == ["b"]
    assert outcome.legs_dropped == [("dense", "error:backend_unavailable")]


async def test_crashing_adapter_does_not_fail_the_request() -> None:
    backend = ScriptedBackend(
        {Capability.DENSE: (0, ZeroDivisionError()), Capability.BM25: (0, ["b"])}
    )
    outcome = await SearchPipeline(backend, SETTINGS).run(SearchRequest("q", top_k=3))
    assert outcome.legs_dropped == [("dense", "error:internal_error")]


async def test_no_leg_answering_is_a_clear_error(autojump_clock: trio.testing.MockClock) -> None:
    backend = ScriptedBackend({Capability.DENSE: (9, ["a"]), Capability.BM25: (0, OSError())})
    with pytest.raises(NoLegsAnswered, match=r"dense: timeout.*bm25: error:internal_error"):
        await SearchPipeline(backend, SETTINGS).run(SearchRequest("q", top_k=3))


async def test_caller_fault_in_every_leg_is_reported_as_such() -> None:
    bad = InvalidArgument("bad filter")
    backend = ScriptedBackend({Capability.DENSE: (0, bad), Capability.BM25: (0, bad)})
    with pytest.raises(InvalidArgument, match="bad filter"):
        await SearchPipeline(backend, SETTINGS).run(SearchRequest("q", top_k=3))


async def test_cancelling_the_request_cancels_every_leg(
    autojump_clock: trio.testing.MockClock,
) -> None:
    backend = ScriptedBackend({Capability.DENSE: (0.9, ["a"]), Capability.BM25: (0.9, ["b"])})
    with trio.move_on_after(0.5):
        await SearchPipeline(backend, SETTINGS).run(SearchRequest("q", top_k=3))
    assert sorted(backend.cancelled) == [Capability.BM25, Capability.DENSE]


async def test_backend_without_legs_is_refused() -> None:
    with pytest.raises(NoLegsAnswered, match="declares no retrieval leg"):
        await SearchPipeline(ScriptedBackend({}), SETTINGS).run(SearchRequest("q", top_k=3))
