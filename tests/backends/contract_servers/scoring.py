"""CONTRACT TESTS: the tiny in-memory ranking the contract servers share.

Cosine over stored unit vectors for vector queries, and a term-overlap score with IDF
for text queries. Enough to check that an adapter sends the right query to the right
place and reads the answer back correctly; not a model of any engine's relevance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence

Embed = Callable[[str], list[float]]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
    ]
)


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def keyword_scores(query: str, texts: Iterable[str]) -> list[float]:
    """Per text: the IDF-weighted count of query terms it contains (0 = no match)."""
    docs = [set(words(t)) for t in texts]
    n = len(docs) or 1
    out = []
    for doc in docs:
        score = 0.0
        for term in set(words(query)):
            if term in doc:
                df = sum(1 for d in docs if term in d)
                score += math.log(1 + (n - df + 0.5) / (df + 0.5))
        out.append(score)
    return out
