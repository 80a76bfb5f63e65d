"""Prediction-powered inference for a mean: a judge's scores on many items corrected by
human labels on a few (PPI, and its power-tuned form PPI++)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import InputError
from kagreport.stats._student import as_finite, check_confidence, same_length

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["PPIEstimate", "ppi_mean"]

_Floats = np.ndarray[Any, np.dtype[np.float64]]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate of a mean (:func:`ppi_mean`).

    Attributes
    ----------
    estimate : float
        The corrected mean, in the units of the labels.
    ci : tuple of (float, float)
        ``(low, high)``: the normal interval at the requested confidence.
    lam : float
        The weight of the judge's scores, in [0, 1]: 1 is PPI, 0 the labels' mean alone.
    n : int
        Labelled items (a human label and a judge's score each).
    n_unlabelled : int
        Items with a judge's score only.
    """

    estimate: float
    ci: tuple[float, float]
    lam: float
    n: int
    n_unlabelled: int


def _mean(x: _Floats) -> float:
    return float(np.sort(x).sum()) / x.size  # sorted: the same sum in any order


def _variance(x: _Floats, ddof: int) -> float:
    return float(np.sort((x - _mean(x)) ** 2).sum()) / (x.size - ddof)


# Over 80 lines only with its docstring (the formulas, their conventions and sources).
def ppi_mean(
    labels: npt.ArrayLike,
    judged: npt.ArrayLike,
    judged_unlabelled: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    tuned: bool = True,
) -> PPIEstimate:
    """The mean of human labels, estimated from a judge's scores corrected by a few labels.

    Parameters
    ----------
    labels : array_like, shape (n,)
        Human scores Y of the labelled items (e.g. 0/1 correctness), finite.
    judged : array_like, shape (n,)
        The judge's scores Yhat of the same items, in the same order.
    judged_unlabelled : array_like, shape (N,)
        The judge's scores of the items nobody labelled.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).
    tuned : bool, default True
        True: PPI++, lambda chosen from the data to minimise the variance. False: PPI,
        lambda = 1.

    Returns
    -------
    PPIEstimate

    Raises
    ------
    InputError
        If an argument is not one-dimensional or holds NaN or an infinity, if ``labels``
        and ``judged`` differ in length, if there are fewer than 2 labelled or no
        unlabelled items, or if ``confidence`` is not in (0, 1) or ``tuned`` not a bool.

    Notes
    -----
    With n labelled pairs (Y, Yhat) and N unlabelled scores Yhat_u, the estimate is
    ``lambda * mean(Yhat_u) + mean(Y - lambda * Yhat)`` (Angelopoulos et al. [1]_ for
    lambda = 1; Angelopoulos, Duchi and Zrnic [2]_, PPI++). Tuned,

    ``lambda = clip(Cov(Y, Yhat) / ((1 + n / N) * Var(Yhat over all n + N items)), 0, 1)``

    with the covariance over the n labelled items at ddof 0 and the variance at ddof 1,
    the conventions of the authors' implementation, ppi_py (``ppi_mean_ci``); lambda is
    0 when the judge's scores are all equal (the estimate does not depend on it then).
    The interval is ``estimate -/+ z_{(1 + confidence) / 2} * sqrt(sd(lambda * Yhat_u)**2
    / N + sd(Y - lambda * Yhat)**2 / n)`` with the standard deviations at ddof 0 and z the
    standard normal quantile.

    References
    ----------
    .. [1] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan and T. Zrnic (2023),
       "Prediction-Powered Inference", *Science* 382(6671), 669-674, arXiv:2301.09633.
    .. [2] A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), "PPI++: Efficient
       Prediction-Powered Inference", arXiv:2311.01453.

    Examples
    --------
    A judge that always adds 0.1: PPI (lambda = 1) removes the bias exactly.

    >>> r = ppi_mean([0, 1, 1, 0], [0.1, 1.1, 1.1, 0.1], [1.1, 1.1, 0.1], tuned=False)
    >>> round(r.estimate, 4), r.lam, r.n, r.n_unlabelled
    (0.6667, 1.0, 4, 3)
    """
    y = as_finite(labels, "labels")
    yhat = as_finite(judged, "judged")
    unlabelled = as_finite(judged_unlabelled, "judged_unlabelled")
    same_length(y, yhat, ("labels", "judged"))
    confidence = check_confidence(confidence)
    if not isinstance(tuned, bool):
        raise InputError(f"`tuned` must be True or False, not {tuned!r}")
    n, big_n = y.size, unlabelled.size
    if n < 2:
        raise InputError(f"`labels` must hold at least 2 labelled items, not {n}")
    if big_n < 1:
        raise InputError("`judged_unlabelled` must hold at least 1 item, not 0")
    # Pairs in a canonical order (by label, then score): sums independent of the order.
    order = np.lexsort((yhat, y))
    y, yhat, unlabelled = y[order], yhat[order], np.sort(unlabelled)
    lam = 1.0
    if tuned:
        spread = _variance(np.concatenate([yhat, unlabelled]), ddof=1)
        if spread > 0:
            products = (y - _mean(y)) * (yhat - _mean(yhat))
            covariance = float(np.sort(products).sum()) / n
            lam = min(1.0, max(0.0, covariance / ((1 + n / big_n) * spread)))
        else:
            lam = 0.0
    rectified = y - lam * yhat
    estimate = lam * _mean(unlabelled) + _mean(rectified)
    se = math.sqrt(lam**2 * _variance(unlabelled, ddof=0) / big_n + _variance(rectified, 0) / n)
    half = NormalDist().inv_cdf((1 + confidence) / 2) * se
    return PPIEstimate(estimate, (estimate - half, estimate + half), lam, n, big_n)
