"""Loaders, content-derived chunk ids, and resumable, idempotent ingest."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.ingest.chunk_builder import build_chunks
from retrieval_mcp.ingest.loaders import Document, load_documents
from retrieval_mcp.ingest.runner import ingest_documents
from retrieval_mcp.records import Chunk


def test_text_folder_loader(corpus_dir: Path) -> None:
    (corpus_dir / ".hidden").mkdir()
    (corpus_dir / ".hidden" / "secret.md").write_text("# no")
    (corpus_dir / "image.png").write_bytes(b"\x89PNG")
    docs = {d.doc_id: d for d in load_documents(corpus_dir)}
    assert sorted(docs) == ["boiler.md", "bread.md", "garden/tomatoes.txt", "wing.md"]
    assert docs["boiler.md"].title == "Boiler fault codes"
    assert docs["garden/tomatoes.txt"].title == "tomatoes"
    assert docs["wing.md"].uri.startswith("file://")


def test_beir_loader(tmp_path: Path) -> None:
    rows = [
        {"_id": "d1", "title": "T1", "text": "one", "metadata": {"k": "v"}},
        {"_id": 2, "text": "two"},
    ]
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    docs = list(load_documents(tmp_path))
    assert [(d.doc_id, d.title, d.text) for d in docs] == [("d1", "T1", "one"), ("2", "", "two")]
    assert docs[0].metadata == {"k": "v"}
    (tmp_path / "corpus.jsonl").write_text('{"text": "no id"}\n')
    with pytest.raises(InvalidArgument, match=r"corpus\.jsonl:1"):
        list(load_documents(tmp_path))


def test_missing_and_unsupported_paths(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="does not exist"):
        list(load_documents(tmp_path / "nope"))
    (tmp_path / "x.xyz").write_bytes(b"%PDF")
    with pytest.raises(InvalidArgument, match="neither a folder"):
        list(load_documents(tmp_path / "x.xyz"))
    # One named file that cannot be read, with nowhere to report it, raises.
    (tmp_path / "x.pdf").write_bytes(b"%PDF")
    with pytest.raises(InvalidArgument, match=r"x\.pdf: damaged or truncated PDF"):
        list(load_documents(tmp_path / "x.pdf"))


def test_chunks_carry_provenance_and_stable_ids() -> None:
    doc = Document("d", "Title", "Sentence number one. " * 60, uri="file:///d")
    chunks = build_chunks(doc, source="s", chunk_chars=300, overlap_chars=50)
    again = build_chunks(doc, source="s", chunk_chars=300, overlap_chars=50)
    assert [c.id for c in chunks] == [c.id for c in again]
    assert len({c.id for c in chunks}) == len(chunks) > 3
    for i, c in enumerate(chunks):
        p = c.provenance
        assert doc.text[p.char_start : p.char_end] == c.text
        assert (p.ordinal, p.doc_chunks, p.source, p.title) == (i, len(chunks), "s", "Title")
        assert p.prev_id == (chunks[i - 1].id if i else None)
        assert p.next_id == (chunks[i + 1].id if i + 1 < len(chunks) else None)
    changed = build_chunks(
        Document("d", "Title", doc.text + " More."), source="s", chunk_chars=300, overlap_chars=50
    )
    assert changed[0].id != chunks[0].id
    other_source = build_chunks(doc, source="t", chunk_chars=300, overlap_chars=50)
    assert other_source[0].id != chunks[0].id


async def all_chunks(backend: QdrantEmbeddedBackend, source: str) -> set[str]:
    hits = await backend.search(LegQuery(Capability.DENSE, "x", 1000, sources=(source,)))
    return {h.chunk.id for h in hits}


async def test_reingest_same_content_changes_nothing(
    tmp_path: Path, corpus_dir: Path, encoder: MiniLMEncoder
) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        docs = list(load_documents(corpus_dir))
        first = await ingest_documents(backend, docs, source="c", chunk_chars=200, overlap_chars=30)
        ids = await all_chunks(backend, "c")
        assert first.documents_written == 4 and first.chunks_written == len(ids) > 4
        second = await ingest_documents(
            backend, docs, source="c", chunk_chars=200, overlap_chars=30
        )
        assert (second.documents_unchanged, second.chunks_written) == (4, 0)
        assert await all_chunks(backend, "c") == ids
    finally:
        await backend.aclose()


async def test_changed_document_replaces_old_chunks_and_prune_removes_gone(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        v1 = [Document("x", "X", "Old text about pumps."), Document("y", "Y", "Yaks.")]
        await ingest_documents(backend, v1, source="s", chunk_chars=200, overlap_chars=0)
        v2 = [Document("x", "X", "New text about valves.")]
        report = await ingest_documents(
            backend, v2, source="s", chunk_chars=200, overlap_chars=0, prune=True
        )
        assert (report.documents_replaced, report.documents_pruned) == (1, 1)
        texts = {
            h.chunk.text
            for h in await backend.search(LegQuery(Capability.DENSE, "x", 10, sources=("s",)))
        }
        assert texts == {"New text about valves."}
    finally:
        await backend.aclose()


class FailingTarget:
    """Wraps the real store and fails the Nth upsert, as a crash mid-ingest would."""

    def __init__(self, inner: QdrantEmbeddedBackend, fail_on: int) -> None:
        self.inner = inner
        self.fail_on = fail_on
        self.upserts = 0
        self.embedded: list[str] = []

    async def document_hashes(self, source: str) -> dict[str, str]:
        return await self.inner.document_hashes(source)

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None:
        await self.inner.delete_documents(source, doc_ids)

    async def commit(self) -> None:
        await self.inner.commit()

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        self.upserts += 1
        if self.upserts == self.fail_on:
            # Half the batch lands before the "crash".
            await self.inner.upsert(chunks[: len(chunks) // 2])
            raise RuntimeError("simulated crash")
        self.embedded.extend(c.id for c in chunks)
        await self.inner.upsert(chunks)


async def test_interrupted_ingest_resumes_without_reembedding_finished_documents(
    tmp_path: Path, encoder: MiniLMEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("retrieval_mcp.ingest.runner.BATCH_CHUNKS", 4)
    docs = [
        Document(f"d{i}", f"Doc {i}", " ".join(f"Fact {i}.{j} about topic {i}." for j in range(12)))
        for i in range(6)
    ]
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        crashing = FailingTarget(backend, fail_on=3)
        with pytest.raises(RuntimeError):
            await ingest_documents(crashing, docs, source="s", chunk_chars=120, overlap_chars=0)
        before = await backend.document_hashes("s")
        resumed = FailingTarget(backend, fail_on=-1)
        report = await ingest_documents(resumed, docs, source="s", chunk_chars=120, overlap_chars=0)
        complete_before = {d for d, h in before.items() if h}
        assert report.documents_unchanged == len(complete_before) > 0
        # Nothing from a document that was already complete was embedded again.
        stored_ids = {
            c.id
            for d in docs
            if d.doc_id in complete_before
            for c in build_chunks(d, source="s", chunk_chars=120, overlap_chars=0)
        }
        assert not stored_ids & set(resumed.embedded)
        expected = {
            c.id
            for d in docs
            for c in build_chunks(d, source="s", chunk_chars=120, overlap_chars=0)
        }
        assert await all_chunks(backend, "s") == expected
        assert all(await backend.document_hashes("s"))
        assert all(h for h in (await backend.document_hashes("s")).values())
    finally:
        await backend.aclose()
