"""Screen a passage for injected instructions: two layers, deterministic and pure.

``screen`` runs both layers and reports which fired, in ``flags``:

* the **rules** (``screen_rules``, ``injection_patterns.py``): one flag per family of
  instruction-shaped text (``FAMILIES``: ``override``, ``role_tag``, ...), tens of µs
  per KB, explainable by the rule that matched;
* the **learned** layer (``learned_screen.py``): ``learned:injection`` when some window
  of one to three sentences scores above the model's threshold; it generalises to
  phrasings, languages and sentence splits no rule names, at about a millisecond per KB.

Flags are rule families in ``FAMILIES`` order, then ``LEARNED_FLAG``; ``FLAGS`` is that
order. The rules are a tripwire, not a proof: they catch
the phrasings and disguises it was built for (case, letters spaced or punctuated one
by one, homoglyphs, fullwidth forms, zero-width characters, stacked accents, Unicode
tag smuggling, instructions split across sentences) and an adaptive attacker who can
test against it will find wordings it misses. Use a flag to quarantine or annotate a
passage; never read the absence of flags as "safe".

Screen the text as received, before ``sanitise``: sanitising deletes evidence (hidden
characters, Unicode tag text, marker characters). A passage screened after sanitising
still reports the marker imitations it escaped, by their ``[forged marker]`` token.
"""

from __future__ import annotations

import re

import attrs

from retrieval_mcp.screening.characters import MARKER_CLOSE_CHAR, MARKER_OPEN_CHAR
from retrieval_mcp.screening.folding import fold
from retrieval_mcp.screening.injection_patterns import (
    FAMILIES,
    INVISIBLE_TEXT,
    MARKER_FORGERY,
    RULES,
    Rule,
    View,
)
from retrieval_mcp.screening.learned_screen import LEARNED_FLAG, shipped
from retrieval_mcp.screening.markers import FORGED_MARKER

__all__ = ["FAMILIES", "FLAGS", "LEARNED_FLAG", "ScreenResult", "screen", "screen_rules"]

#: Every flag ``screen`` can report, in the order it reports them.
FLAGS: tuple[str, ...] = (*FAMILIES, LEARNED_FLAG)


@attrs.frozen
class ScreenResult:
    """The flags a passage raised, in ``FLAGS`` order; empty when none did.

    ``score`` is the learned layer's highest window score (a logit; ``-inf`` when the
    layer did not run or the text has no sentence), for benchmarks and debugging; it is
    not part of equality.
    """

    flags: tuple[str, ...] = ()
    score: float = attrs.field(default=float("-inf"), eq=False)

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    @property
    def rule_flags(self) -> tuple[str, ...]:
        return tuple(f for f in self.flags if f != LEARNED_FLAG)


def screen(text: str) -> ScreenResult:
    """Both layers' flags for ``text``: rule families, then ``learned:injection``."""
    rules = _screen(text, gated=True)
    model = shipped()
    score = model.score(text)
    flags = (*rules.flags, LEARNED_FLAG) if score > model.threshold else rules.flags
    return ScreenResult(flags, score)


@attrs.frozen
class _Passage:
    """The views of one passage that rules and gates look at."""

    views: dict[View, str]
    gate_words: frozenset[str]  # the words of the passage that some gate names
    punctuation: str
    spelled_out: bool  # letters spaced or punctuated one by one: gates use substrings


def screen_rules(text: str) -> ScreenResult:
    """The rule families ``text`` matches (the deterministic layer alone)."""
    return _screen(text, gated=True)


def _screen(text: str, *, gated: bool) -> ScreenResult:
    passage = _passage(text)
    found: set[str] = set()
    for rule in _candidates(passage) if gated else RULES:
        if rule.flag in found or (gated and not _gates_open(rule, passage)):
            continue
        if _matches(rule, passage.views[rule.view]):
            found.add(rule.flag)
    if MARKER_OPEN_CHAR in text or MARKER_CLOSE_CHAR in text or FORGED_MARKER in text:
        found.add(MARKER_FORGERY)
    if not text.isascii() and _hidden_channel(text):
        found.add(INVISIBLE_TEXT)
    return ScreenResult(tuple(flag for flag in FAMILIES if flag in found))


def _matches(rule: Rule, view: str) -> bool:
    start = 0
    while match := rule.pattern.search(view, start):
        before = view[max(0, match.start() - 80) : match.start()]
        if not (rule.not_after and before.endswith(rule.not_after)) and (
            not rule.line_start or _begins_line(before, at_start=match.start() <= 80)
        ):
            return True
        start = match.start() + 1
    return False


