"""Paired comparison: sign-flip test, bootstrap interval, Holm, compare_items and its report.

Expected values come from published sources (Fisher's account of Darwin's Zea mays data,
mlxtend's test suite), from enumerations worked by hand in the comments, or from independent
computations (scipy.stats.binomtest and permutation_test, exact rational arithmetic, a plain
numpy bootstrap); never from the code under test.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from kagreport.evaluation import AnswerItem, EvaluationComparison, MetricComparison, RetrievalItem
from kagreport.evaluation._compare import compare_items, compare_scores
from kagreport.stats import (
    SignFlipResult,
    _bootstrap,
    _signflip,
    bootstrap_mean_interval,
    holm_adjust,
    sign_flip_test,
)

# --- reference data (shared data/reference-values/paired_permutation_reference.json) ------------

# Darwin (1876) via Fisher (1935) The Design of Experiments s. 21; R HistData::ZeaMays.
# Heights in inches of 15 cross- and self-fertilised pairs.
DARWIN_CROSS = [23.5, 12, 21, 22, 19.125, 21.5, 22.125, 20.375, 18.25, 21.625, 23.25, 21, 22.125, 23, 12]  # fmt: skip
DARWIN_SELF = [17.375, 20.375, 20, 20, 18.375, 18.625, 18.625, 15.25, 16.5, 18, 16.25, 18, 12.75, 15.5, 18]  # fmt: skip
DARWIN_EIGHTHS = [49, -67, 8, 16, 6, 23, 28, 41, 14, 29, 56, 24, 75, 60, -48]
# Fisher counts 863 of the 2^15 = 32768 assignments with a sum >= the observed 314 eighths; the
# two-sided p is 2 * 863 / 32768 = 1726/32768. The reference file's "published" string writes it
# as 0.052673828125, a slip: 1726/32768 is exactly 0.05267333984375 (as its scipy "check" says),
# so the test uses the fraction itself.
DARWIN_P = Fraction(1726, 32768)

# mlxtend/evaluate/tests/test_permutation.py::test_paired_runs_exact (published 0.031, rounded);
# 4 of the 2^7 assignments reach the observed |sum|.
MLXTEND_A = [3.67, 1.72, 3.46, 2.6, 2.03, 2.1, 3.01]
MLXTEND_B = [2.11, 1.79, 2.71, 1.89, 1.69, 1.71, 2.01]


# --- sign_flip_test: published and hand-worked values ---------------------------------------------


@pytest.mark.parametrize("n_resamples", [2**15, 10**5])
def test_darwin_zea_mays_exact(n_resamples: int) -> None:
    d = np.subtract(DARWIN_CROSS, DARWIN_SELF)
    result = sign_flip_test(d, n_resamples=n_resamples)
    assert result.p_value == float(DARWIN_P) == 0.05267333984375
    assert result.exact is True
    assert result.n_resamples == 32768
    assert result.n_nonzero == 15
    assert result.statistic == pytest.approx(314 / 8 / 15)  # 314 eighths of an inch over 15 pairs


def test_darwin_in_eighths_gives_the_same_p() -> None:
    assert np.array_equal(np.subtract(DARWIN_CROSS, DARWIN_SELF) * 8, DARWIN_EIGHTHS)
    result = sign_flip_test(DARWIN_EIGHTHS, n_resamples=2**15)
    assert result.p_value == float(DARWIN_P)
    assert result.statistic == 314 / 15


def test_darwin_with_too_small_a_budget_is_exact_on_its_lattice() -> None:
    # Darwin's differences are multiples of 1/8 inch: below the enumeration budget the
    # null distribution is convolved on that lattice, and the p-value is still Fisher's.
    d = np.subtract(DARWIN_CROSS, DARWIN_SELF)
    result = sign_flip_test(d, n_resamples=2**15 - 1, seed=1)
    assert (result.p_value, result.exact, result.method) == (
        float(DARWIN_P), True, "exact-lattice",
    )  # fmt: skip
    assert (result.n_resamples, result.n_nonzero) == (0, 15)
    assert sign_flip_test(d, n_resamples=1).p_value == float(DARWIN_P)


def test_off_lattice_small_budget_is_monte_carlo() -> None:
    # Darwin's differences moved off the 1/8 lattice (by irrational amounts near 1e-3): no
    # small lattice holds them, so below 2^15 resamples the p-value is Monte Carlo. The
    # reference is scipy's full enumeration of the same 2^15 assignments.
    d = np.subtract(DARWIN_CROSS, DARWIN_SELF) + np.sqrt(np.arange(2, 17)) * 1e-3
    reference = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    ).pvalue
    result = sign_flip_test(d, n_resamples=2**15 - 1, seed=1)
    assert (result.exact, result.method, result.n_resamples) == (False, "monte-carlo", 2**15 - 1)
    se = math.sqrt(reference * (1 - reference) / result.n_resamples)
    assert abs(result.p_value - reference) < 4 * se


def test_mlxtend_seven_pairs() -> None:
    result = sign_flip_test(np.subtract(MLXTEND_A, MLXTEND_B), n_resamples=128)
    assert result.p_value == 4 / 128 == 0.03125
    assert round(result.p_value, 3) == 0.031  # as published
    assert (result.exact, result.n_resamples, result.n_nonzero) == (True, 128, 7)


def test_one_two_three() -> None:
    # Sums of (+-1, +-2, +-3): 6, 0, 2, -4, 4, -2, 0, -6; only +++ and --- reach |S| >= 6.
    result = sign_flip_test([1, 2, 3])
    assert result == SignFlipResult(
        statistic=2.0, p_value=0.25, exact=True, n_resamples=8, n_nonzero=3
    )


def test_eleven_wins_and_no_loss() -> None:
    # Reference file, binary example: b = 11, c = 0 -> p = 2 / 2^11.
    d = [1.0] * 11 + [0.0] * 40
    result = sign_flip_test(d)
    assert result.p_value == 2 / 2**11 == 0.0009765625
    assert result.n_nonzero == 11


def test_zeros_are_not_flipped_but_count_in_the_mean() -> None:
    # Non-zero (1, 2, 3) as above -> 0.25; the mean is over all five pairs.
    result = sign_flip_test([0.0, 1.0, 0.0, 2.0, 3.0], n_resamples=8)
    assert (result.p_value, result.exact, result.n_resamples, result.n_nonzero) == (
        0.25,
        True,
        8,
        3,
    )
    assert result.statistic == 6 / 5


def test_all_zero_differences() -> None:
    assert sign_flip_test([0.0, 0.0, -0.0]) == SignFlipResult(0.0, 1.0, True, 1, 0)


def test_no_differences() -> None:
    result = sign_flip_test([])
    assert math.isnan(result.statistic)
    assert (result.p_value, result.n_nonzero) == (1.0, 0)


def test_exact_budget_boundary() -> None:
    # m = 4 -> 16 assignments: enumerated at n_resamples 16; at 15 the integers are their
    # own lattice (exact all the same), while off-lattice values go Monte Carlo.
    d = [1.0, 2.0, 3.0, 4.0]  # sums 10 and -10 only reach |S| >= 10 -> 2/16
    assert sign_flip_test(d, n_resamples=16).p_value == 0.125
    assert sign_flip_test(d, n_resamples=16).method == "exact-enumeration"
    assert sign_flip_test(d, n_resamples=15).p_value == 0.125
    assert sign_flip_test(d, n_resamples=15).method == "exact-lattice"
    off = [1.0, 2.0, 3.0, 4.0 + math.sqrt(2) / 100]
    assert sign_flip_test(off, n_resamples=16).exact is True
    assert sign_flip_test(off, n_resamples=15).method == "monte-carlo"


# --- sign_flip_test against independent implementations -------------------------------------------


@pytest.mark.parametrize("m", range(1, 14))
def test_exact_binary_equals_exact_mcnemar(m: int) -> None:
    # 0/1 outcomes: the exact two-sided sign-flip p over the m discordant items is the exact
    # McNemar (binomial) p-value; items both systems got right or wrong have d = 0.
    for b in range(m + 1):
        d = np.array([1.0] * b + [-1.0] * (m - b) + [0.0] * 7)
        np.random.default_rng(m * 100 + b).shuffle(d)
        assert sign_flip_test(d, n_resamples=2**13).p_value == stats.binomtest(b, m, 0.5).pvalue


def test_binary_beyond_the_budget_is_exact_mcnemar() -> None:
    # 300 items of 0/1 correctness, 40 discordant: 27 only the candidate got right, 13 only the
    # baseline. 2^40 > 20000 assignments, but the differences lie on the lattice {-1, 0, 1}: the
    # p-value is the exact binomial one, as scipy computes it, not a Monte Carlo estimate.
    rng = np.random.default_rng(7)
    candidate = np.array([1] * 27 + [0] * 13 + [1] * 150 + [0] * 110, dtype=float)
    baseline = np.array([0] * 27 + [1] * 13 + [1] * 150 + [0] * 110, dtype=float)
    order = rng.permutation(300)
    result = sign_flip_test(candidate[order] - baseline[order], n_resamples=20000, seed=3)
    assert (result.exact, result.method, result.n_nonzero) == (True, "exact-lattice", 40)
    # m = 40 <= 62: integer subset counts, so the fraction itself, correctly rounded.
    assert result.p_value == stats.binomtest(27, 40, 0.5).pvalue


@pytest.mark.parametrize("seed", range(12))
def test_exact_equals_scipy_permutation_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    d = rng.normal(0.3, 1.0, size=n)
    if seed % 3 == 0:
        d[rng.random(n) < 0.3] = 0.0  # scipy flips zeros too; the share is the same
    reference = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    ).pvalue
    assert sign_flip_test(d, n_resamples=2**n).p_value == reference


def test_exact_small_integers_equal_scipy_with_ties() -> None:
    # Integer differences make many assignments tie with the observed sum exactly.
    d = np.array([1, -2, 3, 1, 2, -1, 3, 2, 1, 1], dtype=float)
    reference = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    ).pvalue
    assert sign_flip_test(d, n_resamples=2**10).p_value == reference


def test_large_monte_carlo_near_normal_approximation() -> None:
    # m = 3000 continuous differences, 70,000 resamples: several resample chunks and many
    # blocks of groups. Under the sign-flip null S = sum(s_i x_i) has variance sum(x_i^2) and is
    # close to normal at this m (CLT), so p ~ 2 (1 - Phi(|S_obs| / sqrt(sum x^2))).
    rng = np.random.default_rng(11)
    d = rng.normal(0.02, 1.0, size=3000)
    result = sign_flip_test(d, n_resamples=70000, seed=5)
    z = abs(d.sum()) / math.sqrt(float((d**2).sum()))
    reference = 2 * stats.norm.sf(z)
    se = math.sqrt(reference * (1 - reference) / 70000)
    assert abs(result.p_value - reference) < 3 * se + 0.005


# --- sign_flip_test: Monte Carlo behaviour --------------------------------------------------------


def test_monte_carlo_is_deterministic_by_seed() -> None:
    d = np.random.default_rng(0).normal(0.1, 1.0, size=50)
    first = sign_flip_test(d, n_resamples=999, seed=42)
    assert first == sign_flip_test(d, n_resamples=999, seed=42)
    assert first.exact is False
    others = {sign_flip_test(d, n_resamples=999, seed=s).p_value for s in range(5)}
    assert len(others) > 1


def test_add_one_correction() -> None:
    # 40 distinct positive differences, off any small lattice: only the two all-equal
    # assignments (chance 2^-40 each) reach the observed |sum|, so no random assignment hits
    # and p = (0 + 1) / (1000 + 1).
    d = 0.5 + np.sqrt(np.arange(2, 42)) * 1e-3
    result = sign_flip_test(d, n_resamples=1000, seed=0)
    assert result.p_value == 1 / 1001
    assert (result.exact, result.n_resamples, result.n_nonzero) == (False, 1000, 40)
    assert result.method == "monte-carlo"
    # 40 equal differences are a lattice (one step): exactly 2 of 2^40 assignments.
    equal = sign_flip_test([0.5] * 40, n_resamples=1000, seed=0)
    assert (equal.p_value, equal.method) == (2 / 2**40, "exact-lattice")


def test_monte_carlo_symmetric_under_negation() -> None:
    d = np.random.default_rng(1).normal(0.2, 1.0, size=500)
    assert sign_flip_test(d, seed=9).p_value == sign_flip_test(-d, seed=9).p_value


def test_exact_does_not_depend_on_block_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    d = np.random.default_rng(2).normal(0.4, 1.0, size=13)
    expected = sign_flip_test(d, n_resamples=2**13)
    monkeypatch.setattr(_signflip, "_MAX_COLUMNS", 100)  # 82 chunks of assignments
    monkeypatch.setattr(_signflip, "_SIGN_BLOCK_BYTES", 150)  # one group per block
    assert sign_flip_test(d, n_resamples=2**13) == expected


# --- sign_flip_test: tie tolerance ----------------------------------------------------------------


def _exact_rational_p(tenths: Sequence[int]) -> Fraction:
    """Independent p-value over all sign assignments in exact rational arithmetic."""
    x = [Fraction(k, 10) for k in tenths if k]
    observed = abs(sum(x))
    hits = sum(
        abs(sum(s * v for s, v in zip(signs, x, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(x))
    )
    return Fraction(hits, 2 ** len(x))


def test_float_ties_count() -> None:
    # d = (0.4, 0.7, -0.2, -0.4), S_obs = 0.5. In tenths, (+-4 +-4) is 8, 0, 0, -8 and
    # (+-7 +-2) is 9, 5, -5, -9; their sums reach |S| >= 5 in 2 + 4 + 4 + 2 = 12 of 16
    # assignments. In floating point 0.4 + 0.7 - 0.2 - 0.4 = 0.49999999999999994 while other
    # assignments worth 0.5 round to 0.5 or above or below, so a comparison without tolerance
    # finds 10 of 16.
    d = [0.4, 0.7, -0.2, -0.4]
    assert sign_flip_test(d).p_value == 12 / 16 == float(_exact_rational_p([4, 7, -2, -4]))


def test_float_zero_sum() -> None:
    # 0.1 + 0.2 - 0.3 is 5.55e-17 in floating point but 0 exactly: every assignment counts.
    assert sign_flip_test([0.1, 0.2, -0.3]).p_value == 1.0


@pytest.mark.parametrize("seed", range(20))
def test_decimal_data_equal_exact_rational_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tenths = [int(k) for k in rng.integers(-9, 10, size=int(rng.integers(2, 11)))]
    d = [k / 10 for k in tenths]
    assert sign_flip_test(d, n_resamples=2**11).p_value == float(_exact_rational_p(tenths))


decimals = st.lists(st.integers(-50, 50).map(lambda k: k / 10), min_size=0, max_size=10)


@settings(max_examples=200, deadline=None)
@given(d=decimals, data=st.data())
def test_exact_p_symmetric_and_order_free(d: list[float], data: st.DataObject) -> None:
    p = sign_flip_test(d, n_resamples=2**10).p_value
    assert sign_flip_test([-v for v in d], n_resamples=2**10).p_value == p
    permuted = data.draw(st.permutations(d))
    assert sign_flip_test(permuted, n_resamples=2**10).p_value == p


# --- sign_flip_test: validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("differences", "message"),
    [
        ([1.0, math.nan], "`differences` contains NaN"),
        ([1.0, math.inf], "`differences` contains an infinity"),
        ([[1.0, 2.0]], r"`differences` must be one-dimensional, not of shape \(1, 2\)"),
        (["a"], "`differences` must be numbers"),
    ],
)
def test_invalid_differences(differences: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sign_flip_test(differences)
    with pytest.raises(ValueError, match=message):
        bootstrap_mean_interval(differences)


@pytest.mark.parametrize("n_resamples", [0, -1, True, 2.5])
def test_invalid_n_resamples(n_resamples: Any) -> None:
    with pytest.raises(ValueError, match="`n_resamples` must be"):
        sign_flip_test([1.0], n_resamples=n_resamples)


@pytest.mark.parametrize("seed", [-1, 1.5, None])
def test_invalid_seed(seed: Any) -> None:
    with pytest.raises(ValueError, match="`seed` must be a non-negative integer"):
        sign_flip_test([1.0], seed=seed)


# --- bootstrap_mean_interval ----------------------------------------------------------------------


def _reference_bootstrap(d: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float]:
    """Straightforward percentile bootstrap: resample pairs with replacement, take quantiles."""
    rng = np.random.default_rng(seed)
    means = rng.choice(d, size=(n_resamples, d.size), replace=True).mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


@pytest.mark.parametrize(
    "d",
    [
        # 0/1 correctness of two systems: differences in {-1, 0, 1} (multinomial path).
        np.repeat([1.0, -1.0, 0.0], [31, 17, 252]),
        # Continuous scores: > 64 distinct values (index path).
        np.random.default_rng(4).gamma(2.0, 0.1, size=150) - 0.15,
    ],
    ids=["binary", "continuous"],
)
def test_bootstrap_matches_plain_resampler(d: np.ndarray) -> None:
    # Both intervals estimate the same quantiles of the bootstrap distribution; with 20,000
    # resamples each endpoint's Monte Carlo error is about 0.02 standard errors of the mean, so
    # 0.1 standard errors is more than 3 of their combined errors.
    low, high = bootstrap_mean_interval(d, n_resamples=20000, seed=1)
    ref_low, ref_high = _reference_bootstrap(d, 20000, seed=2)
    se = d.std() / math.sqrt(d.size)
    assert abs(low - ref_low) < 0.1 * se
    assert abs(high - ref_high) < 0.1 * se
    assert low < d.mean() < high
    # And both are near the normal-theory interval at these sizes.
    assert abs((high - low) - 2 * 1.96 * se) < 0.15 * se


def test_bootstrap_chunked_index_path(monkeypatch: pytest.MonkeyPatch) -> None:
    d = np.random.default_rng(5).normal(0.1, 1.0, size=100)
    monkeypatch.setattr(_bootstrap, "_BOOTSTRAP_BLOCK_BYTES", 16 * 100 * 7)  # 7 resamples a block
    low, high = bootstrap_mean_interval(d, n_resamples=20000, seed=3)
    ref_low, ref_high = _reference_bootstrap(d, 20000, seed=4)
    se = d.std() / math.sqrt(d.size)
    assert abs(low - ref_low) < 0.1 * se
    assert abs(high - ref_high) < 0.1 * se


def test_bootstrap_deterministic_and_confidence() -> None:
    d = np.random.default_rng(6).normal(size=80)
    assert bootstrap_mean_interval(d, seed=3) == bootstrap_mean_interval(d, seed=3)
    narrow = bootstrap_mean_interval(d, confidence=0.5)
    wide = bootstrap_mean_interval(d, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_bootstrap_degenerate() -> None:
    empty = bootstrap_mean_interval([])
    assert math.isnan(empty.low)
    assert math.isnan(empty.high)
    assert not empty.defined
    assert (empty.level, empty.method) == (0.95, "percentile-bootstrap")
    assert tuple(bootstrap_mean_interval([0.25] * 10)) == (0.25, 0.25)
    assert tuple(bootstrap_mean_interval([3.0])) == (3.0, 3.0)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 95, True])
def test_bootstrap_invalid_confidence(confidence: Any) -> None:
    with pytest.raises(ValueError, match="`confidence` must be"):
        bootstrap_mean_interval([1.0, 2.0], confidence=confidence)


# --- holm_adjust ----------------------------------------------------------------------------------


def test_holm_hand_worked() -> None:
    # Sorted: 0.01, 0.03, 0.04 with multipliers 3, 2, 1 -> 0.03, 0.06, 0.04; the running maximum
    # makes the last 0.06. Back in input order: [0.03, 0.06, 0.06].
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)


def test_holm_nan_passes_through_and_is_not_counted() -> None:
    adjusted = holm_adjust([0.01, math.nan, 0.04, 0.03])
    assert math.isnan(adjusted[1])
    assert [adjusted[0], adjusted[2], adjusted[3]] == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)


def test_holm_cap_ties_and_order() -> None:
    assert holm_adjust([0.5, 0.6]) == [1.0, 1.0]  # 2 * 0.5 = 1; max(1, 0.6) = 1
    assert holm_adjust([0.04, 0.01]) == pytest.approx([0.04, 0.02])  # 2 * 0.01; max(0.02, 0.04)
    assert holm_adjust([0.02, 0.02]) == pytest.approx([0.04, 0.04])
    assert holm_adjust([0.2]) == [0.2]
    assert holm_adjust([]) == []
    assert holm_adjust([math.nan])[0] != holm_adjust([math.nan])[0]  # NaN


def test_holm_invalid() -> None:
    with pytest.raises(ValueError, match="`p_values` must lie in"):
        holm_adjust([0.5, 1.5])


@settings(max_examples=200, deadline=None)
@given(
    p=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8),
    alpha=st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.3]),
)
def test_holm_matches_step_down_rejections(p: list[float], alpha: float) -> None:
    # Holm (1979): sort ascending and reject H_(1), H_(2), ... while p_(i) <= alpha / (k - i + 1).
    # The adjusted p-values must reject exactly those hypotheses at any alpha.
    k = len(p)
    rejected: set[int] = set()
    for rank, index in enumerate(sorted(range(k), key=lambda i: p[i])):
        if p[index] > alpha / (k - rank):
            break
        rejected.add(index)
    adjusted = holm_adjust(p)
    # Products like 3 * p can round across alpha; compare with a hair of slack.
    assert {i for i in range(k) if adjusted[i] <= alpha * (1 - 1e-12)} <= rejected
    assert rejected <= {i for i in range(k) if adjusted[i] <= alpha * (1 + 1e-12)}
    assert all(p[i] <= adjusted[i] <= 1.0 for i in range(k))


# --- compare_items --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeEvaluation:
    items: tuple[Any, ...]
    judges: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)


def evaluation(
    columns: Mapping[str, Sequence[float | None]],
    identifiers: Sequence[str] | None = None,
    **kwargs: Any,
) -> FakeEvaluation:
    n = len(next(iter(columns.values())))
    identifiers = identifiers or [f"q{i}" for i in range(1, n + 1)]
    items = tuple(
        AnswerItem(
            identifier,
            question="?",
            answer="a",
            scores={m: v[i] for m, v in columns.items() if v[i] is not None},
        )
        for i, identifier in enumerate(identifiers)
    )
    return FakeEvaluation(items, **kwargs)


def _hand_worked_pair() -> tuple[FakeEvaluation, FakeEvaluation]:
    candidate = evaluation(
        {"correct": [1, 1, 1, 0, 1], "f1": [0.5, None, 1.0, 0.25, 0.75]},
        judges={"exact": {"kind": "exact"}, "llm": {"model": "a", "seed": None}},
        metadata={"name": "kag"},
    )
    # The baseline lists the same items in another order: pairing is by identifier.
    baseline = evaluation(
        {"correct": [0, 1, 0, 0, 0], "f1": [0.5, 0.5, None, 0.25, 0.25]},
        identifiers=["q5", "q2", "q1", "q4", "q3"],
        judges={"exact": {"kind": "exact"}, "llm": {"model": "b", "seed": None}, "x": {}},
        metadata={"name": "plain"},
    )
    return candidate, baseline


def test_compare_items_hand_worked() -> None:
    candidate, baseline = _hand_worked_pair()
    result = compare_items(candidate, baseline, kind="answers")
    # correct, paired by identifier: candidate q1..q5 = 1 1 1 0 1, baseline q1..q5 = 0 1 0 0 0
    # -> d = 1 0 1 0 1: m = 3 all +1, so only +++ and --- reach |S| = 3: p = 2/8 = 0.25.
    correct = result.metrics["correct"]
    assert (correct.n_pairs, correct.candidate_mean, correct.baseline_mean) == (5, 0.8, 0.2)
    assert correct.mean_difference == pytest.approx(0.6)
    assert (correct.p_value, correct.exact, correct.n_resamples, correct.n_nonzero) == (
        0.25, True, 8, 3,
    )  # fmt: skip
    # f1 by identifier: candidate q1..q5 = 0.5 . 1.0 0.25 0.75, baseline = . 0.5 0.25 0.25 0.5
    # (. = undefined) -> pairs q3, q4, q5: d = 0.75, 0, 0.25, m = 2, S_obs = 1.0; the sums
    # +-0.75 +-0.25 are 1, 0.5, -0.5, -1, so p = 2/4.
    f1 = result.metrics["f1"]
    assert (f1.n_pairs, f1.n_nonzero, f1.p_value) == (3, 2, 0.5)
    assert f1.candidate_mean == pytest.approx(2 / 3)  # (1.0 + 0.25 + 0.75) / 3
    assert f1.baseline_mean == pytest.approx(1 / 3)  # (0.25 + 0.25 + 0.5) / 3
    assert f1.mean_difference == pytest.approx(1 / 3)
    # Holm over two tests: sorted 0.25, 0.5 -> 2 * 0.25 = 0.5, max(0.5, 1 * 0.5) = 0.5.
    assert (correct.p_value_holm, f1.p_value_holm) == (0.5, 0.5)
    assert list(result.metrics) == ["correct", "f1"]
    assert (result.kind, result.candidate, result.baseline, result.n_items) == (
        "answers", "kag", "plain", 5,
    )  # fmt: skip
    # Same seed for the test and the bootstrap; the interval holds the mean difference.
    assert correct.ci_low <= correct.mean_difference <= correct.ci_high
    assert result.settings == {
        "n_resamples": 10000, "seed": 0, "confidence": 0.95, "tolerance": 1e-12,
        "test": "paired sign-flip, two-sided", "interval": "percentile bootstrap",
        "adjustment": "holm", "dust": 1e-12,
        "proportions": ["correct"],  # 0 or 1 on every item of both: shown in percent
    }  # fmt: skip
    assert result.family == ("correct", "f1")
    assert (correct.method, f1.method) == ("exact-enumeration", "exact-enumeration")
    assert (correct.ci_low, correct.ci_high) == tuple(
        bootstrap_mean_interval([1, 0, 1, 0, 1], seed=0)
    )


def test_judge_mismatch_recorded() -> None:
    candidate, baseline = _hand_worked_pair()
    result = compare_items(candidate, baseline, kind="answers")
    # "exact" is identical, "x" only in the baseline: only "llm" is recorded.
    assert result.judge_mismatch == {
        "llm": {"candidate": {"model": "a", "seed": None}, "baseline": {"model": "b", "seed": None}}
    }
    same = compare_items(candidate, candidate, kind="answers")
    assert same.judge_mismatch == {}
    assert all(c.p_value == 1.0 and c.n_nonzero == 0 for c in same.metrics.values())


def test_labels() -> None:
    candidate, baseline = _hand_worked_pair()
    result = compare_items(candidate, baseline, kind="answers", candidate_label="A")
    assert (result.candidate, result.baseline) == ("A", "plain")
    plain = compare_items(evaluation({"m": [1.0]}), evaluation({"m": [0.0]}), kind="answers")
    assert (plain.candidate, plain.baseline) == ("candidate", "baseline")


def test_different_items() -> None:
    candidate = evaluation({"m": [1.0] * 8})
    baseline = evaluation({"m": [1.0] * 8}, identifiers=[f"x{i}" for i in range(8)])
    with pytest.raises(ValueError, match="different items") as info:
        compare_items(candidate, baseline, kind="answers")
    message = str(info.value)
    assert "only in the candidate: 'q1', 'q2', 'q3', 'q4', 'q5' and 3 more" in message
    assert "only in the baseline: 'x0', 'x1', 'x2', 'x3', 'x4' and 3 more" in message
    with pytest.raises(ValueError, match=r"only in the baseline: 'q3'$"):
        compare_items(evaluation({"m": [1, 2]}), evaluation({"m": [1, 2, 3]}), kind="answers")


def test_shared_only_compares_the_common_items() -> None:
    # candidate q1..q5, baseline q2..q6: q1 and q6 are left out; on q2..q5 the differences
    # are 1-1, 1-0, 0-0, 1-0 = 0, 1, 0, 1: m = 2, both +1, so p = 2/4 = 0.5 (exact).
    candidate = evaluation({"m": [1, 1, 1, 0, 1]})
    baseline = evaluation({"m": [1, 0, 0, 0, 1]}, identifiers=["q2", "q3", "q4", "q5", "q6"])
    with pytest.raises(ValueError, match="shared_only=True"):
        compare_items(candidate, baseline, kind="answers")
    result = compare_items(candidate, baseline, kind="answers", shared_only=True)
    m = result.metrics["m"]
    assert (result.n_items, m.n_pairs, m.n_nonzero, m.p_value, m.exact) == (4, 4, 2, 0.5, True)
    assert m.mean_difference == pytest.approx(0.5)
    assert result.metadata == {  # five each, one of them only in one
        "items_in_candidate": 5,
        "items_in_baseline": 5,
        "items_only_in_candidate": 1,
        "items_only_in_baseline": 1,
    }
    with pytest.raises(ValueError, match="share no item"):
        compare_items(candidate, evaluation({"m": [1.0]}, identifiers=["x"]), kind="answers",
                      shared_only=True)  # fmt: skip


def test_duplicate_identifier() -> None:
    twice = evaluation({"m": [1.0, 0.0]}, identifiers=["q1", "q1"])
    with pytest.raises(ValueError, match="the baseline holds item 'q1' twice"):
        compare_items(evaluation({"m": [1.0]}), twice, kind="answers")


def test_no_shared_metric() -> None:
    with pytest.raises(ValueError, match="share no metric"):
        compare_items(evaluation({"a": [1.0]}), evaluation({"b": [1.0]}), kind="answers")


def test_invalid_arguments() -> None:
    candidate, baseline = _hand_worked_pair()
    with pytest.raises(ValueError, match="`kind` must be one of answers, retrieval"):
        compare_items(candidate, baseline, kind="answer")
    with pytest.raises(ValueError, match="`n_resamples` must be"):
        compare_items(candidate, baseline, kind="answers", n_resamples=0)
    with pytest.raises(ValueError, match="`confidence` must be"):
        compare_items(candidate, baseline, kind="answers", confidence=1.5)


def test_compare_scores_hand_worked() -> None:
    # The pairs of test_compare_items_hand_worked, already aligned by item (q1..q5), NaN
    # where a metric is undefined: the same numbers follow.
    nan = math.nan
    result = compare_scores(
        {"correct": [1, 1, 1, 0, 1], "f1": [0.5, nan, 1.0, 0.25, 0.75]},
        {"correct": [0, 1, 0, 0, 0], "f1": [nan, 0.5, 0.25, 0.25, 0.5], "only": [1] * 5},
        candidate_label="kag",
        baseline_label="plain",
        metadata={"run": "r"},
    )
    correct, f1 = result.metrics["correct"], result.metrics["f1"]
    assert (correct.n_pairs, correct.p_value, correct.exact, correct.n_nonzero) == (
        5,
        0.25,
        True,
        3,
    )
    assert (f1.n_pairs, f1.n_nonzero, f1.p_value) == (3, 2, 0.5)
    assert (correct.p_value_holm, f1.p_value_holm) == (0.5, 0.5)
    assert list(result.metrics) == ["correct", "f1"]  # "only" is not shared
    assert (result.candidate, result.baseline, result.n_items) == ("kag", "plain", 5)
    assert result.metadata == {"run": "r"}
    assert result.judge_mismatch == {}
    # The item form gives the same comparison (labels and judges aside).
    candidate, baseline = _hand_worked_pair()
    items = compare_items(candidate, baseline, kind="answers")
    assert {k: v.to_dict() for k, v in items.metrics.items()} == {
        k: v.to_dict() for k, v in result.metrics.items()
    }


@pytest.mark.parametrize(
    ("candidate", "baseline", "message"),
    [
        ({"m": [1.0, 0.0]}, {"m": [1.0]}, "the baseline's scores of 'm' hold 1 items, not 2"),
        ({"m": [[1.0]]}, {"m": [1.0]}, "must be one-dimensional, not of shape \\(1, 1\\)"),
        ({"m": ["a"]}, {"m": [1.0]}, "the candidate's scores of 'm' are not numbers"),
        ({"a": [1.0]}, {"b": [1.0]}, "share no metric"),
        ({"m": [1.0, math.inf]}, {"m": [1.0, 0.0]}, "the candidate's scores of 'm' hold an inf"),
        ({"m": [1e308]}, {"m": [-1e308]}, "the differences of 'm' overflow"),
    ],
)
def test_compare_scores_invalid(candidate: Any, baseline: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compare_scores(candidate, baseline)
    with pytest.raises(ValueError, match="`kind` must be"):
        compare_scores({"m": [1.0]}, {"m": [0.0]}, kind="x")


def test_metric_without_pairs_is_nan_and_not_adjusted() -> None:
    # "f1" is shared (each side has it somewhere) but never on the same item.
    candidate = evaluation({"correct": [1, 1, 1, 1], "f1": [0.5, None, None, None]})
    baseline = evaluation({"correct": [0, 0, 0, 0], "f1": [None, 0.5, None, None]})
    result = compare_items(candidate, baseline, kind="answers")
    f1 = result.metrics["f1"]
    assert f1.n_pairs == 0
    for value in (f1.candidate_mean, f1.mean_difference, f1.ci_low, f1.p_value, f1.p_value_holm):
        assert math.isnan(value)
    # One test left: Holm leaves it alone. d = 1 1 1 1 -> p = 2/16.
    assert result.metrics["correct"].p_value_holm == result.metrics["correct"].p_value == 0.125
    assert result.significant(0.2) == ("correct",)
    assert result.significant() == ()


def test_retrieval_items_and_significant() -> None:
    def items(hits: Sequence[float]) -> tuple[RetrievalItem, ...]:
        return tuple(
            RetrievalItem(f"q{i}", "?", ("a",), ("a",), scores={"hit@1": h, "mrr": h})
            for i, h in enumerate(hits)
        )

    candidate = FakeEvaluation(items([1.0] * 30 + [0.0] * 70))
    baseline = FakeEvaluation(items([0.0] * 30 + [0.0] * 70))
    result = compare_items(candidate, baseline, kind="retrieval", n_resamples=2000)
    # 30 discordant, all one way: exactly 2 of the 2^30 assignments reach |S| = 30.
    assert result.metrics["mrr"].p_value == 2 / 2**30
    assert result.metrics["mrr"].method == "exact-lattice"
    # Retrieval's default family is mrr alone: no adjustment, hit@1 reported but not tested.
    assert result.family == ("mrr",)
    assert result.metrics["mrr"].p_value_holm == 2 / 2**30
    assert math.isnan(result.metrics["hit@1"].p_value_holm)
    assert result.significant() == ("mrr",)
    both = compare_items(candidate, baseline, kind="retrieval", metrics=["hit@1", "mrr"])
    # hit@1 and mrr are equal on every item here: one hypothesis, tested once (issue 25).
    assert both.family == ("hit@1",)
    assert both.same_as == {"mrr": "hit@1"}
    assert both.metrics["mrr"].p_value_holm == 2 / 2**30
    assert both.significant() == ("hit@1", "mrr")
    rows = result.to_rows()
    assert [r["metric"] for r in rows] == ["hit@1", "mrr"]
    assert rows[0]["candidate"] == "candidate"
    assert rows[0]["n_pairs"] == 100


# --- EvaluationComparison: serialisation ----------------------------------------------------------


def _comparison_with_nan() -> EvaluationComparison:
    candidate, baseline = _hand_worked_pair()
    candidate = evaluation(
        {"correct": [1, 1, 1, 0, 1], "never": [1.0, None, None, None, None]},
        judges=candidate.judges,
        metadata={"name": "kag – 北京 ✓"},
    )
    baseline = evaluation(
        {"correct": [0, 1, 0, 0, 0], "never": [None, 1.0, None, None, None]},
        judges=baseline.judges,
    )
    result = compare_items(candidate, baseline, kind="answers", n_resamples=500)
    assert math.isnan(result.metrics["never"].p_value)
    return result


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".toml"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    comparison = _comparison_with_nan()
    path = tmp_path / f"comparison{suffix}"
    comparison.write(path)
    again = EvaluationComparison.read(path)
    assert EvaluationComparison.read(path, format=suffix[1:]) == again
    if suffix == ".toml":
        # TOML has no null: the judge identities' "seed": None keys are left out.
        assert again.judge_mismatch["llm"] == {
            "candidate": {"model": "a"},
            "baseline": {"model": "b"},
        }
        again = EvaluationComparison.from_dict(
            {**again.to_dict(), "judge_mismatch": comparison.judge_mismatch}
        )
    assert again == comparison
    assert again.metrics["correct"] == comparison.metrics["correct"]


def test_round_trip_without_none(tmp_path: Path) -> None:
    result = compare_items(
        evaluation({"m": [1, 0, 1]}), evaluation({"m": [0, 0, 1]}), kind="answers"
    )
    for fmt in ("json", "jsonl", "yaml", "toml"):
        path = tmp_path / f"out.{fmt}"
        result.write(path)
        assert EvaluationComparison.read(path) == result


def _no_constants(name: str) -> Any:
    raise AssertionError(f"bare {name} token")


def test_json_and_jsonl_have_no_nan_tokens() -> None:
    comparison = _comparison_with_nan()
    document = json.loads(comparison.dumps("json"), parse_constant=_no_constants)
    never = next(row for row in document["metrics"] if row["metric"] == "never")
    assert never["p_value"] is None
    assert document["schema"] == "kagreport.EvaluationComparison"
    assert document["schema_version"] == 3
    assert document["family"] == ["correct"]  # "never" has no pair: nothing to test
    lines = comparison.dumps("jsonl").splitlines()
    assert len(lines) == 3  # header + one row per metric
    rows = [json.loads(line, parse_constant=_no_constants) for line in lines]
    assert rows[0]["record"] == "header"
    assert "metrics" not in rows[0]
    assert [r["metric"] for r in rows[1:]] == ["correct", "never"]
    assert "NaN" not in comparison.dumps("jsonl")


def test_yaml_and_toml_text() -> None:
    comparison = _comparison_with_nan()
    assert ".nan" in comparison.dumps("yaml")
    assert "北京" in comparison.dumps("yaml")
    assert "[[metrics]]" in comparison.dumps("toml")
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        comparison.dumps("xml")


def test_from_dict_refuses_other_schemas() -> None:
    document = _comparison_with_nan().to_dict()
    with pytest.raises(ValueError, match=r"not a kagreport\.EvaluationComparison document"):
        EvaluationComparison.from_dict({**document, "schema": "kagreport.AnswerEvaluation"})
    with pytest.raises(ValueError, match="schema version 4 is not supported"):
        EvaluationComparison.from_dict({**document, "schema_version": 4})
    with pytest.raises(ValueError, match="not a valid EvaluationComparison: metrics: missing"):
        EvaluationComparison.from_dict({k: v for k, v in document.items() if k != "metrics"})
    with pytest.raises(ValueError, match=r"metrics\[0\]\.n_pairs: missing"):
        EvaluationComparison.from_dict({**document, "metrics": [{"metric": "m"}]})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"metrics": [[1, 2]]}, r"metrics\[0\]: expected an object, got \[1, 2\]"),
        ({"judge_mismatch": ["x"]}, r'judge_mismatch: expected an object or null, got \["x"\]'),
        ({"judge_mismatch": {"j": "x"}}, 'judge_mismatch.j: expected an object, got "x"'),
        ({"n_items": 3.7}, "n_items: expected an integer, got 3.7"),
        ({"n_items": True}, "n_items: expected an integer, got true"),
        ({"n_items": -1}, "n_items: expected an integer >= 0, got -1"),
        ({"settings": ["ab"]}, r'settings: expected an object or null, got \["ab"\]'),
    ],
)
def test_from_dict_refuses_malformed_fields(change: dict[str, Any], message: str) -> None:
    document = {**_comparison_with_nan().to_dict(), **change}
    with pytest.raises(ValueError, match=message):
        EvaluationComparison.from_dict(document)


def test_from_dict_refuses_malformed_rows() -> None:
    document = _comparison_with_nan().to_dict()
    row = document["metrics"][0]
    with pytest.raises(
        ValueError, match=r'metrics\[0\]\.exact: expected true or false, got "false"'
    ):
        EvaluationComparison.from_dict({**document, "metrics": [{**row, "exact": "false"}]})
    with pytest.raises(ValueError, match="names a metric twice"):
        EvaluationComparison.from_dict({**document, "metrics": [row, row]})
    with pytest.raises(ValueError, match=r"metrics\[0\]\.n_pairs: expected an integer <="):
        EvaluationComparison.from_dict({**document, "metrics": [{**row, "n_pairs": 10**400}]})


def test_write_refuses_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot tell the format"):
        _comparison_with_nan().write(tmp_path / "out.txt")


def test_equality_is_nan_aware_and_frozen() -> None:
    comparison = _comparison_with_nan()
    same = EvaluationComparison.from_dict(comparison.to_dict())
    assert same == comparison
    assert same.metrics["never"] == comparison.metrics["never"]
    assert hash(same.metrics["never"]) == hash(comparison.metrics["never"])
    other = EvaluationComparison.from_dict({**comparison.to_dict(), "candidate": "other"})
    assert other != comparison
    assert comparison != comparison.to_dict()
    with pytest.raises(FrozenInstanceError):
        comparison.candidate = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(comparison)


def test_metric_comparison_round_trip_and_validation() -> None:
    row = MetricComparison("m", 3, 0.5, 0.25, 0.25, 0.0, 0.5, 0.5, 1.0, True, 8, 3)
    assert MetricComparison.from_dict(row.to_dict()) == row
    assert MetricComparison.from_dict({**row.to_dict(), "p_value": None}).p_value != 0.5
    with pytest.raises(ValueError, match="metrics\\['x'\\] holds metric 'm'"):
        EvaluationComparison("answers", "a", "b", {"x": row}, 3)
    with pytest.raises(ValueError, match="`kind` must be one of"):
        EvaluationComparison("other", "a", "b", {"m": row}, 3)
    sorted_metrics = EvaluationComparison(
        "answers",
        "a",
        "b",
        {"z": MetricComparison(**{**row.to_dict(), "metric": "z"}), "m": row},
        3,
    )
    assert list(sorted_metrics.metrics) == ["m", "z"]
