"""Shared fixtures: real encoder, real embedded store, settings in a temp state dir."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.settings import Settings, load_settings

# Hypothesis's per-example deadline measures the machine's load, not the property:
# on a shared two-core CI box a slow example fails a correct test. Off everywhere.
hypothesis_settings.register_profile("shared-machine", deadline=None)
hypothesis_settings.load_profile("shared-machine")

TINY_CORPUS = {
    "boiler.md": (
        "# Boiler fault codes\n\n"
        "Error code E1234 means the boiler's pressure sensor reads below 0.5 bar. "
        "Refill the heating circuit to 1.5 bar and reset the boiler. If E1234 returns "
        "within a day, a leak in the radiators or the expansion vessel is likely."
    ),
    "wing.md": (
        "# Boundary layers on wings\n\n"
        "The boundary layer on an aircraft wing becomes turbulent downstream of the "
        "transition point. Laminar flow has lower skin friction, so designers shape "
        "the airfoil to delay transition and reduce drag at cruise."
    ),
    "bread.md": (
        "# Baking sourdough bread\n\n"
        "Sourdough rises with a starter of wild yeast and lactic acid bacteria. Feed the "
        "starter, mix flour, water and salt, let the dough ferment overnight, shape it "
        "and bake it in a hot Dutch oven for a crisp crust."
    ),
    "garden/tomatoes.txt": (
        "Growing tomatoes needs full sun, regular watering and support for the stems. "
        "Pinch out side shoots on cordon varieties and feed weekly with a potash-rich "
        "fertiliser once the first truss has set fruit."
    ),
}


@pytest.fixture(scope="session")
def encoder() -> MiniLMEncoder:
    return MiniLMEncoder()


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for name, text in TINY_CORPUS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short temp dir: Unix socket paths must stay under ~104 bytes."""
    path = Path(tempfile.mkdtemp(prefix="lrm-"))
    path.chmod(0o700)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def make_settings(short_dir: Path) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        base: dict[str, Any] = {
            "server": {"port": 0},
            "demo": {"ingest_on_first_start": False},
            "logging": {"level": "warning"},
        }
        for key, value in overrides.items():
            if isinstance(value, dict):
                base.setdefault(key, {}).update(value)
            else:
                base[key] = value
        return load_settings(state_dir=short_dir / "state", overrides=base)

    return make
