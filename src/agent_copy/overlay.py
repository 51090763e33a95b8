"""The shape of one operator copy file, checked before any code walks it.

An operator's ``copy.toml`` is parsed TOML: any key may hold a table, an array, a
string, a number, a boolean or a date. The merge below walks tools and parameters by
key, so a table where a string belongs (or a number where a table belongs) must be
refused *before* that walk, naming the file, the dotted field and the type expected —
otherwise it is a ``TypeError`` deep in a reload. The models here say what each file
may hold: every field optional (a field left out keeps the shipped default), strict
types (``5`` is not a tool name), unknown keys refused.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: At most this many problems are named in one refusal; the rest are counted.
MAX_PROBLEMS = 5


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ParamOverlay(_Shape):
    description: str | None = None


class AnnotationsOverlay(_Shape):
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolOverlay(_Shape):
    name: str | None = None
    title: str | None = None
    description: str | None = None
    params: dict[str, ParamOverlay] = Field(default_factory=dict)
    annotations: AnnotationsOverlay | None = None


class PolicyOverlay(_Shape):
    instructions: str | None = None


class CopyOverlay(_Shape):
    """One file: ``include`` (the main file only), ``policy`` and ``tools``."""

    include: list[str] = Field(default_factory=list)
    policy: PolicyOverlay = PolicyOverlay()
    tools: dict[str, ToolOverlay] = Field(default_factory=dict)

    def overrides(self) -> dict[str, Any]:
        """Only the fields the file sets, as plain dicts (safe to merge: shape checked)."""
        return self.model_dump(exclude_unset=True, exclude={"include"})


def toml_type(value: object) -> str:
    """What TOML calls the type of a parsed value (for messages an operator reads)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dt.datetime):
        return "a datetime"
    if isinstance(value, dt.date):
        return "a date"
    if isinstance(value, dt.time):
        return "a time"
    return type(value).__name__


_EXPECTED = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "list_type": "an array",
}


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def dotted(loc: Sequence[object]) -> str:
    """A TOML-style dotted path; odd keys (dots, spaces, control characters, very long)
    are quoted and cut, so a hostile key cannot forge or flood the message."""
    parts = []
    for part in loc:
        text = str(part)
        if isinstance(part, int) or _BARE_KEY.match(text):
            parts.append(text)
        else:
            shown = text if len(text) <= 40 else text[:40] + "…"
            parts.append(ascii(shown))
    return ".".join(parts) or "(top level)"


def _problem(error: Any) -> str:
    loc: Sequence[object] = error["loc"]
    field = dotted(loc)
    if error["type"] == "extra_forbidden":
        return f"{field}: unknown field"
    expected = _EXPECTED.get(error["type"])
    if loc and loc[0] == "include":
        expected = "a list of relative paths"
        return f"include must be {expected}, got {toml_type(error['input'])} at {field}"
    if expected is None:
        return f"{field}: {error['msg']}"
    return f"{field}: expected {expected}, got {toml_type(error['input'])}"


def describe_shape_errors(exc: ValidationError) -> str:
    """``field: expected X, got Y`` for the first few problems, and how many more."""
    errors = exc.errors(include_url=False)
    problems = [_problem(error) for error in errors[:MAX_PROBLEMS]]
    if len(errors) > MAX_PROBLEMS:
        problems.append(f"and {len(errors) - MAX_PROBLEMS} more")
    return "; ".join(problems)


def check_shape(data: dict[str, Any]) -> CopyOverlay:
    """The file's content as a ``CopyOverlay``; ValidationError when its shape is wrong."""
    return CopyOverlay.model_validate(data)
