"""``latence-retrieval-mcp eval``: a standard collection, end to end, over real MCP.

Ingest the collection into the configured store (idempotent: a second run embeds
nothing), then for each variant start the real server in-process with that
variant's settings and send every query through the ``search`` tool with the MCP
SDK client over loopback TCP. Chunk hits are turned into a document ranking (a
document ranks where its best chunk ranks) and scored with ir-measures (trec_eval's
definitions: nDCG with linear gains, Recall@100, MRR@10).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import httpx2
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from retrieval_mcp.config_merge import deep_merge
from retrieval_mcp.eval_datasets import EvalDataset, load_dataset
from retrieval_mcp.ingest.runner import IngestReport, ingest_documents
from retrieval_mcp.server_run import run_server
from retrieval_mcp.services import ingest_target, open_backend
from retrieval_mcp.settings import Settings, load_settings

RANK_DEPTH = 100

#: Named variants: settings overrides applied on top of the operator's settings.
VARIANTS: dict[str, dict[str, Any]] = {
    "bm25": {"pipeline": {"legs": {"dense": {"mode": "off"}}}},
    "dense": {"pipeline": {"legs": {"bm25": {"mode": "off"}}}},
    "hybrid": {},
    "hybrid-rrf": {"pipeline": {"fusion": "rrf"}},
    "hybrid-dbsf": {"pipeline": {"fusion": "dbsf"}},
    "hybrid+mmr": {"pipeline": {"search": {"rerank": True}, "rerank": {"kind": "mmr"}}},
}
DEFAULT_VARIANTS = ("bm25", "dense", "hybrid", "hybrid-rrf", "hybrid-dbsf", "hybrid+mmr")


@attrs.frozen
class VariantResult:
    variant: str
    metrics: dict[str, float]
    queries: int
    seconds: float
    degraded: int


def variant_settings(base: Settings, name: str) -> Settings:
    """``base`` with the variant applied, on port 0, no demo, deep enough to rank 100."""
    data = base.model_dump(mode="json", by_alias=True)
    # In-process, port 0, gone when the run ends: no token needed to measure quality.
    data = deep_merge(
        data,
        {
            "server": {"port": 0, "unix_socket": "none", "require_auth": False},
            "demo": {"ingest_on_first_start": False},
            "search": {"max_top_k": 200},
        },
    )
    data = deep_merge(data, VARIANTS[name])
    state_dir = Path(data.pop("state_dir"))
    return load_settings(state_dir=state_dir, overrides=data)


async def ingest_dataset(settings: Settings, dataset: EvalDataset) -> IngestReport:
    async with open_backend(settings) as backend:
        return await ingest_documents(
            ingest_target(backend),
            dataset.documents,
            source=dataset.name,
            chunk_chars=settings.chunking.chunk_chars,
            overlap_chars=settings.chunking.overlap_chars,
        )


def doc_ranking(hits: list[dict[str, Any]], depth: int = RANK_DEPTH) -> list[str]:
    """Documents in the order of their best chunk."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(str(hit["provenance"]["doc_id"]), None)
        if len(seen) >= depth:
            break
    return list(seen)


def score_run(qrels: dict[str, dict[str, int]], run: dict[str, list[str]]) -> dict[str, float]:
    import ir_measures
    from ir_measures import RR, R, nDCG

    judged = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    scored = [
        ir_measures.ScoredDoc(q, d, float(len(docs) - i))
        for q, docs in run.items()
        for i, d in enumerate(docs)
    ]
    result = ir_measures.calc_aggregate([nDCG @ 10, R @ 100, RR @ 10], judged, scored)
    return {
        "nDCG@10": float(result[nDCG @ 10]),
        "Recall@100": float(result[R @ 100]),
        "MRR@10": float(result[RR @ 10]),
    }


async def run_variant(
    settings: Settings,
    dataset: EvalDataset,
    name: str,
    *,
    concurrency: int = 4,
    limit: int | None = None,
) -> VariantResult:
    queries = list(dataset.queries.items())[:limit]
    run: dict[str, list[str]] = {}
    degraded = 0
    shutdown = trio.Event()
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        info = await nursery.start(
            lambda task_status: run_server(
                settings, shutdown=shutdown, handle_signals=False, task_status=task_status
            )
        )
        work = iter(queries)

        async def worker() -> None:
            nonlocal degraded
            async with (
                httpx2.AsyncClient(timeout=60) as http,
                Client(streamable_http_client(info.url, http_client=http), mode="legacy") as client,
            ):
                for qid, text in work:
                    result = await client.call_tool("search", {"query": text[:2000], "top_k": 200})
                    envelope = result.structured_content or {}
                    if not envelope.get("ok"):
                        raise RuntimeError(f"query {qid} failed: {envelope.get('error')}")
                    degraded += bool(envelope["meta"].get("degraded"))
                    run[qid] = doc_ranking(envelope["data"]["hits"])

        async with trio.open_nursery() as workers:
            for _ in range(concurrency):
                workers.start_soon(worker)
        shutdown.set()
    return VariantResult(
        variant=name,
        metrics=score_run(dataset.qrels, run),
        queries=len(run),
        seconds=time.perf_counter() - started,
        degraded=degraded,
    )


async def evaluate(
    dataset_path: Path,
    settings: Settings,
    variants: tuple[str, ...] = DEFAULT_VARIANTS,
    *,
    limit: int | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[IngestReport, list[VariantResult]]:
    dataset = await trio.to_thread.run_sync(load_dataset, dataset_path)
    started = time.perf_counter()
    report = await ingest_dataset(settings, dataset)
    progress(
        f"ingested {dataset.name}: {report.chunks_written} chunks written, "
        f"{report.documents_unchanged} documents unchanged "
        f"({time.perf_counter() - started:.1f} s)"
    )
    results = []
    for name in variants:
        if name not in VARIANTS:
            raise ValueError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}")
        result = await run_variant(variant_settings(settings, name), dataset, name, limit=limit)
        progress(
            f"{name}: "
            + ", ".join(f"{k} {v:.4f}" for k, v in result.metrics.items())
            + f" ({result.queries} queries, {result.seconds:.1f} s)"
        )
        results.append(result)
    return report, results


def results_table(results: list[VariantResult]) -> str:
    lines = [
        "| variant | nDCG@10 | Recall@100 | MRR@10 | queries | degraded |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        m = r.metrics
        lines.append(
            f"| {r.variant} | {m['nDCG@10']:.4f} | {m['Recall@100']:.4f} | "
            f"{m['MRR@10']:.4f} | {r.queries} | {r.degraded} |"
        )
    return "\n".join(lines)
