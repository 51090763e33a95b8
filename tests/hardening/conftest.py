"""Fixtures of the hardening tests: the two-source store, built once per session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from retrieval_mcp.settings import Settings
from tests.hardening.hardened_server import build_two_source_store, with_store


@pytest.fixture(scope="session")
def two_source_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_two_source_store(tmp_path_factory.mktemp("two-sources"))


@pytest.fixture
def hardened_settings(
    make_settings: Callable[..., Settings], two_source_store: Path
) -> Callable[..., Settings]:
    """Settings for a server over a copy of the two-source store (tiny + vault)."""

    def make(**overrides: Any) -> Settings:
        return with_store(make_settings(**overrides), two_source_store)

    return make
