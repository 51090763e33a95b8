"""How wide a dense search looks: ``hnsw_ef`` widened with the largest graph (ADR 0054)."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_mcp.backends.qdrant_embedded import (
    MAX_HNSW_EF,
    QdrantEmbeddedBackend,
    effective_hnsw_ef,
    segment_cap_points,
)
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.settings import QdrantEmbeddedSettings, load_settings


@pytest.mark.parametrize(
    ("points", "cap", "expected"),
    [
        (0, 500_000, 128),
        (10_000, 500_000, 128),  # small stores search as before
        (200_000, 500_000, 128),
        (300_000, 500_000, 192),  # one 300k graph
        (1_000_000, 500_000, 320),  # 500k-point graphs: x2.5
        (1_000_000, 200_000, 128),  # stores built with 200k segments keep 128
        (1_000_000, None, 640),  # one graph of every point
        (10**9, None, MAX_HNSW_EF),
    ],
)
def test_effective_ef(points: int, cap: int | None, expected: int) -> None:
    assert effective_hnsw_ef(128, points, cap) == expected


def test_a_higher_configured_ef_is_never_lowered() -> None:
    assert effective_hnsw_ef(1000, 10, 500_000) == 1000
    assert effective_hnsw_ef(100, 200_001, None) == 101  # ceiling, not floor


async def test_the_cap_is_read_from_the_store(tmp_path: Path, encoder: MiniLMEncoder) -> None:
    backend = await QdrantEmbeddedBackend.open(
        tmp_path / "store", encoder, max_segment_points=5_000, hnsw_ef=64
    )
    try:
        assert segment_cap_points(tmp_path / "store" / "shard") == 5_000
        assert backend.hnsw_ef() == 64
        extra = (await backend.status()).extra
        assert (extra["hnsw_ef"], extra["segment_cap_points"]) == (64, 5_000)
    finally:
        await backend.aclose()
    # Reopened under another setting, the store keeps the cap it was created with.
    again = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder, max_segment_points=9_000)
    try:
        assert segment_cap_points(tmp_path / "store" / "shard") == 5_000
    finally:
        await again.aclose()


@pytest.mark.parametrize(
    "text", [None, "", "{", '{"optimizers": {}}', '{"optimizers": []}', b"\xff\xfe\x00binary"]
)
def test_an_unreadable_config_means_one_graph(tmp_path: Path, text: str | bytes | None) -> None:
    if isinstance(text, bytes):
        (tmp_path / "edge_config.json").write_bytes(text)
    elif text is not None:
        (tmp_path / "edge_config.json").write_text(text)
    assert segment_cap_points(tmp_path) is None


def test_default_segments_hold_500k_points(tmp_path: Path) -> None:
    assert QdrantEmbeddedSettings().max_segment_points == 500_000
    shipped = load_settings(state_dir=tmp_path).backend.qdrant_embedded  # config/server.toml
    assert (shipped.max_segment_points, shipped.hnsw_ef) == (500_000, 128)


@pytest.mark.parametrize("kib", [0, -5, 10**15])
def test_a_tampered_cap_stays_bounded(tmp_path: Path, kib: int) -> None:
    """An edited edge_config.json can neither lower ef below the setting nor lift it
    past MAX_HNSW_EF."""
    (tmp_path / "edge_config.json").write_text(f'{{"optimizers": {{"max_segment_size": {kib}}}}}')
    cap = segment_cap_points(tmp_path)
    assert cap is not None and cap >= 1
    assert 128 <= effective_hnsw_ef(128, 10**12, cap) <= MAX_HNSW_EF
