"""The parts of one hybrid search call on a scale.py store: both legs in one query_batch, RRF,
then the payload read of the fused chunks (with and without payloads), and decoding.

    .venv/bin/python bench/hybrid_parts.py 1000000 [--dir /tmp/lrm-scale-cran]

Dense queries are random unit vectors here (only the payload read is the point); run it
once as the store comes (pages cold) and once after reading the payload files.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, "bench")
import qdrant_edge as qe
from corpus import cranfield_queries

from retrieval_mcp.backends.chunk_payload import from_payload
from retrieval_mcp.backends.qdrant_embedded import _ranked
from retrieval_mcp.pipeline.fusion import reciprocal_rank_fusion

size = int(sys.argv[1])
root = sys.argv[3] if len(sys.argv) > 3 else "/tmp/lrm-scale-cran"
p = f"{root}/{size}/store"
sh = qe.EdgeShard.load(p + "/shard")
m = json.loads(Path(p, "manifest.json").read_text("utf-8"))["bm25"]
bm = qe.Bm25(qe.Bm25Config(k=m["k"], b=m["b"], avg_len=m["avg_len"], language=m["language"]))
rng = np.random.default_rng(1)
texts = cranfield_queries()
vecs = rng.standard_normal((300, 384))
vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
T = {k: [] for k in ["batch", "rrf", "retrieve", "retrieve_nopayload", "from_payload"]}
for i in range(250):
    reqs = [
        qe.QueryRequest(
            limit=50,
            query=qe.Query.Nearest(vecs[i].tolist(), using="dense"),
            filter=None,
            with_payload=False,
            params=qe.SearchParams(hnsw_ef=128),
        ),
        qe.QueryRequest(
            limit=50,
            query=qe.Query.Nearest(bm.embed_query(texts[i % 225]), using="bm25"),
            filter=None,
            with_payload=False,
        ),
    ]
    t0 = time.perf_counter()
    a = sh.query_batch(qe.QueryBatchRequest(reqs))
    t1 = time.perf_counter()
    legs = dict(zip(("dense", "bm25"), (_ranked(x) for x in a), strict=False))
    hits = reciprocal_rank_fusion(legs, k=60, limit=32)
    t2 = time.perf_counter()
    ids = [h.chunk.id for h in hits]
    recs = sh.retrieve(ids, with_payload=True, with_vector=False)
    t3 = time.perf_counter()
    out = [from_payload(str(r.id), r.payload or {}) for r in recs]
    t4 = time.perf_counter()
    sh.retrieve(ids, with_payload=False, with_vector=False)
    t5 = time.perf_counter()
    if i >= 20:
        T["batch"].append(t1 - t0)
        T["rrf"].append(t2 - t1)
        T["retrieve"].append(t3 - t2)
        T["from_payload"].append(t4 - t3)
        T["retrieve_nopayload"].append(t5 - t4)
print(size, {k: round(np.median(v) * 1000, 3) for k, v in T.items()})
