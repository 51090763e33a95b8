"""``latence-retrieval-mcp eval``: a standard collection, end to end, over real MCP.

Ingest the collection into the configured store (idempotent: a second run embeds
nothing), then for each variant start the real server in-process with that
variant's settings and send every query through the ``search`` tool with the MCP
SDK client over loopback TCP, twice: collapsed by document (the default an agent
gets, one hit per document) and as raw chunks (a document ranks where its best chunk
ranks, and ten chunks may be fewer than ten documents). Both are scored with
ir-measures (trec_eval's definitions: nDCG with linear gains, Recall@100, MRR@10).

``--context`` measures ``get_context`` instead: per token budget, the share of queries
whose pack holds a relevant document (and the pack's recall), next to the same figures
for ``search``'s raw ranking cut to the same budget in rank order (full chunk text,
counted by the model's tokenizer): what an agent would hold had it read the ranking
itself.
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
CONTEXT_BUDGETS = (500, 1500, 4000)
CONTEXT_RANKING = 50  # raw chunks read for the cut-to-budget baseline (max_top_k)

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
    metrics: dict[str, float]  # collapsed (the default); "raw " prefixed: raw chunks
    queries: int
    seconds: float
    degraded: int


@attrs.frozen
class ContextResult:
    budget_tokens: int
    pack_hit: float  # share of queries whose pack holds a relevant document
    pack_recall: float  # relevant documents in the pack / relevant documents, averaged
    ranking_hit: float  # the same for search's raw ranking cut to the budget
    ranking_recall: float
    ranking_chunks: float  # chunks of the ranking that fit, averaged (its k)
    pack_tokens: float  # tokens the pack used, averaged
    queries: int


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
            # Quality, not latency: a loaded machine must not drop legs from the score.
            "pipeline": {
                "request_timeout_s": 60,
                "legs": {
                    leg: {"timeout_s": 30} for leg in ("dense", "bm25", "sparse", "multivector")
                },
            },
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


async def _each_query(
    settings: Settings,
    queries: list[tuple[str, str]],
    ask: Callable[[Client, str, str], Any],
    *,
    concurrency: int,
) -> None:
    """Start the real server with ``settings`` and ``await ask(client, qid, text)`` for
    every query, ``concurrency`` clients at a time."""
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        info = await nursery.start(
            lambda task_status: run_server(
                settings, shutdown=shutdown, handle_signals=False, task_status=task_status
            )
        )
        work = iter(queries)

        async def worker() -> None:
            async with (
                httpx2.AsyncClient(timeout=60) as http,
                Client(streamable_http_client(info.url, http_client=http), mode="legacy") as client,
            ):
                for qid, text in work:
                    await ask(client, qid, text[:2000])

        async with trio.open_nursery() as workers:
            for _ in range(concurrency):
                workers.start_soon(worker)
        shutdown.set()


async def _call(client: Client, tool: str, args: dict[str, Any], qid: str) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    envelope: dict[str, Any] = result.structured_content or {}
    if not envelope.get("ok"):
        raise RuntimeError(f"query {qid} failed: {envelope.get('error')}")
    return envelope


async def run_variant(
    settings: Settings,
    dataset: EvalDataset,
    name: str,
    *,
    concurrency: int = 4,
    limit: int | None = None,
) -> VariantResult:
    collapsed: dict[str, list[str]] = {}
    raw_10: dict[str, list[str]] = {}
    raw_100: dict[str, list[str]] = {}
    degraded = 0

    async def ask(client: Client, qid: str, text: str) -> None:
        nonlocal degraded
        query = {"query": text, "top_k": RANK_DEPTH}
        envelope = await _call(client, "search", query, qid)
        degraded += bool(envelope["meta"].get("degraded"))
        collapsed[qid] = doc_ranking(envelope["data"]["hits"])
        raw = (await _call(client, "search", {**query, "collapse": False}, qid))["data"]["hits"]
        raw_10[qid] = doc_ranking(raw[:10])  # what ten raw chunks show an agent
        raw_100[qid] = doc_ranking(raw)

    started = time.perf_counter()
    await _each_query(settings, list(dataset.queries.items())[:limit], ask, concurrency=concurrency)
    metrics = score_run(dataset.qrels, collapsed)
    metrics["raw nDCG@10"] = score_run(dataset.qrels, raw_10)["nDCG@10"]
    metrics["raw MRR@10"] = score_run(dataset.qrels, raw_10)["MRR@10"]
    metrics["raw Recall@100"] = score_run(dataset.qrels, raw_100)["Recall@100"]
    return VariantResult(
        variant=name,
        metrics=metrics,
        queries=len(collapsed),
        seconds=time.perf_counter() - started,
        degraded=degraded,
    )


def token_counter() -> Callable[[str], int]:
    """The model's word-piece counter (what the packer counts with), or the estimate
    the server falls back on when the model files are absent."""
    from retrieval_mcp.encoders.minilm import approximate_token_count, model_files

    try:
        from tokenizers import Tokenizer

        counter = Tokenizer.from_file(str(model_files()[1]))
    except Exception:  # model or tokenizers absent: the server estimates too
        return approximate_token_count
    counter.no_padding()
    counter.no_truncation()
    return lambda text: len(counter.encode(text, add_special_tokens=False).ids)


def cut_to_budget(
    hits: list[dict[str, Any]], texts: dict[str, str], budget: int, count: Callable[[str], int]
) -> list[dict[str, Any]]:
    """Plain top-k cut to the budget: chunks in rank order until one does not fit."""
    taken, used = [], 0
    for hit in hits:
        p = hit["provenance"]
        cost = count(texts.get(str(p["doc_id"]), "")[p["char_start"] : p["char_end"]])
        if used + cost > budget:
            break
        taken.append(hit)
        used += cost
    return taken


async def run_context(
    settings: Settings,
    dataset: EvalDataset,
    budgets: tuple[int, ...] = CONTEXT_BUDGETS,
    *,
    concurrency: int = 4,
    limit: int | None = None,
) -> list[ContextResult]:
    count = await trio.to_thread.run_sync(token_counter)
    texts = {d.doc_id: d.text for d in dataset.documents}
    packs: dict[int, dict[str, set[str]]] = {b: {} for b in budgets}
    cuts: dict[int, dict[str, set[str]]] = {b: {} for b in budgets}
    fits: dict[int, list[int]] = {b: [] for b in budgets}
    used: dict[int, list[int]] = {b: [] for b in budgets}

    collapses: list[bool] = []  # a server from before collapsing: its search is raw

    async def ask(client: Client, qid: str, text: str) -> None:
        if not collapses:
            collapses.append(await _has_argument(client, "search", "collapse"))
        query: dict[str, Any] = {"query": text, "top_k": CONTEXT_RANKING}
        if collapses[0]:
            query["collapse"] = False
        ranking = (await _call(client, "search", query, qid))["data"]["hits"]
        for budget in budgets:
            args = {"query": text, "budget_tokens": budget}
            data = (await _call(client, "get_context", args, qid))["data"]
            packs[budget][qid] = {str(p["provenance"]["doc_id"]) for p in data["passages"]}
            used[budget].append(int(data["tokens_used"]))
            cut = cut_to_budget(ranking, texts, budget, count)
            cuts[budget][qid] = {str(h["provenance"]["doc_id"]) for h in cut}
            fits[budget].append(len(cut))

    await _each_query(settings, list(dataset.queries.items())[:limit], ask, concurrency=concurrency)
    results = []
    for budget in budgets:
        pack_hit, pack_recall = _holds(dataset.qrels, packs[budget])
        cut_hit, cut_recall = _holds(dataset.qrels, cuts[budget])
        n = len(packs[budget])
        results.append(
            ContextResult(
                budget_tokens=budget,
                pack_hit=pack_hit,
                pack_recall=pack_recall,
                ranking_hit=cut_hit,
                ranking_recall=cut_recall,
                ranking_chunks=sum(fits[budget]) / max(1, n),
                pack_tokens=sum(used[budget]) / max(1, n),
                queries=n,
            )
        )
    return results


async def _has_argument(client: Client, tool: str, argument: str) -> bool:
    listed = await client.list_tools()
    schema = next((t.input_schema for t in listed.tools if t.name == tool), {})
    return argument in schema.get("properties", {})


def _holds(qrels: dict[str, dict[str, int]], held: dict[str, set[str]]) -> tuple[float, float]:
    """(share of queries holding a relevant document, mean recall of relevant documents)."""
    hits, recall = 0, 0.0
    for qid, docs in held.items():
        relevant = {d for d, g in qrels.get(qid, {}).items() if g > 0}
        found = len(relevant & docs)
        hits += found > 0
        recall += found / len(relevant) if relevant else 0.0
    n = max(1, len(held))
    return hits / n, recall / n


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
    results: list[VariantResult] = []
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


async def evaluate_context(
    dataset_path: Path,
    settings: Settings,
    budgets: tuple[int, ...] = CONTEXT_BUDGETS,
    *,
    limit: int | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[IngestReport, list[ContextResult]]:
    """``eval --context``: the default pipeline's ``get_context`` per budget (see the
    module docstring)."""
    dataset = await trio.to_thread.run_sync(load_dataset, dataset_path)
    report = await ingest_dataset(settings, dataset)
    progress(f"ingested {dataset.name}: {report.chunks_written} chunks written")
    results = await run_context(variant_settings(settings, "hybrid"), dataset, budgets, limit=limit)
    return report, results


def results_table(results: list[VariantResult]) -> str:
    lines = [
        "| variant | nDCG@10 | Recall@100 | MRR@10 | raw nDCG@10 | raw Recall@100 "
        "| raw MRR@10 | queries | degraded |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        m = r.metrics
        lines.append(
            f"| {r.variant} | {m['nDCG@10']:.4f} | {m['Recall@100']:.4f} | "
            f"{m['MRR@10']:.4f} | {m['raw nDCG@10']:.4f} | {m['raw Recall@100']:.4f} | "
            f"{m['raw MRR@10']:.4f} | {r.queries} | {r.degraded} |"
        )
    return "\n".join(lines)


def context_table(results: list[ContextResult]) -> str:
    lines = [
        "| budget (tokens) | pack holds a relevant doc | pack recall | ranking cut to budget: "
        "holds one | its recall | its k (chunks) | pack tokens used | queries |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.budget_tokens} | {r.pack_hit:.4f} | {r.pack_recall:.4f} | "
            f"{r.ranking_hit:.4f} | {r.ranking_recall:.4f} | {r.ranking_chunks:.1f} | "
            f"{r.pack_tokens:.0f} | {r.queries} |"
        )
    return "\n".join(lines)
