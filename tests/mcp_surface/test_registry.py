"""The registry is data tailored to the backend's declaration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from retrieval_mcp.agent_copy.model import load_shipped_copy, render
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.mcp_surface.registry import RegistryHolder, ToolRegistry, build_registry
from retrieval_mcp.settings import Settings, load_settings

HYBRID = frozenset({Capability.DENSE, Capability.BM25, Capability.FILTER, Capability.NEIGHBORS})
DENSE_ONLY = frozenset({Capability.DENSE})
KEYWORD_ONLY = frozenset({Capability.BM25, Capability.FILTER})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path)


def registry(caps: frozenset[Capability], settings: Settings) -> ToolRegistry:
    return build_registry(load_shipped_copy(), caps, settings)


def schema(reg: ToolRegistry, name: str) -> dict[str, Any]:
    spec = reg.by_name(name)
    assert spec is not None
    return dict(spec.input_schema)


def test_hybrid_copy_offers_the_whole_ladder(settings: Settings) -> None:
    reg = registry(HYBRID, settings)
    assert [t.name for t in reg.tools] == [
        "search",
        "expand_neighbors",
        "more_like_this",
        "get_context",
        "list_sources",
        "index_status",
    ]
    search = reg.by_name("search")
    assert search is not None and "hybrid (semantic + keyword)" in search.description
    assert "error codes" in reg.instructions and "get_context" in reg.instructions
    assert "filter" in schema(reg, "search")["properties"]
    for spec in reg.tools:
        assert "{" not in spec.description  # every placeholder filled
        assert spec.input_schema["additionalProperties"] is False
        for prop in spec.input_schema["properties"].values():
            assert prop["description"], (spec.name, prop)


def test_dense_only_copy_says_semantic_and_drops_what_is_missing(settings: Settings) -> None:
    reg = registry(DENSE_ONLY, settings)
    search = reg.by_name("search")
    assert search is not None
    assert "semantic retrieval" in search.description and "hybrid" not in search.description
    assert "natural question" in reg.instructions
    assert "filter" not in schema(reg, "search")["properties"]
    assert "filter" not in schema(reg, "get_context")["properties"]
    assert reg.by_name("expand_neighbors") is None  # no neighbour support declared


def test_keyword_only_copy_warns_about_synonyms(settings: Settings) -> None:
    search = registry(KEYWORD_ONLY, settings).by_name("search")
    assert search is not None
    assert "keyword retrieval" in search.description and "synonyms" in search.description


def test_schema_bounds_follow_settings(tmp_path: Path) -> None:
    settings = load_settings(
        state_dir=tmp_path,
        overrides={
            "search": {"default_top_k": 5, "max_top_k": 20},
            "pipeline": {"pack": {"max_budget_tokens": 4000}},
        },
    )
    reg = registry(HYBRID, settings)
    top_k = schema(reg, "search")["properties"]["top_k"]
    assert (top_k["default"], top_k["maximum"]) == (5, 20)
    assert "1 to 20, default 5" in top_k["description"]
    budget = schema(reg, "get_context")["properties"]["budget_tokens"]
    assert budget["maximum"] == 4000 and "4000" in budget["description"]


def test_holder_swaps_whole_registries(settings: Settings) -> None:
    first, second = registry(HYBRID, settings), registry(DENSE_ONLY, settings)
    holder = RegistryHolder(first)
    holder.swap(second)
    assert holder.current is second
    assert "expand_neighbors" not in [t.name for t in holder.current.list_result().tools]


def test_render_rejects_unknown_placeholders_and_folds_whitespace() -> None:
    assert render("a\n  b\n\n c {x}", {"x": "y"}) == "a b\n\nc y"
    with pytest.raises(ConfigError, match="placeholder"):
        render("{nope}", {})


def test_config_render_shows_annotations_and_output_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from retrieval_mcp.cli.main import main

    copy_dir = tmp_path / "copy"
    copy_dir.mkdir(mode=0o755)
    (copy_dir / "copy.toml").write_text("[tools.search.annotations]\nopen_world_hint = true\n")
    (copy_dir / "copy.toml").chmod(0o644)
    assert main(["config", "render", str(copy_dir), "--state-dir", str(tmp_path / "s")]) == 0
    rendered = json.loads(capsys.readouterr().out)
    tools = {tool["name"]: tool for tool in rendered["tools"]}
    assert tools["search"]["annotations"] == {
        "title": "Search documents",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert tools["list_sources"]["annotations"]["openWorldHint"] is False
    for tool in tools.values():
        schema = tool["outputSchema"]
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["type"] == "object" and len(schema["anyOf"]) == 2
