"""Confidence intervals (the result type, Wilson's for proportions, the test-based interval
that agrees with a test), and the Pareto frontier."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["ConfidenceInterval", "interval_from_test", "pareto_front", "wilson_interval"]


# A bound: a number, or (wilson_interval of many proportions) an array of them.
_Bound = TypeVar("_Bound", float, npt.NDArray[np.float64])


@dataclass(frozen=True)
class ConfidenceInterval(Generic[_Bound]):
    """A two-sided confidence interval of one quantity (or, array-valued, of many).

    Attributes
    ----------
    low, high : float, or ndarray of float64
        The bounds, in the units of the quantity (a mean paired difference in the metric's
        units, Krippendorff's alpha, a proportion in [0, 1]); both NaN when the interval is
        undefined (no data, or too few resamples where the statistic is defined). Arrays of
        one shape from :func:`wilson_interval`, one bound per proportion; floats elsewhere.
    level : float
        The nominal coverage, in (0, 1) (0.95 for a 95% interval).
    method : str
        How it was computed: ``"percentile-bootstrap"`` (Efron and Tibshirani 1993, ch. 13)
        or ``"wilson"`` (Wilson 1927).

    Notes
    -----
    Iterating yields ``low`` then ``high``, so ``low, high = interval`` still reads the
    ``(low, high)`` tuples these functions returned before. Array-valued intervals compare
    with ``==`` as their arrays do (ambiguous beyond one element): compare their fields with
    :func:`numpy.array_equal`.
    """

    low: _Bound
    high: _Bound
    level: float
    method: str

    def __iter__(self) -> Iterator[_Bound]:
        yield self.low
        yield self.high

    @property
    def defined(self) -> bool:
        """True when both bounds are numbers (not NaN), every element of array bounds."""
        return not (np.isnan(self.low).any() or np.isnan(self.high).any())


def wilson_interval(
    successes: npt.ArrayLike, trials: npt.ArrayLike, confidence: float = 0.95
) -> ConfidenceInterval[npt.NDArray[np.float64]]:
    """Wilson score interval for a binomial proportion (Wilson 1927, JASA 22:209-212).

    With p = k / n and z the two-sided normal quantile for ``confidence``::

        centre = (p + z^2 / 2n) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2)

    Unlike the normal (Wald) interval it stays inside [0, 1] and is not empty at
    p = 0 or 1.

    Parameters
    ----------
    successes, trials : array_like of int
        k and n, broadcast together; n = 0 gives NaN.
    confidence : float
        In (0, 1); default 0.95.

    Returns
    -------
    ConfidenceInterval
        Array-valued: ``low`` and ``high`` are ndarrays of float64 of the broadcast shape
        (0-d for two numbers), the bounds of many proportions at once (one per setup and
        dataset); ``level`` is ``confidence``, ``method`` ``"wilson"``. It unpacks as
        ``low, high = wilson_interval(k, n)``.

    Raises
    ------
    ValueError
        If ``confidence`` is not in (0, 1), or k < 0 or k > n.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), not {confidence!r}")
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must be between 0 and trials")
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denominator = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denominator
        half = z / denominator * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
        # At k = 0 (k = n) the bound is exactly 0 (1); the formula leaves rounding dust.
        low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(k == n, 1.0, np.clip(centre + half, 0.0, 1.0))
        low = np.where(n > 0, low, np.nan)
        high = np.where(n > 0, high, np.nan)
    return ConfidenceInterval(low, high, float(confidence), "wilson")


