"""What the legs' thread hop costs: one hybrid call's two leg queries through
``QdrantEmbeddedBackend.search`` (Trio, both legs concurrently, as the pipeline asks),
id-only as the server asks, on a worker thread (the batcher's hop), on the event loop
when nothing else is runnable (``inline_when_idle``, the server's default), always on the
event loop (``inline_max_points``), and one thread hop per leg (``batch_legs`` off); CPU and wall
per call, c = 1, back to back, each way in its own process.

    .venv/bin/python bench/leg_hop.py [--state-dir /tmp/lrm-overhead-q] [--calls 600]

The store and the cached query vectors are the ones ``bench/mcp_overhead.py`` leaves
in its state dir (``bench-query-vectors.json``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WAYS = ("threaded", "idle-inline", "inline", "per-leg")


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one(state_dir: Path, way: str, calls: int) -> dict[str, Any]:
    import trio

    from retrieval_mcp.backends.protocol import Capability, LegQuery
    from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
    from retrieval_mcp.encoders.minilm import MiniLMEncoder

    vectors = json.loads((state_dir / "bench-query-vectors.json").read_text("utf-8"))
    queries = list(vectors)[:200]

    async def main() -> dict[str, Any]:
        options: dict[str, Any] = {"inline_when_idle": way == "idle-inline"}
        if way == "inline":
            options["inline_max_points"] = 10**9
        if way == "per-leg":
            options["batch_legs"] = False
        backend = await QdrantEmbeddedBackend.open(state_dir / "store", MiniLMEncoder(), **options)
        for text, vector in vectors.items():  # every query cached, as in the benchmark
            backend._query_vectors.put(text, vector)

        async def hybrid(text: str) -> None:
            async def leg(capability: Capability) -> None:
                await backend.search(LegQuery(leg=capability, text=text, limit=50, payloads=False))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(leg, Capability.DENSE)
                nursery.start_soon(leg, Capability.BM25)

        try:
            for text in queries:
                await hybrid(text)
            cpu0, wall0 = cpu_s(), time.perf_counter()
            for i in range(calls):
                await hybrid(queries[i % len(queries)])
            cpu, wall = cpu_s() - cpu0, time.perf_counter() - wall0
            return {
                "way": way,
                "cpu_ms": round(cpu / calls * 1000, 3),
                "wall_ms": round(wall / calls * 1000, 3),
                "search_threads": backend.search_threads,
            }
        finally:
            await backend.aclose()

    return trio.run(main)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state-dir", type=Path, default=Path("/tmp/lrm-overhead-q"))
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--way", choices=WAYS, help=argparse.SUPPRESS)  # in a child
    args = parser.parse_args()
    if args.way:
        print(json.dumps(one(args.state_dir, args.way, args.calls)))
        return
    for _ in range(args.rounds):
        for way in WAYS:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--state-dir",
                    str(args.state_dir),
                    "--calls",
                    str(args.calls),
                    "--way",
                    way,
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            print(out.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
