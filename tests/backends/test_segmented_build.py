"""Ingest indexes the embedded store segment by segment (ADR 0027), on the real engine.

The encoder here is a stand-in that returns seeded random unit vectors: the engine
only indexes a segment past its threshold (about 6.6k dense vectors), more than the
real model can embed in a unit test's time. Everything else is the real store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt

from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.backends.search_pool import indexed_segments, usable_cores
from retrieval_mcp.encoders.minilm import DIMENSION, MiniLMEncoder
from retrieval_mcp.ingest.loaders import Document
from retrieval_mcp.ingest.runner import ingest_documents
from retrieval_mcp.services import ingest_target

CHUNKS = 21_000
SEGMENT = 7_000  # past the engine's indexing threshold


class RandomVectors:
    name = "random-unit-vectors"
    dimension = DIMENSION
    query_graph = "shipped"

    def __init__(self) -> None:
        self._rng = np.random.default_rng(16)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = self._rng.standard_normal((len(texts), DIMENSION)).astype(np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.embed(texts)

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        return [len(text.split()) for text in texts]  # the store keeps what it is told


async def build(path: Path, commit_every: int) -> tuple[int, int]:
    backend = await QdrantEmbeddedBackend.open(
        path, cast(MiniLMEncoder, RandomVectors()), max_segment_points=SEGMENT
    )
    docs = [Document(doc_id=f"d{i}", title="t", text=f"w{i} alpha beta") for i in range(CHUNKS)]
    try:
        await ingest_documents(
            ingest_target(backend),
            docs,
            source="s",
            chunk_chars=200,
            overlap_chars=0,
            commit_every=commit_every,
        )
        return backend.segment_count(), (await backend.status()).chunks
    finally:
        await backend.aclose()


async def test_committing_every_segment_builds_bounded_segments(tmp_path: Path) -> None:
    segmented, points = await build(tmp_path / "segmented", commit_every=SEGMENT)
    whole, _ = await build(tmp_path / "whole", commit_every=0)
    assert points == CHUNKS
    # Each commit indexed the segment that had filled; the cap kept them from merging.
    assert segmented >= CHUNKS // SEGMENT > whole
    # Reopened, the engine searches with one thread per indexed segment, at most one
    # per usable core (ADR 0055), and still answers.
    shard = tmp_path / "segmented" / "shard"
    indexed = indexed_segments(shard)
    assert indexed >= 2
    backend = await QdrantEmbeddedBackend.open(
        tmp_path / "segmented", cast(MiniLMEncoder, RandomVectors())
    )
    try:
        assert backend.search_threads == min(usable_cores(), indexed)
        assert (await backend.status()).extra["search_threads"] == backend.search_threads
        hits = await backend.search(LegQuery(leg=Capability.BM25, text="w7 alpha", limit=5))
        assert hits and hits[0].chunk.text.startswith("w7 ")
    finally:
        await backend.aclose()
    persisted = json.loads((shard / "edge_config.json").read_text("utf-8"))
    assert persisted["max_search_threads"] == backend.search_threads