def pareto_front(cost: npt.ArrayLike, value: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Which points are on the Pareto frontier of lower cost and higher value.

    A point is on the frontier when no other point dominates it: has a cost at
    most its cost and a value at least its value, one of them strictly. Ties:
    of two points at the same cost the less valuable is dominated, of two with
    the same value the costlier is; identical points (equal in both) do not
    dominate each other and are on the frontier together. Points with a NaN
    coordinate are never on it and dominate nothing. A cost of 0 (a setup that
    retrieves nothing, on a retrieval axis) is a cost like any other.

    Parameters
    ----------
    cost, value : array_like of float, shape (n,)

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    x = np.asarray(cost, dtype=np.float64)
    y = np.asarray(value, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("cost and value must be 1-D arrays of the same length")
    on = np.zeros(x.shape, dtype=bool)
    valid = np.flatnonzero(~(np.isnan(x) | np.isnan(y)))
    # Sweep by increasing cost (higher value first among equal costs): a point is on
    # the front when its value beats every cheaper-or-equal point seen before it.
    order: Any = valid[np.lexsort((-y[valid], x[valid]))]
    best = -np.inf
    best_cost = np.nan
    for i in order:
        if y[i] > best:
            on[i] = True
            best, best_cost = y[i], x[i]
        elif y[i] == best and x[i] == best_cost:
            on[i] = True  # an identical point
    return on


def interval_from_test(
    estimate: float,
    p_value: float,
    confidence: float,
    null_se: float,
    *,
    rejects: bool | None = None,
) -> ConfidenceInterval[float]:
    """The interval of ``estimate`` that agrees with a two-sided test's ``p_value``: it
    excludes 0 exactly when ``p_value < 1 - confidence``.

    The normal interval of the test's statistic, ``estimate ± z * null_se`` with
    ``z = z_{1-(1-confidence)/2}`` (for the sign-flip test of paired differences d_i,
    ``null_se = sqrt(sum d_i**2) / n``, the statistic's standard deviation under sign
    flips). Where that normal approximation and the test disagree on excluding 0 (near
    the boundary, or with few pairs), the bound nearest 0 is moved to 0: just past it
    when the test rejects, onto it when it does not. So the interval's width is the
    data's, and its side of 0 is the test's.

    When ``null_se`` is unknown (NaN), the test-based interval (Miettinen 1976; Altman
    and Bland 2011) stands in: the standard error the test implies under a normal
    sampling distribution, ``|estimate| / z_{1-p/2}``, times ``z`` on each side (it
    grows without bound as ``p_value`` nears 1; with ``p_value`` 1 or a zero estimate,
    ``estimate ± |estimate|``).

    Parameters
    ----------
    estimate : float
        The estimate tested against 0 (a mean paired difference), in its units.
    p_value : float
        The test's two-sided p-value in [0, 1] (values below 1e-300 count as 1e-300).
    confidence : float
        In (0, 1): 1 minus the level the test is judged at.
    null_se : float
        The standard error of ``estimate`` under the null, >= 0, or NaN when unknown.
    rejects : bool, optional
        The test's decision, when the caller makes it elsewhere (Holm's adjusted p-value
        below alpha: ``1 - (1 - level)`` is not always ``level`` in floating point, so the
        decision is passed, not recomputed); default ``p_value < 1 - confidence``. The
        interval excludes 0 exactly when it is True (and the estimate is not 0).

    Returns
    -------
    ConfidenceInterval
        Floats, ``method`` ``"test-compatible"``; NaN bounds when ``estimate`` or
        ``p_value`` is NaN.

    Raises
    ------
    ValueError
        If ``confidence`` is not in (0, 1) or ``p_value`` is outside [0, 1].

    References
    ----------
    .. [1] O. S. Miettinen (1976), "Estimability and estimation in case-referent
       studies", *American Journal of Epidemiology* 103(2), 226-235.
    .. [2] D. G. Altman, J. M. Bland (2011), "How to obtain the confidence interval from
       a P value", *BMJ* 343, d2090.

    Examples
    --------
    >>> i = interval_from_test(0.05, 0.01, 0.95, 0.02)  # rejects, and so does the normal
    >>> round(i.low, 6), round(i.high, 6)
    (0.010801, 0.089199)
    >>> i = interval_from_test(0.05, 0.2, 0.95, 0.02)  # the test does not reject: 0 is the bound
    >>> round(i.low, 12), round(i.high, 6)
    (0.0, 0.1)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"`confidence` must be in (0, 1), not {confidence!r}")
    if math.isnan(estimate) or math.isnan(p_value):
        return ConfidenceInterval(math.nan, math.nan, float(confidence), "test-compatible")
    if not 0.0 <= p_value <= 1.0:
        raise ValueError(f"`p_value` must be in [0, 1], not {p_value!r}")
    normal = NormalDist()
    z = normal.inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    size = abs(estimate)
    rejected = p_value < 1.0 - confidence if rejects is None else bool(rejects)
    if not math.isnan(null_se):
        half = z * null_se
    elif p_value < 1.0 and estimate != 0.0:
        half = z * size / -normal.inv_cdf(max(p_value, 1e-300) / 2.0)
    else:
        half = size
    if rejected and estimate != 0.0:
        # Rejected: 0 stays outside, however close the normal bound comes.
        half = min(half, math.nextafter(size, 0.0))
    else:
        half = max(half, size)
    return ConfidenceInterval(
        estimate - half, estimate + half, float(confidence), "test-compatible"
    )
