"""The console script's entry (ADR 0053): ``serve`` starts reading the store first, and
nothing it cannot work out stops the command from reporting it itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_mcp.backends.page_prewarm import read_files, shard_load_files
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.launch import main, read_ahead_for
from tests.backends.test_qdrant_embedded import open_store


@pytest.fixture
async def state_dir(tmp_path: Path, encoder: MiniLMEncoder) -> Path:
    """A state dir holding a small embedded store, closed again."""
    backend: QdrantEmbeddedBackend = await open_store(tmp_path / "state" / "store", encoder)
    await backend.aclose()
    return tmp_path / "state"


async def test_serve_reads_the_files_load_reads(state_dir: Path) -> None:
    shard = state_dir / "store" / "shard"
    paths = shard_load_files(shard)
    parts = {p.relative_to(shard / "segments").parts[1] for p in paths}
    assert "vector_storage-dense" in parts  # a small store has no HNSW graph files yet
    assert all(
        p.startswith(("vector_storage-dense", "vector_index-dense", "id_tracker")) for p in parts
    )
    reader = read_ahead_for(["serve", "--state-dir", str(state_dir), "--port", "0"])
    assert reader is not None and reader.daemon
    reader.join(timeout=30)
    assert not reader.is_alive()


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["status"],
        ["ingest", "serve"],
        ["serve", "--config", "/nonexistent/config.toml"],  # the command reports it
    ],
)
async def test_nothing_to_read_ahead(argv: list[str]) -> None:
    assert read_ahead_for(argv) is None


async def test_no_store_yet_or_prewarm_off(tmp_path: Path, state_dir: Path) -> None:
    assert read_ahead_for(["serve", "--state-dir", str(tmp_path / "fresh")]) is None
    config = tmp_path / "server.toml"
    config.write_text("[backend.qdrant_embedded]\nprewarm_max_mib = 0\n")
    config.chmod(0o600)
    assert read_ahead_for(["serve", "--config", str(config), "--state-dir", str(state_dir)]) is None


def test_sync_reader_reads_every_byte_up_to_its_budget(tmp_path: Path) -> None:
    paths = []
    for i, size in enumerate([3000, 0, 2500]):
        paths.append(tmp_path / f"f{i}")
        paths[-1].write_bytes(b"x" * size)
    whole = read_files([*paths, tmp_path / "gone"], max_bytes=10**6, chunk_bytes=999)
    assert (whole.bytes_read, whole.files, whole.budget_spent) == (5500, 4, False)
    capped = read_files(paths, max_bytes=4000, chunk_bytes=999)
    assert (capped.bytes_read, capped.budget_spent) == (4000, True)


def test_other_commands_run_through_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "schema"]) == 0
    assert '"properties"' in capsys.readouterr().out


async def test_hostile_inputs_start_nothing(tmp_path: Path) -> None:
    """A binary or empty config file, or a state dir that is a file, leave the command to
    report the problem; the read-ahead neither raises nor starts."""
    binary = tmp_path / "binary.toml"
    binary.write_bytes(bytes(range(256)) * 64)
    binary.chmod(0o600)
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    empty.chmod(0o600)
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("x")
    assert read_ahead_for(["serve", "--config", str(binary)]) is None
    assert read_ahead_for(["serve", "--config", str(empty), "--state-dir", str(a_file)]) is None
    assert read_ahead_for(["serve", "--state-dir"]) is None  # the value is missing
