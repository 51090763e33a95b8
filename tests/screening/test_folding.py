from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.screening.folding import fold, fold_char, fold_with_offsets
from tests.screening.hostile_text import hostile_text


def test_disguises_fold_to_plain_lowercase() -> None:
    assert fold("ＩＧＮＯＲＥ") == "ignore"  # fullwidth
    assert fold("іgnоrе") == "ignore"  # Cyrillic
    assert fold("ΙGΝΟRΕ") == "ignore"  # Greek capitals, mapped before casefolding
    assert fold("ig\u200bno\u2060re") == "ignore"  # zero-width
    assert fold("i\u0336g\u0301n\u0308ore") == "ignore"  # stacked marks
    assert fold("𝐢𝐠𝐧𝐨𝐫𝐞") == "ignore"  # mathematical bold


def test_tag_characters_are_decoded_not_dropped() -> None:
    smuggled = "".join(chr(0xE0000 + ord(c)) for c in "ignore")
    assert fold(f"ok{smuggled}") == "okignore"


def test_line_breaks_and_controls() -> None:
    assert fold("A\r\nB\x00C") == "a\n\nbc"


@given(st.one_of(st.text(), hostile_text))
def test_offsets_point_at_the_source_character(text: str) -> None:
    folded, offsets = fold_with_offsets(text)
    assert len(offsets) == len(folded)
    assert offsets == sorted(offsets)
    for index, source in zip(range(len(folded)), offsets, strict=True):
        assert folded[index] in fold_char(text[source])
