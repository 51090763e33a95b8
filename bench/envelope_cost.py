"""CPU per call of wrapping a tool's data in the envelope and the MCP result, in-process.

The per-call path the dispatcher runs after a handler returns: build ``meta``, the
envelope and the ``CallToolResult`` (with one ``resource_link`` per hit where the
code has them). The data is a typical ``search`` answer: 8 hits of ~300-char snippets.
Run it once per pinned tree to compare two commits on the same machine and load:

    PYTHONPATH=/tmp/pin-a/pkg .venv/bin/python bench/envelope_cost.py
    PYTHONPATH=/tmp/pin-b/pkg .venv/bin/python bench/envelope_cost.py
"""

from __future__ import annotations

import os
import statistics
import timeit
from collections.abc import Callable
from typing import Any

from retrieval_mcp import envelope as E

HITS = 8


def search_data() -> dict[str, Any]:
    hit = {
        "rank": 1,
        "id": "x" * 36,
        "resource_uri": "lrm://chunk/" + "x" * 36,
        "score": 0.03,
        "text": "⟦untrusted⟧" + "word " * 60 + "⟦/untrusted⟧",
        "flags": [],
        "provenance": {
            "source": "demo",
            "doc_id": "a.md",
            "title": "T",
            "ordinal": 0,
            "char_start": 0,
            "char_end": 900,
            "doc_chunks": 3,
            "uri": "file:///x",
            "prev_id": None,
            "next_id": "y",
        },
        "metadata": {},
        "legs": {"dense": {"rank": 1, "score": 0.6}, "bm25": {"rank": 2, "score": 3.1}},
        "passed_guard": True,
    }
    return {
        "query": "q",
        "hits": [dict(hit) for _ in range(HITS)],
        "guard": {"threshold": 0.01, "below_threshold": 0},
    }


def variants() -> dict[str, Callable[[], Any]]:
    data = search_data()
    if hasattr(E, "make_meta"):  # TypedDict envelope (issue 14)
        from retrieval_mcp.mcp_surface.resource_links import resource_links

        def meta() -> Any:
            return E.make_meta("abcd", 1.0, steps_run=["fetch:dense"], used=["dense", "bm25"])

        return {
            "envelope + result, 8 resource_links": lambda: E.success(
                data, "text", meta(), resource_links(data)
            ),
            "envelope + result, no links": lambda: E.success(data, "text", meta()),
        }

    def old_meta() -> Any:
        return E.Meta(  # type: ignore[call-arg]
            request_id="abcd",
            took_ms=1.0,
            steps_run=["fetch:dense"],
            steps_skipped=[],
            legs=E.LegsMeta(used=["dense", "bm25"], dropped=[]),  # type: ignore[call-arg]
            degraded=False,
        )

    return {"pydantic envelope + result (no links)": lambda: E.success(data, "text", old_meta())}


def main() -> None:
    print(f"load {os.getloadavg()[0]:.1f}, module {E.__file__}")
    for name, once in variants().items():
        runs = [timeit.timeit(once, number=5000) / 5000 * 1e6 for _ in range(5)]
        print(f"{name}: median {statistics.median(runs):.1f} µs/call (min {min(runs):.1f})")


if __name__ == "__main__":
    main()
