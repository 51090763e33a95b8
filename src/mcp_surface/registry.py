"""The tool registry is data: built at start-up from copy + capabilities, swapped whole.

``RegistryHolder.current`` is read once per MCP request, so a reload (SIGHUP, in the
copy-config issue) replaces the registry atomically between requests: a request
never sees half of an old registry and half of a new one.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import mcp_types as types

from retrieval_mcp.agent_copy.model import AnnotationsCopy, CopyConfig, copy_variables, render
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.mcp_surface.output_schemas import output_schema
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.neighbors_tool import MAX_WINDOW
from retrieval_mcp.tools.tool_output import ToolOutput
from retrieval_mcp.transport.caller import Caller

#: A tool: its arguments and the authenticated caller (whose scope it must honour).
ToolHandler = Callable[[Mapping[str, Any], Caller], Awaitable[ToolOutput]]


@attrs.frozen
class ToolSpec:
    key: str  # the handler it runs: stable, never shown to agents
    name: str  # what agents call it: operator copy
    title: str
    description: str
    input_schema: Mapping[str, Any]
    annotations: AnnotationsCopy = attrs.field(factory=AnnotationsCopy)
    output_schema: Mapping[str, Any] | None = None

    def to_wire(self) -> types.Tool:
        hints = self.annotations
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=dict(self.input_schema),
            output_schema=dict(self.output_schema) if self.output_schema is not None else None,
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=hints.read_only_hint,
                destructive_hint=hints.destructive_hint,
                idempotent_hint=hints.idempotent_hint,
                open_world_hint=hints.open_world_hint,
            ),
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
        """``tools/list``: always in ladder order (the order of ``tools``). Built once per
        registry: the wire objects are immutable data, shared by every request."""
        return self._listing

    @functools.cached_property
    def _listing(self) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[spec.to_wire() for spec in self.tools])


def registry_hash(registry: ToolRegistry) -> str:
    """A short, stable digest of exactly what agents see (tools/list + instructions)."""
    wire = [spec.to_wire().model_dump(mode="json", exclude_none=True) for spec in registry.tools]
    body = json.dumps({"tools": wire, "instructions": registry.instructions}, sort_keys=True)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def _wording(spec: ToolSpec) -> tuple[object, ...]:
    return (spec.description, spec.title, spec.input_schema, spec.annotations, spec.output_schema)


def registry_diff(old: ToolRegistry, new: ToolRegistry) -> dict[str, Any]:
    """What changed for agents: tools added/removed/renamed/reworded, policy changed."""
    old_by_key = {spec.key: spec for spec in old.tools}
    new_by_key = {spec.key: spec for spec in new.tools}
    renamed = {
        old_by_key[k].name: new_by_key[k].name
        for k in old_by_key.keys() & new_by_key.keys()
        if old_by_key[k].name != new_by_key[k].name
    }
    changed = sorted(
        new_by_key[k].name
        for k in old_by_key.keys() & new_by_key.keys()
        if _wording(old_by_key[k]) != _wording(new_by_key[k])
    )
    return {
        "added": sorted(new_by_key[k].name for k in new_by_key.keys() - old_by_key.keys()),
        "removed": sorted(old_by_key[k].name for k in old_by_key.keys() - new_by_key.keys()),
        "renamed": renamed,
        "reworded": changed,
        "instructions_changed": old.instructions != new.instructions,
    }


class RegistryHolder:
    """Owns the current registry; ``swap`` replaces it in one assignment."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.current = registry

    def swap(self, registry: ToolRegistry) -> None:
        self.current = registry


