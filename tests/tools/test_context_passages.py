"""get_context's passage views: stored text is wrapped as is, foreign text is sanitised."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.pipeline.packing import pack
from retrieval_mcp.records import Chunk, Hit, LegScore, Provenance
from retrieval_mcp.screening.sanitize import sanitise
from retrieval_mcp.screening.wrap import is_wrapped, unwrap
from retrieval_mcp.tools.context_tool import _passages
from retrieval_mcp.transport.caller import Caller

CALLER = Caller(token_name="t")


def _hit(cid: str, text: str, start: int, *, stored: bool, doc: str = "d") -> Hit:
    chunk = Chunk(
        id=cid,
        text=text,
        provenance=Provenance("s", doc, "T", start, start, start + len(text)),
        flags=() if stored else None,  # None: a foreign store's chunk, never sanitised
    )
    return Hit(chunk=chunk, score=1.0, legs={"bm25": LegScore(rank=1, score=1.0)})


def _views(hits: list[Hit]) -> list[str]:
    packed = pack(hits, budget_tokens=10_000, count_tokens=len, ranked=hits)
    return [v["text"] for v in _passages(packed, hits, CALLER)]


def test_stored_text_is_wrapped_unchanged() -> None:
    text = "Pump stations lift water.\nValves close weekly."
    [view] = _views([_hit("a", text, 0, stored=True)])
    assert is_wrapped(view)
    assert unwrap(view) == text


def test_foreign_text_is_sanitised_even_beside_stored_text() -> None:
    # One passage merged from a stored chunk and a foreign one: sanitised as a whole.
    stored = _hit("a", "Plain text. ", 0, stored=True)
    foreign = _hit("b", "Note\u200b: hidden\u202e", 12, stored=False)
    [view] = _views([stored, foreign])
    assert "\u200b" not in view and "\u202e" not in view
    assert unwrap(view) == sanitise("Plain text. Note\u200b: hidden\u202e")


@given(st.text(max_size=200))
def test_every_view_is_one_wrapped_sanitised_string(text: str) -> None:
    # Whatever a foreign store holds, markers included, the view is one wrapper around
    # sanitised text; stored text (sanitised at ingest) comes back exactly.
    for stored in (False, True):
        source = sanitise(text) if stored else text
        if not source:
            continue
        for view in _views([_hit("a", source, 0, stored=stored)]):
            assert is_wrapped(view)
            assert unwrap(view) == sanitise(source)
