"""What a tool handler returns; the dispatcher wraps it in the envelope."""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class ToolOutput:
    """What a handler returns; the dispatcher wraps it in the envelope."""

    data: Mapping[str, object]  # one of result_types.TOOL_DATA
    text: str
    steps_run: list[str] = attrs.field(factory=list)
    legs_used: list[str] = attrs.field(factory=list)
    legs_dropped: list[tuple[str, str]] = attrs.field(factory=list)
    steps_skipped: list[tuple[str, str]] = attrs.field(factory=list)
