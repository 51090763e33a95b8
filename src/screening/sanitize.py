"""Sanitise text on its way into the store: what is kept is what a reader can see.

Decisions:

* Controls go (tab and line feed stay; CR, CRLF, VT, FF, NEL and the Unicode line and
  paragraph separators become a line feed, so no two words are glued together).
* Invisible and directional characters go (zero-width, joiners, bidi embeddings,
  overrides and isolates, BOM, variation selectors, tag characters; the full list is
  in ``characters.py``): they can hide text from a reviewer or split a word a screen
  looks for.
* Lone surrogates and noncharacters go: they cannot be sent as UTF-8 JSON.
* The stored text is NFC, not NFKC: NFC only composes, so nothing a reader sees
  changes, while NFKC would rewrite fullwidth forms, ligatures, superscripts and
  mathematical letters that real documents use on purpose. Detection does not need
  NFKC in storage: the screen matches an NFKD, casefolded, homoglyph-folded view
  (``folding.py``) built on the fly.
* Marker characters and imitations of the markers are escaped one way
  (``markers.py``).

``sanitise`` is idempotent: ``sanitise(sanitise(x)) == sanitise(x)``.
"""

from __future__ import annotations

import unicodedata

from retrieval_mcp.screening.characters import CONTROLS, INVISIBLE, LINE_BREAKS, UNENCODABLE
from retrieval_mcp.screening.markers import escape_forged_markers

_TABLE: dict[int, str | None] = {
    **{cp: None for cp in CONTROLS | INVISIBLE | UNENCODABLE},
    **{cp: "\n" for cp in LINE_BREAKS},
}


def sanitise(text: str) -> str:
    """``text`` as it may be stored and shown: visible, NFC, free of marker lookalikes."""
    cleaned = text.replace("\r\n", "\n").translate(_TABLE)
    return escape_forged_markers(unicodedata.normalize("NFC", cleaned))
