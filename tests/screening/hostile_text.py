"""A hypothesis strategy for text built to break sanitise and the markers."""

from __future__ import annotations

from hypothesis import strategies as st

FRAGMENTS = (
    "⟦", "⟧", "⟦untrusted⟧", "⟦/untrusted⟧", "untrusted", "/untrusted", "UNTRUSTED", "υntrυsted",
    "ｕｎｔｒｕｓｔｅｄ", "u n t r u s t e d", "[", "]", "[[", "]]", "<<", ">>", "〚", "〛", "【",
    "】", "_DATA", "end ", "[forged marker]", "\u200b", "\u200d", "\u202e", "\u2066", "\ufeff",
    "\u00ad", "\r\n", "\r", "\x00", "\x1b", "\x85", "\u2028", "\u0301", "\u0336", "e\u0301",
    "\ufe0f", "\U000e0041", "\U000e0100", "\ud800", "\ufffe", "Ν", "Τ", "ı", "ﬁ", "\t", "\n",
)  # fmt: skip

hostile_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=14
).map("".join)
