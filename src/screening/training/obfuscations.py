"""Disguises applied to a payload, as an attacker would to slip past a keyword screen."""

from __future__ import annotations

import random
from collections.abc import Callable

_HOMOGLYPHS = dict(zip("aeopcxiyAEOITH", "аеорсхіуАЕОΙТН", strict=True))
_LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}
_ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _case(text: str, rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:
        return text.upper()
    if style == 1:
        return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(text))
    return "".join(c.upper() if rng.random() < 0.3 else c for c in text)


def _spacing(text: str, rng: random.Random) -> str:
    gap = rng.choice([" ", ".", "-", " . "])
    words = text.split(" ")
    spaced = [gap.join(w) if rng.random() < 0.7 else w for w in words]
    return "   ".join(spaced) if gap == " " else " ".join(spaced)


def _homoglyph(text: str, rng: random.Random) -> str:
    rate = rng.uniform(0.3, 1.0)
    return "".join(_HOMOGLYPHS.get(c, c) if rng.random() < rate else c for c in text)


def _zero_width(text: str, rng: random.Random) -> str:
    mark = rng.choice(_ZERO_WIDTH)
    return "".join(c + mark if c.isalpha() and rng.random() < 0.35 else c for c in text)


def _leet(text: str, rng: random.Random) -> str:
    rate = rng.uniform(0.4, 1.0)
    return "".join(_LEET.get(c, c) if rng.random() < rate else c for c in text)


def _fullwidth(text: str, rng: random.Random) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


OBFUSCATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "case": _case,
    "spacing": _spacing,
    "homoglyph": _homoglyph,
    "zero_width": _zero_width,
    "leet": _leet,
    "fullwidth": _fullwidth,
}
