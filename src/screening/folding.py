"""The folded view of a text: what the screen and the marker escape actually match.

Folding undoes the cheap disguises: invisible characters are dropped, compatibility
forms (fullwidth, mathematical alphanumerics, ligatures) become plain letters, accents
and stacked marks are stripped, case is folded and homoglyphs become the Latin letter
they imitate. Unicode tag characters are decoded to the ASCII they smuggle instead of
dropped, so hidden text is screened like visible text.

The view is for matching only and is never stored or shown: it is lossy by design.
Every step works character by character, so ``fold_with_offsets`` can say which input
character each folded character came from.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from retrieval_mcp.screening.characters import (
    COMBINING_MARKS,
    CONTROLS,
    HOMOGLYPHS,
    HOMOGLYPHS_UPPER,
    INVISIBLE,
    LINE_BREAKS,
    TAG_FIRST,
    TAG_LAST,
    UNENCODABLE,
)

# Before decomposition: decode tags, drop what renders as nothing, unify line breaks,
# map capital look-alikes (casefolding would blur them).
_BEFORE: dict[int, str | None] = {
    **{cp: None for cp in INVISIBLE | CONTROLS | UNENCODABLE},
    **{cp: "\n" for cp in LINE_BREAKS},
    **{cp: chr(cp - TAG_FIRST) for cp in range(TAG_FIRST + 0x20, TAG_LAST)},
    **{ord(k): v for k, v in HOMOGLYPHS_UPPER.items()},
}
# After decomposition and casefolding: strip marks, map look-alikes to Latin.
_AFTER: dict[int, str | None] = {
    **{cp: None for cp in COMBINING_MARKS},
    **{ord(k): v for k, v in HOMOGLYPHS.items()},
}
_ASCII_TABLE = bytes(10 if b in LINE_BREAKS else ord(chr(b).lower()) for b in range(256))
_ASCII_DELETE = bytes(sorted(b for b in CONTROLS if b < 128))


def fold(text: str) -> str:
    """The folded view of ``text``."""
    if text.isascii():
        # One C pass: lowercase, unify line breaks, drop controls.
        return text.encode("ascii").translate(_ASCII_TABLE, _ASCII_DELETE).decode("ascii")
    decomposed = unicodedata.normalize("NFKD", text.translate(_BEFORE))
    return decomposed.casefold().translate(_AFTER)


@lru_cache(maxsize=4096)
def fold_char(char: str) -> str:
    """The folded form of one character; ``fold(t) == "".join(map(fold_char, t))``."""
    return fold(char)


def fold_with_offsets(text: str) -> tuple[str, list[int]]:
    """The folded view and, for each of its characters, its index in ``text``.

    Slower than ``fold`` (a Python loop); used only where a match must be mapped back
    to the original text, which is rare.
    """
    parts: list[str] = []
    offsets: list[int] = []
    for index, char in enumerate(text):
        folded = fold_char(char)
        parts.append(folded)
        offsets.extend([index] * len(folded))
    return "".join(parts), offsets