class _SchemaBuilder:
    """Builds one tool's JSON Schema with parameter docs taken from the copy."""

    def __init__(self, copy: CopyConfig, key: str, variables: Mapping[str, str]) -> None:
        self._params = copy.tools[key].params
        self._variables = variables
        self.properties: dict[str, Any] = {}
        self.required: list[str] = []

    def add(self, name: str, schema: dict[str, Any], *, required: bool = False) -> None:
        param = self._params.get(name)
        if param is not None:
            schema = {**schema, "description": render(param.description, self._variables)}
        self.properties[name] = schema
        if required:
            self.required.append(name)

    def build(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = self.required
        return schema


_SCALAR = {"type": ["string", "integer", "boolean"]}
_FILTER = {
    "type": "object",
    "additionalProperties": {
        "anyOf": [
            _SCALAR,
            {"type": "array", "items": _SCALAR, "minItems": 1, "maxItems": 32},
        ]
    },
    "maxProperties": 16,
}
_SOURCES = {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 32}
_CHUNK_ID = {"type": "string", "minLength": 1, "maxLength": 64}


def _scope(builder: _SchemaBuilder, capabilities: frozenset[Capability]) -> None:
    builder.add("sources", dict(_SOURCES))
    if Capability.FILTER in capabilities:
        builder.add("filter", dict(_FILTER))


def _top_k(settings: Settings) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": settings.search.max_top_k,
        "default": settings.search.default_top_k,
    }


def _schemas(
    copy: CopyConfig,
    variables: Mapping[str, str],
    capabilities: frozenset[Capability],
    settings: Settings,
) -> dict[str, dict[str, Any]]:
    query = {"type": "string", "minLength": 1, "maxLength": settings.search.max_query_chars}
    out: dict[str, dict[str, Any]] = {}

    b = _SchemaBuilder(copy, "search", variables)
    b.add("query", dict(query), required=True)
    b.add("top_k", _top_k(settings))
    b.add("collapse", {"type": "boolean", "default": True})
    _scope(b, capabilities)
    out["search"] = b.build()

    b = _SchemaBuilder(copy, "expand_neighbors", variables)
    b.add("chunk_id", dict(_CHUNK_ID), required=True)
    for side in ("before", "after"):
        b.add(side, {"type": "integer", "minimum": 0, "maximum": MAX_WINDOW, "default": 1})
    out["expand_neighbors"] = b.build()

    b = _SchemaBuilder(copy, "more_like_this", variables)
    b.add("chunk_id", dict(_CHUNK_ID), required=True)
    b.add("top_k", _top_k(settings))
    _scope(b, capabilities)
    out["more_like_this"] = b.build()

    pack = settings.pipeline.pack
    b = _SchemaBuilder(copy, "get_context", variables)
    b.add("query", dict(query))
    b.add("ids", {"type": "array", "items": dict(_CHUNK_ID), "minItems": 1, "maxItems": 50})
    b.add("top_k", _top_k(settings))
    b.add(
        "budget_tokens",
        {
            "type": "integer",
            "minimum": 16,
            "maximum": pack.max_budget_tokens,
            "default": pack.default_budget_tokens,
        },
    )
    b.add("include_flagged", {"type": "boolean", "default": False})
    _scope(b, capabilities)
    out["get_context"] = b.build()

    out["list_sources"] = _SchemaBuilder(copy, "list_sources", variables).build()
    out["index_status"] = _SchemaBuilder(copy, "index_status", variables).build()
    return out


#: Tools in ladder order, with the capability each one needs (None: always offered).
LADDER: tuple[tuple[str, Capability | None], ...] = (
    ("search", None),
    ("expand_neighbors", Capability.NEIGHBORS),
    ("more_like_this", None),
    ("get_context", None),
    ("list_sources", None),
    ("index_status", None),
)


def build_registry(
    copy: CopyConfig, capabilities: frozenset[Capability], settings: Settings
) -> ToolRegistry:
    variables = copy_variables(capabilities, settings, copy)
    schemas = _schemas(copy, variables, capabilities, settings)
    tools = []
    for key, needs in LADDER:
        if needs is not None and needs not in capabilities:
            continue
        tool_copy = copy.tools[key]
        tools.append(
            ToolSpec(
                key=key,
                name=tool_copy.name,
                title=tool_copy.title,
                description=render(tool_copy.description, variables),
                input_schema=schemas[key],
                annotations=tool_copy.annotations,
                output_schema=output_schema(key),
            )
        )
    return ToolRegistry(
        instructions=render(copy.policy.instructions, variables), tools=tuple(tools)
    )
