"""Search latency with one leg artificially late: the answer must still arrive on time.

The dense leg of the real embedded store is wrapped to sleep past its deadline on
every call; the pipeline must drop it and answer from BM25 within the leg timeout,
never waiting for the late leg. Prints p50/p95/p99 beside the leg timeout and the
request deadline, and the same figures with no late leg, in one run.

    .venv/bin/python bench/late_leg.py [--requests 200] [--delay 5] [--leg-timeout 0.25]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import distinct_queries, write_beir_corpus

from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalRequest
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.logs import configure_logging
from retrieval_mcp.records import Candidate
from retrieval_mcp.services import ingest_path, load_encoder, open_backend
from retrieval_mcp.settings import PipelineConfig, load_settings


class LateLeg:
    """Delegates to the real backend; the ``late`` leg first sleeps ``delay`` seconds."""

    def __init__(self, inner: QdrantEmbeddedBackend, late: Capability, delay: float) -> None:
        self._inner = inner
        self._late = late
        self._delay = delay
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def search(self, query: LegQuery) -> list[Candidate]:
        if query.leg == self._late:
            await trio.sleep(self._delay)
        return await self._inner.search(query)


def percentiles(samples: Sequence[float]) -> tuple[float, float, float]:
    p50, p95, p99 = np.percentile(np.array(samples) * 1000, [50, 95, 99])
    return float(p50), float(p95), float(p99)


async def measure(
    pipeline: Pipeline, queries: list[str], concurrency: int
) -> tuple[list[float], int]:
    samples: list[float] = []
    degraded = 0
    work = iter(queries)

    async def worker() -> None:
        nonlocal degraded
        for text in work:
            start = time.perf_counter()
            outcome = await pipeline.retrieve(RetrievalRequest(text, top_k=8))
            samples.append(time.perf_counter() - start)
            degraded += outcome.degraded

    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    return samples, degraded


def prepare(args: argparse.Namespace) -> tuple[Path, Path]:
    state = Path(args.state_dir or tempfile.mkdtemp(prefix="lrm-late-"))
    state.mkdir(mode=0o700, exist_ok=True)
    state.chmod(0o700)
    corpus = state / "corpus"
    if not (corpus / "corpus.jsonl").exists():
        corpus.mkdir(exist_ok=True)
        write_beir_corpus(corpus, args.chunks)
    return state, corpus


async def main(args: argparse.Namespace) -> None:
    configure_logging("error")
    state, corpus = prepare(args)
    settings = load_settings(state_dir=state, overrides={"demo": {"ingest_on_first_start": False}})
    encoder = await load_encoder(settings)
    async with open_backend(settings, encoder) as backend:
        await ingest_path(backend, settings, corpus, source="cranfield")
        queries = distinct_queries(args.requests)
        config = PipelineConfig.model_validate(
            {
                "request_timeout_s": args.deadline,
                "legs": {
                    "dense": {"timeout_s": args.leg_timeout},
                    "bm25": {"timeout_s": args.leg_timeout},
                },
            }
        )
        print(
            f"chunks {(await backend.status()).chunks}, requests {args.requests}, "
            f"concurrency {args.concurrency}, leg timeout {args.leg_timeout * 1000:.0f} ms, "
            f"request deadline {args.deadline * 1000:.0f} ms, late leg sleeps {args.delay} s"
        )
        print("| case | p50 ms | p95 ms | p99 ms | max ms | degraded |")
        print("|---|---:|---:|---:|---:|---:|")
        for case, wrapped in (
            ("all legs on time", backend),
            ("dense leg late", LateLeg(backend, Capability.DENSE, args.delay)),
        ):
            pipeline = Pipeline(wrapped, config, encoder.count_tokens)  # type: ignore[arg-type]
            async with trio.open_nursery() as nursery:
                await nursery.start(pipeline.run)
                await measure(pipeline, queries[:10], args.concurrency)  # warm-up
                samples, degraded = await measure(pipeline, queries, args.concurrency)
                nursery.cancel_scope.cancel()
            p50, p95, p99 = percentiles(samples)
            print(
                f"| {case} | {p50:.1f} | {p95:.1f} | {p99:.1f} | {max(samples) * 1000:.1f} "
                f"| {degraded}/{len(samples)} |"
            )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1500)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--delay", type=float, default=5.0)
    parser.add_argument("--leg-timeout", type=float, default=0.25)
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--state-dir")
    return parser.parse_args()


if __name__ == "__main__":
    trio.run(main, parse_args())