def _begins_line(before: str, *, at_start: bool) -> bool:
    """Whether text ending with ``before`` is at a line or sentence start."""
    stripped = before.rstrip(" \t")
    if not stripped:
        return at_start
    return stripped.endswith("\n") or (
        stripped.endswith((".", "!", "?")) and len(stripped) < len(before)
    )


# Rules indexed by the words of their first word gate. Clean prose holds few of them,
# so a passage costs its views, one set intersection and the rules those words (or
# punctuation alone) open, not a test per rule.
_UNGATED = tuple(i for i, rule in enumerate(RULES) if not rule.words)
_BY_WORD: dict[str, tuple[int, ...]] = {}
for _index, _rule in enumerate(RULES):
    for _word in _rule.words[0] if _rule.words else ():
        _BY_WORD[_word] = (*_BY_WORD.get(_word, ()), _index)
_GATE_WORDS = frozenset(word for rule in RULES for group in rule.words for word in group)


def _candidates(passage: _Passage) -> list[Rule]:
    if passage.spelled_out:
        return list(RULES)
    indexes = set(_UNGATED)
    for word in passage.gate_words:
        indexes.update(_BY_WORD.get(word, ()))
    return [RULES[i] for i in sorted(indexes)]


def _gates_open(rule: Rule, passage: _Passage) -> bool:
    if rule.marks and not any(mark in passage.punctuation for mark in rule.marks):
        return False
    for group in rule.words:
        if group.isdisjoint(passage.gate_words) and not (
            passage.spelled_out and any(w in passage.views[View.SQUEEZED] for w in group)
        ):
            return False
    return True


_ASCII_SPACE = b" \t\n\r\x0b\x0c"
_ASCII_NOT_ALNUM = bytes(b for b in range(128) if not chr(b).isalnum())
_ASCII_ALNUM_OR_SPACE = bytes(b for b in range(128) if chr(b).isalnum()) + _ASCII_SPACE
_ASCII_WORDS = bytes(b if chr(b).isalnum() else 32 for b in range(256))
_SPACE = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[\W_]+")
_ALNUM_OR_SPACE = re.compile(r"[^\W_]+|\s+")
# Four one-letter words in a row: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e". (Three
# would catch the variables of one Cranfield abstract in sixteen.)
_SPELLED_OUT = re.compile(r" [^\W\d_] +[^\W\d_] +[^\W\d_] +[^\W\d_](?= )")
_BETWEEN_LETTERS = re.compile(r"(?<=[^\W\d_])[-._*~|+'`](?=[^\W\d_])")


def _passage(text: str) -> _Passage:
    folded = fold(text)
    if folded.isascii():
        # bytes.translate works in one C pass; a regex substitution is ten times slower.
        raw = folded.encode("ascii")
        compact = raw.translate(None, _ASCII_SPACE).decode("ascii")
        squeezed = raw.translate(None, _ASCII_NOT_ALNUM).decode("ascii")
        punctuation = raw.translate(None, _ASCII_ALNUM_OR_SPACE).decode("ascii")
        words = raw.translate(_ASCII_WORDS).decode("ascii")
    else:
        compact = _SPACE.sub("", folded)
        squeezed = _NOT_ALNUM.sub("", folded)
        punctuation = _ALNUM_OR_SPACE.sub("", folded)
        words = _NOT_ALNUM.sub(" ", folded)
    spelled_out = _SPELLED_OUT.search(f" {words} ") is not None
    if spelled_out:
        # "<s-e-c-r-e-t>", '{"t.o.o.l":': markup spelled out letter by letter.
        compact = _BETWEEN_LETTERS.sub("", compact)
    return _Passage(
        views={View.FOLDED: folded, View.COMPACT: compact, View.SQUEEZED: squeezed},
        gate_words=_GATE_WORDS.intersection(words.split()),
        punctuation=punctuation,
        spelled_out=spelled_out,
    )


# Hidden channels, on the text as received: tag characters not part of an emoji flag
# (U+1F3F4 and a short region code), two or more variation selectors in a row (one is
# a legitimate glyph choice), zero-width characters inside Latin words, bidi overrides.
_TAG_RUN = re.compile(
    "(?<![\U0001f3f4\U000e0000-\U000e007f])[\U000e0020-\U000e007e]{2,}|[\U000e0020-\U000e007e]{8,}"
)
_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")
_ZERO_WIDTH_IN_WORD = re.compile("[A-Za-z][\u200b-\u200d\u2060\ufeff]+(?=[A-Za-z])")
_BIDI_OVERRIDE = re.compile("[\u202d\u202e]")


def _hidden_channel(text: str) -> bool:
    return bool(
        _TAG_RUN.search(text)
        or _SELECTOR_RUN.search(text)
        or _BIDI_OVERRIDE.search(text)
        or len(_ZERO_WIDTH_IN_WORD.findall(text)) >= 3
    )
