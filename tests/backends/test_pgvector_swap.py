"""Re-ingest into Postgres while searching: each read sees one whole version of each
document (ADR 0038), against the real database.

Checked by reading between every step of a replacement (after each staged batch,
across the publish), by a searcher running beside a re-ingest of many documents, and
across a crash: staged rows left unpublished stay hidden, and the WAL's replay or the
next ingest replaces them."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import psycopg
import trio

from retrieval_mcp.actors.wal_writer import open_wal_writer
from retrieval_mcp.backends.pgvector import PgvectorBackend
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.encoders.embedding_provider import BundledMiniLM
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.chunk_builder import build_chunks, document_hash
from retrieval_mcp.ingest.durable_ingest import DocumentSwap, DurableIngestTarget
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.ingest.runner import IngestReport, ingest_documents, swapping
from retrieval_mcp.records import Chunk
from retrieval_mcp.settings import PostgresSettings
from retrieval_mcp.wal.wal_records import publish_documents, stage_batch
from retrieval_mcp.wal.wal_settings import WalSettings

SOURCE = "manual"
CHUNKING = {"chunk_chars": 200, "overlap_chars": 0}
D, B = Capability.DENSE, Capability.BM25
WAL = WalSettings(group_commit_max_delay_s=0.0)


def manual(version: int, paragraphs: int = 90, doc_id: str = "manual.md") -> Document:
    """A long document (many chunks: more than one staged batch) about valves."""
    text = "\n\n".join(
        f"Valve {i} maintenance, edition {version}: close the valve, bleed the line, "
        f"then replace gasket {i} and log edition {version}."
        for i in range(paragraphs)
    )
    return Document(doc_id=doc_id, title="Valve manual", text=text)


def chunks_of(doc: Document) -> list[Chunk]:
    return build_chunks(doc, source=SOURCE, **CHUNKING)


async def open_pg(uri: str, table: str, encoder: MiniLMEncoder) -> PgvectorBackend:
    settings = PostgresSettings(conninfo=uri, table=table)
    return await PgvectorBackend.open(settings, BundledMiniLM(encoder))


def new_table() -> str:
    return f"swap_{uuid.uuid4().hex[:8]}"


async def ingest(target: Any, documents: list[Document]) -> IngestReport:
    return await ingest_documents(
        target, documents, source=SOURCE, chunk_chars=200, overlap_chars=0
    )


async def search_all(backend: PgvectorBackend, leg: Capability) -> list[Chunk]:
    hits = await backend.search(LegQuery(leg, "valve gasket edition", 10_000, sources=(SOURCE,)))
    return [h.chunk for h in hits]


def versions_seen(hits: Sequence[Chunk], doc_id: str) -> set[str]:
    return {c.doc_hash for c in hits if c.provenance.doc_id == doc_id}


async def visible_chunks(backend: PgvectorBackend) -> int:
    return sum(s.chunks for s in await backend.sources())


class SearchingBetweenSteps:
    """The backend, read (both legs, counts, fetch) before and after every stage and publish."""

    def __init__(self, backend: PgvectorBackend, old: Document, new: Document) -> None:
        self.backend = backend
        self.swaps_documents = True
        self.expected = {
            "before": (document_hash(old, **CHUNKING), chunks_of(old)),
            "after": (document_hash(new, **CHUNKING), chunks_of(new)),
        }
        self.phase = "before"
        self.checks = 0

    async def check(self) -> None:
        doc_hash, chunks = self.expected[self.phase]
        for leg in (D, B):
            hits = await search_all(self.backend, leg)
            assert versions_seen(hits, "manual.md") == {doc_hash}, self.phase
            assert len({c.id for c in hits}) == len(hits)
        # the whole version, and nothing of the other one
        assert await visible_chunks(self.backend) == len(chunks)
        other = "after" if self.phase == "before" else "before"
        assert await self.backend.fetch([c.id for c in self.expected[other][1]]) == []
        fetched = await self.backend.fetch([c.id for c in chunks])
        assert [c.id for c in fetched] == [c.id for c in chunks]
        self.checks += 1

    async def document_hashes(self, source: str) -> dict[str, str]:
        return await self.backend.document_hashes(source)

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        raise AssertionError("a swapping target is staged, never upserted in place")

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None:
        await self.backend.delete_documents(source, doc_ids)

    async def stage(self, chunks: Sequence[Chunk]) -> None:
        await self.check()
        await self.backend.stage(chunks)
        await self.check()

    async def publish(self, source: str, versions: Mapping[str, str]) -> None:
        await self.check()
        await self.backend.publish(source, versions)
        self.phase = "after"
        await self.check()

    async def commit(self) -> None:
        await self.backend.commit()


async def test_postgres_is_a_swapping_target(pg_uri: str, encoder: MiniLMEncoder) -> None:
    backend = await open_pg(pg_uri, new_table(), encoder)
    try:
        assert swapping(backend) is backend
        assert isinstance(backend, DocumentSwap)  # so the WAL's target swaps too
    finally:
        await backend.aclose()


async def test_a_replaced_document_is_read_old_or_new_never_mixed(
    pg_uri: str, encoder: MiniLMEncoder
) -> None:
    old, new = manual(1), manual(2)
    backend = await open_pg(pg_uri, new_table(), encoder)
    try:
        await ingest(backend, [old])
        assert len(chunks_of(old)) > 64  # more than one staged batch
        stepper = SearchingBetweenSteps(backend, old, new)
        report = await ingest(stepper, [new])
        assert report.documents_replaced == 1 and stepper.checks >= 6
        new_hash = document_hash(new, **CHUNKING)
        assert await backend.document_hashes(SOURCE) == {"manual.md": new_hash}
        # neighbours stay within the version of the chunk asked about
        hit = (await search_all(backend, B))[0]
        around = await backend.neighbors(hit, before=3, after=3)
        assert around and {c.doc_hash for c in around} == {new_hash}
        similar = await backend.similar(hit.id, limit=500)
        assert similar and {c.chunk.doc_hash for c in similar} == {new_hash}
    finally:
        await backend.aclose()


async def test_searches_beside_a_reingest_of_many_documents_never_mix_versions(
    pg_uri: str, encoder: MiniLMEncoder
) -> None:
    many = {v: [manual(v, 6, doc_id=f"m{i}.md") for i in range(12)] for v in (1, 2)}
    backend = await open_pg(pg_uri, new_table(), encoder)
    try:
        await ingest(backend, many[1])
        per_doc = len(chunks_of(many[1][0]))
        done = trio.Event()
        searches = 0

        async def searcher() -> None:
            nonlocal searches
            while not done.is_set():
                for leg in (D, B):
                    hits = await search_all(backend, leg)
                    for doc in many[1]:
                        assert len(versions_seen(hits, doc.doc_id)) <= 1, doc.doc_id
                    searches += 1
                # every document counted whole: one version's chunks, never two
                assert await visible_chunks(backend) == per_doc * len(many[1])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(searcher)
            await ingest(backend, many[2])
            done.set()
        assert searches >= 2
        expected = {d.doc_id: document_hash(d, **CHUNKING) for d in many[2]}
        assert await backend.document_hashes(SOURCE) == expected
    finally:
        await backend.aclose()


async def test_a_staged_version_stays_hidden_after_a_crash_until_the_next_ingest(
    pg_uri: str, encoder: MiniLMEncoder
) -> None:
    old, new = manual(1, 5), manual(2, 5)
    table = new_table()
    backend = await open_pg(pg_uri, table, encoder)
    try:
        await ingest(backend, [old])
        await backend.stage(chunks_of(new))
    finally:
        await backend.aclose()  # as if the ingest died before publishing
    backend = await open_pg(pg_uri, table, encoder)
    try:
        old_hash, new_hash = (document_hash(d, **CHUNKING) for d in (old, new))
        for leg in (D, B):
            assert versions_seen(await search_all(backend, leg), "manual.md") == {old_hash}
        assert await visible_chunks(backend) == len(chunks_of(old))
        # not stored whole: the next ingest rewrites it rather than trusting the remnant
        assert await backend.document_hashes(SOURCE) == {"manual.md": ""}
        assert (await ingest(backend, [new])).documents_written == 1
        assert await backend.document_hashes(SOURCE) == {"manual.md": new_hash}
        assert versions_seen(await search_all(backend, B), "manual.md") == {new_hash}
        assert await visible_chunks(backend) == len(chunks_of(new))
    finally:
        await backend.aclose()


async def test_restaging_the_published_version_keeps_it_visible(
    pg_uri: str, encoder: MiniLMEncoder
) -> None:
    """A leftover staged version makes the next ingest restage the current one (same
    ids): those rows must stay published while it does."""
    old, new = manual(1, 5), manual(2, 5)
    backend = await open_pg(pg_uri, new_table(), encoder)
    try:
        await ingest(backend, [old])
        await backend.stage(chunks_of(new))  # never published
        await backend.stage(chunks_of(old))
        assert await visible_chunks(backend) == len(chunks_of(old))
        assert (await ingest(backend, [old])).documents_written == 1
        old_hash = document_hash(old, **CHUNKING)
        assert await backend.document_hashes(SOURCE) == {"manual.md": old_hash}
        assert await visible_chunks(backend) == len(chunks_of(old))
    finally:
        await backend.aclose()


async def test_the_wal_replays_a_logged_swap_and_keeps_an_unpublished_one_hidden(
    pg_uri: str, encoder: MiniLMEncoder, tmp_path: Path
) -> None:
    v1, v2, v3 = manual(1, 5), manual(2, 5), manual(3, 5)
    hashes = {v: document_hash(d, **CHUNKING) for v, d in ((1, v1), (2, v2), (3, v3))}
    backend = await open_pg(pg_uri, new_table(), encoder)
    try:
        await ingest(backend, [v1])
        # Acknowledged in the log, then the process died before applying either record.
        async with open_wal_writer(tmp_path / "wal", WAL) as writer:
            await writer.append(stage_batch(chunks_of(v2)))
            await writer.append(publish_documents(SOURCE, {"manual.md": hashes[2]}))
        async with open_wal_writer(tmp_path / "wal", WAL) as writer:
            await DurableIngestTarget(backend, writer).recover()
        assert versions_seen(await search_all(backend, B), "manual.md") == {hashes[2]}
        assert await backend.document_hashes(SOURCE) == {"manual.md": hashes[2]}
        # A staged batch logged without its publish: replayed, and still hidden.
        async with open_wal_writer(tmp_path / "wal", WAL) as writer:
            await writer.append(stage_batch(chunks_of(v3)))
        async with open_wal_writer(tmp_path / "wal", WAL) as writer:
            durable = DurableIngestTarget(backend, writer)
            await durable.recover()
            assert versions_seen(await search_all(backend, B), "manual.md") == {hashes[2]}
            assert await visible_chunks(backend) == len(chunks_of(v2))
            assert await backend.document_hashes(SOURCE) == {"manual.md": ""}
            assert (await ingest(durable, [v3])).documents_written == 1
        assert versions_seen(await search_all(backend, B), "manual.md") == {hashes[3]}
        assert await backend.document_hashes(SOURCE) == {"manual.md": hashes[3]}
    finally:
        await backend.aclose()


async def test_a_table_from_before_the_swap_gains_the_staged_column(
    pg_uri: str, encoder: MiniLMEncoder
) -> None:
    table = new_table()
    backend = await open_pg(pg_uri, table, encoder)
    try:
        await ingest(backend, [manual(1, 5)])
    finally:
        await backend.aclose()
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {table} DROP COLUMN staged")
    backend = await open_pg(pg_uri, table, encoder)
    try:
        assert await visible_chunks(backend) == len(chunks_of(manual(1, 5)))
        assert (await ingest(backend, [manual(2, 5)])).documents_replaced == 1
        assert versions_seen(await search_all(backend, B), "manual.md") == {
            document_hash(manual(2, 5), **CHUNKING)
        }
    finally:
        await backend.aclose()


async def test_a_rename_rekeys_the_stored_version_and_keeps_its_chunk_ids(
    pg_uri: str, encoder: MiniLMEncoder
) -> None:
    doc = manual(1, 5, doc_id="old.md")
    backend = await open_pg(pg_uri, new_table(), encoder)
    try:
        await ingest(backend, [doc])
        doc_hash = document_hash(doc, **CHUNKING)
        await backend.rename_documents(SOURCE, [("old.md", "new.md", doc_hash, "file:///new.md")])
        assert await backend.document_hashes(SOURCE) == {"new.md": doc_hash}
        moved = await backend.fetch([c.id for c in chunks_of(doc)])
        assert len(moved) == len(chunks_of(doc))
        assert {(c.provenance.doc_id, c.provenance.uri) for c in moved} == {
            ("new.md", "file:///new.md")
        }
    finally:
        await backend.aclose()
