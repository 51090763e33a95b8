"""One response envelope for every tool result, success or failure.

``structured_content`` of every ``tools/call`` result is an envelope; the text content
is a human/agent-readable rendering of the same data. Failures set ``ok=false`` and
``is_error=true`` and carry ``error.code``/``remedy``, never a traceback.

The envelope is built as plain dicts through these ``TypedDict`` types (checked by
mypy, free at run time); ``mcp_surface/output_schemas.py`` publishes the same types as
each tool's ``outputSchema``, with the tool's ``data`` type in ``Success``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Generic, Literal, NotRequired, TypeVar

import mcp_types as types
from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from retrieval_mcp.errors import RetrievalMCPError

D = TypeVar("D")

_CLOSED = ConfigDict(extra="forbid")


@with_config(_CLOSED)
class ErrorBody(TypedDict):
    code: str
    message: str
    remedy: str
    retry_after_s: float | None


@with_config(_CLOSED)
class DroppedLeg(TypedDict):
    leg: str
    reason: str  # "unsupported", "timeout", "actor_restarted", "error:<code>"
    detail: NotRequired[str]  # why, when the leg is unavailable (e.g. its model is absent)
    remedy: NotRequired[str]  # the one-line fix, likewise


@with_config(_CLOSED)
class LegsMeta(TypedDict):
    used: list[str]
    dropped: list[DroppedLeg]


@with_config(_CLOSED)
class SkippedStep(TypedDict):
    step: str
    reason: str


@with_config(_CLOSED)
class Meta(TypedDict):
    request_id: str
    took_ms: float
    steps_run: list[str]
    steps_skipped: list[SkippedStep]
    legs: LegsMeta
    degraded: bool


@with_config(_CLOSED)
class Success(TypedDict, Generic[D]):
    ok: Literal[True]
    data: D
    error: None
    meta: Meta


@with_config(_CLOSED)
class Failure(TypedDict):
    ok: Literal[False]
    data: None
    error: ErrorBody
    meta: Meta


def new_request_id() -> str:
    return secrets.token_hex(8)


def make_meta(
    request_id: str,
    took_ms: float,
    *,
    steps_run: Sequence[str] = (),
    steps_skipped: Sequence[SkippedStep] = (),
    used: Sequence[str] = (),
    dropped: Sequence[DroppedLeg] = (),
) -> Meta:
    return {
        "request_id": request_id,
        "took_ms": took_ms,
        "steps_run": list(steps_run),
        "steps_skipped": list(steps_skipped),
        "legs": {"used": list(used), "dropped": list(dropped)},
        "degraded": bool(dropped or steps_skipped),
    }


def success(
    data: Mapping[str, object],
    text: str,
    meta: Meta,
    links: Sequence[types.ResourceLink] = (),
) -> types.CallToolResult:
    envelope: Success[Mapping[str, object]] = {
        "ok": True,
        "data": data,
        "error": None,
        "meta": meta,
    }
    # model_construct: every part is already a validated wire object or our own typed
    # dict; re-validating the content union costs ~5x the rest of the envelope.
    return types.CallToolResult.model_construct(
        content=[types.TextContent(type="text", text=text), *links],
        structured_content=dict(envelope),
        is_error=False,
    )


def failure(error: RetrievalMCPError, meta: Meta) -> types.CallToolResult:
    retry_after = getattr(error, "retry_after_s", None)
    body: ErrorBody = {
        "code": error.code,
        "message": error.message,
        "remedy": error.remedy,
        "retry_after_s": float(retry_after) if retry_after is not None else None,
    }
    envelope: Failure = {"ok": False, "data": None, "error": body, "meta": meta}
    text = f"Error [{body['code']}]: {body['message']}\nRemedy: {body['remedy']}"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=dict(envelope),
        is_error=True,
    )
