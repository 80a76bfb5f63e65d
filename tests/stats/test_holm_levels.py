"""Holm's levels and the test-based interval: an interval at confidence 1 - level_i
excludes 0 exactly when Holm's adjusted p-value is below alpha.

Oracle: Holm's procedure written out step by step here (Holm 1979), and scipy.stats.norm
for the normal quantiles; the interval from Altman and Bland (2011)'s worked recipe.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from kagreport.stats import holm_adjust, interval_from_test
from kagreport.stats._holm import holm_levels


def _rejects(p: list[float], alpha: float) -> list[bool]:
    """Holm's step-down decisions, step by step."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    decided = [False] * len(p)
    for step, i in enumerate(order):
        if p[i] >= alpha / (len(p) - step):
            break
        decided[i] = True
    return decided


def test_hand_worked() -> None:
    # 0.01 < 0.05/3 rejects at 0.0167; 0.03 >= 0.05/2 stops at 0.025; 0.04 also at 0.025.
    assert holm_levels([0.01, 0.04, 0.03]) == pytest.approx([0.05 / 3, 0.025, 0.025])
    assert holm_levels([0.001, 0.002]) == pytest.approx([0.025, 0.05])
    assert math.isnan(holm_levels([0.5, math.nan])[1])
    assert holm_levels([0.5, math.nan])[0] == pytest.approx(0.05)


def test_equal_p_values_share_a_level_whatever_their_order() -> None:
    # By hand: 0.01 < 0.05/3 rejects both (Holm rejects equal p-values together), both at
    # the first one's step 0.05/3; 0.3 >= 0.05 stops at the last step.
    assert holm_levels([0.01, 0.01, 0.3]) == pytest.approx([0.05 / 3, 0.05 / 3, 0.05])
    assert holm_levels([0.3, 0.01, 0.01]) == pytest.approx([0.05, 0.05 / 3, 0.05 / 3])
    # 0.04 >= 0.05/2 stops at the first step: both at 0.025.
    assert holm_levels([0.04, 0.04]) == pytest.approx([0.025, 0.025])


@pytest.mark.parametrize("seed", range(20))
def test_levels_match_holm_decisions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = (rng.random(12) ** rng.uniform(1, 6)).tolist()
    for alpha in (0.05, 0.1):
        levels = holm_levels(p, alpha)
        adjusted = holm_adjust(p)
        decisions = _rejects(p, alpha)
        assert [pi < li for pi, li in zip(p, levels, strict=True)] == decisions
        assert [a < alpha for a in adjusted] == decisions


def test_interval_from_test_is_the_normal_interval_where_it_agrees_with_the_test() -> None:
    # estimate ± z * null_se, z = Phi^-1(0.975) (SciPy's norm.ppf)
    found = interval_from_test(0.1, 0.01, 0.95, 0.03)
    assert found.low == pytest.approx(0.1 - norm.ppf(0.975) * 0.03, rel=1e-12)
    assert found.high == pytest.approx(0.1 + norm.ppf(0.975) * 0.03, rel=1e-12)
    assert found.method == "test-compatible"
    # A p-value near 1 keeps the data's width (the test-based interval would be
    # 0.039 ± 1.96 * 0.039 / 0.2275 = ±0.336 here).
    wide = interval_from_test(0.039, 0.82, 0.95, 0.02)
    assert wide.high - wide.low == pytest.approx(2 * norm.ppf(0.975) * 0.02, rel=1e-12)


def test_interval_from_test_takes_the_tests_side_of_zero() -> None:
    for p in (1e-200, 1e-6, 0.003, 0.0499, 0.0501, 0.3, 0.999, 1.0):
        for confidence in (0.95, 0.99, 1 - 0.05 / 4950):
            for null_se in (0.001, 0.01, 0.1, math.nan):
                i = interval_from_test(-0.02, p, confidence, null_se)
                assert (i.high < 0) == (p < 1 - confidence), (p, confidence, null_se)
                assert i.low <= -0.02 <= i.high
    # The normal bound would cross 0 but the test rejects: the bound moves just past 0.
    i = interval_from_test(0.05, 0.04, 0.95, 0.03)
    assert 0.0 < i.low < 1e-15
    assert i.high == pytest.approx(0.1)
    # The normal bound excludes 0 but the test does not reject: the bound is 0.
    i = interval_from_test(0.05, 0.06, 0.95, 0.01)
    assert i.low == pytest.approx(0.0, abs=1e-15)


def test_interval_from_test_without_a_null_se_is_test_based() -> None:
    # Altman and Bland (2011): SE = |estimate| / Phi^-1(1 - p/2); 0.1 / 2.5758 = 0.038823.
    found = interval_from_test(0.1, 0.01, 0.95, math.nan)
    se = 0.1 / norm.ppf(1 - 0.01 / 2)
    assert found.low == pytest.approx(0.1 - norm.ppf(0.975) * se, rel=1e-12)
    assert found.high == pytest.approx(0.1 + norm.ppf(0.975) * se, rel=1e-12)


def test_interval_without_evidence_keeps_zero() -> None:
    # p = 1 or no difference: the null standard error, widened to reach 0.
    i = interval_from_test(0.0, 1.0, 0.95, 0.01)
    assert (i.low, i.high) == pytest.approx((-norm.ppf(0.975) * 0.01, norm.ppf(0.975) * 0.01))
    i = interval_from_test(0.3, 1.0, 0.95, 0.01)
    assert i.low == pytest.approx(0.0, abs=1e-15)
    assert math.isnan(interval_from_test(math.nan, 0.5, 0.95, 0.1).low)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: holm_levels([0.5], 0), r"`alpha` must be in \(0, 1\)"),
        (lambda: holm_levels([1.5]), r"`p_values` must lie in \[0, 1\]"),
        (lambda: interval_from_test(0.1, 0.5, 1.0, 0.1), r"`confidence` must be in \(0, 1\)"),
        (lambda: interval_from_test(0.1, 1.5, 0.9, 0.1), r"`p_value` must be in \[0, 1\]"),
    ],
)
def test_each_message(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
