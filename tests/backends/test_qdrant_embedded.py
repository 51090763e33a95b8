"""The embedded Qdrant adapter against the real engine in a temp dir (no fakes)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from retrieval_mcp.backends.protocol import Capability, LegQuery, SearchFilter
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import CapabilityMissing, ConfigError, StoreLocked
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.ingest.runner import ingest_documents

DOCS = [
    Document(
        "a",
        "Boiler faults",
        "Error code E1234 means low boiler pressure.",
        metadata={"team": "facilities", "year": 2024},
    ),
    Document(
        "b",
        "Wings",
        "Turbulent boundary layers increase skin friction drag.",
        metadata={"team": "aero", "year": 2023},
    ),
    Document(
        "c",
        "Bread",
        "Sourdough bread ferments overnight before baking.",
        metadata={"team": "kitchen", "year": 2024},
    ),
]


async def open_store(
    path: Path, encoder: MiniLMEncoder, *, inline_max_points: int = 0, batch_legs: bool = True
) -> QdrantEmbeddedBackend:
    backend = await QdrantEmbeddedBackend.open(
        path, encoder, inline_max_points=inline_max_points, batch_legs=batch_legs
    )
    await ingest_documents(backend, DOCS, source="kb", chunk_chars=500, overlap_chars=50)
    return backend


async def test_declares_dense_bm25_filter(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        caps = backend.capabilities()
        assert {Capability.DENSE, Capability.BM25, Capability.FILTER} <= caps
        assert Capability.SPARSE not in caps and Capability.MULTIVECTOR not in caps
        with pytest.raises(CapabilityMissing):
            await backend.search(LegQuery(Capability.SPARSE, "x", 3))
    finally:
        await backend.aclose()


async def test_each_leg_finds_its_document(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await open_store(tmp_path / "store", encoder)
    try:
        bm25 = await backend.search(LegQuery(Capability.BM25, "E1234", 3))
        assert [c.chunk.provenance.doc_id for c in bm25] == ["a"]  # only one doc has the term
        dense = await backend.search(LegQuery(Capability.DENSE, "airplane drag physics", 3))
        assert dense[0].chunk.provenance.doc_id == "b"
        assert [c.rank for c in dense] == [1, 2, 3]
        assert dense[0].score >= dense[1].score
        assert await backend.search(LegQuery(Capability.BM25, "the and of", 3)) == []
    finally:
        await backend.aclose()


async def test_filters_and_sources_restrict_results(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await open_store(tmp_path / "store", encoder)
    try:
        flt = SearchFilter(equals={"year": (2024,)})
        hits = await backend.search(LegQuery(Capability.DENSE, "drag", 5, filter=flt))
        assert {c.chunk.provenance.doc_id for c in hits} == {"a", "c"}
        flt = SearchFilter(equals={"team": ("aero", "kitchen")})
        hits = await backend.search(LegQuery(Capability.DENSE, "drag", 5, filter=flt))
        assert {c.chunk.provenance.doc_id for c in hits} == {"b", "c"}
        mixed = SearchFilter(equals={"year": (2023, "x")})
        hits = await backend.search(LegQuery(Capability.DENSE, "drag", 5, filter=mixed))
        assert {c.chunk.provenance.doc_id for c in hits} == {"b"}
        assert await backend.search(LegQuery(Capability.DENSE, "x", 5, sources=("other",))) == []
        assert len(await backend.search(LegQuery(Capability.DENSE, "x", 5, sources=("kb",)))) == 3
    finally:
        await backend.aclose()


async def test_fetch_sources_and_status(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await open_store(tmp_path / "store", encoder)
    try:
        hit = (await backend.search(LegQuery(Capability.BM25, "sourdough", 1)))[0]
        fetched = await backend.fetch([hit.chunk.id, "not-a-uuid", hit.chunk.id])
        assert [c.id for c in fetched] == [hit.chunk.id, hit.chunk.id]
        assert fetched[0] == hit.chunk
        assert fetched[0].metadata == {"team": "kitchen", "year": 2024}
        # Counted at ingest, so a get_context packs it without tokenising it again.
        assert fetched[0].tokens == encoder.count_tokens(fetched[0].text) > 0
        assert [(s.name, s.chunks) for s in await backend.sources()] == [("kb", 3)]
        status = await backend.status()
        assert status.ready and status.chunks == 3
    finally:
        await backend.aclose()
    assert not (await backend.status()).ready


async def test_store_persists_across_reopen(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await open_store(tmp_path / "store", encoder)
    await backend.aclose()
    reopened = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        assert (await reopened.status()).chunks == 3
        hits = await reopened.search(LegQuery(Capability.BM25, "E1234", 3))
        assert hits[0].chunk.provenance.doc_id == "a"
    finally:
        await reopened.aclose()


async def test_second_opener_is_refused_by_name(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    first = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        with pytest.raises(StoreLocked, match="in use by another process"):
            await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    finally:
        await first.aclose()
    second = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)  # lock released
    await second.aclose()
    await second.aclose()  # closing twice is harmless


async def test_store_built_by_another_encoder_is_refused(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    await backend.aclose()
    manifest = tmp_path / "store" / "manifest.json"
    manifest.write_text(manifest.read_text().replace(encoder.name, "some-other-model"))
    with pytest.raises(ConfigError, match="some-other-model"):
        await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    # The failed open released its lock.
    manifest.write_text(manifest.read_text().replace("some-other-model", encoder.name))
    await (await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)).aclose()


async def test_concurrent_reads_while_writing(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await open_store(tmp_path / "store", encoder)
    more = [
        Document(f"n{i}", f"Note {i}", f"Maintenance note number {i} about pumps.")
        for i in range(40)
    ]
    results: list[int] = []
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: ingest_documents(
                    backend, more, source="notes", chunk_chars=500, overlap_chars=50
                )
            )
            for _ in range(10):
                results.append(len(await backend.search(LegQuery(Capability.BM25, "E1234", 5))))
        assert all(n >= 1 for n in results)
        assert (await backend.status()).chunks == 43
    finally:
        await backend.aclose()


@pytest.mark.parametrize("inline_max_points", [0, 1000], ids=["threaded", "inline"])
async def test_id_only_legs_then_the_fused_top_k_read_by_id(
    tmp_path: Path, encoder: MiniLMEncoder, inline_max_points: int
) -> None:
    from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalRequest
    from retrieval_mcp.settings import PipelineConfig

    backend = await open_store(tmp_path / "store", encoder, inline_max_points=inline_max_points)
    try:
        full = await backend.search(LegQuery(Capability.BM25, "boiler pressure", 5))
        ids = await backend.search(LegQuery(Capability.BM25, "boiler pressure", 5, payloads=False))
        assert [(c.chunk.id, c.rank, c.score) for c in ids] == [
            (c.chunk.id, c.rank, c.score) for c in full
        ]
        assert all(c.chunk.text == "" for c in ids)  # no payload was read

        pipeline = Pipeline(backend, PipelineConfig(), lambda text: len(text.split()))
        assert pipeline.late_payloads
        async with trio.open_nursery() as nursery:
            await nursery.start(pipeline.run)
            outcome = await pipeline.retrieve(RetrievalRequest(text="boiler pressure", top_k=2))
            nursery.cancel_scope.cancel()
        assert len(outcome.hits) == 2
        # Every hit the pipeline hands on carries its stored chunk, not the placeholder.
        assert [h.chunk for h in outcome.hits] == await backend.fetch(
            [h.chunk.id for h in outcome.hits]
        )
        assert outcome.hits[0].chunk.provenance.doc_id == "a"
    finally:
        await backend.aclose()


@pytest.mark.parametrize("inline_max_points", [0, 1000], ids=["threaded", "inline"])
async def test_a_requests_legs_share_one_engine_call_and_answer_as_alone(
    tmp_path: Path, encoder: MiniLMEncoder, inline_max_points: int
) -> None:
    from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalRequest
    from retrieval_mcp.settings import PipelineConfig

    async def retrieve(
        backend: QdrantEmbeddedBackend, text: str
    ) -> list[tuple[str, dict[str, tuple[int, float]]]]:
        pipeline = Pipeline(backend, PipelineConfig(), lambda t: len(t.split()))
        async with trio.open_nursery() as nursery:
            await nursery.start(pipeline.run)
            outcome = await pipeline.retrieve(RetrievalRequest(text=text, top_k=3))
            nursery.cancel_scope.cancel()
        assert outcome.legs_used == ["dense", "bm25"] and not outcome.legs_dropped
        return [
            (h.chunk.id, {k: (v.rank, v.score) for k, v in h.legs.items()}) for h in outcome.hits
        ]

    queries = ["boiler pressure", "skin friction drag", "bread overnight"]
    cold_queries = ["pressure of the boiler", "drag in a wind tunnel"]
    batched = await open_store(tmp_path / "a", encoder, inline_max_points=inline_max_points)
    try:
        # Not cached: in a worker thread the encoder runs inside the batch's own hop (the
        # BM25 leg answered first, the dense leg second), so one flush a request; inline
        # the encoder keeps its own hop, which the BM25 leg does not wait for.
        async def counts() -> tuple[int, int]:
            extra = (await batched.status()).extra
            batches, cache = extra["leg_batches"], extra["query_cache"]
            assert isinstance(batches, dict) and isinstance(cache, dict)
            return int(batches["batches"]), int(cache["size"])

        start = await counts()
        got_cold = [await retrieve(batched, text) for text in cold_queries]
        end = await counts()
        assert end[0] - start[0] == len(cold_queries) * (2 if inline_max_points else 1)
        assert end[1] - start[1] == len(cold_queries)  # each vector now cached
        for text in queries:  # warm the query-vector cache: no encoder hop between legs
            await batched.search(LegQuery(Capability.DENSE, text, 1))
        before = (await batched.status()).extra["leg_batches"]
        assert isinstance(before, dict)
        got = [await retrieve(batched, text) for text in queries]
        after = (await batched.status()).extra["leg_batches"]
        assert isinstance(after, dict)
        # Two legs per request, one engine call per request.
        assert after["queries"] - before["queries"] == 2 * len(queries)
        assert after["batches"] - before["batches"] == len(queries)
    finally:
        await batched.aclose()
    alone = await open_store(
        tmp_path / "b", encoder, inline_max_points=inline_max_points, batch_legs=False
    )
    try:
        assert (await alone.status()).extra["leg_batches"] is None
        # Same ranks and scores per leg as one engine call per leg.
        assert got == [await retrieve(alone, text) for text in queries]
        assert got_cold == [await retrieve(alone, text) for text in cold_queries]
    finally:
        await alone.aclose()


async def test_a_store_with_in_ram_id_indexes_is_converted_and_still_filters(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    import qdrant_edge as qe

    backend = await open_store(tmp_path / "store", encoder)
    long = " ".join(f"Sentence {n} of the long manual about valves." for n in range(12))
    await ingest_documents(
        backend, [Document("m", "Manual", long)], source="kb", chunk_chars=120, overlap_chars=20
    )
    await backend.aclose()
    # A store written before ADR 0050: every keyword index held in RAM.
    shard = qe.EdgeShard.load(str(tmp_path / "store" / "shard"))
    for field in ("doc_id", "doc_hash"):
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    shard.close()
    reopened = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        schema = reopened._require_open().info().payload_schema
        assert schema["doc_id"].params.on_disk and schema["doc_hash"].params.on_disk
        source = schema["source"].params  # read by every search: stays in RAM
        assert source is None or not source.on_disk
        # What reads those indexes still answers: a source filter and a neighbour scan.
        hits = await reopened.search(LegQuery(Capability.BM25, "valves", 20, sources=("kb",)))
        manual = sorted((h.chunk for h in hits), key=lambda c: c.provenance.ordinal)
        assert len(manual) >= 3 and {c.provenance.doc_id for c in manual} == {"m"}
        around = await reopened.neighbors(manual[1], before=1, after=1)
        assert [c.provenance.ordinal for c in around] == [0, 2]
        assert not await reopened.search(LegQuery(Capability.BM25, "valves", 5, sources=("x",)))
    finally:
        await reopened.aclose()
