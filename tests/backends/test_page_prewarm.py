"""The store pre-read (ADR 0053): what it reads, its budget, and that it stops when told."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from retrieval_mcp.backends.page_prewarm import files_under, read_into_page_cache
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.services import open_services
from retrieval_mcp.settings import QdrantEmbeddedSettings, Settings
from retrieval_mcp.transport.caller import Caller
from tests.transport.server_harness import ingest_folder

from .test_qdrant_embedded import open_store


def _files(root: Path, sizes: list[int]) -> list[Path]:
    paths = []
    for i, size in enumerate(sizes):
        path = root / f"f{i}.dat"
        path.write_bytes(os.urandom(size))
        paths.append(path)
    return paths


@pytest.mark.parametrize("chunk_bytes", [1, 999, 1000, 4096])
async def test_reads_every_byte_in_chunks(tmp_path: Path, chunk_bytes: int) -> None:
    paths = _files(tmp_path, [3000, 0, 1, 2500])
    report = await read_into_page_cache(paths, max_bytes=10**9, chunk_bytes=chunk_bytes)
    assert report.bytes_read == 5501
    assert report.files == 4
    assert not report.budget_spent


async def test_stops_at_the_budget(tmp_path: Path) -> None:
    paths = _files(tmp_path, [3000, 3000, 3000])
    report = await read_into_page_cache(paths, max_bytes=5000, chunk_bytes=1024)
    assert report.bytes_read == 5000
    assert report.files == 2  # the third is never opened
    assert report.budget_spent


async def test_a_vanished_file_is_skipped(tmp_path: Path) -> None:
    """The optimiser may replace a segment between listing and reading."""
    paths = _files(tmp_path, [100, 200])
    report = await read_into_page_cache(
        [paths[0], tmp_path / "gone.dat", tmp_path, paths[1]], max_bytes=10**6
    )
    assert report.bytes_read == 300


async def test_cancelled_before_it_starts_reads_nothing(tmp_path: Path) -> None:
    paths = _files(tmp_path, [10_000])
    with trio.CancelScope() as scope:
        scope.cancel()
        await read_into_page_cache(paths, max_bytes=10**6)
        pytest.fail("a cancelled pre-read ran to the end")
    assert scope.cancelled_caught


def test_files_under_lists_nested_files_in_order(tmp_path: Path) -> None:
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / "a" / "deep" / "x").write_bytes(b"x")
    (tmp_path / "a" / "y").write_bytes(b"y")
    (tmp_path / "b").write_bytes(b"b")
    found = files_under([tmp_path / "a", tmp_path / "b", tmp_path / "missing"])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a/deep/x", "a/y", "b"]


async def test_store_prewarm_reads_payload_files(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    path = tmp_path / "store"
    backend = await open_store(path, encoder)
    await backend.aclose()
    backend = await QdrantEmbeddedBackend.open(path, encoder, prewarm_max_bytes=2**30)
    try:
        cold = backend.cold_files()
        parts = {p.relative_to(path / "shard" / "segments").parts[1] for p in cold}
        assert parts == {"payload_storage", "payload_index"}
        expected = sum(p.stat().st_size for p in cold)
        assert expected > 0
        report = await backend.prewarm()
        assert report is not None and report.bytes_read == expected
        assert backend.last_prewarm == report
        shown = (await backend.status()).extra["prewarm"]
        assert isinstance(shown, dict)
        assert shown["files"] == report.files and shown["mib"] == round(expected / 2**20, 1)
    finally:
        await backend.aclose()
    assert await backend.prewarm() is None  # closed: nothing to warm


async def test_store_prewarm_off(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder, prewarm_max_bytes=0)
    try:
        assert await backend.prewarm() is None
    finally:
        await backend.aclose()


def test_prewarm_is_on_by_default_and_bounded() -> None:
    assert QdrantEmbeddedSettings().prewarm_max_mib == 4096
    with pytest.raises(ValueError):
        QdrantEmbeddedSettings(prewarm_max_mib=-1)


@pytest.mark.parametrize("budget_mib", [4096, 0])
async def test_a_serving_stack_prewarms_beside_serving(
    make_settings: Callable[..., Settings], corpus_dir: Path, budget_mib: int
) -> None:
    settings = make_settings(backend={"qdrant_embedded": {"prewarm_max_mib": budget_mib}})
    await ingest_folder(settings, corpus_dir, "tiny")
    async with open_services(settings) as services:
        backend = services.backend
        assert isinstance(backend, QdrantEmbeddedBackend)
        ready, _ = await services.readiness()
        assert ready
        answer = await services.dispatcher.call(
            "search", {"query": "boiler E1234"}, Caller(token_name="prewarm-test")
        )
        assert answer.structured_content is not None and answer.structured_content["ok"]
        with trio.fail_after(30):
            await backend.prewarm_done.wait()
        if budget_mib:
            expected = sum(p.stat().st_size for p in backend.cold_files())
            assert backend.last_prewarm is not None
            assert backend.last_prewarm.bytes_read == expected > 0
        else:
            assert backend.last_prewarm is None
