"""Each tool's ``outputSchema``: the envelope, with that tool's ``data``, as JSON Schema.

Generated from the ``TypedDict`` types the tools and the envelope are built with
(``tools/result_types.py``, ``envelope.py``), so what a tool returns and what it
publishes are one definition. A result is either ``Success`` (``ok: true``, the tool's
``data``, ``error: null``) or ``Failure`` (``ok: false``, ``data: null``, an ``error``):
both validate, so a client that checks every result (the SDK's checks successes) never
sees an envelope its schema does not describe.

Published flat: every ``$ref`` is inlined and a choice between bare types
(``anyOf: [{type: string}, {type: null}]``) is one type list. Both say the same as
pydantic's output; what differs is the cost to a client that validates every result
(the Python SDK's ``jsonschema`` walks a ``$ref`` and an ``anyOf`` branch as extra
steps: the flat form costs it 0.63× on a ``search`` result, bench/RESULTS.md), and clients that
resolve no ``$ref`` read the whole shape.

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


def _inline_refs(node: Any, defs: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """``node`` with each ``{"$ref": "#/$defs/X"}`` replaced by ``X`` itself (sibling
    keywords kept). The tools' data types hold no cycle; one would be a bug here."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen:
                raise ValueError(f"recursive output type {name!r} cannot be inlined")
            # Its title is pydantic's class name: no client needs it once inlined.
            body = {k: v for k, v in defs[name].items() if k != "title"}
            target = _inline_refs(body, defs, (*seen, name))
            siblings = {k: _inline_refs(v, defs, seen) for k, v in node.items() if k != "$ref"}
            return {**target, **siblings}
        return {k: _inline_refs(v, defs, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(item, defs, seen) for item in node]
    return node


def _type_lists(node: Any) -> Any:
    """``anyOf`` over branches that each say only ``type`` becomes one ``type`` list."""
    if isinstance(node, dict):
        out = {k: _type_lists(v) for k, v in node.items()}
        branches = out.get("anyOf")
        if (
            isinstance(branches, list)
            and "type" not in out
            and all(isinstance(b, dict) and set(b) == {"type"} for b in branches)
        ):
            names: list[str] = []
            for branch in branches:
                kind = branch["type"]
                names.extend(kind if isinstance(kind, list) else [kind])
            del out["anyOf"]
            out["type"] = list(dict.fromkeys(names))
        return out
    if isinstance(node, list):
        return [_type_lists(item) for item in node]
    return node


@functools.cache
def _schema(key: str) -> dict[str, Any]:
    data_type = TOOL_DATA[key]
    envelope: Any = Success[data_type] | Failure  # type: ignore[valid-type]
    adapter: TypeAdapter[Any] = TypeAdapter(envelope)
    generated = adapter.json_schema(ref_template="#/$defs/{model}")
    defs = generated.get("$defs", {})
    schema: dict[str, Any] = {
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "anyOf": _type_lists(_inline_refs(generated["anyOf"], defs)),
    }
    cleaned: dict[str, Any] = _drop_generated_titles(schema)
    return cleaned


def output_schema(key: str) -> dict[str, Any]:
    """The ``outputSchema`` of the tool whose handler key is ``key`` (a fresh copy)."""
    return copy.deepcopy(_schema(key))
