"""How soon a file written to a watched folder is searchable, and gone once deleted.

Opens the server's services (embedded store, WAL, supervision tree with one folder
watcher, ADR 0039) on a temporary state directory, then writes files one at a time
and polls the store's BM25 leg every 10 ms until the file's unique word is found (and,
after deleting it, until it is not). Prints median and max seconds.

    .venv/bin/python bench/watch_latency.py [--files 10] [--debounce-ms 50]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import trio

from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.services import open_services
from retrieval_mcp.settings import load_settings


async def found(services: object, word: str) -> bool:
    backend = services.backend  # type: ignore[attr-defined]
    hits = await backend.search(LegQuery(Capability.BM25, word, 5, sources=("notes",)))
    return any(word in h.chunk.text for h in hits)


async def until(services: object, word: str, present: bool) -> float:
    began = time.perf_counter()
    with trio.fail_after(60):
        while True:
            if await found(services, word) == present:
                break
            await trio.sleep(0.01)
    return time.perf_counter() - began


def make_folder() -> Path:
    root = Path(tempfile.mkdtemp(prefix="lrm-watch-"))
    root.chmod(0o700)
    folder = root / "notes"
    folder.mkdir()
    (folder / "seed.md").write_text("# Seed\n\nThe folder is not empty.\n")
    return folder


async def main(folder: Path, files: int, debounce_ms: int) -> None:
    root = folder.parent
    settings = load_settings(
        state_dir=root / "state",
        overrides={
            "demo": {"ingest_on_first_start": False},
            "logging": {"level": "warning"},
            "ingest": {
                "watch": [{"path": str(folder), "source": "notes", "debounce_ms": debounce_ms}]
            },
        },
    )
    async with open_services(settings) as services:
        await until(services, "empty", True)
        written, deleted = [], []
        for i in range(files):
            word = f"zqx{i}marker"
            path = folder / f"note-{i}.md"
            path.write_text(f"# Note {i}\n\nThis note carries the word {word}.\n")
            written.append(await until(services, word, True))
            path.unlink()
            deleted.append(await until(services, word, False))
    print(f"files={files} debounce_ms={debounce_ms}")
    for name, values in (("write -> searchable", written), ("delete -> gone", deleted)):
        print(f"{name:20} median {statistics.median(values):.3f} s  max {max(values):.3f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--debounce-ms", type=int, default=50)
    args = parser.parse_args()
    trio.run(main, make_folder(), args.files, args.debounce_ms)
