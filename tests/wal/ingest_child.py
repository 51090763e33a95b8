"""The process that the kill -9 test kills: it ingests small batches through the WAL.

    python -m tests.wal.ingest_child STATE_DIR LAUNCH BATCHES

Opens the real embedded store and the WAL under STATE_DIR, recovers, and prints one
line per event, flushed at once, so the parent can choose its moment to kill:

    OPENED                              store and WAL open, recovery about to run
    READY <records replayed>
    UPSERT <batch>                      about to append batch <batch> (0, 1, …)
    ACK <seq> <chunk id>,<chunk id>,…   once it is durable (before it is applied)
    APPLIED <batch>                     once it is in the store
    COMMIT <batch> / COMMITTED <batch>  around a commit (store flush, applied marker)
    DONE

Every fourth batch it commits (store flush, applied marker), so kills also land
around markers, segment rotation and retirement.
"""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from retrieval_mcp.actors.wal_writer import open_wal_writer
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.chunk_builder import build_chunks
from retrieval_mcp.ingest.durable_ingest import DurableIngestTarget
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.logs import configure_logging
from retrieval_mcp.wal.wal_records import IngestBatch, WalRecord
from retrieval_mcp.wal.wal_settings import WalSettings

SOURCE = "kill"
CHUNK_CHARS = 100
WAL = WalSettings(segment_bytes=4096)


def document(launch: int, index: int) -> Document:
    tag = f"l{launch}d{index}"
    text = (
        f"Record {tag} describes the pump {tag} and its pressure readings over the week. "
        f"The valve {tag} was serviced after the alarm and the readings returned to normal."
    )
    return Document(tag, f"Log {tag}", text)


def batch_chunks(launch: int, index: int) -> list[str]:
    """The chunk ids batch ``index`` of ``launch`` holds (for the parent)."""
    chunks = build_chunks(
        document(launch, index), source=SOURCE, chunk_chars=CHUNK_CHARS, overlap_chars=0
    )
    return [c.id for c in chunks]


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def on_acknowledged(record: WalRecord) -> None:
    if isinstance(record.payload, IngestBatch):
        say(f"ACK {record.seq} {','.join(c.id for c in record.payload.chunks)}")


async def run(state: Path, launch: int, batches: int) -> None:
    encoder = MiniLMEncoder()
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    try:
        async with open_wal_writer(state / "wal", WAL) as writer:
            target = DurableIngestTarget(backend, writer, on_acknowledged=on_acknowledged)
            say("OPENED")
            report = await target.recover()
            say(f"READY {report.records}")
            for index in range(batches):
                chunks = build_chunks(
                    document(launch, index),
                    source=SOURCE,
                    chunk_chars=CHUNK_CHARS,
                    overlap_chars=0,
                )
                say(f"UPSERT {index}")
                await target.upsert(chunks)
                say(f"APPLIED {index}")
                if index % 4 == 3:
                    say(f"COMMIT {index}")
                    await target.commit()
                    say(f"COMMITTED {index}")
            await target.commit()
            say("DONE")
    finally:
        await backend.aclose()


def main(argv: list[str]) -> int:
    state, launch, batches = Path(argv[0]), int(argv[1]), int(argv[2])
    configure_logging("warning")  # on stderr: stdout carries only the lines above
    trio.run(run, state, launch, batches)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
