"""Re-ingest while searching: every search sees one whole version of each document.

The swap is checked two ways: deterministically, by searching between every step of a
replacement (after each staged batch, across the publish), and by a searcher that runs
freely beside the re-ingest of many documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import trio
import trio.testing

from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.backends.version_gate import VersionGate
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.chunk_builder import build_chunks, document_hash
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.ingest.runner import IngestReport, ingest_documents
from retrieval_mcp.records import Chunk

SOURCE = "manual"
CHUNKING = {"chunk_chars": 200, "overlap_chars": 0}


def manual(version: int, paragraphs: int = 90) -> Document:
    """A long document (many chunks: more than one staged batch) about valves."""
    text = "\n\n".join(
        f"Valve {i} maintenance, edition {version}: close the valve, bleed the line, "
        f"then replace gasket {i} and log edition {version}."
        for i in range(paragraphs)
    )
    return Document(doc_id="manual.md", title="Valve manual", text=text)


async def ingest(target: Any, documents: list[Document]) -> IngestReport:
    return await ingest_documents(
        target, documents, source=SOURCE, chunk_chars=200, overlap_chars=0
    )


def versions_seen(hits: Sequence[Chunk], doc_id: str) -> set[str]:
    return {c.doc_hash for c in hits if c.provenance.doc_id == doc_id}


async def search_all(backend: QdrantEmbeddedBackend, leg: Capability) -> list[Chunk]:
    hits = await backend.search(LegQuery(leg, "valve gasket edition", 10_000, sources=(SOURCE,)))
    return [h.chunk for h in hits]


class SearchingBetweenSteps:
    """The backend, with a search (both legs) before and after every stage and publish."""

    def __init__(self, backend: QdrantEmbeddedBackend, allowed: Mapping[str, set[str]]) -> None:
        self.backend = backend
        self.swaps_documents = True
        self.allowed = allowed  # phase -> versions a search may see
        self.phase = "before"
        self.checks = 0

    async def check(self) -> None:
        for leg in (Capability.DENSE, Capability.BM25):
            hits = await search_all(self.backend, leg)
            seen = versions_seen(hits, "manual.md")
            assert len(seen) == 1 and seen <= self.allowed[self.phase], (self.phase, seen)
            # the whole version: every one of its chunks, each once
            whole = [c for c in hits if c.provenance.doc_id == "manual.md"]
            assert len({c.id for c in whole}) == len(whole)
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


async def test_a_replaced_document_is_seen_old_or_new_never_mixed(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    old, new = manual(1), manual(2)
    old_hash, new_hash = (document_hash(d, **CHUNKING) for d in (old, new))
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        await ingest(backend, [old])
        old_chunks = len(build_chunks(old, source=SOURCE, **CHUNKING))
        assert old_chunks > 64  # more than one staged batch
        stepper = SearchingBetweenSteps(backend, {"before": {old_hash}, "after": {new_hash}})
        report = await ingest(stepper, [new])
        assert report.documents_replaced == 1 and stepper.checks >= 8
        assert await backend.document_hashes(SOURCE) == {"manual.md": new_hash}
        assert (await backend.status()).chunks == len(build_chunks(new, source=SOURCE, **CHUNKING))
        # neighbours stay within the version of the chunk asked about
        hit = (await search_all(backend, Capability.BM25))[0]
        around = await backend.neighbors(hit, before=3, after=3)
        assert around and {c.doc_hash for c in around} == {new_hash}
    finally:
        await backend.aclose()


async def test_a_staged_version_is_hidden_until_published_even_after_a_restart(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    old, new = manual(1, 5), manual(2, 5)
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        await ingest(backend, [old])
        await backend.stage(build_chunks(new, source=SOURCE, **CHUNKING))
        await backend.commit()
    finally:
        await backend.aclose()  # as if the ingest died before publishing
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        old_hash = document_hash(old, **CHUNKING)
        for leg in (Capability.DENSE, Capability.BM25):
            assert versions_seen(await search_all(backend, leg), "manual.md") == {old_hash}
        assert {s.name: s.chunks for s in await backend.sources()} == {
            SOURCE: len(build_chunks(old, source=SOURCE, **CHUNKING))
        }
        # not stored whole: the next ingest rewrites it rather than trusting the remnant
        assert await backend.document_hashes(SOURCE) == {"manual.md": ""}
        report = await ingest(backend, [new])
        assert report.documents_written == 1
        new_hash = document_hash(new, **CHUNKING)
        assert await backend.document_hashes(SOURCE) == {"manual.md": new_hash}
        assert versions_seen(await search_all(backend, Capability.BM25), "manual.md") == {new_hash}
    finally:
        await backend.aclose()


async def test_searches_beside_a_reingest_of_many_documents_never_mix_versions(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    docs = {v: [manual(v, 6)] for v in (1, 2)}
    many = {
        v: [
            Document(doc_id=f"m{i}.md", title=f"M{i}", text=d.text)
            for i, d in enumerate(docs[v] * 12)
        ]
        for v in (1, 2)
    }
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        await ingest(backend, many[1])
        done = trio.Event()
        searches = 0

        async def searcher() -> None:
            nonlocal searches
            while not done.is_set():
                for leg in (Capability.DENSE, Capability.BM25):
                    hits = await search_all(backend, leg)
                    for doc in many[1]:
                        assert len(versions_seen(hits, doc.doc_id)) <= 1, doc.doc_id
                    searches += 1

        async with trio.open_nursery() as nursery:
            nursery.start_soon(searcher)
            await ingest(backend, many[2])
            done.set()
        assert searches >= 2
        expected = {d.doc_id: document_hash(d, **CHUNKING) for d in many[2]}
        assert await backend.document_hashes(SOURCE) == expected
    finally:
        await backend.aclose()


async def test_the_gate_waits_for_searches_that_began_before_the_flip() -> None:
    gate = VersionGate()
    order: list[str] = []
    release = trio.Event()

    async def early_search() -> None:
        with gate.reading() as view:
            assert view == {}
            await release.wait()
            order.append("early search done")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(early_search)
        await trio.testing.wait_all_tasks_blocked()
        epoch = gate.flip("s", {"d": "h2"})
        with gate.reading() as late:
            assert late == {("s", "d"): "h2"}

            async def publisher() -> None:
                await gate.wait_for_readers(epoch)  # the late search does not hold it up
                order.append("store changed")

            nursery.start_soon(publisher)
            await trio.testing.wait_all_tasks_blocked()
            assert order == []
            release.set()
    assert order == ["early search done", "store changed"]
    gate.settle("s", {"d": "h2"})
    assert gate.exclusions() == {}
