"""Validate tool arguments at the edge and turn pydantic's errors into one clear message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from retrieval_mcp.errors import InvalidArgument

M = TypeVar("M", bound=BaseModel)


def parse_arguments(model: type[M], arguments: Mapping[str, Any] | None) -> M:
    try:
        return model.model_validate(dict(arguments or {}))
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False, include_input=False):
            where = ".".join(str(part) for part in err["loc"]) or "arguments"
            problems.append(f"{where}: {err['msg']}")
        allowed = ", ".join(model.model_fields)
        raise InvalidArgument(
            "invalid arguments: " + "; ".join(problems),
            remedy=f"Fix the named argument(s); this tool accepts: {allowed}.",
        ) from None
