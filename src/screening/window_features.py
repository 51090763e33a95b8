"""Windows of a passage and their hashed n-gram features, for the learned screen.

A passage is folded (``folding.py``: case, homoglyphs, fullwidth forms, accents and
invisible characters undone), digits inside words are read as the letters they
imitate ("r3v34l" -> "reveal") and letters spelled out one by one are joined. It is
cut into sentences, and every run of one to ``MAX_SENTENCES`` consecutive sentences is a
window, so an instruction split over three sentences is still seen whole. A window's
features are the character 3- to 5-grams of its text and its word 1- and 2-grams,
hashed into ``DIMENSION`` buckets, present or absent (no counts), so the same phrase
scores alike in a short window or a long one once normalised.

Character n-grams carry the learned layer across languages the encoder was never
trained on; hashing keeps the model a fixed-size array with no vocabulary to ship.
Pure numpy, deterministic (no Python ``hash``), a fraction of a millisecond per 1,000
characters.
"""

from __future__ import annotations

import functools
import re
import zlib

import attrs
import numpy as np
import numpy.typing as npt

from retrieval_mcp.screening.cue_lexicon import CUE_SETS, CueSet
from retrieval_mcp.screening.folding import fold

DIMENSION = 1 << 18
MAX_SENTENCES = 3
#: A window's norm counts at least this many occurrences, so a fragment of a few
#: characters ("." left by chunk overlap, "(1)") cannot score like a whole sentence.
NORM_FLOOR = 64
#: A sentence longer than this is cut into overlapping pieces of ``PIECE_WORDS`` words.
LONG_SENTENCE_CHARS = 320
PIECE_WORDS = 40

_SENTENCE_END = re.compile(
    r"(?<=[.!?;:\u3002])\s+|\n\s*\n\s*|\n(?=\s*(?:[-*#>|]|\d+[.)]\s))|(?<=[)\]>])\s+(?=[A-Z<\[!])"
)
_WORD = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W\d_]")
_LEET = str.maketrans("013457@$", "oieastas")
_MIXED = re.compile(r"\b(?=\w*[a-z])(?=\w*[0-9])\w+\b")
_SPELLED = re.compile(r"\b(?:\w[ .\-_*]{1,3}){3,}\w\b")
_NOT_SPELLED_GAP = re.compile(r"[ .\-_*]")
_WHITESPACE = re.compile(r"\s+")
_SEPARATOR = "\n"  # sentences are joined by it; whitespace inside them is one space

_MASK = np.uint64(DIMENSION - 1)
_MULT = np.uint64(0x9E3779B97F4A7C15)
_PRIME = np.uint64(1_000_003)
_WORD_SALT = 0x5BD1E995
_BIGRAM_SALT = np.uint64(0x27D4EB2F165667C5)
_NGRAM_SIZES = (3, 4, 5)


def normalise(text: str) -> str:
    """The view features are taken from: folded, de-leeted, spelled-out letters joined."""
    folded = fold(text)
    folded = _MIXED.sub(lambda m: m.group(0).translate(_LEET), folded)
    return _SPELLED.sub(lambda m: _NOT_SPELLED_GAP.sub("", m.group(0)), folded)


def sentences(view: str) -> list[str]:
    """The sentences of a normalised view, long ones cut into overlapping pieces."""
    out: list[str] = []
    for raw in _SENTENCE_END.split(view):
        sentence = _WHITESPACE.sub(" ", raw).strip()
        if not _LETTER.search(sentence):
            continue
        if len(sentence) <= LONG_SENTENCE_CHARS:
            out.append(sentence)
            continue
        words = sentence.split(" ")
        step = PIECE_WORDS // 2
        for start in range(0, max(1, len(words) - step), step):
            out.append(" ".join(words[start : start + PIECE_WORDS]))
    return out


def windows(count: int) -> list[tuple[int, int]]:
    """(first, last) sentence of every run of 1..MAX_SENTENCES consecutive sentences."""
    return [
        (first, last)
        for first in range(count)
        for last in range(first, min(first + MAX_SENTENCES, count))
    ]


@attrs.frozen
class Features:
    """Every feature occurrence of a passage: its bucket and the sentence it is in.

    A window's feature vector is the count of each bucket over its sentences divided by
    the square root of its total count, so its linear score is the sum of the weights of
    its occurrences over that root: prefix sums over sentences give every window's score
    without building a vector.
    """

    sentences: list[str]
    buckets: npt.NDArray[np.int64]
    sentence_of: npt.NDArray[np.int64]
    cues: list[int]  # per sentence: a bit per ``cue_lexicon`` class it holds
    cue_set: int = 1  # which ``cue_lexicon.CUE_SETS`` entry the bits refer to


