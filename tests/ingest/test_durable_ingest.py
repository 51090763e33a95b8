"""Ingest through the WAL into the real embedded store: a crash at any write or fsync
loses nothing acknowledged, applies nothing twice, and the next run finishes the job."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from retrieval_mcp.actors.wal_writer import WalWriter, open_wal_writer
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import WalFailed
from retrieval_mcp.ingest.chunk_builder import build_chunks, document_hash
from retrieval_mcp.ingest.durable_ingest import (
    DurableIngestTarget,
    ReplayReport,
    skip_settled_documents,
)
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.ingest.runner import ingest_documents
from retrieval_mcp.records import Chunk
from retrieval_mcp.wal.wal_records import (
    DataRecord,
    DeleteDocuments,
    IngestBatch,
    Payload,
    PublishDocuments,
    RenameDocuments,
    StageBatch,
    WalRecord,
    delete_documents,
    ingest_batch,
)
from retrieval_mcp.wal.wal_settings import WalSettings
from tests.wal.faulty_fs import FaultyFileSystem

SOURCE = "s"
CHUNK_CHARS = 200
OVERLAP = 0


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Several records per ingest, so a crash can fall between any two of them, and
    # batches that do not line up with documents, so a crash can leave one in part.
    monkeypatch.setattr("retrieval_mcp.ingest.runner.BATCH_CHUNKS", 4)


# Small segments so the sweep also crosses segment rotation and retirement.
WAL = WalSettings(segment_bytes=4096, group_commit_max_delay_s=0.0)


def doc(name: str, version: int, facts: int = 16) -> Document:
    text = " ".join(f"{name} fact {j} version {version} about topic {name}." for j in range(facts))
    return Document(name, f"Doc {name}", text)


V1 = [doc("a", 1), doc("b", 1), doc("c", 1), doc("d", 1)]
# b changes, c goes (prune), e and f are new, a and d stay.
V2 = [doc("a", 1), doc("b", 2), doc("d", 1), doc("e", 1), doc("f", 1)]


def chunks_of(documents: Sequence[Document]) -> list[Chunk]:
    return [
        c
        for d in documents
        for c in build_chunks(d, source=SOURCE, chunk_chars=CHUNK_CHARS, overlap_chars=OVERLAP)
    ]


async def ingest(target: DurableIngestTarget, documents: Sequence[Document]) -> None:
    await ingest_documents(
        target,
        documents,
        source=SOURCE,
        chunk_chars=CHUNK_CHARS,
        overlap_chars=OVERLAP,
        prune=True,
    )


class ObservedWal:
    """The writer, seen from durable ingest: which data records were attempted and
    which were acknowledged (at most one is ever in flight)."""

    def __init__(self, writer: WalWriter) -> None:
        self.writer = writer
        self.attempted: list[DataRecord] = []
        self.acked: list[DataRecord] = []

    async def append(self, *payloads: Payload) -> tuple[int, ...]:
        data = [
            p
            for p in payloads
            if isinstance(
                p, IngestBatch | DeleteDocuments | StageBatch | PublishDocuments | RenameDocuments
            )
        ]
        self.attempted.extend(data)
        seqs = await self.writer.append(*payloads)
        self.acked.extend(data)
        return seqs

    def take_replay(self) -> list[WalRecord]:
        return self.writer.take_replay()


class RecordingStore:
    """The real store, recording which chunk ids were embedded."""

    def __init__(self, inner: QdrantEmbeddedBackend) -> None:
        self.inner = inner
        self.embedded: list[str] = []

    async def document_hashes(self, source: str) -> dict[str, str]:
        return await self.inner.document_hashes(source)

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        self.embedded.extend(c.id for c in chunks)
        await self.inner.upsert(chunks)

    swaps_documents = True

    async def stage(self, chunks: Sequence[Chunk]) -> None:
        self.embedded.extend(c.id for c in chunks)
        await self.inner.stage(chunks)

    async def publish(self, source: str, versions: Mapping[str, str]) -> None:
        await self.inner.publish(source, versions)

    async def rename_documents(
        self, source: str, renames: Sequence[tuple[str, str, str, str]]
    ) -> None:
        await self.inner.rename_documents(source, renames)

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None:
        await self.inner.delete_documents(source, doc_ids)

    async def commit(self) -> None:
        await self.inner.commit()

    async def fetch(self, ids: Sequence[str]) -> list[Chunk]:
        return await self.inner.fetch(ids)


def model(base: dict[str, str], operations: Sequence[DataRecord]) -> set[str]:
    """Chunk ids a search must see after ``operations`` applied in order to ``base``
    (chunk id -> doc id). Staged chunks are hidden until their version is published,
    which replaces every other version of the document (ADR 0038)."""
    state = dict(base)
    staged: dict[str, tuple[str, str]] = {}  # chunk id -> (doc id, doc hash)
    for op in operations:
        if isinstance(op, IngestBatch):
            state.update({c.id: c.provenance.doc_id for c in op.chunks})
        elif isinstance(op, StageBatch):
            staged.update({c.id: (c.provenance.doc_id, c.doc_hash) for c in op.chunks})
        elif isinstance(op, PublishDocuments):
            versions = dict(op.versions)
            state = {i: d for i, d in state.items() if d not in versions}
            state.update({i: d for i, (d, h) in staged.items() if versions.get(d) == h})
            staged = {i: (d, h) for i, (d, h) in staged.items() if d not in versions}
        elif isinstance(op, DeleteDocuments):
            gone = set(op.doc_ids)
            state = {i: d for i, d in state.items() if d not in gone}
            staged = {i: v for i, v in staged.items() if v[0] not in gone}
    return set(state)


async def stored_ids(backend: QdrantEmbeddedBackend, *, none_hidden: bool = False) -> set[str]:
    """What a search sees. Besides it the store may hold staged chunks of a version
    never published (hidden); ``none_hidden`` says there must be none."""
    hits = await backend.search(LegQuery(Capability.DENSE, "fact", 1000, sources=(SOURCE,)))
    ids = [h.chunk.id for h in hits]
    assert len(ids) == len(set(ids))
    visible = sum(s.chunks for s in await backend.sources())
    assert visible == len(ids), "the store shows chunks that a search does not return"
    if none_hidden:
        status = await backend.status()
        assert status.chunks == len(ids), "the store holds chunks that a search does not return"
    return set(ids)


async def recover(state: Path, encoder: MiniLMEncoder) -> tuple[ReplayReport, set[str], list[str]]:
    """A restart: open the store and the WAL, recover, and read what is stored.
    Returns the replay report, the stored ids and the ids embedded by the replay."""
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    recording = RecordingStore(backend)
    try:
        async with open_wal_writer(state / "wal", WAL) as writer:
            report = await DurableIngestTarget(recording, writer).recover()
            return report, await stored_ids(backend), recording.embedded
    finally:
        await backend.aclose()


async def stored_hashes(state: Path, encoder: MiniLMEncoder) -> dict[str, str]:
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    try:
        return await backend.document_hashes(SOURCE)
    finally:
        await backend.aclose()


async def ingest_v1(state: Path, encoder: MiniLMEncoder) -> None:
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    try:
        async with open_wal_writer(state / "wal", WAL) as writer:
            target = DurableIngestTarget(backend, writer)
            await target.recover()
            await ingest(target, V1)
    finally:
        await backend.aclose()


async def ingest_v2_failing(
    state: Path, encoder: MiniLMEncoder, fs: FaultyFileSystem
) -> ObservedWal:
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    try:
        async with open_wal_writer(state / "wal", WAL, fs=fs) as writer:
            observed = ObservedWal(writer)
            target = DurableIngestTarget(backend, observed)
            await target.recover()
            if fs.fail_at is None:
                await ingest(target, V2)
            else:
                # A failure while retiring old segments comes after the batch it
                # follows was acknowledged: the ingest may finish, the writer is dead.
                with contextlib.suppress(WalFailed):
                    await ingest(target, V2)
                assert fs.failed is not None
                assert not writer.healthy and writer.failure is not None
    finally:
        await backend.aclose()
    return observed


@pytest.mark.slow
async def test_crash_sweep_every_write_and_fsync(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    base = tmp_path / "base"
    await ingest_v1(base, encoder)
    base_ids = {c.id: c.provenance.doc_id for c in chunks_of(V1)}
    final_ids = {c.id for c in chunks_of(V2)}

    # A clean run counts the operations to fail, and checks the model.
    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    counter = FaultyFileSystem()
    observed = await ingest_v2_failing(clean, encoder, counter)
    assert model(base_ids, observed.acked) == final_ids
    assert (await recover(clean, encoder))[1] == final_ids
    total = counter.count
    assert total >= 12 and any(
        op.startswith("fsync") and op.endswith("/") for op in counter.operations
    )

    for lose_unsynced in (True, False):
        for n in range(1, total + 1):
            run = tmp_path / f"run-{n}-{lose_unsynced}"
            shutil.copytree(base, run)
            fs = FaultyFileSystem(fail_at=n)
            observed = await ingest_v2_failing(run, encoder, fs)
            fs.crash(lose_unsynced=lose_unsynced)
            where = f"failing {fs.failed} (operation {n}), lose_unsynced={lose_unsynced}"
            await restart_and_check(
                run, encoder, observed, base_ids, where, exact=lose_unsynced, finish=lose_unsynced
            )
            shutil.rmtree(run)


async def restart_and_check(
    run: Path,
    encoder: MiniLMEncoder,
    observed: ObservedWal,
    base_ids: dict[str, str],
    where: str,
    *,
    exact: bool,
    finish: bool,
) -> None:
    """Restart after a crash: recover, check the store, recover again and (``finish``)
    run the ingest again."""
    final_ids = {c.id for c in chunks_of(V2)}
    chunk_version = {c.id: (c.provenance.doc_id, c.doc_hash) for c in chunks_of(V1 + V2)}
    v2_hashes = {
        d.doc_id: document_hash(d, chunk_chars=CHUNK_CHARS, overlap_chars=OVERLAP) for d in V2
    }
    backend = await QdrantEmbeddedBackend.open(run / "store", encoder)
    try:
        before = await backend.document_hashes(SOURCE)
        recording = RecordingStore(backend)
        async with open_wal_writer(run / "wal", WAL) as writer:
            await DurableIngestTarget(recording, writer).recover()
        ids = await stored_ids(backend)
        # Recovery embeds nothing of a document version the store already held whole
        # (a replaced document's old version stays whole until the new one is published).
        whole = {(d, h) for d, h in before.items() if h}
        assert not {c for c in recording.embedded if chunk_version.get(c) in whole}, where
        acked = model(base_ids, observed.acked)
        if exact:
            # Exactly what was acknowledged: nothing lost, nothing extra.
            assert ids == acked, where
        else:
            # The one record in flight may have reached the disk (durable but never
            # acknowledged); then it counts in full, never in part.
            assert ids in (acked, model(base_ids, observed.attempted)), where

        # Recovery run twice changes nothing.
        recording.embedded.clear()
        async with open_wal_writer(run / "wal", WAL) as writer:
            again = await DurableIngestTarget(recording, writer).recover()
        assert again == ReplayReport() and recording.embedded == [], where
        assert await stored_ids(backend) == ids, where

        if not finish:
            return
        # Running the ingest again finishes the job, embedding no document that was
        # already stored whole.
        stored = await backend.document_hashes(SOURCE)
        final_whole = {d for d, h in stored.items() if h and h == v2_hashes.get(d)}
        async with open_wal_writer(run / "wal", WAL) as writer:
            await ingest(DurableIngestTarget(recording, writer), V2)
        assert await stored_ids(backend, none_hidden=True) == final_ids, where
        skipped = {c.id for c in chunks_of([d for d in V2 if d.doc_id in final_whole])}
        assert not skipped & set(recording.embedded), where
    finally:
        await backend.aclose()


async def test_recovery_redoes_acknowledged_records_a_crash_left_unapplied(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    """Acknowledged, then the process died before applying: recovery applies it."""
    state = tmp_path / "state"
    chunks = chunks_of([doc("x", 1)])
    async with open_wal_writer(state / "wal", WAL) as writer:
        await writer.append(ingest_batch(chunks))
    report, ids, _ = await recover(state, encoder)
    assert ids == {c.id for c in chunks}
    assert (report.records, report.chunks_upserted, report.marked_applied) == (1, len(chunks), 1)
    assert (await recover(state, encoder))[0] == ReplayReport()


async def test_applied_but_unmarked_records_are_not_embedded_again(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    """Applied, then the process died before the commit's marker: recovery finds the
    chunks in the store and embeds none of them again."""
    state = tmp_path / "state"
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    recording = RecordingStore(backend)
    try:
        async with open_wal_writer(state / "wal", WAL) as writer:
            target = DurableIngestTarget(recording, writer)
            await target.upsert(chunks_of([doc("x", 1)]))
            await target.delete_documents(SOURCE, ["nothing"])
            await target.upsert(chunks_of([doc("y", 1)]))
            assert target.pending == 3  # applied, no marker: no commit yet
    finally:
        await backend.aclose()
    report, ids, embedded = await recover(state, encoder)
    assert report.records == 3 and report.chunks_upserted == 0 and embedded == []
    assert report.chunks_already_stored == len(ids) == len(chunks_of([doc("x", 1), doc("y", 1)]))


async def test_acknowledged_when_durable_then_applied_then_marked(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    state = tmp_path / "state"
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    recording = RecordingStore(backend)
    chunks = chunks_of([doc("x", 1)])
    acknowledged: list[int] = []
    try:
        async with open_wal_writer(state / "wal", WAL) as writer:

            def on_ack(record: WalRecord) -> None:
                assert writer.statistics().next_seq > record.seq  # its batch is fsynced
                assert recording.embedded == []  # and it is not applied yet
                acknowledged.append(record.seq)

            target = DurableIngestTarget(recording, writer, on_acknowledged=on_ack)
            await target.upsert(chunks)
            assert acknowledged == [1]
            assert recording.embedded == [c.id for c in chunks]
            assert writer.statistics().unapplied == 1  # applied, but no marker before commit
            await target.commit()
            assert target.pending == 0 and writer.statistics().unapplied == 0
    finally:
        await backend.aclose()


class FlakyStore:
    """A store double whose first upsert fails after the record was acknowledged."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.fail_next_upsert = True

    async def document_hashes(self, source: str) -> dict[str, str]:
        return {}

    async def upsert(self, chunks: Sequence[Chunk]) -> None:
        if self.fail_next_upsert:
            self.fail_next_upsert = False
            raise RuntimeError("store hiccup")
        self.calls.append(("upsert", tuple(c.provenance.doc_id for c in chunks)))

    async def delete_documents(self, source: str, doc_ids: Sequence[str]) -> None:
        self.calls.append(("delete", tuple(doc_ids)))

    async def commit(self) -> None:
        self.calls.append(("commit", ()))


