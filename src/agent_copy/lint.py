"""Lint agent-facing copy for what a schema cannot catch: hidden instructions.

Tool descriptions are read by a model, so anything a human reviewer would not see —
zero-width or bidi characters, markup tags a model treats as authority
(``<IMPORTANT>``, ``<system>``), long whitespace runs that hide text off-screen — is
refused, as are duplicate or malformed names. Each finding names the field and why.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from retrieval_mcp.agent_copy.model import CopyConfig

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
TAG = re.compile(r"<\s*/?\s*[A-Za-z!][^<>]{0,80}>")
WHITESPACE_RUN = re.compile(r"[ \t\u00a0\u2000-\u200a\u3000]{8,}|\n{4,}")
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]")
LIMITS = {"policy": 8000, "description": 2000, "title": 200, "param": 1000}


def _text_findings(field: str, text: str, limit: int) -> Iterator[str]:
    if len(text) > limit:
        yield f"{field}: {len(text)} characters, more than {limit}"
    if INVISIBLE.search(text):
        yield f"{field}: contains zero-width or bidi control characters"
    for ch in text:
        if ch not in "\n\t" and unicodedata.category(ch) in {"Cc", "Cf", "Co", "Cn"}:
            yield f"{field}: contains a non-printable character U+{ord(ch):04X}"
            break
    tag = TAG.search(text)
    if tag:
        yield f"{field}: contains a markup tag {tag.group(0)!r} (hidden-instruction pattern)"
    if WHITESPACE_RUN.search(text):
        yield f"{field}: contains a long run of whitespace (can hide text)"


def lint_copy(copy: CopyConfig) -> list[str]:
    """Every problem found; an empty list means the copy may be served."""
    findings = list(
        _text_findings("policy.instructions", copy.policy.instructions, LIMITS["policy"])
    )
    seen: dict[str, str] = {}
    for key, tool in copy.tools.items():
        if not NAME.match(tool.name):
            findings.append(f"tools.{key}.name: {tool.name!r} must match {NAME.pattern}")
        if tool.name in seen:
            findings.append(
                f"tools.{key}.name: {tool.name!r} is also the name of tools.{seen[tool.name]}"
            )
        seen[tool.name] = key
        findings += _text_findings(f"tools.{key}.title", tool.title, LIMITS["title"])
        findings += _text_findings(
            f"tools.{key}.description", tool.description, LIMITS["description"]
        )
        for name, param in tool.params.items():
            findings += _text_findings(
                f"tools.{key}.params.{name}.description", param.description, LIMITS["param"]
            )
    return findings