def features(text: str, cue_set: int = 1) -> Features:
    """The sentences of ``text`` and its feature occurrences, in sentence order; the cue
    bits are those of ``CUE_SETS[cue_set]`` (the model's own set)."""
    parts = sentences(normalise(text))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Features(parts, empty, empty, [], cue_set)
    lexicon = CUE_SETS[cue_set]
    joined = _SEPARATOR + _SEPARATOR.join(parts) + _SEPARATOR
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    is_sep = codes == ord(_SEPARATOR)
    sentence_at = np.cumsum(is_sep) - 1  # sentence index of each character
    seps_before = np.concatenate(([0], np.cumsum(is_sep)))
    hashes: list[npt.NDArray[np.uint64]] = []
    owners: list[npt.NDArray[np.int64]] = []
    for n in _NGRAM_SIZES:
        count = codes.size - n + 1
        if count <= 0:
            break
        acc = codes[:count].copy()
        for k in range(1, n):
            acc = acc * _PRIME + codes[k : k + count]
        # An n-gram may begin or end at a separator (a word boundary at the sentence's
        # edge) but not cross one.
        starts = np.arange(count)
        inside = (seps_before[starts + n - 1] - seps_before[starts + 1]) == 0
        hashes.append(acc[inside] * np.uint64(n))
        owners.append(sentence_at[starts[inside]])
    word_hashes: list[int] = []
    word_owner: list[int] = []
    cues: list[int] = []
    for index, sentence in enumerate(parts):
        words = _WORD.findall(sentence)
        cues.append(cue_mask(words, lexicon))
        for word in words:
            word_hashes.append(zlib.crc32(word.encode("utf-8"), _WORD_SALT))
            word_owner.append(index)
    if word_hashes:
        hashed: npt.NDArray[np.uint64] = np.array(word_hashes, dtype=np.uint64) * _BIGRAM_SALT
        owner = np.array(word_owner, dtype=np.int64)
        same = owner[:-1] == owner[1:]
        hashes += [hashed, (hashed[:-1][same] * _PRIME + hashed[1:][same]) + np.uint64(1)]
        owners += [owner, owner[:-1][same]]
    mixed = np.concatenate(hashes) * _MULT
    buckets = ((mixed >> np.uint64(40)) & _MASK).astype(np.int64)
    sentence_of = np.concatenate(owners).astype(np.int64)
    order = np.argsort(sentence_of, kind="stable")
    return Features(parts, buckets[order], sentence_of[order], cues, cue_set)


def cue_mask(words: list[str], lexicon: CueSet = CUE_SETS[1]) -> int:
    """The cue classes present in a sentence's words, as bits in ``lexicon.names`` order."""
    mask = 0
    present = set(words)
    names = lexicon.names
    for bit, name in enumerate(names):
        if not present.isdisjoint(lexicon.cues[name]):
            mask |= 1 << bit
    for size in (2, 3):
        for start in range(len(words) - size + 1):
            phrase = lexicon.phrases.get(" ".join(words[start : start + size]))
            if phrase is not None:
                mask |= 1 << names.index(phrase)
    return mask


def _cue_bucket(label: str) -> int:
    mixed = (zlib.crc32(label.encode("utf-8"), _WORD_SALT) * int(_MULT)) % (1 << 64)
    return (mixed >> 40) & (DIMENSION - 1)


#: Buckets are named after the classes, so set 2's first twelve classes and their pairs
#: land where set 1's do.
_NAMES = max((s.names for s in CUE_SETS.values()), key=len)
assert all(_NAMES[: len(s.names)] == s.names for s in CUE_SETS.values())
_SINGLE_CUE = [_cue_bucket(f"cue:{name}") for name in _NAMES]
_PAIR_CUE = {
    (a, b): _cue_bucket(f"cue:{_NAMES[a]}&{_NAMES[b]}")
    for a in range(len(_NAMES))
    for b in range(a + 1, len(_NAMES))
}


@functools.lru_cache(maxsize=1 << 14)
def cue_buckets(mask: int) -> tuple[int, ...]:
    """The features of a window's cue classes: one per class, one per pair of them."""
    bits = [b for b in range(len(_NAMES)) if mask >> b & 1]
    pairs = [_PAIR_CUE[(a, b)] for i, a in enumerate(bits) for b in bits[i + 1 :]]
    return (*(_SINGLE_CUE[b] for b in bits), *pairs)


def window_cues(found: Features) -> list[int]:
    """The cue mask of each window, in ``windows`` order (its sentences' masks OR-ed)."""
    out = []
    for first, last in windows(len(found.sentences)):
        mask = 0
        for sentence in range(first, last + 1):
            mask |= found.cues[sentence]
        out.append(mask)
    return out


def window_buckets(found: Features) -> list[tuple[tuple[int, int], npt.NDArray[np.int64]]]:
    """Each window and its feature occurrences (for training: a sparse row per window)."""
    bounds = np.searchsorted(found.sentence_of, np.arange(len(found.sentences) + 1))
    masks = window_cues(found)
    return [
        (
            (first, last),
            np.concatenate(
                (
                    found.buckets[bounds[first] : bounds[last + 1]],
                    np.array(cue_buckets(mask), dtype=np.int64),
                )
            ),
        )
        for (first, last), mask in zip(windows(len(found.sentences)), masks, strict=True)
    ]
