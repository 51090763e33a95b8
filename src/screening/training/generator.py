"""Labelled passages for the learned screen, from templates and one seed.

A passage is carrier prose with zero or one payload embedded in it (at the start, in
the middle, at the end, alone, or inside a parenthesis, a quote or a comment), in one
of six languages, plain or disguised (``obfuscations.py``), in one sentence or split
over several. Clean passages are carrier prose with or without a hard negative
(``negatives.py``). Carriers are partitioned by ``part`` so the validation split sees
paragraphs training never did.
"""

from __future__ import annotations

import random

import attrs

from retrieval_mcp.screening.training import (
    carriers_more,
    negatives_more,
    prose_payloads,
    templates_en,
    templates_intl,
)
from retrieval_mcp.screening.training.carriers import CARRIERS
from retrieval_mcp.screening.training.negatives import NEG_SLOTS, NEGATIVES
from retrieval_mcp.screening.training.obfuscations import OBFUSCATIONS
from retrieval_mcp.screening.training.template_language import expand

LANGUAGES = ("en", "fr", "de", "es", "pt", "it")
#: Share of injected passages per language: English most, the others evenly.
LANGUAGE_WEIGHTS = (0.4, 0.12, 0.12, 0.12, 0.12, 0.12)
OBFUSCATION_RATE = 0.2
SPLIT_RATE = 0.12
#: Optional families (ADR 0046), off unless named: ``carriers`` (more clean paragraphs
#: outside English), ``about_ai`` and ``people`` (hard negatives about assistants and
#: injection, and instructions to people), ``payloads`` (tool calls in prose,
#: conditionals and roundabout addressees in six languages).
EXTRAS = frozenset({"carriers", "about_ai", "people", "payloads"})


@attrs.frozen
class Passage:
    text: str
    injected: bool
    intent: str  # payload intent, or "carrier" / "hard_negative"
    lang: str
    obfuscation: str
    payload: str  # the injected text as embedded (empty when clean)


def _slots(lang: str, extras: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    shared = {k: v for k, v in templates_en.SLOTS.items()}
    if lang != "en":
        shared |= templates_intl.SLOTS[lang]
    if "payloads" in extras:
        shared |= prose_payloads.SLOTS[lang]
    return shared


def _payload_templates(lang: str, extras: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    base = templates_en.PAYLOADS if lang == "en" else templates_intl.PAYLOADS[lang]
    if "payloads" not in extras:
        return base
    more = prose_payloads.PAYLOADS[lang]
    return {k: [*base.get(k, []), *more.get(k, [])] for k in sorted({*base, *more})}


def _splits(lang: str) -> list[list[str]]:
    return templates_en.SPLITS if lang == "en" else templates_intl.SPLITS[lang]


def _carriers(lang: str, part: int, extras: frozenset[str] = frozenset()) -> list[list[str]]:
    """Paragraphs of ``lang`` for part 0 (training: four in five) or 1 (the fifth)."""
    pool = CARRIERS[lang]
    if "carriers" in extras:
        pool = [*pool, *carriers_more.CARRIERS.get(lang, [])]
    chosen = [p for i, p in enumerate(pool) if (i % 5 == 4) == (part == 1)]
    return chosen or pool


def payload(
    lang: str, rng: random.Random, extras: frozenset[str] = frozenset()
) -> tuple[str, str, bool]:
    """(intent, text, split) of one random payload in ``lang``."""
    slots = _slots(lang, extras)
    if rng.random() < SPLIT_RATE:
        parts = rng.choice(_splits(lang))
        return "split", " ".join(expand(p, rng, slots) for p in parts), True
    templates = _payload_templates(lang, extras)
    intent = rng.choice(sorted(templates))
    text = expand(rng.choice(templates[intent]), rng, slots)
    return intent, text, False


def _carrier_sentences(
    lang: str, rng: random.Random, part: int, extras: frozenset[str] = frozenset()
) -> list[str]:
    paragraph = rng.choice(_carriers(lang, part, extras))
    count = rng.randint(1, len(paragraph))
    start = rng.randrange(len(paragraph) - count + 1)
    sentences = list(paragraph[start : start + count])
    if rng.random() < 0.3:  # a second paragraph, in the same or another language
        other = lang if rng.random() < 0.7 else rng.choice(LANGUAGES)
        sentences += rng.choice(_carriers(other, part, extras))[: rng.randint(1, 3)]
    return sentences


def _embed(sentences: list[str], text: str, rng: random.Random) -> str:
    where = rng.choices(
        ["start", "middle", "end", "alone", "wrapped", "newline"], [3, 4, 3, 1, 1, 1]
    )[0]
    if where == "alone":
        return text
    if where == "wrapped":
        text = rng.choice(
            ["({})", '"{}"', "<!-- {} -->", "> {}", "[{}]", "*{}*", "Note: {}"]
        ).format(text)
        where = "middle"
    if where == "newline":
        return "\n\n".join([" ".join(sentences), text])
    at = {"start": 0, "end": len(sentences)}.get(where, rng.randint(0, len(sentences)))
    return " ".join([*sentences[:at], text, *sentences[at:]])


def injected(rng: random.Random, part: int, extras: frozenset[str] = frozenset()) -> Passage:
    lang = rng.choices(LANGUAGES, LANGUAGE_WEIGHTS)[0]
    intent, text, split = payload(lang, rng, extras)
    obfuscation = "split" if split else "none"
    if rng.random() < OBFUSCATION_RATE:
        obfuscation = rng.choice(sorted(OBFUSCATIONS))
        text = OBFUSCATIONS[obfuscation](text, rng)
    whole = _embed(_carrier_sentences(lang, rng, part, extras), text, rng)
    return Passage(whole, True, intent, lang, obfuscation, text)


def _negatives(lang: str, extras: frozenset[str]) -> list[str]:
    out = NEGATIVES[lang]
    if "about_ai" in extras:
        out = [*out, *negatives_more.ABOUT_AI[lang]]
    if "people" in extras:
        out = [*out, *negatives_more.FOR_PEOPLE[lang]]
    return out


def clean(rng: random.Random, part: int, extras: frozenset[str] = frozenset()) -> Passage:
    lang = rng.choices(LANGUAGES, LANGUAGE_WEIGHTS)[0]
    sentences = _carrier_sentences(lang, rng, part, extras)
    if rng.random() < 0.6:
        slots = _slots("en") | NEG_SLOTS | negatives_more.SLOTS
        negatives = _negatives(lang, extras)
        picked = [expand(rng.choice(negatives), rng, slots) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.1:
            picked = [OBFUSCATIONS["case"](p, rng) for p in picked]
        text = _embed(sentences, " ".join(picked), rng)
        return Passage(text, False, "hard_negative", lang, "none", "")
    return Passage(" ".join(sentences), False, "carrier", lang, "none", "")


def passages(
    seed: int,
    *,
    injected_count: int,
    clean_count: int,
    part: int,
    extras: frozenset[str] = frozenset(),
) -> list[Passage]:
    """``injected_count`` injected and ``clean_count`` clean passages, reproducibly; with
    ``extras`` (names from ``EXTRAS``) the optional families are drawn from too."""
    unknown = extras - EXTRAS
    if unknown:
        raise ValueError(f"unknown generator extras: {sorted(unknown)}")
    rng = random.Random(seed)
    out = [injected(rng, part, extras) for _ in range(injected_count)]
    out += [clean(rng, part, extras) for _ in range(clean_count)]
    return out