async def test_failed_apply_is_redone_in_log_order_before_the_next_write(tmp_path: Path) -> None:
    store = FlakyStore()
    async with open_wal_writer(tmp_path / "wal", WAL) as writer:
        target = DurableIngestTarget(store, writer)
        chunks = chunks_of([doc("x", 1)])
        with pytest.raises(RuntimeError, match="hiccup"):
            await target.upsert(chunks)
        assert target.pending == 1 and store.calls == []
        # The acknowledged upsert goes first, then the delete that follows it in the log.
        await target.delete_documents(SOURCE, ["x"])
        assert store.calls == [("upsert", ("x",) * len(chunks)), ("delete", ("x",))]
        await target.commit()
        assert target.pending == 0 and writer.statistics().unapplied == 0


def test_skip_settled_documents_drops_only_documents_already_final() -> None:
    x, y, z = chunks_of([doc("x", 2)]), chunks_of([doc("y", 1)]), chunks_of([doc("z", 1)])
    records = [
        WalRecord(1, delete_documents(SOURCE, ["x", "y", "gone", "kept"])),
        WalRecord(2, ingest_batch(x + y[:1])),
        WalRecord(3, ingest_batch(y[1:] + z)),
    ]
    stored = {
        SOURCE: {
            "x": x[0].doc_hash,  # whole, final version: settled
            "y": "",  # stored in part: must be redone
            "kept": "abc",  # still stored although deleted: must be redone
            "z": z[0].doc_hash,  # never deleted here: left to the chunk look-up
        }
    }
    report = ReplayReport()
    kept = skip_settled_documents(records, stored, report)
    assert [r.seq for r in kept] == [1, 2, 3]
    first, second, third = (r.payload for r in kept)
    assert isinstance(first, DeleteDocuments) and first.doc_ids == ("y", "kept")
    assert isinstance(second, IngestBatch) and second.chunks == tuple(y[:1])
    assert isinstance(third, IngestBatch) and third.chunks == tuple(y[1:] + z)
    assert report.documents_settled == 2 and report.chunks_already_stored == len(x)
    # A version that is not the one the log ends with is not settled.
    still = {SOURCE: {"x": "old", "gone": "old", "kept": "abc"}}
    assert skip_settled_documents(records, still, report) == (records)


async def test_ingest_without_explicit_recover_still_redoes_the_log_first(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    """An acknowledged, unapplied delete of X, then an ingest of X that forgot to call
    recover(): the runner must not skip X as "unchanged" and lose it to the redo."""
    state = tmp_path / "state"
    x = [doc("x", 1)]
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    try:
        async with open_wal_writer(state / "wal", WAL) as writer:
            await ingest(DurableIngestTarget(backend, writer), x)
            await writer.append(delete_documents(SOURCE, ["x"]))  # acknowledged only
        async with open_wal_writer(state / "wal", WAL) as writer:
            await ingest(DurableIngestTarget(backend, writer), x)
        assert await stored_ids(backend) == {c.id for c in chunks_of(x)}
    finally:
        await backend.aclose()
