"""The registry is data tailored to the backend's declaration."""

from __future__ import annotations

import pytest

from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import SearchSettings
from retrieval_mcp.tools.copy_config import load_shipped_copy, render
from retrieval_mcp.tools.registry import RegistryHolder, build_registry

HYBRID = frozenset({Capability.DENSE, Capability.BM25, Capability.FILTER})
DENSE_ONLY = frozenset({Capability.DENSE})
KEYWORD_ONLY = frozenset({Capability.BM25, Capability.FILTER})


def search_tool(caps: frozenset[Capability]) -> tuple[str, dict[str, object], str]:
    registry = build_registry(load_shipped_copy(), caps, SearchSettings())
    spec = registry.by_name("search")
    assert spec is not None
    return spec.description, dict(spec.input_schema), registry.instructions


def test_hybrid_copy_mentions_exact_identifiers_and_offers_filters() -> None:
    description, schema, instructions = search_tool(HYBRID)
    assert "hybrid (semantic + keyword)" in description
    assert "error codes" in instructions
    assert "filter" in schema["properties"]  # type: ignore[operator]
    assert "{" not in description and "{" not in instructions  # every placeholder filled


def test_dense_only_copy_says_semantic_and_drops_filters() -> None:
    description, schema, instructions = search_tool(DENSE_ONLY)
    assert "semantic retrieval" in description and "hybrid" not in description
    assert "natural question" in instructions
    assert "filter" not in schema["properties"]  # type: ignore[operator]


def test_keyword_only_copy_warns_about_synonyms() -> None:
    description, _, _ = search_tool(KEYWORD_ONLY)
    assert "keyword retrieval" in description and "synonyms" in description


def test_schema_bounds_follow_settings() -> None:
    registry = build_registry(
        load_shipped_copy(), HYBRID, SearchSettings(default_top_k=5, max_top_k=20)
    )
    spec = registry.by_name("search")
    assert spec is not None
    top_k = spec.input_schema["properties"]["top_k"]
    assert (top_k["default"], top_k["maximum"]) == (5, 20)
    assert "1 to 20, default 5" in top_k["description"]
    assert spec.input_schema["additionalProperties"] is False


def test_holder_swaps_whole_registries() -> None:
    first = build_registry(load_shipped_copy(), HYBRID, SearchSettings())
    second = build_registry(load_shipped_copy(), DENSE_ONLY, SearchSettings())
    holder = RegistryHolder(first)
    holder.swap(second)
    assert holder.current is second
    assert [t.name for t in holder.current.list_result().tools] == ["search"]


def test_render_rejects_unknown_placeholders_and_folds_whitespace() -> None:
    assert render("a\n  b\n\n c {x}", {"x": "y"}) == "a b\n\nc y"
    with pytest.raises(ConfigError, match="placeholder"):
        render("{nope}", {})
