"""The untrusted-data markers, and the one-way escape of anything that imitates them.

The markers are ``⟦untrusted⟧`` and ``⟦/untrusted⟧``. Their brackets (U+27E6, U+27E7)
are the reserved characters: ``sanitise`` turns every one in stored text into an ASCII
bracket, so a real marker can only come from ``wrap`` and text can never close its
wrapper early. That guarantee rests on one character substitution, not on a pattern.

Imitations aimed at the model rather than the parser (``[/untrusted]``,
``<</UNTRUSTED>>``, ``〚/untrusted〛``, homoglyph or spaced spellings) are rewritten to
``[forged marker]``. The rewrite is one way: the replacement holds no reserved
character and no ``u``, so no later sanitise, wrap or unwrap can turn it back into
either a marker or an imitation, and the count of ``u`` falls with every rewrite, so
repeating it terminates.
"""

from __future__ import annotations

import re

from retrieval_mcp.screening.characters import MARKER_CLOSE_CHAR, MARKER_OPEN_CHAR
from retrieval_mcp.screening.folding import fold, fold_with_offsets

OPEN_MARKER = f"{MARKER_OPEN_CHAR}untrusted{MARKER_CLOSE_CHAR}"
CLOSE_MARKER = f"{MARKER_OPEN_CHAR}/untrusted{MARKER_CLOSE_CHAR}"
FORGED_MARKER = "[forged marker]"

# Reserved characters become their ASCII look-alikes, so the text stays readable.
RESERVED_TABLE: dict[int, str] = {ord(MARKER_OPEN_CHAR): "[", ord(MARKER_CLOSE_CHAR): "]"}

_OPENERS = "\\[<{«‹⟨〈⟪〚【〖〔⦃⦗⁅⸢" + MARKER_OPEN_CHAR
_CLOSERS = "\\]>}»›⟩〉⟫〛】〗〕⦄⦘⁆⸣" + MARKER_CLOSE_CHAR
_GAP = r"[^\w\n]{0,3}"  # spacing or punctuation between the letters of a disguised word
_WORD = _GAP.join("untrusted")
_VERB = r"(?:end|begin|start|stop|close|open)"
_NOUN = r"(?:data|text|content|input|passage|block|section|zone|region|source|marker)"

# Matched against the folded view (lowercase, homoglyphs and fullwidth undone).
IMITATION = re.compile(
    rf"[{_OPENERS}]+\s*[/\\]?\s*(?:{_VERB}[\W_]{{0,3}}(?:of[\W_]{{0,3}})?)?{_WORD}"
    rf"(?:[\W_]{{0,3}}{_NOUN})?(?:[\W_]{{0,3}}{_VERB})?\s*[/\\]?\s*[{_CLOSERS}]+"
)
_SQUEEZE = re.compile(r"[\W_]+")


def escape_forged_markers(text: str) -> str:
    """``text`` with reserved characters replaced and marker imitations rewritten."""
    text = text.translate(RESERVED_TABLE)
    # Cheap gate: an imitation needs the word, so most text skips the offset mapping.
    if "untrusted" not in _SQUEEZE.sub("", fold(text)):
        return text
    while True:
        folded, offsets = fold_with_offsets(text)
        matches = list(IMITATION.finditer(folded))
        if not matches:
            return text
        parts: list[str] = []
        last = 0
        for match in matches:
            start, end = offsets[match.start()], offsets[match.end() - 1] + 1
            parts += [text[last:start], FORGED_MARKER]
            last = end
        parts.append(text[last:])
        text = "".join(parts)
