"""Wrap retrieved text in untrusted-data markers on its way to an agent, and back.

The format is ``⟦untrusted⟧<sanitised text>⟦/untrusted⟧``, with nothing else added.
Why these brackets: keyboards do not produce them and prose almost never uses them, so
reserving them costs a document nothing readable (``sanitise`` maps them to ``[``
and ``]``); each is one code point that NFC and NFKC leave alone, so the guarantee
that stored text holds no marker is a character substitution, not a pattern to evade;
and the tag reads as what it is to a model or a person without a decoder.

Invariants (tested): ``unwrap(wrap(x)) == sanitise(x)`` for every string ``x``, and
``wrap(x)`` holds exactly two marker brackets of each kind, all in the outer pair.
"""

from __future__ import annotations

from retrieval_mcp.screening.characters import MARKER_CLOSE_CHAR, MARKER_OPEN_CHAR
from retrieval_mcp.screening.markers import CLOSE_MARKER, OPEN_MARKER
from retrieval_mcp.screening.sanitize import sanitise

__all__ = [
    "CLOSE_MARKER",
    "OPEN_MARKER",
    "is_wrapped",
    "strip_untrusted",
    "unwrap",
    "wrap",
    "wrap_sanitised",
]


def wrap(text: str) -> str:
    """Sanitise ``text`` and enclose it in the markers."""
    return f"{OPEN_MARKER}{sanitise(text)}{CLOSE_MARKER}"


def wrap_sanitised(text: str) -> str:
    """Enclose text that is already ``sanitise``d (stored text, or a slice of it).

    Skips the second sanitise on the hot path, but keeps the structural guarantee: if
    a marker character is present after all, the text is sanitised like ``wrap`` does.
    """
    if MARKER_OPEN_CHAR in text or MARKER_CLOSE_CHAR in text:
        return wrap(text)
    return f"{OPEN_MARKER}{text}{CLOSE_MARKER}"


def is_wrapped(value: str) -> bool:
    """Whether ``value`` is exactly one ``wrap`` output: outer markers and none inside."""
    if len(value) < len(OPEN_MARKER) + len(CLOSE_MARKER):
        return False
    if not (value.startswith(OPEN_MARKER) and value.endswith(CLOSE_MARKER)):
        return False
    inner = value[len(OPEN_MARKER) : len(value) - len(CLOSE_MARKER)]
    return MARKER_OPEN_CHAR not in inner and MARKER_CLOSE_CHAR not in inner


def unwrap(value: str) -> str:
    """The sanitised text inside a ``wrap`` output.

    Raises ``ValueError`` when ``value`` is not exactly one wrapped string, rather than
    guess where a nested or truncated wrapper ends. The inner text is sanitised again
    (a no-op for a real ``wrap`` output), so a hand-made value cannot smuggle a
    marker or invisible character out through ``unwrap``.
    """
    if not is_wrapped(value):
        raise ValueError("not a single untrusted-wrapped string")
    return sanitise(value[len(OPEN_MARKER) : len(value) - len(CLOSE_MARKER)])


def strip_untrusted(value: str) -> str:
    """The sanitised text of ``value``, wrapped or not: for consumers that need the raw
    passage (parsing, display) and may be handed either form."""
    return unwrap(value) if is_wrapped(value) else sanitise(value)
