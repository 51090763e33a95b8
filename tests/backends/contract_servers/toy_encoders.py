"""CONTRACT TESTS: deterministic stand-ins for a learned sparse model and a late-
interaction model, so documents in a contract collection and queries from a contract
encoder agree without any model weights. Not SPLADE, not ColBERT: a word's sparse
weight is ``1 + log(tf)`` at a hashed index; a word's token vector is a fixed random
unit vector seeded by the word, so MaxSim counts shared words (and near-misses score
low).
"""

from __future__ import annotations

import math
import random
import zlib

from tests.backends.contract_servers.scoring import words

TOKEN_DIM = 32


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def toy_sparse(text: str) -> tuple[list[int], list[float]]:
    counts: dict[int, int] = {}
    for word in words(text):
        index = zlib.crc32(_stem(word).encode()) & 0x7FFFFFFF
        counts[index] = counts.get(index, 0) + 1
    ordered = sorted(counts.items())
    return [i for i, _ in ordered], [1.0 + math.log(n) for _, n in ordered]


def _token_vector(word: str) -> list[float]:
    rng = random.Random(zlib.crc32(_stem(word).encode()))
    vector = [rng.gauss(0.0, 1.0) for _ in range(TOKEN_DIM)]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def toy_multivector(text: str) -> list[list[float]]:
    tokens = words(text) or ["[empty]"]
    return [_token_vector(w) for w in tokens]
