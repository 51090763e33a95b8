"""The retrieval guard: one definition of "a match", shared by every tool.

A hit passes when its fused score is at least ``min_score`` (absolute floor) and at
least ``alpha`` times the best hit's score (relative floor). ``search`` annotates hits
with the verdict; ``get_context`` drops the ones that fail and says how many. Sharing
one guard means two tools can never disagree about the same hit.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from retrieval_mcp.records import Hit


@attrs.frozen
class GuardSettings:
    min_score: float = 0.0
    alpha: float = 0.0  # 0 disables the relative floor; 1 keeps only ties with the best


@attrs.frozen
class GuardVerdict:
    passed: tuple[Hit, ...]
    rejected: tuple[Hit, ...]
    threshold: float


def guard_threshold(hits: Sequence[Hit], settings: GuardSettings) -> float:
    best = max((h.score for h in hits), default=0.0)
    return max(settings.min_score, settings.alpha * best)


def apply_guard(hits: Sequence[Hit], settings: GuardSettings) -> GuardVerdict:
    """Split hits into passed and rejected, each in the original order."""
    threshold = guard_threshold(hits, settings)
    passed = tuple(h for h in hits if h.score >= threshold)
    rejected = tuple(h for h in hits if h.score < threshold)
    return GuardVerdict(passed=passed, rejected=rejected, threshold=threshold)
