"""MetricVerdict: the rules of better / worse / equivalent / inconclusive and the words.

Numbers from scipy.stats.norm (the power formulas written out here) and hand-worked cases.
"""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from kagreport.evaluation import MetricVerdict
from kagreport.evaluation._verdicts import metric_verdict


def _verdict(estimate: float, p: float, level: float, n: int, squares: float) -> MetricVerdict:
    return metric_verdict(
        "correct", estimate, p, p, level, n_pairs=n, square_sum=squares, alpha=0.05, margin=0.01
    )


def test_identical_systems_are_equivalent() -> None:
    # No discordant pair: p = 1, the null SE is 0, the interval is [0, 0].
    v = _verdict(0.0, 1.0, 0.05, 1000, 0.0)
    assert (v.verdict, v.low, v.high, v.variance) == ("equivalent", 0.0, 0.0, 0.0)
    assert v.sentence(proportion=True).startswith("Equivalent within ±1.0 pp")


def test_inconclusive_with_power_in_words() -> None:
    # 60 discordant pairs of 500 (variance 0.12), difference 0.012 (3 net), p = 0.7.
    v = _verdict(0.012, 0.7, 0.025, 500, 60.0)
    assert v.verdict == "inconclusive"
    z = norm.ppf(1 - 0.025 / 2) + norm.ppf(0.8)
    assert v.mde == pytest.approx(z * math.sqrt(0.12 / 500), rel=1e-12)
    assert v.n_needed == math.ceil(0.12 * z**2 / 0.01**2)
    words = v.sentence(proportion=True)
    assert "Inconclusive" in words
    assert f"{v.n_needed:,} pairs" in words
    assert "At 500 pairs the test detects" in words


def test_better_and_worse() -> None:
    up = _verdict(0.1, 1e-6, 0.01, 500, 80.0)
    down = _verdict(-0.1, 1e-6, 0.01, 500, 80.0)
    assert (up.verdict, down.verdict) == ("better", "worse")
    assert up.low > 0
    assert down.high < 0
    assert up.level == pytest.approx(0.99)


def test_no_pairs() -> None:
    v = _verdict(math.nan, math.nan, math.nan, 0, 0.0)
    assert v.verdict == "inconclusive"
    assert v.mde is None
    assert v.n_needed is None
    assert "no item" in v.sentence(proportion=False)
