"""The engine's search pool: one thread per indexed segment, at most one per core
(ADR 0055), read from files an operator's disk may have mangled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.backends.search_pool import (
    BM25_CONFIG,
    DENSE_CONFIG,
    indexed_segments,
    load_config,
    pool_size,
    search_threads,
)
from retrieval_mcp.encoders.minilm import MiniLMEncoder

HNSW = {"vector_data": {"dense": {"index": {"type": "hnsw", "options": {}}}}}
PLAIN = {
    "vector_data": {"dense": {"index": {"type": "plain", "options": {}}}},
    "sparse_vector_data": {"bm25": {"index": {"index_type": "MutableRam"}}},
}
SPARSE_ONLY_BUILT = {"sparse_vector_data": {"bm25": {"index": {"index_type": "ImmutableRam"}}}}


def segment(shard: Path, name: str, content: str | bytes) -> None:
    folder = shard / "segments" / name
    folder.mkdir(parents=True)
    target = folder / "segment.json"
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, "utf-8")


def test_indexed_segments_counts_built_indexes_only(tmp_path: Path) -> None:
    segment(tmp_path, "a", json.dumps({"config": HNSW}))
    segment(tmp_path, "b", json.dumps({"config": HNSW}))
    segment(tmp_path, "c", json.dumps({"config": PLAIN}))  # the appendable one
    segment(tmp_path, "d", json.dumps({"config": SPARSE_ONLY_BUILT}))
    assert indexed_segments(tmp_path) == 3


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\xff\xfe binary",
        "",
        "[]",
        "null",
        '{"config": 7}',
        '{"config": {"vector_data": ["hnsw"]}}',
        '{"config": {"vector_data": {"dense": {"index": "hnsw"}}}}',
        '{"config": {"sparse_vector_data": {"bm25": null}}}',
        '{"no_config": {}}',
    ],
    ids=repr,
)
def test_a_mangled_segment_json_counts_as_not_indexed(tmp_path: Path, content: str | bytes) -> None:
    segment(tmp_path, "good", json.dumps({"config": HNSW}))
    segment(tmp_path, "bad", content)
    assert indexed_segments(tmp_path) == 1


def test_a_missing_segments_folder_or_segment_file_is_zero(tmp_path: Path) -> None:
    assert indexed_segments(tmp_path / "nowhere") == 0
    (tmp_path / "segments" / "empty").mkdir(parents=True)
    assert indexed_segments(tmp_path) == 0


@settings(max_examples=200)
@given(st.integers(0, 64), st.integers(1, 64))
def test_the_pool_is_between_one_and_the_cores(indexed: int, cores: int) -> None:
    threads = pool_size(indexed, cores)
    assert 1 <= threads <= cores
    assert threads in (indexed, cores) or indexed == 0


def test_a_configured_pool_wins(tmp_path: Path) -> None:
    segment(tmp_path, "a", json.dumps({"config": HNSW}))
    assert search_threads(tmp_path, 3, cores=2) == 3
    assert search_threads(tmp_path, 0, cores=2) == 1


def edge_config(shard: Path, content: str | bytes) -> None:
    shard.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        (shard / "edge_config.json").write_bytes(content)
    else:
        (shard / "edge_config.json").write_text(content, "utf-8")


def test_load_config_for_a_store_this_server_wrote(tmp_path: Path) -> None:
    edge_config(
        tmp_path,
        json.dumps({"vectors": {"dense": DENSE_CONFIG}, "sparse_vectors": {"bm25": BM25_CONFIG}}),
    )
    config = load_config(tmp_path, "dense", "bm25", 2)
    assert config is not None
    assert config.max_search_threads == 2


@pytest.mark.parametrize(
    "content",
    [
        b"\x89PNG binary",
        "",
        "[1, 2]",
        "{}",
        json.dumps({"vectors": {"dense": {"size": 768, "distance": "Cosine"}}}),
        json.dumps({"vectors": {"dense": DENSE_CONFIG}, "sparse_vectors": {}}),
        json.dumps(
            {
                "vectors": {"dense": DENSE_CONFIG, "colbert": DENSE_CONFIG},
                "sparse_vectors": {"bm25": BM25_CONFIG},
            }
        ),
    ],
    ids=repr,
)
def test_anything_else_loads_as_it_is(tmp_path: Path, content: str | bytes) -> None:
    edge_config(tmp_path, content)
    assert load_config(tmp_path, "dense", "bm25", 2) is None
    assert load_config(tmp_path / "missing", "dense", "bm25", 2) is None


async def test_a_new_store_searches_with_one_thread_and_an_operator_can_set_it(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        assert backend.search_threads == 1  # nothing indexed yet
    finally:
        await backend.aclose()
    again = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder, search_threads=3)
    try:
        assert again.search_threads == 3
        assert (await again.status()).extra["search_threads"] == 3
    finally:
        await again.aclose()
    persisted = json.loads((tmp_path / "store" / "shard" / "edge_config.json").read_text("utf-8"))
    assert persisted["max_search_threads"] == 3


async def test_a_store_with_other_vectors_opens_with_the_engines_pool(
    tmp_path: Path, encoder: MiniLMEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    await backend.aclose()
    import retrieval_mcp.backends.qdrant_embedded as embedded

    monkeypatch.setattr(embedded, "load_config", lambda *args: None)  # not a form we write
    again = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:
        assert again.search_threads is None
        assert (await again.status()).extra["search_threads"] is None
        assert await again.search(LegQuery(leg=Capability.BM25, text="anything", limit=3)) == []
    finally:
        await again.aclose()
