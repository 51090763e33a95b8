"""Each tool's ``outputSchema``: the envelope, with that tool's ``data``, as JSON Schema.

Generated from the ``TypedDict`` types the tools and the envelope are built with
(``tools/result_types.py``, ``envelope.py``), so what a tool returns and what it
publishes are one definition. A result is either ``Success`` (``ok: true``, the tool's
``data``, ``error: null``) or ``Failure`` (``ok: false``, ``data: null``, an ``error``):
both validate, so a client that checks every result (the SDK's checks successes) never
sees an envelope its schema does not describe.

Built once per tool key and cached: ``tools/list`` and a reload cost nothing extra.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from pydantic import TypeAdapter

from retrieval_mcp.envelope import Failure, Success
from retrieval_mcp.tools.result_types import TOOL_DATA

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _drop_generated_titles(node: Any) -> Any:
    """pydantic titles every property after its name ("Chunk Ids"); they add bytes to
    every ``tools/list`` and say nothing the name does not."""
    if isinstance(node, dict):
        properties = node.get("properties")
        out = {k: _drop_generated_titles(v) for k, v in node.items()}
        if isinstance(properties, dict):
            out["properties"] = {
                name: {k: v for k, v in _drop_generated_titles(prop).items() if k != "title"}
                for name, prop in properties.items()
            }
        return out
    if isinstance(node, list):
        return [_drop_generated_titles(item) for item in node]
    return node


@functools.cache
def _schema(key: str) -> dict[str, Any]:
    data_type = TOOL_DATA[key]
    envelope: Any = Success[data_type] | Failure  # type: ignore[valid-type]
    adapter: TypeAdapter[Any] = TypeAdapter(envelope)
    generated = adapter.json_schema(ref_template="#/$defs/{model}")
    schema: dict[str, Any] = {
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "anyOf": generated["anyOf"],
        "$defs": generated.get("$defs", {}),
    }
    cleaned: dict[str, Any] = _drop_generated_titles(schema)
    return cleaned


def output_schema(key: str) -> dict[str, Any]:
    """The ``outputSchema`` of the tool whose handler key is ``key`` (a fresh copy)."""
    return copy.deepcopy(_schema(key))
