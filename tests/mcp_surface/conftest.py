"""The surface tests share the hardening tests' two-source store (tiny + vault)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from retrieval_mcp.settings import Settings
from tests.hardening.hardened_server import build_two_source_store, with_store


@pytest.fixture(scope="session")
def surface_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_two_source_store(tmp_path_factory.mktemp("surface-store"))


@pytest.fixture
def surface_settings(
    make_settings: Callable[..., Settings], surface_store: Path
) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        return with_store(make_settings(**overrides), surface_store)

    return make
