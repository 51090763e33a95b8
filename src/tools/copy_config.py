"""Agent-facing copy: loaded from TOML, validated, rendered against capabilities.

The shipped defaults live in ``config/copy.toml``. Rendering fills a closed set of
placeholders from the backend's declaration, so the words match what the server can
actually do (hybrid vs semantic). The copy-config issue adds operator overrides,
the sandboxed loader and the linter on top of this model.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.neighbors_tool import MAX_WINDOW


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParamCopy(_Strict):
    description: str = Field(max_length=2000)


class ToolCopy(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    title: str = Field(max_length=200)
    description: str = Field(max_length=4000)
    params: dict[str, ParamCopy] = Field(default_factory=dict)


class PolicyCopy(_Strict):
    instructions: str = Field(max_length=8000)


class CopyConfig(_Strict):
    policy: PolicyCopy
    tools: dict[str, ToolCopy]


def load_shipped_copy() -> CopyConfig:
    text = resources.files("retrieval_mcp.defaults").joinpath("copy.toml").read_text("utf-8")
    try:
        return CopyConfig.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"shipped config/copy.toml is invalid: {exc}") from exc


def copy_variables(capabilities: frozenset[Capability], settings: Settings) -> dict[str, str]:
    keyword = Capability.BM25 in capabilities or Capability.SPARSE in capabilities
    dense = Capability.DENSE in capabilities or Capability.MULTIVECTOR in capabilities
    if keyword and dense:
        mode = "hybrid (semantic + keyword)"
        advice = (
            "Hybrid retrieval matches meaning and exact terms, so both natural "
            "questions and exact identifiers or error codes work."
        )
    elif dense:
        mode = "semantic"
        advice = (
            "Retrieval is semantic: phrase the query as a natural question or "
            "statement; exact identifiers may not match literally."
        )
    else:
        mode = "keyword"
        advice = (
            "Retrieval is keyword-based: use the distinctive terms you expect in "
            "the text; synonyms will not match."
        )
    pack = settings.pipeline.pack
    return {
        "search_mode": mode,
        "search_mode_advice": advice,
        "default_top_k": str(settings.search.default_top_k),
        "max_top_k": str(settings.search.max_top_k),
        "default_budget_tokens": str(pack.default_budget_tokens),
        "max_budget_tokens": str(pack.max_budget_tokens),
        "max_window": str(MAX_WINDOW),
    }


def render(text: str, variables: Mapping[str, str]) -> str:
    """Fill placeholders and normalise whitespace; unknown placeholders are errors."""
    try:
        filled = text.format_map(dict(variables))
    except (KeyError, ValueError, IndexError) as exc:
        raise ConfigError(f"copy uses an unknown or malformed placeholder: {exc}") from exc
    paragraphs = [" ".join(p.split()) for p in filled.strip().split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)
