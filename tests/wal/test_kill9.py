"""kill -9 a process that is ingesting through the WAL, again and again: after every
restart, each acknowledged chunk is in the store and searchable, and nothing else is
there but (at most) the one batch that was in flight."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from retrieval_mcp.actors.wal_writer import open_wal_writer
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.durable_ingest import DurableIngestTarget
from tests.wal.ingest_child import SOURCE, WAL, batch_chunks

REPO = Path(__file__).resolve().parents[2]
BATCHES_PER_LAUNCH = 40
# When to kill each launch: on reading the Nth line that starts with this word. The
# child runs on between printing it and receiving the signal, so kills land while
# recovering, appending (a record may be durable but unacknowledged), applying,
# committing (store flush, applied marker, segment rotation and retirement), or
# between operations.
KILL_POINTS: list[tuple[str, int]] = [
    ("OPENED", 1), ("ACK", 1), ("UPSERT", 2), ("APPLIED", 3), ("COMMIT", 1),
    ("ACK", 4), ("UPSERT", 5), ("COMMITTED", 1), ("APPLIED", 6), ("UPSERT", 8),
    ("OPENED", 1), ("COMMIT", 2), ("ACK", 7), ("UPSERT", 1), ("APPLIED", 1),
    ("COMMITTED", 2), ("UPSERT", 4), ("ACK", 9), ("COMMIT", 3), ("UPSERT", 12),
    ("READY", 1), ("APPLIED", 10), ("ACK", 2), ("UPSERT", 3),
]  # fmt: skip


class LineReader:
    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self._stream = stream
        self._buffer = b""

    async def next_line(self) -> str:
        while b"\n" not in self._buffer:
            data = await self._stream.receive_some()
            if not data:
                raise EOFError("the child closed its stdout")
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()


async def kill_during_ingest(state: Path, launch: int, kill_at: tuple[str, int]) -> list[list[str]]:
    """Run the child until ``kill_at``, SIGKILL it, return the acknowledged batches."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "tests.wal.ingest_child", str(state), str(launch),
         str(BATCHES_PER_LAUNCH)],
        stdout=subprocess.PIPE,
        cwd=REPO,
    )  # fmt: skip
    acked: list[list[str]] = []
    word, nth = kill_at
    seen = 0
    try:
        assert process.stdout is not None
        reader = LineReader(process.stdout)
        with trio.fail_after(60):  # a guard against a hung child, not a synchroniser
            while True:
                line = await reader.next_line()
                assert line != "DONE", f"launch {launch} finished before {kill_at}"
                if line.startswith("ACK "):
                    acked.append(line.split()[2].split(","))
                if line.split()[0] == word:
                    seen += 1
                    if seen == nth:
                        break
    finally:
        process.send_signal(signal.SIGKILL)
        with trio.CancelScope(shield=True):
            await process.wait()
    assert process.returncode == -signal.SIGKILL
    return acked


async def restart_and_read(state: Path, encoder: MiniLMEncoder) -> set[str]:
    """What a restart sees: recover, then every chunk a search over the source returns."""
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    try:
        async with open_wal_writer(state / "wal", WAL) as writer:
            await DurableIngestTarget(backend, writer).recover()
            assert writer.healthy
        hits = await backend.search(LegQuery(Capability.DENSE, "pump", 10_000, sources=(SOURCE,)))
        ids = [h.chunk.id for h in hits]
        assert len(ids) == len(set(ids))
        assert (await backend.status()).chunks == len(ids)
        return set(ids)
    finally:
        await backend.aclose()


@pytest.mark.slow
async def test_kill_9_loses_nothing_acknowledged(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    state = tmp_path / "state"
    acknowledged: set[str] = set()
    stored: set[str] = set()
    for launch, kill_at in enumerate(KILL_POINTS):
        acked = await kill_during_ingest(state, launch, kill_at)
        acknowledged.update(i for batch in acked for i in batch)
        now = await restart_and_read(state, encoder)
        where = f"launch {launch}, killed at {kill_at!r} after {len(acked)} acks"
        assert acknowledged <= now, where
        # Besides what was stored before and what was acknowledged, only the batch
        # that was being appended when the signal came may be there, and only whole.
        in_flight = set(batch_chunks(launch, len(acked)))
        extra = now - stored - acknowledged
        assert extra in (set(), in_flight), where
        assert stored <= now, where
        stored = now
    assert len(KILL_POINTS) >= 20
    assert len(stored) >= len(acknowledged) > 0
