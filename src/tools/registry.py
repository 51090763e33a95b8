"""The tool registry is data: built at start-up from copy + capabilities, swapped whole.

``RegistryHolder.current`` is read once per MCP request, so a reload (SIGHUP, in the
copy-config issue) replaces the registry atomically between requests: a request
never sees half of an old registry and half of a new one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import mcp_types as types

from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.settings import SearchSettings
from retrieval_mcp.tools.copy_config import CopyConfig, copy_variables, render


@attrs.frozen
class ToolOutput:
    """What a handler returns; the dispatcher wraps it in the envelope."""

    data: Any
    text: str
    steps_run: list[str] = attrs.field(factory=list)
    legs_used: list[str] = attrs.field(factory=list)
    legs_dropped: list[tuple[str, str]] = attrs.field(factory=list)


ToolHandler = Callable[[Mapping[str, Any]], Awaitable[ToolOutput]]


@attrs.frozen
class ToolSpec:
    key: str  # the handler it runs: stable, never shown to agents
    name: str  # what agents call it: operator copy
    title: str
    description: str
    input_schema: Mapping[str, Any]

    def to_wire(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=dict(self.input_schema),
        )


@attrs.frozen
class ToolRegistry:
    instructions: str
    tools: tuple[ToolSpec, ...]

    def by_name(self, name: str) -> ToolSpec | None:
        for spec in self.tools:
            if spec.name == name:
                return spec
        return None

    def list_result(self) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[spec.to_wire() for spec in self.tools])


class RegistryHolder:
    """Owns the current registry; ``swap`` replaces it in one assignment."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.current = registry

    def swap(self, registry: ToolRegistry) -> None:
        self.current = registry


def search_input_schema(
    copy: CopyConfig,
    variables: Mapping[str, str],
    capabilities: frozenset[Capability],
    settings: SearchSettings,
) -> dict[str, Any]:
    params = copy.tools["search"].params

    def doc(name: str) -> str:
        return render(params[name].description, variables) if name in params else ""

    scalar = {"type": ["string", "integer", "boolean"]}
    properties: dict[str, Any] = {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": settings.max_query_chars,
            "description": doc("query"),
        },
        "top_k": {
            "type": "integer",
            "minimum": 1,
            "maximum": settings.max_top_k,
            "default": settings.default_top_k,
            "description": doc("top_k"),
        },
        "sources": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "maxItems": 32,
            "description": doc("sources"),
        },
    }
    if Capability.FILTER in capabilities:
        properties["filter"] = {
            "type": "object",
            "additionalProperties": {
                "anyOf": [
                    scalar,
                    {"type": "array", "items": scalar, "minItems": 1, "maxItems": 32},
                ]
            },
            "maxProperties": 16,
            "description": doc("filter"),
        }
    return {
        "type": "object",
        "properties": properties,
        "required": ["query"],
        "additionalProperties": False,
    }


def build_registry(
    copy: CopyConfig, capabilities: frozenset[Capability], settings: SearchSettings
) -> ToolRegistry:
    variables = copy_variables(
        capabilities, default_top_k=settings.default_top_k, max_top_k=settings.max_top_k
    )
    search_copy = copy.tools["search"]
    search = ToolSpec(
        key="search",
        name=search_copy.name,
        title=search_copy.title,
        description=render(search_copy.description, variables),
        input_schema=search_input_schema(copy, variables, capabilities, settings),
    )
    return ToolRegistry(instructions=render(copy.policy.instructions, variables), tools=(search,))
