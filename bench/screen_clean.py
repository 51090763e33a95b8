"""The installed screen on clean prose alone: flags per source and CPU per 1,000 chars.

Why a script of its own: ``injection_eval.py`` scores every hand-written set too, which
takes minutes once a layer runs the encoder; a ship rule's clean-prose check (Cranfield
701-1400, the demo corpus) and the ingest cost need only the clean passages. Run it
against a pinned tree to measure a candidate screen (bench/README.md).

    .venv/bin/python bench/screen_clean.py
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from injection_eval import CRAN_DOCS, clean_passages

from retrieval_mcp.screening import screen


def main() -> int:
    clean = clean_passages(CRAN_DOCS if CRAN_DOCS.exists() else None)
    flagged: Counter[str] = Counter()
    total: Counter[str] = Counter()
    start = time.process_time()
    for passage in clean:
        total[passage.source] += 1
        flagged[passage.source] += bool(screen(passage.text).flags)
    cpu = time.process_time() - start
    for source in total:
        print(f"{source:<32} {flagged[source]:>4} / {total[source]} flagged")
    chars = sum(len(p.text) for p in clean)
    print(f"screen, one pass over all: {cpu * 1e6 / (chars / 1000):,.0f} µs CPU per 1,000 chars")
    return 0


if __name__ == "__main__":
    sys.exit(main())
