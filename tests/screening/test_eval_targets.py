"""The screen's targets on the evaluation set, so a regression fails CI.

Targets (bench/injection_eval.py): at least 95% of the injected passages the rules
were tuned on are flagged, at most 1% of clean passages (every demo-corpus chunk and,
where the shared data is present, every Cranfield abstract chunk). The fresh holdout
is held to the level it was measured at, so a change cannot quietly trade it away.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.screening.eval_set import load_eval_module

_EVAL = load_eval_module()


@pytest.fixture(scope="module")
def report() -> Any:
    cranfield = _EVAL.CRAN_DOCS if _EVAL.CRAN_DOCS.exists() else None
    return _EVAL.evaluate(_EVAL.load_cases(), _EVAL.clean_passages(cranfield))


def test_injected_passages_are_flagged(report: Any) -> None:
    assert report.tuned_detection.value >= _EVAL.DETECTION_TARGET, report.missed


def test_clean_passages_are_not_flagged(report: Any) -> None:
    assert report.clean_fp.total >= 8
    assert report.clean_fp.value <= _EVAL.CLEAN_FP_TARGET, report.clean_flagged


def test_cranfield_is_screened_when_present(report: Any) -> None:
    if not _EVAL.CRAN_DOCS.exists():
        pytest.skip("no Cranfield collection on this machine")
    assert report.clean_fp_by_source["cranfield"].total > 1400


def test_fresh_holdout_does_not_regress(report: Any) -> None:
    assert report.detection_by_split["holdout2"].value >= 0.45


def test_hard_negatives(report: Any) -> None:
    assert report.hard_flag_detection.value == 1.0, report.hard_wrong
    assert report.hard_clean_fp.value <= 0.10, report.hard_wrong
