"""Summarise a py-spy ``--format raw`` profile (collapsed stacks) by layer and function.

Each line of the file is ``frame;frame;...;frame count`` with frames written
``function (file:line)``. py-spy's idle filter still lets through threads parked in
``epoll_wait`` or on a lock, so samples whose innermost frame is such a wait are
counted apart ("idle") and the tables cover the rest; recorded with ``--gil``, a
sample is a moment some thread held the GIL, i.e. Python-level CPU. Blocking file
I/O (``fsync``) is shown apart too: it is wall time, not CPU. Layers are named from
the file path (our package, the MCP SDK, pydantic, the HTTP server, the async
runtime, logging, ...).

    .venv/bin/python bench/profile_summary.py bench/out/profiles/ours-r1.txt
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")

LAYERS = (
    ("retrieval_mcp", ("/retrieval_mcp/", "/work/main/src/")),
    ("mcp-sdk", ("/mcp/", "/mcp_types/")),
    ("pydantic", ("/pydantic/", "/pydantic_core/")),
    ("starlette", ("/starlette/", "/sse_starlette/")),
    ("uvicorn", ("/uvicorn/",)),
    ("hypercorn", ("/hypercorn/",)),
    ("h11", ("/h11/",)),
    ("structlog+logging", ("/structlog/", "/logging/")),
    ("json", ("/json/",)),
    ("anyio", ("/anyio/",)),
    ("trio", ("/trio/", "/outcome/")),
    ("asyncio", ("/asyncio/",)),
    ("threading", ("/threading.py", "/concurrent/", "/queue.py")),
    ("httpx/httpcore", ("/httpx", "/httpcore")),
    ("jsonschema", ("/jsonschema",)),
    ("attrs", ("/attr/", "/attrs/")),
)


#: Innermost frames that mean "waiting", not computing.
IDLE_LEAVES = frozenset(
    {
        "EpollSelector.select",
        "EpollIOManager.get_events",
        "Condition.wait",
        "WorkerThread._work",
        "Queue.get",
        "Event.wait",
        "Thread.join",
    }
)
BLOCKING_IO = frozenset({"OsFileSystem.fsync", "fsync"})


def layer_of(path: str) -> str:
    for name, needles in LAYERS:
        if any(n in path for n in needles):
            return name
    return "other"


def parse(path: Path) -> list[tuple[list[tuple[str, str]], int]]:
    stacks: list[tuple[list[tuple[str, str]], int]] = []
    for raw in path.read_text("utf-8", errors="replace").splitlines():
        raw = raw.strip()
        if not raw:
            continue
        body, _, count = raw.rpartition(" ")
        if not count.isdigit():
            continue
        frames: list[tuple[str, str]] = []
        for part in body.split(";"):
            match = _FRAME.match(part)
            if match:
                frames.append((match["func"], match["file"]))
        if frames:
            stacks.append((frames, int(count)))
    return stacks


def _short(file: str) -> str:
    for marker in ("site-packages/", "/work/main/src/", "lib/python3.11/"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


def summarise(path: Path, top: int = 18) -> str:
    every = parse(path)
    idle = sum(c for frames, c in every if frames[-1][0] in IDLE_LEAVES)
    blocking = sum(c for frames, c in every if frames[-1][0] in BLOCKING_IO)
    stacks = [(f, c) for f, c in every if f[-1][0] not in IDLE_LEAVES | BLOCKING_IO]
    total = sum(c for _, c in stacks)
    if not total:
        return f"(no samples in {path})"
    self_layer: Counter[str] = Counter()
    incl_layer: Counter[str] = Counter()
    self_func: Counter[str] = Counter()
    incl_func: Counter[str] = Counter()
    for frames, count in stacks:
        func, file = frames[-1]
        self_layer[layer_of(file)] += count
        self_func[f"{func} ({_short(file)})"] += count
        for name in {layer_of(f) for _, f in frames}:
            incl_layer[name] += count
        for key in {f"{fn} ({_short(fl)})" for fn, fl in frames}:
            incl_func[key] += count
    out = [
        f"{total + idle + blocking} samples: {idle} idle (a thread parked in a wait), "
        f"{blocking} in blocking fsync, {total} busy. Tables: % of the busy samples.",
        "",
        "| layer | self % | inclusive % |",
        "|---|---:|---:|",
    ]
    for name, count in incl_layer.most_common():
        out.append(f"| {name} | {100 * self_layer[name] / total:.1f} | {100 * count / total:.1f} |")
    out += ["", "| top self functions | % |", "|---|---:|"]
    out += [f"| `{k}` | {100 * v / total:.1f} |" for k, v in self_func.most_common(top)]
    out += ["", "| top inclusive functions (under the event loop) | % |", "|---|---:|"]
    shown = 0
    for key, count in incl_func.most_common():
        if count / total > 0.97:
            continue  # the process's entry frames: everything is under them
        out.append(f"| `{key}` | {100 * count / total:.1f} |")
        shown += 1
        if shown >= top + 10:
            break
    return "\n".join(out)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"## {name}\n")
        print(summarise(Path(name)))
        print()
