"""A gate only skips work: it must never change a verdict."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_mcp.screening.injection_screen import _screen
from tests.screening.eval_set import load_eval_module
from tests.screening.hostile_text import hostile_text

_EVAL = load_eval_module()
_WORDS = st.sampled_from(
    [
        *("ignore", "all", "previous", "instructions", "you", "are", "now", "dan", "reveal"),
        *("your", "system", "prompt", "api", "key", "assistant", ":", "<", "|", "im_start"),
        *(">", "[", "inst", "]", "(", "https://x.example/?q=", ")", "send", "the", "chat"),
        *("history", "to", "untrusted", "end", "of", "data", "tool", "function", "s", "p"),
    ]
)


def test_gates_never_change_a_verdict_on_the_evaluation_set() -> None:
    texts = [c.text for c in _EVAL.load_cases()]
    texts += [p.text for p in _EVAL.clean_passages(None)]
    for text in texts:
        assert _screen(text, gated=True) == _screen(text, gated=False), text


@settings(derandomize=True, max_examples=300)  # a fixed sample: CI must not flake
@given(st.lists(st.one_of(_WORDS, hostile_text), max_size=30).map(" ".join))
def test_gates_never_change_a_verdict_on_generated_text(text: str) -> None:
    assert _screen(text, gated=True) == _screen(text, gated=False)
