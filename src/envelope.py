"""One response envelope for every tool result, success or failure.

``structured_content`` of every ``tools/call`` result is an ``Envelope``; the text
content is a human/agent-readable rendering of the same data. Failures set
``ok=false`` and ``is_error=true`` and carry ``error.code``/``remedy``, never a
traceback.
"""

from __future__ import annotations

import secrets
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from retrieval_mcp.errors import RetrievalMCPError


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorBody(_Model):
    code: str
    message: str
    remedy: str
    retry_after_s: float | None = None


class DroppedLeg(_Model):
    leg: str
    reason: str


class LegsMeta(_Model):
    used: list[str] = Field(default_factory=list)
    dropped: list[DroppedLeg] = Field(default_factory=list)


class SkippedStep(_Model):
    step: str
    reason: str


class Meta(_Model):
    request_id: str
    took_ms: float
    steps_run: list[str] = Field(default_factory=list)
    steps_skipped: list[SkippedStep] = Field(default_factory=list)
    legs: LegsMeta = Field(default_factory=LegsMeta)
    degraded: bool = False


class Envelope(_Model):
    ok: bool
    data: Any = None
    error: ErrorBody | None = None
    meta: Meta


def new_request_id() -> str:
    return secrets.token_hex(8)


def success(data: Any, text: str, meta: Meta) -> types.CallToolResult:
    envelope = Envelope(ok=True, data=data, meta=meta)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=envelope.model_dump(mode="json"),
        is_error=False,
    )


def failure(error: RetrievalMCPError, meta: Meta) -> types.CallToolResult:
    body = ErrorBody(
        code=error.code,
        message=error.message,
        remedy=error.remedy,
        retry_after_s=getattr(error, "retry_after_s", None),
    )
    envelope = Envelope(ok=False, error=body, meta=meta)
    text = f"Error [{body.code}]: {body.message}\nRemedy: {body.remedy}"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=envelope.model_dump(mode="json"),
        is_error=True,
    )
