"""The published (flat) output schemas accept exactly what pydantic's schemas accept.

Instances are drawn from pydantic's own schema (with its ``$ref``s and ``anyOf``s), valid
first, then mutated at one node (a key dropped or added, a value of another type), so
both sides of every keyword are exercised; the two validators must agree on each.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from retrieval_mcp.envelope import Failure, Success
from retrieval_mcp.mcp_surface.output_schemas import output_schema
from retrieval_mcp.tools.result_types import TOOL_DATA

SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=8),
    "integer": st.integers(-5, 5),
    "number": st.floats(-5, 5, allow_nan=False),
    "boolean": st.booleans(),
    "null": st.none(),
}
ANY_VALUE = st.one_of(*SCALARS.values(), st.just([]), st.just({}))


def pydantic_schema(key: str) -> dict[str, Any]:
    envelope: Any = Success[TOOL_DATA[key]] | Failure  # type: ignore[valid-type]
    generated = TypeAdapter(envelope).json_schema(ref_template="#/$defs/{model}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **generated}


def draw_valid(data: st.DataObject, node: dict[str, Any], defs: dict[str, Any]) -> Any:
    if "$ref" in node:
        return draw_valid(data, defs[node["$ref"].rsplit("/", 1)[1]], defs)
    if "const" in node:
        return node["const"]
    if "anyOf" in node:
        return draw_valid(data, data.draw(st.sampled_from(node["anyOf"])), defs)
    kind = node.get("type")
    if kind == "object":
        out = {}
        required = set(node.get("required", ()))
        for name, prop in node.get("properties", {}).items():
            if name in required or data.draw(st.booleans()):
                out[name] = draw_valid(data, prop, defs)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and data.draw(st.booleans()):
            out[data.draw(st.text(min_size=1, max_size=4))] = draw_valid(data, extra, defs)
        return out
    if kind == "array":
        size = data.draw(st.integers(0, 2))
        return [draw_valid(data, node.get("items", {}), defs) for _ in range(size)]
    if kind in SCALARS:
        return data.draw(SCALARS[kind])
    return data.draw(ANY_VALUE)


def mutate(data: st.DataObject, value: Any) -> Any:
    """``value`` with one node changed, somewhere in the tree (or itself replaced)."""
    if isinstance(value, dict) and value and data.draw(st.integers(0, 3)):
        key = data.draw(st.sampled_from(sorted(value)))
        how = data.draw(st.sampled_from(["descend", "drop", "add"]))
        out = dict(value)
        if how == "descend":
            out[key] = mutate(data, value[key])
        elif how == "drop":
            del out[key]
        else:
            out[data.draw(st.text(min_size=1, max_size=4))] = data.draw(ANY_VALUE)
        return out
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [mutate(data, v) if i == index else v for i, v in enumerate(value)]
    return data.draw(ANY_VALUE)


@pytest.mark.parametrize("key", sorted(TOOL_DATA))
def test_published_schema_is_flat(key: str) -> None:
    schema = output_schema(key)
    text = repr(schema)
    assert "$ref" not in text and "$defs" not in text
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("key", sorted(TOOL_DATA))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_flat_schema_agrees_with_pydantic_on_valid_and_mutated_envelopes(
    key: str, data: st.DataObject
) -> None:
    original = pydantic_schema(key)
    flat = output_schema(key)
    instance = draw_valid(data, original, original.get("$defs", {}))
    before, after = Draft202012Validator(original), Draft202012Validator(flat)
    assert before.is_valid(instance), instance  # the generator draws valid envelopes
    assert after.is_valid(instance)
    mutated = mutate(data, instance)
    assert before.is_valid(mutated) == after.is_valid(mutated), mutated
