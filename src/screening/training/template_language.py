"""A small template language, so a few lines write many distinct sentences.

``{a|b|c}`` picks one alternative (innermost braces first, so they nest); ``<NAME>``
is replaced by an expansion of a random entry of the slot ``NAME`` (slots may refer
to slots). ``^`` capitalises the letter after it; ``«`` ``»`` and ``‹`` ``›`` write
literal braces and angle brackets. Every choice comes from the
``random.Random`` passed in, so a seed reproduces the text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

_SLOT = re.compile(r"<([A-Z][A-Z0-9_]*)>")
_CHOICE = re.compile(r"\{([^{}]*)\}")
_CAPITAL = re.compile(r"\^\s*(\W*)(\w)")
_SPACES = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE = re.compile(r" +([,.;:!?])(?=\s|$)")

_LITERALS = str.maketrans("«»‹›", "{}<>")

Slots = Mapping[str, Sequence[str]]


def expand(template: str, rng: random.Random, slots: Slots, *, depth: int = 0) -> str:
    """One random sentence from ``template``."""
    if depth > 8:
        raise ValueError(f"slots nest too deep in {template!r}")

    def slot(match: re.Match[str]) -> str:
        options = slots[match.group(1)]
        return expand(rng.choice(options), rng, slots, depth=depth + 1)

    text = _SLOT.sub(slot, template)
    while True:
        text, count = _CHOICE.subn(lambda m: rng.choice(m.group(1).split("|")), text)
        if not count:
            break
    if depth == 0:
        text = _CAPITAL.sub(lambda m: m.group(1) + m.group(2).upper(), text)
        text = _SPACE_BEFORE.sub(r"\1", _SPACES.sub(" ", text)).strip()
        text = text.translate(_LITERALS)
    return text
