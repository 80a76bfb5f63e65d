"""Krippendorff's alpha: published values, hand-worked tables and an independent implementation."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kagreport.evaluation import Agreement, krippendorff_alpha
from kagreport.evaluation._agreement import (
    LEVELS,
    alpha_interval,
    compute_agreement,
    pairwise_agreement,
)

Table = Sequence[Sequence[float | None]]

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12
# units with missing data. Published there (p. 8, as quoted in the krippendorff package's
# docstring): nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797; n = 40 pairable values.
# nltk's test_disagreement.py::test_advanced publishes nominal 0.743421052632.
K2011_C: Table = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
K2011_C_PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# Wikipedia "Krippendorff's alpha", computational example (3 coders x 15 units); the krippendorff
# package's docstring publishes nominal 0.691358 and interval 0.810845.
WIKIPEDIA: Table = [
    [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
    [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
    [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
]
WIKIPEDIA_PUBLISHED = {"nominal": 0.691358, "interval": 0.810845}

# PITFALLS.md B7: four judges rate 8 items on poor < fair < good < very good < excellent.
SCALE = ["poor", "fair", "good", "very good", "excellent"]
B7: list[list[str | None]] = [
    ["fair", "good", "good", "fair", "poor", "very good", "poor", "fair"],
    ["fair", "good", "good", "fair", "fair", "very good", "poor", "fair"],
    ["good", "good", "good", "fair", "good", "very good", "fair", "fair"],
    ["fair", "good", "good", "fair", "very good", "very good", "poor", "fair"],
]


# --- published values ---------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_2011_published_values(level: str) -> None:
    assert round(krippendorff_alpha(K2011_C, level), 3) == K2011_C_PUBLISHED[level]


def test_krippendorff_2011_nominal_to_nltk_precision_and_pairable_values() -> None:
    assert round(krippendorff_alpha(K2011_C, "nominal"), 12) == 0.743421052632
    result = compute_agreement(K2011_C, "nominal", n_resamples=0)
    assert (result.n_coders, result.n_units) == (4, 12)
    # Unit 12 has a single rating and drops out; the paper's n counts the other 40 values.
    assert (result.n_pairable_units, result.n_pairable_values) == (11, 40)
    assert math.isnan(result.low)
    assert math.isnan(result.high)


def test_krippendorff_2011_with_labels_and_numbers_as_domain() -> None:
    # The same table written as labels (the krippendorff package's docstring, ordinal 0.815).
    names = ["very low", "low", "mid", "high", "very high"]
    labelled = [[None if v is None else names[int(v) - 1] for v in row] for row in K2011_C]
    assert round(krippendorff_alpha(labelled, "ordinal", value_order=names), 3) == 0.815
    assert round(krippendorff_alpha(labelled, "nominal"), 3) == 0.743
    # Numbers with their scale declared, then reversed: ordinal differences only see ranks.
    assert round(krippendorff_alpha(K2011_C, "ordinal", value_order=[1, 2, 3, 4, 5]), 3) == 0.815
    reversed_order = krippendorff_alpha(K2011_C, "ordinal", value_order=[5, 4, 3, 2, 1])
    assert round(reversed_order, 3) == 0.815


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_wikipedia_published_values(level: str) -> None:
    assert round(krippendorff_alpha(WIKIPEDIA, level), 6) == WIKIPEDIA_PUBLISHED[level]


def test_nltk_three_coders_nominal_is_minus_one_third() -> None:
    # nltk test_disagreement.py::test_easy: dress1 YES/NO/NO, dress2 YES/NO, dress3 NO alone
    # (it drops out). Published -0.3333333. By hand: n = 5 values (YES 2, NO 3); D_o = 4/5
    # (dress1 gives 4 YES-NO pairs / 2, dress2 gives 2 / 1); D_e = 2*2*3 / (5*4) = 3/5.
    table: list[list[str | None]] = [
        ["YES", "YES", None],
        ["NO", "NO", None],
        ["NO", None, "NO"],
    ]
    alpha = krippendorff_alpha(table, "nominal")
    assert round(alpha, 7) == -0.3333333
    assert alpha == pytest.approx(-1 / 3, abs=1e-15)


# --- hand-worked ----------------------------------------------------------------------------------


def test_hand_worked_two_coders() -> None:
    # A: 1 2 3, B: 1 2 4. Pairable values 1 1 2 2 3 4, n = 6; each unit has m_u = 2.
    # Coincidences: o_11 = o_22 = 2, o_34 = o_43 = 1.
    # Interval: D_o = (1 + 1) * 1**2 / 6; D_e = sum over ordered pairs of distinct values
    #   (i != j) of (x_i - x_j)**2 / (n (n - 1)) = 82 / 30, so alpha = 1 - (10/30) / (82/30) = 36/41.
    # Nominal: D_o = 2/6; D_e = (30 - 4 same-value ordered pairs) / 30, so alpha = 1 - 10/26.
    table: Table = [[1, 2, 3], [1, 2, 4]]
    assert krippendorff_alpha(table) == pytest.approx(36 / 41, rel=1e-14)
    assert krippendorff_alpha(table, "nominal") == pytest.approx(8 / 13, rel=1e-14)


# --- PITFALLS B7: labels and the order of the scale ----------------------------------------------


def test_b7_nominal_needs_no_order() -> None:
    assert krippendorff_alpha(B7, "nominal") == pytest.approx(0.6526610644257703, abs=1e-14)
    with_order = krippendorff_alpha(B7, "nominal", value_order=SCALE)
    assert with_order == pytest.approx(0.6526610644257703, abs=1e-14)


def test_b7_ordinal_with_declared_order() -> None:
    alpha = krippendorff_alpha(B7, "ordinal", value_order=SCALE)
    assert alpha == pytest.approx(0.6846006908991902, abs=1e-14)


def test_b7_interval_on_ranks_and_on_unit_interval() -> None:
    assert krippendorff_alpha(B7, "interval", value_order=SCALE) == pytest.approx(
        0.6770833333333334, abs=1e-14
    )
    for positions in ([1, 2, 3, 4, 5], [0.0, 0.25, 0.5, 0.75, 1.0]):
        numeric = [[positions[SCALE.index(str(v))] for v in row] for row in B7]
        assert krippendorff_alpha(numeric, "interval") == pytest.approx(
            0.6770833333333334, abs=1e-14
        )


def test_b7_alphabetical_order_only_when_passed_explicitly() -> None:
    alphabetical = ["fair", "good", "poor", "very good"]
    wrong = krippendorff_alpha(B7, "ordinal", value_order=alphabetical)
    assert wrong == pytest.approx(0.6533443094411546, abs=1e-14)
    assert krippendorff_alpha(B7, "ordinal", value_order=SCALE) != pytest.approx(wrong)


@pytest.mark.parametrize("level", ["ordinal", "interval", "ratio"])
def test_b7_labels_without_order_raise_naming_them(level: str) -> None:
    with pytest.raises(ValueError, match="value_order") as info:
        krippendorff_alpha(B7, level)
    for label in ("'poor'", "'fair'", "'good'", "'very good'"):
        assert label in str(info.value)
    with pytest.raises(ValueError, match="value_order"):
        alpha_interval(B7, level)


def test_label_missing_from_the_order_is_named() -> None:
    with pytest.raises(ValueError, match=r"labels not in `value_order`: 'very good'$"):
        krippendorff_alpha(B7, "ordinal", value_order=["poor", "fair", "good", "excellent"])


# --- undefined alpha ------------------------------------------------------------------------------

UNDEFINED: dict[str, Table] = {
    "one coder": [[1, 2, 3, 4]],
    "no coder": [],
    "no unit": [[], []],
    "no pairable unit": [[1, None, 3], [None, 2, None]],
    "all ratings identical": [[2, 2, 2], [2, 2, None]],
    "variation only in unpairable units": [[1, 1, 5], [1, 1, None]],
}


@pytest.mark.parametrize("case", UNDEFINED)
@pytest.mark.parametrize("level", LEVELS)
def test_undefined_alpha_is_nan_without_warnings(case: str, level: str) -> None:
    table = UNDEFINED[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(krippendorff_alpha(table, level))
        low, high = alpha_interval(table, level, n_resamples=50)
        assert math.isnan(low)
        assert math.isnan(high)
        assert math.isnan(compute_agreement(table, level, n_resamples=50).alpha)


def test_undefined_alpha_with_labels_is_nan() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(krippendorff_alpha([["good", "good"], ["good", None]], "nominal"))
        identical = [["good", "good"], ["good", "good"]]
        assert math.isnan(krippendorff_alpha(identical, "ordinal", value_order=SCALE))


def test_numpy_array_with_nan_equals_list_with_none() -> None:
    as_array = np.array([[np.nan if v is None else v for v in row] for row in K2011_C])
    for level in LEVELS:
        assert krippendorff_alpha(as_array, level) == krippendorff_alpha(K2011_C, level)
    object_array = np.array(K2011_C, dtype=object)
    assert krippendorff_alpha(object_array) == krippendorff_alpha(K2011_C)
    rows_of_arrays = list(as_array)
    assert krippendorff_alpha(rows_of_arrays) == krippendorff_alpha(K2011_C)
    integers = np.array([[1, 2, 3], [1, 2, 4]])
    assert krippendorff_alpha(integers) == pytest.approx(36 / 41, rel=1e-14)


def test_booleans_are_zero_and_one() -> None:
    assert krippendorff_alpha([[True, False, True], [True, False, False]], "nominal") == (
        krippendorff_alpha([[1, 0, 1], [1, 0, 0]], "nominal")
    )


# --- invariances ----------------------------------------------------------------------------------


@st.composite
def tables(draw: st.DrawFn, max_value: int = 5) -> Table:
    n_coders = draw(st.integers(2, 5))
    n_units = draw(st.integers(1, 8))
    cell = st.one_of(st.none(), st.integers(1, max_value).map(float))
    return [[draw(cell) for _ in range(n_units)] for _ in range(n_coders)]


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == pytest.approx(b, rel=1e-9, abs=1e-9)


def _mapped(table: Table, f: Callable[[float], float]) -> Table:
    return [[None if v is None else f(v) for v in row] for row in table]


@settings(max_examples=200, deadline=None)
@given(
    tables(),
    st.sampled_from([-3.0, -0.5, 0.25, 2.0, 7.0]),
    st.integers(-10, 10),
)
def test_interval_alpha_is_invariant_under_linear_maps(table: Table, a: float, b: int) -> None:
    assert _same(krippendorff_alpha(table), krippendorff_alpha(_mapped(table, lambda v: a * v + b)))


@settings(max_examples=200, deadline=None)
@given(tables(), st.lists(st.integers(1, 20), min_size=5, max_size=5), st.booleans())
def test_ordinal_alpha_is_invariant_under_monotone_maps(
    table: Table, steps: list[int], decreasing: bool
) -> None:
    # An arbitrary strictly monotone map of 1..5: cumulative sums of positive steps.
    image = list(itertools.accumulate(steps))
    if decreasing:
        image = [-v for v in image]
    mapped = _mapped(table, lambda v: float(image[int(v) - 1]))
    assert _same(krippendorff_alpha(table, "ordinal"), krippendorff_alpha(mapped, "ordinal"))


@settings(max_examples=100, deadline=None)
@given(tables())
def test_labels_with_an_order_equal_their_ranks(table: Table) -> None:
    labelled = _mapped_labels(table)
    for level in LEVELS:
        assert _same(
            krippendorff_alpha(table, level),
            krippendorff_alpha(labelled, level, value_order=SCALE),
        )


def _mapped_labels(table: Table) -> list[list[str | None]]:
    return [[None if v is None else SCALE[int(v) - 1] for v in row] for row in table]


# --- an independent implementation ---------------------------------------------------------------


def _direct_alpha(table: np.ndarray, level: str) -> float:
    """Krippendorff (2011) from the coincidence matrix, written out with numpy."""
    values = np.unique(table[~np.isnan(table)])
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((values.size, values.size))
    for unit in table.T:
        rated = unit[~np.isnan(unit)]
        m = rated.size
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            o[index[rated[i]], index[rated[j]]] += 1.0 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    c, k = np.meshgrid(values, values, indexing="ij")
    if level == "nominal":
        delta2 = (c != k).astype(float)
    elif level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
        lo, hi = (
            np.minimum.outer(np.arange(values.size), np.arange(values.size)),
            np.maximum.outer(np.arange(values.size), np.arange(values.size)),
        )
        between = cumulative[hi + 1] - cumulative[lo]  # n_g summed for g from c to k
        delta2 = (between - (n_c[lo] + n_c[hi]) / 2) ** 2
    elif level == "interval":
        delta2 = (c - k) ** 2
    else:
        delta2 = ((c - k) / (c + k)) ** 2
    observed = (o * delta2).sum() / n
    expected = (np.outer(n_c, n_c) * delta2).sum() / (n * (n - 1))
    return float(1 - observed / expected)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_a_direct_coincidence_matrix_implementation(level: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = rng.integers(1, 8, size=(6, 40)).astype(float)
    table[rng.random(table.shape) < 0.35] = np.nan
    assert krippendorff_alpha(table, level) == pytest.approx(_direct_alpha(table, level), rel=1e-12)


def test_interval_matches_direct_implementation_on_continuous_scores() -> None:
    rng = np.random.default_rng(7)
    truth = rng.random(30)
    table = np.clip(truth + rng.normal(0, 0.15, size=(4, 30)), 0, 1).round(2)
    table[rng.random(table.shape) < 0.2] = np.nan
    assert krippendorff_alpha(table) == pytest.approx(_direct_alpha(table, "interval"), rel=1e-12)


# --- bootstrap interval ---------------------------------------------------------------------------


def test_bootstrap_interval_contains_the_estimate_and_is_reproducible() -> None:
    alpha = krippendorff_alpha(K2011_C)
    low, high = alpha_interval(K2011_C, n_resamples=2000, seed=3)
    assert -1.0 < low <= alpha <= high <= 1.0
    assert tuple(alpha_interval(K2011_C, n_resamples=2000, seed=3)) == (low, high)
    assert tuple(alpha_interval(K2011_C, n_resamples=2000, seed=4)) != (low, high)


def test_narrower_confidence_gives_a_nested_interval() -> None:
    wide = alpha_interval(K2011_C, "ordinal", n_resamples=500, seed=0, confidence=0.95)
    narrow = alpha_interval(K2011_C, "ordinal", n_resamples=500, seed=0, confidence=0.5)
    assert wide.low <= narrow.low <= narrow.high <= wide.high


def test_bootstrap_drops_undefined_resamples() -> None:
    # 20 units rated 1 by both coders, one unit rated 1 and 2. By hand: n = 42 values (41 ones,
    # one 2), o_12 = o_21 = 1, so D_o = 2 / 42 and D_e = 2 * 41 / (42 * 41) = 2 / 42: alpha = 0.
    # About 36% of resamples miss the last unit and have no variation; they are dropped.
    table: Table = [[1] * 20 + [1], [1] * 20 + [2]]
    assert krippendorff_alpha(table) == pytest.approx(0.0, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = alpha_interval(table, n_resamples=500)
    assert low <= 0.0 <= high


def test_bootstrap_gives_up_when_most_resamples_are_undefined() -> None:
    # Two units, each rated alike by both coders (1 and 2): alpha = 1. A resample of two units
    # is undefined when it draws the same unit twice (probability 1/2). With one resample the
    # interval is (1, 1) or, when that resample is undefined, (nan, nan); both must occur.
    table: Table = [[1, 2], [1, 2]]
    assert krippendorff_alpha(table) == 1.0
    outcomes = set()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(20):
            low, high = alpha_interval(table, n_resamples=1, seed=seed)
            outcomes.add("nan" if math.isnan(low) and math.isnan(high) else (low, high))
    assert outcomes == {"nan", (1.0, 1.0)}


def test_compute_agreement_collects_alpha_interval_and_counts() -> None:
    result = compute_agreement(WIKIPEDIA, "interval", n_resamples=300, seed=5)
    assert isinstance(result, Agreement)
    assert result.alpha == krippendorff_alpha(WIKIPEDIA)
    assert (result.low, result.high) == tuple(alpha_interval(WIKIPEDIA, n_resamples=300, seed=5))
    # Units 2 and 14 are unrated, unit 1 has one rating: 12 pairable units, 26 values.
    assert (result.n_coders, result.n_units) == (3, 15)
    assert (result.n_pairable_units, result.n_pairable_values) == (12, 26)
    assert (result.level, result.confidence) == ("interval", 0.95)


# --- pairwise -------------------------------------------------------------------------------------


def test_pairwise_agreement() -> None:
    ratings: dict[str, Sequence[float | None]] = {
        "j1": [1, 2, 3],
        "j2": [1, 2, 4],
        "j3": [1, 2, 3],
        "j4": [None, None, 5],
    }
    table = pairwise_agreement(ratings)
    assert list(table) == [
        ("j1", "j2"), ("j1", "j3"), ("j1", "j4"), ("j2", "j3"), ("j2", "j4"), ("j3", "j4")
    ]  # fmt: skip
    assert table["j1", "j2"] == pytest.approx(36 / 41, rel=1e-14)  # the hand-worked table
    assert table["j1", "j3"] == 1.0
    # j1 and j4 share one unit, 3 vs 5: n = 2, o_35 = o_53 = 1, so
    # D_o = (1 * 4 + 1 * 4) / 2 = 4 and D_e = 2 * (1 * 1 * 4) / (2 * 1) = 4: alpha = 0.
    assert table["j1", "j4"] == pytest.approx(0.0, abs=1e-14)
    disjoint = pairwise_agreement({"j1": [1, None], "j2": [None, 2]})
    assert list(disjoint) == [("j1", "j2")]
    assert math.isnan(disjoint["j1", "j2"])
    assert pairwise_agreement({"j1": [1, 2]}) == {}


def test_pairwise_agreement_with_labels() -> None:
    names = [f"judge{i}" for i in range(4)]
    table = pairwise_agreement(dict(zip(names, B7, strict=True)), "ordinal", value_order=SCALE)
    for (a, b), alpha in table.items():
        pair = [B7[names.index(a)], B7[names.index(b)]]
        assert alpha == krippendorff_alpha(pair, "ordinal", value_order=SCALE)


def test_pairwise_agreement_needs_the_same_units() -> None:
    with pytest.raises(ValueError, match=r"same units; ratings per coder: \{'a': 2, 'b': 3\}"):
        pairwise_agreement({"a": [1, 2], "b": [1, 2, 3]})


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: krippendorff_alpha(K2011_C, "likert"), ValueError, r"`level` must be one of 'nominal', 'ordinal', 'interval', 'ratio', not 'likert'"),
        (lambda: krippendorff_alpha(K2011_C, "ordinal", value_order=[1, 2, 2]), ValueError, r"`value_order` repeats 2"),
        (lambda: krippendorff_alpha(K2011_C, "ordinal", value_order=[1, None]), ValueError, r"`value_order` cannot hold a missing value: None"),
        (lambda: krippendorff_alpha(B7, "ordinal", value_order="pfg"), TypeError, r"`value_order` must be a sequence"),
        (lambda: krippendorff_alpha(K2011_C, "ordinal", value_order=[1, 2, 3]), ValueError, r"values not in `value_order`: 4.0, 5.0"),
        (lambda: krippendorff_alpha(K2011_C, "interval", value_order=[5, 4, 3, 2, 1]), ValueError, r"`value_order` of numbers must be strictly ascending"),
        (lambda: krippendorff_alpha([[1, "a"], [1, "b"]]), ValueError, r"mixes numbers and labels"),
        (lambda: krippendorff_alpha([[1, math.inf], [1, 2]]), ValueError, r"rating \[0\]\[1\] is infinite"),
        (lambda: krippendorff_alpha(np.array([[1.0, np.inf], [1, 2]])), ValueError, r"rating \[0\]\[1\] is infinite"),
        (lambda: krippendorff_alpha([1, 2, 3]), ValueError, r"2-D \(coders x units\); row 0 is 1"),  # type: ignore[list-item]
        (lambda: krippendorff_alpha(np.array([1.0, 2.0])), ValueError, r"2-D \(coders x units\), not of shape \(2,\)"),
        (lambda: krippendorff_alpha([[1, 2], [1]]), ValueError, r"one rating per unit; row lengths: \[2, 1\]"),
        (lambda: krippendorff_alpha([[1, {}], [1, 2]]), TypeError, r"rating \[0\]\[1\] must be a number, a string or None"),  # type: ignore[list-item]
        (lambda: krippendorff_alpha("ab"), TypeError, r"a 2-D array or a sequence of rows"),
        (lambda: krippendorff_alpha(np.array([["a", np.nan], ["a", "b"]]), "nominal"), ValueError, r"NumPy string array holds the label 'nan'"),
        (lambda: krippendorff_alpha([[-1, 1], [1, 2]], "ratio"), ValueError, r"ratio level needs non-negative values; found -1.0"),
        (lambda: alpha_interval(K2011_C, n_resamples=0), ValueError, r"`n_resamples` must be an integer >= 1, not 0"),
        (lambda: alpha_interval(K2011_C, n_resamples=True), ValueError, r"`n_resamples` must be an integer >= 1, not True"),
        (lambda: alpha_interval(K2011_C, confidence=1.0), ValueError, r"`confidence` must be in \(0, 1\), not 1.0"),
        (lambda: compute_agreement(K2011_C, n_resamples=-1), ValueError, r"`n_resamples` must be an integer >= 0, not -1"),
        (lambda: compute_agreement(K2011_C, confidence=math.nan), ValueError, r"`confidence` must be in \(0, 1\), not nan"),
    ],
)  # fmt: skip
def test_validation_messages(
    call: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call()
