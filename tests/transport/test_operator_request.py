"""The operator channel's request parser: any body is a request or a one-line reason."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.transport.operator_channel import IngestRequest, parse_request

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)


@given(st.binary(max_size=2000))
def test_any_bytes_parse_or_give_a_reason(body: bytes) -> None:
    result = parse_request(body)
    assert isinstance(result, IngestRequest | str)
    if isinstance(result, str):
        assert result and "\n" not in result


@given(
    st.dictionaries(st.sampled_from(["path", "source", "prune", "columns", "other"]), JSON_VALUES)
)
def test_any_json_object_parses_or_gives_a_reason(fields: dict[str, object]) -> None:
    result = parse_request(json.dumps(fields).encode())
    assert isinstance(result, IngestRequest | str)


def test_columns_are_validated_and_carried() -> None:
    base = {"path": "/data/rows.csv", "source": "rows"}
    bad = parse_request(json.dumps({**base, "columns": {"text": ""}}).encode())
    assert isinstance(bad, str) and bad.startswith("columns.text")
    unknown = parse_request(json.dumps({**base, "columns": {"body": "x"}}).encode())
    assert isinstance(unknown, str) and "columns" in unknown
    wrong_type = parse_request(json.dumps({**base, "columns": "text=body"}).encode())
    assert isinstance(wrong_type, str)
    good = parse_request(
        json.dumps({**base, "columns": {"text": "body", "metadata": ["lang"]}}).encode()
    )
    assert isinstance(good, IngestRequest)
    assert good.columns is not None and good.columns.text == "body"
    assert good.columns.metadata == ("lang",)
