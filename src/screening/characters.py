"""Which code points are hidden, directional or reserved, and what becomes of each.

These tables are the one place that decides what a reader cannot see. ``sanitise``
deletes everything here from stored text; the screen's folded view deletes it too,
except Unicode tag characters, which it decodes, because their one use in prose is to
smuggle ASCII past a human reader to a model that can still read it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# The untrusted-data markers are built from these two characters; stored text never
# holds them (see markers.py), so a marker can only come from ``wrap``.
MARKER_OPEN_CHAR = "\u27e6"  # ⟦ MATHEMATICAL LEFT WHITE SQUARE BRACKET
MARKER_CLOSE_CHAR = "\u27e7"  # ⟧ MATHEMATICAL RIGHT WHITE SQUARE BRACKET

TAG_FIRST = 0xE0000
TAG_LAST = 0xE007F


def _spans(*ranges: tuple[int, int]) -> Iterable[int]:
    for first, last in ranges:
        yield from range(first, last + 1)


# Line and paragraph breaks in their other spellings all become "\n", so deleting them
# never glues two words together.
LINE_BREAKS: frozenset[int] = frozenset({0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029})

# C0 (except tab and line feed), DEL and C1 controls: no meaning in prose, and some
# terminals and renderers act on them.
CONTROLS: frozenset[int] = (
    frozenset(cp for cp in _spans((0x00, 0x1F), (0x7F, 0x9F)) if cp not in (0x09, 0x0A))
    - LINE_BREAKS
)

# Zero-width, joiner, bidi embedding/override/isolate, invisible operators, fillers,
# variation selectors, BOM, tag characters: all render as nothing (or reorder what is
# rendered), so they can split a word a screen looks for or hide text from a reviewer.
# ZWNJ/ZWJ are lost too; Persian and Indic shaping and emoji sequences degrade to
# their separate letters or glyphs, which stay readable.
INVISIBLE: frozenset[int] = frozenset(
    _spans(
        (0x00AD, 0x00AD),  # soft hyphen
        (0x034F, 0x034F),  # combining grapheme joiner
        (0x061C, 0x061C),  # Arabic letter mark
        (0x115F, 0x1160),  # Hangul fillers
        (0x17B4, 0x17B5),  # Khmer invisible vowels
        (0x180B, 0x180F),  # Mongolian variation selectors, vowel separator
        (0x200B, 0x200F),  # zero-width space/non-joiner/joiner, LRM, RLM
        (0x202A, 0x202E),  # bidi embeddings and overrides
        (0x2060, 0x2064),  # word joiner, invisible operators
        (0x2066, 0x206F),  # bidi isolates, deprecated format controls
        (0x3164, 0x3164),  # Hangul filler
        (0xFE00, 0xFE0F),  # variation selectors
        (0xFEFF, 0xFEFF),  # byte order mark / zero-width no-break space
        (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
        (0xFFF9, 0xFFFB),  # interlinear annotation
        (0x1BCA0, 0x1BCA3),  # shorthand format controls
        (0x1D173, 0x1D17A),  # musical formatting
        (TAG_FIRST, TAG_LAST),  # tag characters
        (0xE0100, 0xE01EF),  # variation selectors supplement
    )
)

# Lone surrogates and noncharacters cannot be encoded as UTF-8 JSON at all.
UNENCODABLE: frozenset[int] = frozenset(
    [
        *range(0xD800, 0xE000),
        *range(0xFDD0, 0xFDF0),
        *(plane * 0x10000 + low for plane in range(17) for low in (0xFFFE, 0xFFFF)),
    ]
)


def _combining_marks() -> frozenset[int]:
    """Nonspacing and enclosing marks: accents an attacker stacks on letters."""
    ranges = ((0x0300, 0xFFFF), (0x1D165, 0x1D1AD), (0x1E000, 0x1E08F))
    return frozenset(cp for cp in _spans(*ranges) if unicodedata.category(chr(cp)) in ("Mn", "Me"))


COMBINING_MARKS = _combining_marks()

# Capital letters from other scripts that look like Latin capitals. Applied before
# casefolding, which would turn Greek "Ν" into "ν" (a "v" look-alike).
HOMOGLYPHS_UPPER: dict[str, str] = {
    # Greek
    "Α": "a", "Β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "Ι": "i", "Κ": "k", "Μ": "m",
    "Ν": "n", "Ο": "o", "Ρ": "p", "Τ": "t", "Υ": "y", "Χ": "x",
    # Cyrillic
    "А": "a", "В": "b", "Е": "e", "К": "k", "М": "m", "Н": "h", "О": "o", "Р": "p",
    "С": "c", "Т": "t", "У": "y", "Х": "x", "І": "i", "Ј": "j", "Ѕ": "s", "Ԛ": "q",
    "Ԝ": "w",
    # Cherokee (Unicode confusables.txt)
    "Ꭰ": "d", "Ꭱ": "r", "Ꭲ": "t", "Ꭵ": "i", "Ꭹ": "y", "Ꭺ": "a", "Ꭻ": "j", "Ꭼ": "e",
    "Ꮃ": "w", "Ꮇ": "m", "Ꮋ": "h", "Ꮍ": "y", "Ꮐ": "g", "Ꮒ": "h", "Ꮓ": "z", "Ꮟ": "b",
    "Ꮢ": "r", "Ꮤ": "w", "Ꮥ": "s", "Ꮩ": "v", "Ꮪ": "s", "Ꮮ": "l", "Ꮯ": "c", "Ꮲ": "p",
    "Ꮶ": "k", "Ᏼ": "b",
}  # fmt: skip

# Letters from other scripts that look like Latin ones, keyed after casefolding.
# Not Unicode's whole confusables table: the Cyrillic, Greek, Armenian and Latin
# look-alikes that render indistinguishably in common fonts.
HOMOGLYPHS: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "г": "r", "һ": "h", "і": "i", "ї": "i",
    "ј": "j", "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "ѕ": "s", "т": "t", "у": "y", "х": "x", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ѡ": "w",
    "ү": "y", "ь": "b", "п": "n", "ц": "u", "ԍ": "g", "ɡ": "g", "ҽ": "e", "ӑ": "a",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k",
    "μ": "u", "ν": "v", "ο": "o", "ρ": "p", "σ": "o", "ς": "s", "τ": "t", "υ": "u",
    "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j", "ϱ": "p", "ϵ": "e",
    # Armenian
    "օ": "o", "ս": "u", "ո": "n", "հ": "h", "ց": "g", "զ": "q", "ա": "w", "ի": "h",
    # Latin look-alikes and small capitals
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i", "ɪ": "i", "ʟ": "l", "ᴀ": "a", "ʙ": "b",
    "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ᴊ": "j", "ᴋ": "k", "ᴍ": "m",
    "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v",
    "ᴡ": "w", "ʏ": "y", "ᴢ": "z", "ℓ": "l", "ꞵ": "b",
}  # fmt: skip
