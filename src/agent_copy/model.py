"""Agent-facing copy: loaded from TOML, validated, rendered against capabilities.

The shipped defaults live in ``config/copy.toml``; operators override any field from
their own directory (``copy_loader.py``), and ``copy_lint.py`` refuses hidden
instructions. Rendering fills a closed set of placeholders from the backend's
declaration and the configured tool names, so the words match what the server can
actually do (hybrid vs semantic) and what its tools are called.
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, model_validator

from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.neighbors_tool import MAX_WINDOW


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParamCopy(_Strict):
    description: str = Field(max_length=2000)


class AnnotationsCopy(_Strict):
    """The MCP tool annotations clients show and act on (hints, not guarantees).

    The defaults describe the shipped tools: they only read the index, never change
    anything, give the same answer for the same arguments, and never reach outside
    the configured stores.
    """

    read_only_hint: StrictBool = True
    destructive_hint: StrictBool = False
    idempotent_hint: StrictBool = True
    open_world_hint: StrictBool = False

    @model_validator(mode="after")
    def _consistent(self) -> AnnotationsCopy:
        if self.read_only_hint and self.destructive_hint:
            raise ValueError(
                "destructive_hint = true contradicts read_only_hint = true: a tool that "
                "changes nothing cannot destroy anything; set one of them to false"
            )
        return self


class ToolCopy(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    title: str = Field(max_length=200)
    description: str = Field(max_length=4000)
    params: dict[str, ParamCopy] = Field(default_factory=dict)
    annotations: AnnotationsCopy = Field(default_factory=AnnotationsCopy)


class PolicyCopy(_Strict):
    instructions: str = Field(max_length=8000)


class CopyConfig(_Strict):
    policy: PolicyCopy
    tools: dict[str, ToolCopy]


def copy_json_schema() -> dict[str, Any]:
    """The published JSON Schema of a complete copy file (config/copy.schema.json)."""
    schema = CopyConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "latence-retrieval-mcp agent-facing copy"
    return schema


def load_shipped_copy() -> CopyConfig:
    text = resources.files("retrieval_mcp.defaults").joinpath("copy.toml").read_text("utf-8")
    try:
        return CopyConfig.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ConfigError(f"shipped config/copy.toml is invalid: {exc}") from exc


def copy_variables(
    capabilities: frozenset[Capability], settings: Settings, copy: CopyConfig | None = None
) -> dict[str, str]:
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
    names = {f"tool_{key}": tool.name for key, tool in (copy.tools if copy else {}).items()}
    expand_name = names.get("tool_expand_neighbors", "expand_neighbors")
    read_around = (
        f"`{expand_name}` reads the chunks around a hit. "
        if Capability.NEIGHBORS in capabilities
        else ""
    )
    return {
        **names,
        "read_around": read_around,
        "search_mode": mode,
        "search_mode_advice": advice,
        "default_top_k": str(settings.search.default_top_k),
        "max_top_k": str(settings.search.max_top_k),
        "default_budget_tokens": str(pack.default_budget_tokens),
        "max_budget_tokens": str(pack.max_budget_tokens),
        "max_window": str(MAX_WINDOW),
    }


_FORMATTER = string.Formatter()
_LIST_ITEM = re.compile(r"^(\d+[.)]|[-*])\s")


def render(text: str, variables: Mapping[str, str]) -> str:
    """Fill placeholders and fold wrapped lines; paragraphs and list items stay apart.

    Unknown placeholders are errors, so a typo in operator copy fails the load instead
    of reaching an agent as a literal ``{…}``.
    """
    try:
        fields = [
            field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            for _, field, spec, conversion in _FORMATTER.parse(text)
            if field is not None
        ]
    except ValueError as exc:  # an unmatched brace
        raise ConfigError(f"copy uses an unknown or malformed placeholder: {exc}") from None
    for field in fields:
        # A closed set, used whole: "{search_mode.__class__}" or "{x[0]}" would reach
        # into Python objects; "{x!r}" or "{x:>9}" change the text behind the linter.
        if field not in variables:
            shown = field if len(field) <= 40 else field[:40] + "…"
            raise ConfigError(
                f"copy uses an unknown or malformed placeholder: {{{shown}}}; "
                f"known: {', '.join(sorted(variables))}"
            )
    try:
        filled = text.format_map(dict(variables))
    except (KeyError, ValueError, IndexError, AttributeError) as exc:
        raise ConfigError(f"copy uses an unknown or malformed placeholder: {exc}") from exc
    paragraphs = []
    for block in filled.strip().split("\n\n"):
        lines: list[str] = []
        for raw in block.splitlines():
            line = " ".join(raw.split())
            if not line:
                continue
            if lines and not _LIST_ITEM.match(line):
                lines[-1] = f"{lines[-1]} {line}"
            else:
                lines.append(line)
        if lines:
            paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)
