"""Ingest throughput with the WAL on versus off, on the Cranfield benchmark corpus.

    .venv/bin/python bench/wal_throughput.py --chunks 300 --rounds 3

Writes the corpus with ``bench/corpus.py`` (default chunking), then per round ingests
it into a fresh store twice — plain ``ingest_documents(backend, …)`` and through
``DurableIngestTarget`` + the WAL writer — alternating which goes first. Timing covers
the ingest and its commit (and, with the WAL, opening and recovering the empty log);
the encoder is loaded once, outside the timing. Prints chunks/s per run, the medians,
the WAL's cost in percent — by wall clock and by process CPU time, which a busy
machine disturbs less — and the time ingest spent waiting on the WAL (encode,
queue, write, fsync), which bounds the WAL's cost on the critical path.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from retrieval_mcp.actors.wal_writer import WalWriter, open_wal_writer
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.durable_ingest import DurableIngestTarget
from retrieval_mcp.ingest.loaders import Document, load_documents
from retrieval_mcp.ingest.runner import ingest_documents
from retrieval_mcp.logs import configure_logging
from retrieval_mcp.settings import ChunkingSettings
from retrieval_mcp.wal.wal_records import Payload, WalRecord
from retrieval_mcp.wal.wal_settings import WalSettings

REPO = Path(__file__).resolve().parents[1]


class TimedWal:
    """The writer, timing how long ingest waits on it (encode, queue, write, fsync)."""

    def __init__(self, writer: WalWriter) -> None:
        self.writer = writer
        self.waited_s = 0.0

    async def append(self, *payloads: Payload) -> tuple[int, ...]:
        started = time.perf_counter()
        try:
            return await self.writer.append(*payloads)
        finally:
            self.waited_s += time.perf_counter() - started

    def take_replay(self) -> list[WalRecord]:
        return self.writer.take_replay()


async def ingest_once(
    state: Path, encoder: MiniLMEncoder, documents: list[Document], *, wal: bool
) -> tuple[float, float, int, str]:
    chunking = ChunkingSettings()
    backend = await QdrantEmbeddedBackend.open(state / "store", encoder)
    try:
        started = time.perf_counter()
        cpu_started = time.process_time()
        if wal:
            async with open_wal_writer(state / "wal", WalSettings()) as writer:
                timed = TimedWal(writer)
                target = DurableIngestTarget(backend, timed)
                await target.recover()
                report = await ingest_documents(
                    target,
                    documents,
                    source="bench",
                    chunk_chars=chunking.chunk_chars,
                    overlap_chars=chunking.overlap_chars,
                )
                stats = writer.statistics()
                detail = (
                    f"waited_on_wal={timed.waited_s * 1e3:.1f}ms "
                    f"records={stats.records} fsyncs={stats.fsyncs} "
                    f"max_fsync_ms={stats.max_fsync_s * 1e3:.2f} "
                    f"wal_bytes={stats.bytes_on_disk}"
                )
        else:
            report = await ingest_documents(
                backend,
                documents,
                source="bench",
                chunk_chars=chunking.chunk_chars,
                overlap_chars=chunking.overlap_chars,
            )
            detail = ""
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
    finally:
        await backend.aclose()
    return elapsed, cpu, report.chunks_written, detail


def write_corpus(chunks: int) -> tuple[Path, list[Document]]:
    work = Path(tempfile.mkdtemp(prefix="lrm-wal-bench-"))
    corpus = work / "corpus"
    subprocess.run(
        [sys.executable, str(REPO / "bench" / "corpus.py"), "--chunks", str(chunks), "--out",
         str(corpus)],
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return work, list(load_documents(corpus))


async def main(work: Path, documents: list[Document], rounds: int) -> None:
    encoder = MiniLMEncoder()
    encoder.embed(["warm up"])
    rates: dict[bool, list[float]] = {False: [], True: []}
    cpu_rates: dict[bool, list[float]] = {False: [], True: []}
    for round_ in range(rounds):
        order = (False, True) if round_ % 2 == 0 else (True, False)
        for wal in order:
            state = work / f"state-{round_}-{'wal' if wal else 'plain'}"
            elapsed, cpu, written, detail = await ingest_once(state, encoder, documents, wal=wal)
            rates[wal].append(written / elapsed)
            cpu_rates[wal].append(written / cpu)
            print(
                f"round {round_} wal={'on ' if wal else 'off'} chunks={written} "
                f"{elapsed:.2f}s {written / elapsed:.1f} chunks/s "
                f"cpu={cpu:.2f}s {written / cpu:.2f} chunks/cpu-s {detail}",
                flush=True,
            )
    off, on = statistics.median(rates[False]), statistics.median(rates[True])
    cost = 100 * (1 - on / off)
    print(f"median chunks/s: wal off {off:.1f}, wal on {on:.1f}; WAL cost {cost:.1f}%")
    off_cpu, on_cpu = statistics.median(cpu_rates[False]), statistics.median(cpu_rates[True])
    cpu_cost = 100 * (1 - on_cpu / off_cpu)
    print(
        f"median chunks per CPU-second: wal off {off_cpu:.2f}, wal on {on_cpu:.2f}; "
        f"WAL cost {cpu_cost:.1f}%"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    configure_logging("warning")
    work, documents = write_corpus(args.chunks)
    trio.run(main, work, documents, args.rounds)
