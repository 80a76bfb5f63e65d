"""Issue #10, numbers a user can trust: exact sign-flip p-values on lattices at any n, results
independent of the item order, rounding dust as ties, Holm over the metrics under test.

References are independent: scipy.stats.binomtest (the exact McNemar / sign test on the
discordant pairs), brute-force enumeration of all 2^m sign assignments written here, exact
integer subset-sum counts in Python's big integers, hand arithmetic in the comments.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from conftest import run_cli
from kagreport.evaluation import AnswerItem, EvaluationComparison, RetrievalItem, evaluate_answers
from kagreport.evaluation._compare import compare_items, compare_scores
from kagreport.evaluation._text import render_comparison, render_comparison_html
from kagreport.evaluation.judges import ExactMatch
from kagreport.stats import bootstrap_mean_interval, sign_flip_test
from kagreport.stats._signflip import paired_differences

# --- exact binomial (0/1 outcomes) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("m", "wins"),
    [
        (14, 11), (40, 27), (63, 40), (100, 60), (101, 50), (500, 280), (1000, 530),
        (2000, 1100), (5000, 2600), (10_000, 5100), (30_000, 15_400), (100_000, 50_500),
        (100_000, 50_100), (100_000, 49_000),
        # Tiny tails: p from about 1e-30 down to about 1e-300 (scipy's own relative accuracy).
        (1000, 670), (2000, 1400), (3000, 2300), (1200, 1050), (100_000, 54_000),
    ],
)  # fmt: skip
def test_binary_differences_equal_scipy_binomtest(m: int, wins: int) -> None:
    # Differences of 0/1 correctness: +1 where only the candidate is right, -1 where only the
    # baseline is, 0 where both agree. The exact sign-flip p is the two-sided binomial p of the
    # discordant pairs (McNemar's exact test); the 0s are ties that never change the sum.
    d = np.array([1.0] * wins + [-1.0] * (m - wins) + [0.0] * 37)
    np.random.default_rng(m + wins).shuffle(d)
    result = sign_flip_test(d)
    reference = stats.binomtest(wins, m, 0.5).pvalue
    assert (result.exact, result.method, result.n_nonzero) == (True, "exact-lattice", m)
    assert result.p_value == pytest.approx(reference, rel=1e-9)
    assert result.p_value > 0.0


def test_binary_tail_below_scipy_underflow_stays_positive() -> None:
    # 1990 of 2000 discordant pairs one way: p = 2 sum_{j>=1990} C(2000, j) / 2^2000, about
    # 1e-601, below the smallest double: reported as the smallest positive double, never 0.
    result = sign_flip_test([1.0] * 1990 + [-1.0] * 10)
    assert result.p_value == math.ulp(0.0)
    # All of 100,000 one way: exactly 2 / 2^100000, likewise.
    assert sign_flip_test(np.ones(100_000)).p_value == math.ulp(0.0)


# --- small lattices against brute-force enumeration --------------------------------------------


def _brute_force(k: Sequence[int]) -> Fraction:
    """P(|sum s_i k_i| >= |sum k_i|) over all 2^m sign assignments, in integers."""
    k = [int(v) for v in k if v]
    observed = abs(sum(k))
    signs = ((np.arange(2 ** len(k))[:, None] >> np.arange(len(k))) & 1) * 2 - 1
    sums = np.abs(signs @ np.array(k, dtype=np.int64))
    return Fraction(int(np.count_nonzero(sums >= observed)), 2 ** len(k))


@pytest.mark.parametrize("seed", range(8))
def test_likert_quarters_equal_brute_force(seed: int) -> None:
    # Two judges' 1-5 Likert scores mapped to [0, 1] differ by multiples of 1/4 (-4..4 quarters).
    rng = np.random.default_rng(seed)
    a, b = rng.integers(1, 6, size=(2, 18))
    d = (a - 1) / 4 - (b - 1) / 4
    # n_resamples=1: no enumeration, the lattice is the only exact path.
    result = sign_flip_test(d, n_resamples=1)
    assert result.method == "exact-lattice"
    assert result.p_value == float(_brute_force(a - b))


@pytest.mark.parametrize("seed", range(8))
def test_one_to_ten_scale_ninths_equal_brute_force(seed: int) -> None:
    # A 1-10 judge scale mapped to [0, 1] as (s - 1) / 9: differences are multiples of 1/9,
    # which floating point holds only approximately (1/9 - 0 and 5/9 - 4/9 round differently).
    rng = np.random.default_rng(100 + seed)
    a, b = rng.integers(1, 11, size=(2, 17))
    d = (a - 1) / 9 - (b - 1) / 9
    result = sign_flip_test(d, n_resamples=1)
    assert result.method == "exact-lattice"
    assert result.p_value == float(_brute_force(a - b))


@pytest.mark.parametrize("shift", [0.0, 0.4, 1.0, 2.0, 3.0])
def test_likert_tails_relative_accuracy_at_900_pairs(shift: float) -> None:
    # 900 Likert differences (k in -4..4): beyond 62 non-zero pairs the tail comes from the
    # tilted convolution in floating point; exact big-integer counts give the reference, from
    # p ~ 0.5 down to p ~ 1e-240, where an untilted (or FFT) sum would have no digit left.
    rng = np.random.default_rng(int(shift * 10))
    k = np.clip(np.rint(rng.normal(shift, 1.5, size=900)), -4, 4).astype(int)
    signed = [int(v) for v in k if v]
    reference = _exact_subset_sum_p_signed(signed)
    result = sign_flip_test(k / 4)
    assert result.method == "exact-lattice"
    assert float((Fraction(result.p_value) - reference) / reference) == pytest.approx(0, abs=1e-9)


def _exact_subset_sum_p_signed(k: Sequence[int]) -> Fraction:
    observed = abs(sum(k))
    magnitudes = [abs(v) for v in k]
    total = sum(magnitudes)
    counts = [0] * (total + 1)
    counts[0] = 1
    top = 0
    for v in magnitudes:
        for w in range(top, -1, -1):
            if counts[w]:
                counts[w + v] += counts[w]
        top += v
    if observed == 0:
        return Fraction(1)
    return Fraction(2 * sum(counts[(total + observed) // 2 :]), 2 ** len(k))


def test_lattice_counts_equal_enumeration_bit_for_bit() -> None:
    # Up to 62 non-zero pairs the lattice counts are exact integers: the p-value is the same
    # double as full enumeration's (allowed here by a budget of 2^m).
    rng = np.random.default_rng(3)
    for _ in range(10):
        d = rng.integers(-4, 5, size=int(rng.integers(8, 15))) / 4
        m = int(np.count_nonzero(d))
        enumerated = sign_flip_test(d, n_resamples=2**m)
        convolved = sign_flip_test(d, n_resamples=1)
        assert enumerated.method == "exact-enumeration"
        assert convolved.method == "exact-lattice"
        assert convolved.p_value == enumerated.p_value


def test_wide_stride_lattice_equals_a_probability_dp() -> None:
    # 100 distinct integer counts up to 5000 (no zeros): 100 one-item binomials on wide
    # strides. Reference: the law of W = sum of the k_i given a + sign by the plain recursion
    # P_new(w) = (P(w) + P(w - k)) / 2 over all K + 1 values (p is not tiny here, so
    # floating point loses nothing).
    rng = np.random.default_rng(0)
    k = rng.integers(1, 5000, size=100)
    d = (k * rng.choice([-1, 1], size=100)).astype(float)
    law = np.zeros(int(k.sum()) + 1)
    law[0] = 1.0
    for v in k.tolist():
        shifted = 0.5 * law
        shifted[v:] += 0.5 * law[:-v]
        law = shifted
    observed = abs(int(d.sum()))
    reference = 2 * law[(int(k.sum()) + observed) // 2 :].sum()
    result = sign_flip_test(d)
    assert result.method == "exact-lattice"
    assert result.p_value == pytest.approx(reference, rel=1e-9)


def test_costly_or_degenerate_lattices_fall_back_to_monte_carlo() -> None:
    # 32 distinct counts near 250,000: a lattice of 8 million steps and 32 wide binomials, too
    # costly to convolve (tens of seconds); and a subnormal beside 1.0 (ratio 2e323).
    big = np.random.default_rng(1).integers(200_000, 260_000, size=32).astype(float)
    assert sign_flip_test(big).method == "monte-carlo"
    assert sign_flip_test([5e-324, 1.0] * 20).method == "monte-carlo"


def test_off_lattice_data_stay_monte_carlo() -> None:
    # Continuous differences: no small lattice, so Monte Carlo (add-one, seeded) as before.
    d = np.random.default_rng(0).normal(0.1, 1.0, size=200)
    result = sign_flip_test(d, n_resamples=999)
    assert (result.method, result.exact, result.n_resamples) == ("monte-carlo", False, 999)


# --- permutation invariance ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "d",
    [
        np.repeat([1.0, -1.0, 0.0], [31, 17, 252]),  # exact lattice; multinomial bootstrap
        np.random.default_rng(4).normal(0.1, 1.0, size=300),  # Monte Carlo; index bootstrap
        np.random.default_rng(5).normal(0.1, 1.0, size=12),  # enumeration
    ],
    ids=["lattice", "monte-carlo", "enumeration"],
)
def test_results_do_not_depend_on_the_item_order(d: np.ndarray) -> None:
    # Before: the Monte Carlo p and the bootstrap interval moved with the order (0.0498, 0.0533
    # and 0.0519 for one pair in three orders). Now both resample the sorted differences.
    first = sign_flip_test(d, n_resamples=2000, seed=1)
    interval = bootstrap_mean_interval(d, n_resamples=2000, seed=1)
    rng = np.random.default_rng(9)
    for _ in range(3):
        shuffled = rng.permutation(d)
        again = sign_flip_test(shuffled, n_resamples=2000, seed=1)
        assert again.p_value == first.p_value
        assert again.method == first.method
        assert again.statistic == first.statistic  # fsum: exact whatever the order
        assert bootstrap_mean_interval(shuffled, n_resamples=2000, seed=1) == interval


def test_compare_scores_is_order_free_for_every_metric() -> None:
    rng = np.random.default_rng(2)
    n = 400
    candidate = {"correct": rng.integers(0, 2, n).astype(float), "f1": rng.random(n)}
    baseline = {"correct": rng.integers(0, 2, n).astype(float), "f1": rng.random(n)}
    first = compare_scores(candidate, baseline, n_resamples=999)
    order = rng.permutation(n)
    again = compare_scores(
        {k: v[order] for k, v in candidate.items()},
        {k: v[order] for k, v in baseline.items()},
        n_resamples=999,
    )
    assert again.to_dict() == first.to_dict()
    assert first.metrics["f1"].method == "monte-carlo"
    assert first.metrics["correct"].method == "exact-lattice"


# --- rounding dust ---------------------------------------------------------------------------------


def test_float_dust_is_a_tie() -> None:
    # 0.1 + 0.2 is 0.30000000000000004 in floating point, 0.3 is 0.29999999999999998: each pair
    # differs by 5.6e-17, which used to give p = 1 / 10001 for a difference shown as 0.0000.
    result = compare_scores({"m": [0.1 + 0.2] * 20}, {"m": [0.3] * 20})
    m = result.metrics["m"]
    assert (m.p_value, m.n_nonzero, m.mean_difference) == (1.0, 0, 0.0)
    assert (m.ci_low, m.ci_high) == (0.0, 0.0)
    assert m.baseline_mean == 0.3  # fsum: twenty 0.3s sum to 6.0 exactly rounded
    assert m.candidate_mean == 0.1 + 0.2  # the mean of its own (equal) values
    assert paired_differences([0.1 + 0.2, 1.0], [0.3, 0.5]).tolist() == [0.0, 0.5]


def test_means_are_summed_exactly() -> None:
    # math.fsum is correctly rounded: twenty 0.3s sum to 6.0 (np.mean gave 0.29999999999999993),
    # twenty 0.1s to 2.0 (np.mean: 0.10000000000000002), and 1e16 + 1 - 1e16 is 1, not 0 (a
    # naive left-to-right sum loses the 1).
    result = compare_scores({"m": [0.3] * 20, "tenth": [0.1] * 20,
                             "big": [1e16, 1.0, -1e16] + [0.0] * 17},
                            {"m": [0.3] * 20, "tenth": [0.0] * 20,
                             "big": [0.0] * 20})  # fmt: skip
    assert result.metrics["m"].candidate_mean == 0.3
    assert result.metrics["tenth"].mean_difference == 0.1
    assert result.metrics["big"].candidate_mean == 1 / 20
    # The 1 is below rounding on this column's scale (1e16, whose spacing is 2): dust.
    assert result.metrics["big"].mean_difference == 0.0


def test_dust_next_to_zero_is_a_tie() -> None:
    # 0.1 + 0.2 - 0.3 is 5.6e-17, not 0: against a real 0 it is still dust on the scale of
    # the scores (here 1), so twenty such pairs are ties, p = 1 (a per-pair scale took the
    # dust itself as the scale and found p = 2 / 2**20 = 1.9e-06, "exact (lattice)").
    dust = 0.1 + 0.2 - 0.3
    result = compare_scores({"m": [dust] * 20 + [1.0, 0.0]}, {"m": [0.0] * 20 + [1.0, 0.0]})
    m = result.metrics["m"]
    assert (m.p_value, m.n_nonzero, m.mean_difference) == (1.0, 0, 0.0)
    assert paired_differences([dust, 1.0], [0.0, 0.5]).tolist() == [0.0, 0.5]


# --- Holm over the hypotheses under test -----------------------------------------------------------


@dataclass(frozen=True)
class FakeEvaluation:
    items: tuple[Any, ...]
    judges: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _answers(columns: Mapping[str, Sequence[float]], judges: Mapping[str, Any]) -> FakeEvaluation:
    n = len(next(iter(columns.values())))
    items = tuple(
        AnswerItem(f"q{i}", "?", "a", scores={k: v[i] for k, v in columns.items()})
        for i in range(n)
    )
    return FakeEvaluation(items, judges)


def test_duplicate_judge_does_not_double_the_holm_p() -> None:
    # "em" and "em2" are the same judge (same identity) configured twice: identical scores.
    # 12 discordant items, 10 for the candidate: p = 2 * (1 + 12 + 66) / 4096 = 0.03857421875.
    judges = {"em": {"kind": "exact_match", "version": 1}, "em2": {"kind": "exact_match",
              "version": 1}, "f1": {"kind": "token_f1", "version": 1}}  # fmt: skip
    c = [1.0] * 10 + [0.0] * 2 + [1.0] * 8
    b = [0.0] * 10 + [1.0] * 2 + [1.0] * 8
    f1_c, f1_b = [0.5] * 20, [0.5] * 20
    candidate = _answers({"em": c, "em2": c, "f1": f1_c}, judges)
    baseline = _answers({"em": b, "em2": b, "f1": f1_b}, judges)
    p = stats.binomtest(10, 12, 0.5).pvalue
    assert p == 2 * (1 + 12 + 66) / 4096
    default = compare_items(candidate, baseline, kind="answers")
    assert default.family == ("em", "f1")  # em2 duplicates em
    # Holm over two (f1's p is 1): 2p, where three tests (em2 counted) gave 3p.
    assert default.metrics["em"].p_value_holm == pytest.approx(2 * p, rel=1e-12)
    assert math.isnan(default.metrics["em2"].p_value_holm)
    named = compare_items(candidate, baseline, kind="answers", metrics=["em"])
    assert named.family == ("em",)
    assert named.metrics["em"].p_value_holm == named.metrics["em"].p_value == pytest.approx(p)
    everything = compare_items(candidate, baseline, kind="answers", metrics=["em", "em2", "f1"])
    # Named as well, em2 is em on every item: one hypothesis (issue 25), so 2p, not 3p.
    assert everything.family == ("em", "f1")
    assert everything.same_as == {"em2": "em"}
    assert everything.metrics["em2"].p_value_holm == pytest.approx(2 * p, rel=1e-12)
    with pytest.raises(ValueError, match=r"`metrics` names 'nope'.*both hold are: em, em2, f1"):
        compare_items(candidate, baseline, kind="answers", metrics=["nope"])
    with pytest.raises(ValueError, match="must be a list of metric names"):
        compare_items(candidate, baseline, kind="answers", metrics="em")


def test_retrieval_default_family_is_mrr() -> None:
    def items(ranks: Sequence[int]) -> tuple[RetrievalItem, ...]:
        out = []
        for i, rank in enumerate(ranks):
            retrieved = (*(f"x{j}" for j in range(rank - 1)), "a")
            out.append(RetrievalItem(f"q{i}", "?", retrieved, ("a",),
                                     scores={"mrr": 1 / rank, "hit@1": float(rank == 1),
                                             "recall@5": float(rank <= 5)}))  # fmt: skip
        return tuple(out)

    candidate = FakeEvaluation(items([1] * 30 + [2] * 10))
    baseline = FakeEvaluation(items([2] * 30 + [2] * 10))
    result = compare_items(candidate, baseline, kind="retrieval")
    assert result.family == ("mrr",)
    mrr = result.metrics["mrr"]
    # 30 differences of 1 - 1/2 = 1/2, all one way: 2 of 2^30 assignments.
    assert (mrr.p_value, mrr.p_value_holm, mrr.method) == (2 / 2**30, 2 / 2**30, "exact-lattice")
    assert math.isnan(result.metrics["hit@1"].p_value_holm)
    assert math.isnan(result.metrics["recall@5"].p_value_holm)
    rows = {row["metric"]: row for row in result.to_rows()}
    assert (rows["mrr"]["in_family"], rows["hit@1"]["in_family"]) == (True, False)
    assert rows["hit@1"]["family"] == "mrr"
    text = render_comparison(result)
    assert "Holm over mrr (1 metric)" in text
    assert "exact (lattice)" in text


# --- serialisation and display ---------------------------------------------------------------------


def test_method_and_family_round_trip_and_version_1_reads() -> None:
    result = compare_scores(
        {"a": [1, 0, 1, 1] * 10, "b": list(np.random.default_rng(1).random(40))},
        {"a": [0, 0, 1, 0] * 10, "b": list(np.random.default_rng(2).random(40))},
        metrics=["a"],
        n_resamples=500,
    )
    document = result.to_dict()
    assert document["schema_version"] == 3
    assert document["family"] == ["a"]
    assert [row["method"] for row in document["metrics"]] == ["exact-lattice", "monte-carlo"]
    assert EvaluationComparison.from_dict(json.loads(result.dumps("json"))) == result
    # A version-1 document (no family, no method) still loads: every metric with a Holm p is
    # the family, the method follows from `exact`.
    old = json.loads(result.dumps("json"))
    old["schema_version"] = 1
    del old["family"]
    for row in old["metrics"]:
        del row["method"]
        row["p_value_holm"] = row["p_value"]
    again = EvaluationComparison.from_dict(old)
    assert again.family == ("a", "b")
    assert [m.method for m in again.metrics.values()] == ["exact-enumeration", "monte-carlo"]
    html = render_comparison_html(result)
    assert "exact (lattice)" in html
    assert "Monte Carlo, 500 resamples" in html
    assert "Holm over a (1 metric)" in html


def test_cli_compare_metrics_and_method(tmp_path: Path) -> None:
    # Two exact-match judges under two names: the same judge twice. The CLI's default family
    # leaves the duplicate out; --metrics names the family; unknown names are a usage error.
    answers = [["Paris", "Rome", "Madrid", "Lima"] * 5, ["Paris", "x", "y", "z"] * 5]
    refs = ["Paris", "Rome", "Madrid", "Lima"] * 5
    judges = [ExactMatch(name="em"), ExactMatch(name="em_again")]
    paths = []
    for which, replies in zip("ab", answers, strict=True):
        items = [
            {"identifier": f"q{i}", "question": "?", "answer": a, "reference": r}
            for i, (a, r) in enumerate(zip(replies, refs, strict=True))
        ]
        evaluation = evaluate_answers(items, judges, progress=False, metadata={"name": which})
        evaluation.write(tmp_path / f"{which}.json")
        paths.append(str(tmp_path / f"{which}.json"))
    text = run_cli("compare", *paths)
    assert text.returncode == 0, text.stderr
    # 15 items only a gets right, none the other way: p = 2 / 2^15, Holm over em alone.
    assert "Holm over em (1 metric)" in text.stdout
    assert "exact (lattice)" in text.stdout
    js = run_cli("compare", *paths, "--format", "json", "--metrics", "em,em_again")
    document = json.loads(js.stdout)
    # Named, em_again is still em on every item: tested once, not counted twice.
    assert document["family"] == ["em"]
    assert document["settings"]["same_as"] == {"em_again": "em"}
    rows = {row["metric"]: row for row in document["metrics"]}
    assert rows["em"]["p_value"] == 2 / 2**15
    assert rows["em"]["p_value_holm"] == rows["em_again"]["p_value_holm"] == 2 / 2**15
    bad = run_cli("compare", *paths, "--metrics", "nope")
    assert bad.returncode == 2
    assert "--metrics names 'nope'" in bad.stderr
    assert "em, em_again" in bad.stderr


def test_itertools_reference_agrees_with_vectorised_brute_force() -> None:
    # The brute-force reference itself, checked on Fisher's hand count for (1, 2, 3): 2 of 8.
    assert _brute_force([1, 2, 3]) == Fraction(2, 8)
    k = [3, -1, 2, 2, -4]
    hits = sum(
        abs(sum(s * v for s, v in zip(signs, k, strict=True))) >= abs(sum(k))
        for signs in itertools.product((1, -1), repeat=len(k))
    )
    assert _brute_force(k) == Fraction(hits, 32)
    assert _exact_subset_sum_p_signed(k) == Fraction(hits, 32)


@settings(max_examples=150, deadline=None)
@given(
    k=st.lists(st.integers(-6, 6), min_size=1, max_size=14),
    step=st.sampled_from([1.0, 0.25, 1 / 9, 0.1, 8.0, 1 / 3, 0.01]),
)
def test_lattice_equals_enumeration_on_random_lattices(k: list[int], step: float) -> None:
    # Multiples of common steps as floating point holds them (k * 0.1 is not exactly k/10):
    # the lattice must be found and give the enumeration's p to the last bit.
    d = [v * step for v in k]
    m = sum(1 for v in d if v != 0.0)
    enumerated = sign_flip_test(d, n_resamples=max(1, 2**m))
    convolved = sign_flip_test(d, n_resamples=1)
    assert convolved.p_value == enumerated.p_value
    assert convolved.exact
    if m:
        assert convolved.method == "exact-lattice"
    assert float(_brute_force(k)) == enumerated.p_value


@pytest.mark.slow
def test_comparison_view_equals_compare_shared_only() -> None:
    # Setups of a run whose items differ (DeepSeek-Coder-V2 lacks 8 MMLU-Pro questions):
    # ComparisonView, evaluation.compare(shared_only=True) and compare_scores on the shared
    # items in another order (the site's key order) agree to the last digit.
    from kagreport.evaluation import evaluation_from_stats
    from kagreport.examples import mmlu_pro_philosophy
    from kagreport.grading import grade
    from kagreport.widgets import ComparisonView

    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    names = list(report.setup_names)
    short = "deepseek-coder-v2"
    other = next(n for n in names if n != short)
    mine = evaluation_from_stats(report, short, answers=False)
    theirs = evaluation_from_stats(report, other, answers=False)
    assert len(mine.items) != len(theirs.items)
    expected = mine.compare(theirs, n_resamples=500, shared_only=True)
    view = ComparisonView(report, n_resamples=500)
    view.candidate.value, view.baseline.value = short, other
    assert view.comparison is not None

    # The test agrees to the last digit; the run comparison's interval is the one drawn
    # beside its verdict (issue 28), the lone comparison's verdict interval for one pair.
    def tested(rows: Any) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in m.to_dict().items() if k not in ("ci_low", "ci_high")} for m in rows
        ]

    assert tested(view.comparison.metrics.values()) == tested(expected.metrics.values())
    drawn = expected.verdicts()["correct"]
    assert (
        view.comparison.metrics["correct"].ci_low,
        view.comparison.metrics["correct"].ci_high,
    ) == (
        drawn.low,
        drawn.high,
    )
    assert "exact (lattice)" in view.table_html or "exact (enumeration)" in view.table_html
    assert "Holm over" in view.message.value
    score = {item.identifier: item.scores["correct"] for item in theirs.items}
    shared = sorted(i.identifier for i in mine.items if i.identifier in score)
    mine_score = {item.identifier: item.scores["correct"] for item in mine.items}
    arrays = compare_scores(
        {"correct": [mine_score[i] for i in shared]},
        {"correct": [score[i] for i in shared]},
        n_resamples=500,
    )
    assert arrays.metrics["correct"].to_dict() == expected.metrics["correct"].to_dict()


def test_text_table_says_how_the_interval_was_computed() -> None:
    from kagreport.evaluation._text import render_comparison

    text = render_comparison(compare_scores({"m": [1.0, 0.0, 1.0]}, {"m": [0.0, 0.0, 1.0]}))
    assert "95% CI: Holm-adjusted 95% interval (test-based" in text
    assert "the bootstrap 95% interval is in the report's data" in text


def test_scores_near_the_float_maximum_compare_like_scaled_ones() -> None:
    # fsum and the enumeration's partial sums overflowed (OverflowError: intermediate
    # overflow in fsum; RuntimeWarning) though every mean is finite. The test is scale-free:
    # the same data times 2**-1000 must give the same p-values and the scaled interval.
    import warnings

    rng = np.random.default_rng(3)
    c = rng.integers(0, 3, 40) * 0.85e308
    b = rng.integers(0, 3, 40) * 0.85e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = compare_scores({"m": c}, {"m": b}).metrics["m"]
        small = compare_scores({"m": c * 2.0**-1000}, {"m": b * 2.0**-1000}).metrics["m"]
        twins = compare_scores({"m": [1e308, 1e308]}, {"m": [1e308, 1e308]}).metrics["m"]
    assert big.p_value == small.p_value
    assert big.method == small.method
    assert big.ci_low == small.ci_low * 2.0**1000
    assert big.ci_high == small.ci_high * 2.0**1000
    assert big.candidate_mean == math.fsum(c * 2.0**-1000) / 40 * 2.0**1000
    assert (twins.candidate_mean, twins.p_value) == (1e308, 1.0)


def test_percentage_scores_are_exact_at_thousands_of_pairs() -> None:
    # Differences of 0-100 point scores at n = 3,200 fell back to Monte Carlo (the work
    # bound was 2**27); the exact value comes from a probability DP over the sum of the
    # positive-signed |d| (one shift-and-add per pair), written here.
    rng = np.random.default_rng(0)
    d = (rng.integers(0, 101, 3200) - rng.integers(0, 101, 3200)).astype(float)
    result = sign_flip_test(d)
    assert result.method == "exact-lattice"
    k = np.abs(d[d != 0]).astype(np.int64)
    total = int(k.sum())
    pmf = np.zeros(total + 1)
    pmf[0] = 1.0
    top = 0
    for ki in k.tolist():  # W = sum of the k_i given a + sign, each with probability 1/2
        pmf[ki : top + ki + 1] += pmf[: top + 1]
        pmf[: top + ki + 1] *= 0.5
        top += ki
    observed = int(abs(d.sum()))
    w0 = -(-(total + observed) // 2)  # T = 2W - K >= |t|  <=>  W >= ceil((K + |t|) / 2)
    assert result.p_value == pytest.approx(min(1.0, 2 * pmf[w0:].sum()), rel=1e-9)
