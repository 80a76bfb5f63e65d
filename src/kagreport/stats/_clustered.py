"""The mean of clustered values (repeats of an item, questions sharing a passage) with its
cluster-robust standard error or a cluster bootstrap interval.

Every sum runs in a canonical order (values ascending; clusters in their labels' order, or
sorted sums), so permuting the values never changes a digit, nor, for the analytic
estimates, relabelling the clusters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np

from kagreport._errors import InputError
from kagreport.stats._student import (
    as_finite,
    check_confidence,
    cluster_codes,
    t_interval,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["MeanEstimate", "clustered_mean"]

_Floats = np.ndarray[Any, np.dtype[np.float64]]

# Bytes of the largest block of drawn clusters the bootstrap holds at once.
_BLOCK_BYTES: Final = 16 * 2**20
# Up to this many distinct clusters (size and sum), the bootstrap draws their counts.
_MAX_KINDS_FOR_MULTINOMIAL: Final = 64


@dataclass(frozen=True)
class MeanEstimate:
    """The mean of values, its standard error and confidence interval (:func:`clustered_mean`).

    Attributes
    ----------
    mean : float
        The mean of all values, in their units.
    se : float
        Its standard error: cluster-robust (CR1) for ``method="analytic"``, the standard
        deviation of the bootstrap means for ``method="bootstrap"``.
    ci : tuple of (float, float)
        ``(low, high)`` at the requested confidence.
    n : int
        Number of values.
    n_clusters : int
        Number of clusters G (``n`` when no clusters are given: each value its own).
    df : int or None
        Degrees of freedom of the t interval, G - 1; None for the bootstrap.
    se_iid : float
        The standard error ignoring the clusters: sample SD (ddof 1) / sqrt(n).
    design_effect : float
        ``(se / se_iid) ** 2``: how much the clustering inflates the variance; NaN when
        every value is the same (0 / 0).
    method : str
        ``"analytic"`` or ``"bootstrap"``.
    """

    mean: float
    se: float
    ci: tuple[float, float]
    n: int
    n_clusters: int
    df: int | None
    se_iid: float
    design_effect: float
    method: str


def cluster_sums(
    x: _Floats, codes: np.ndarray[Any, Any] | None, n_clusters: int
) -> tuple[_Floats, _Floats]:
    """Each cluster's sum of ``x`` (added in ascending order of ``x``) and its size."""
    if codes is None:
        return np.sort(x), np.ones(x.size)
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    if _exact_sums(x):
        sums = np.bincount(codes, weights=x, minlength=n_clusters)
        return sums.astype(np.float64, copy=False), sizes
    order = np.argsort(x)  # ties are equal values: the order among them adds nothing
    sums = np.bincount(codes[order], weights=x[order], minlength=n_clusters)
    return sums.astype(np.float64, copy=False), sizes


def _exact_sums(x: _Floats) -> bool:
    """Whether every sum of ``x`` is exact (whole numbers whose total stays below 2**53),
    so that the order of the additions cannot change a digit (0/1 scores, say)."""
    return bool(np.abs(x).max() * x.size < 2.0**53) and bool((x == np.rint(x)).all())


def sorted_sum(x: _Floats) -> float:
    return float(np.sort(x).sum())


def check_clusters(
    clusters: npt.ArrayLike | None, n: int, what: str
) -> tuple[np.ndarray[Any, Any] | None, int]:
    codes, n_clusters = (None, n) if clusters is None else cluster_codes(clusters, n, what)
    if n_clusters < 2:
        if clusters is None:
            raise InputError(f"`{what}` must hold at least 2 values, not {n}")
        raise InputError(f"`clusters` must name at least 2 clusters, not {n_clusters}")
    return codes, n_clusters


# Over 80 lines only with its docstring (the formulas, their sources, the errors).
def clustered_mean(
    values: npt.ArrayLike,
    clusters: npt.ArrayLike | None = None,
    *,
    confidence: float = 0.95,
    method: Literal["analytic", "bootstrap"] = "analytic",
    n_resamples: int = 10_000,
    seed: int | None = None,
) -> MeanEstimate:
    """The mean of ``values`` with a standard error and interval that respect ``clusters``.

    Parameters
    ----------
    values : array_like, shape (n,)
        Finite numbers (scores of items, or of the repeats of items), in any units.
    clusters : array_like, shape (n,), optional
        Each value's cluster label (integers, other numbers or strings, of one kind): the
        item whose repeat it is, the passage its question shares. None: each value its own.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).
    method : {"analytic", "bootstrap"}, default "analytic"
        ``"analytic"``: the cluster-robust standard error and a t interval.
        ``"bootstrap"``: whole clusters resampled with replacement, percentile interval.
    n_resamples : int, default 10000
        Bootstrap resamples (``method="bootstrap"`` only).
    seed : int, optional
        Seed of ``numpy.random.default_rng`` for the bootstrap; None draws fresh entropy.

    Returns
    -------
    MeanEstimate

    Raises
    ------
    InputError
        If ``values`` is not one-dimensional or holds NaN or an infinity, if ``clusters``
        differs from it in length, holds NaN or mixes kinds of labels, if there are fewer
        than 2 clusters (2 values without clusters), if ``confidence`` is not in (0, 1),
        ``method`` is unknown, or ``n_resamples`` or ``seed`` is not a valid integer.
    MissingExtraError
        If SciPy (the ``stats`` extra) is not installed (t quantiles, ``"analytic"``).

    Notes
    -----
    With G clusters, values x_i, mean m and S_g the sum of ``x_i - m`` over cluster g, the
    variance of m is ``G / (G - 1) * sum_g S_g**2 / n**2`` (the CR1 sandwich of an
    intercept-only regression, Cameron and Miller [2]_; the form of Miller [1]_, eq. 4),
    and the interval is ``m -/+ t_{(1 + confidence) / 2, G - 1} * se``. Without clusters it
    is the textbook ``s / sqrt(n)`` (s with ddof 1) with t on n - 1 degrees of freedom.
    statsmodels' OLS with ``cov_type="cluster"`` multiplies CR1 by ``(N - 1) / (N - K)``
    too, which is 1 here (K = 1): the two agree.

    The bootstrap draws G clusters with replacement (Cameron, Gelbach and Miller [3]_),
    the mean of a resample being its values' sum over their count, and takes the
    percentile interval; ``se`` is the standard deviation (ddof 1) of those means. The
    clusters are taken in their labels' sorted order, so a seed gives the same interval
    whatever the order of the values. Where at most 64 kinds of cluster (size, sum)
    occur, as for 0/1 scores of a few repeats, the counts of each kind are drawn from a
    multinomial instead, which is the same distribution.

    References
    ----------
    .. [1] E. Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to
       Language Model Evaluations", arXiv:2411.00640.
    .. [2] A. C. Cameron and D. L. Miller (2015), "A Practitioner's Guide to
       Cluster-Robust Inference", *Journal of Human Resources* 50(2), 317-372.
    .. [3] A. C. Cameron, J. B. Gelbach and D. L. Miller (2008), "Bootstrap-Based
       Improvements for Inference with Clustered Errors", *Review of Economics and
       Statistics* 90(3), 414-427.

    Examples
    --------
    Inspect AI's case: 0..19 in 4 clusters (i % 4); cluster residual sums -7.5, -2.5,
    2.5, 7.5, so the variance is 4/3 * 125 / 400 and the SE 0.6455.

    >>> r = clustered_mean(range(20), [i % 4 for i in range(20)])
    >>> round(r.mean, 2), round(r.se, 4), r.n_clusters, r.df
    (9.5, 0.6455, 4, 3)
    """
    x = as_finite(values, "values")
    confidence = check_confidence(confidence)
    if method not in ("analytic", "bootstrap"):
        raise InputError(f"`method` must be 'analytic' or 'bootstrap', not {method!r}")
    if method == "bootstrap":
        n_resamples, seed = _check_resampling(n_resamples, seed)
    n = x.size
    codes, n_clusters = check_clusters(clusters, n, "values")
    mean = sorted_sum(x) / n
    residuals = x - mean
    se_iid = math.sqrt(sorted_sum(residuals**2) / (n - 1) / n)
    if method == "analytic":
        if codes is not None and _exact_sums(x):
            totals, sizes = cluster_sums(x, codes, n_clusters)
            sums = totals - sizes * mean  # exact totals: no sort needed for the same digits
        else:
            sums, _ = cluster_sums(residuals, codes, n_clusters)
        variance = n_clusters / (n_clusters - 1) * sorted_sum(sums**2) / n**2
        se = math.sqrt(variance)
        ci = t_interval(mean, se, n_clusters - 1, confidence)
        df: int | None = n_clusters - 1
    else:
        sums, sizes = cluster_sums(x, codes, n_clusters)
        means = _bootstrap_means(sums, sizes, n_resamples, seed)
        se = float(np.std(means, ddof=1)) if n_resamples > 1 else math.nan
        low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
        ci, df = (float(low), float(high)), None
    design_effect = (se / se_iid) ** 2 if se_iid > 0 else math.nan
    return MeanEstimate(mean, se, ci, n, n_clusters, df, se_iid, design_effect, method)


def _check_resampling(n_resamples: int, seed: int | None) -> tuple[int, int | None]:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise InputError(f"`n_resamples` must be a positive integer, not {n_resamples!r}")
    if not 1 <= n_resamples < 2**62:
        raise InputError(f"`n_resamples` must be in [1, 2**62), not {n_resamples!r}")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
    ):
        raise InputError(f"`seed` must be a non-negative integer or None, not {seed!r}")
    return int(n_resamples), None if seed is None else int(seed)


def _bootstrap_means(sums: _Floats, sizes: _Floats, n_resamples: int, seed: int | None) -> _Floats:
    """Means of ``n_resamples`` resamples of the clusters (given by their sums and sizes)."""
    rng = np.random.default_rng(seed)
    n_clusters = sums.size
    means = np.empty(n_resamples)
    kinds, counts = np.unique(np.stack([sizes, sums]), axis=1, return_counts=True)
    if kinds.shape[1] <= _MAX_KINDS_FOR_MULTINOMIAL:
        rows = max(1, _BLOCK_BYTES // (8 * kinds.shape[1]))
        for first in range(0, n_resamples, rows):
            size = min(rows, n_resamples - first)
            drawn = rng.multinomial(n_clusters, counts / n_clusters, size=size).astype(float)
            means[first : first + size] = (drawn @ kinds[1]) / (drawn @ kinds[0])
        return means
    rows = max(1, _BLOCK_BYTES // (16 * n_clusters))  # int64 indices, float64 values
    for first in range(0, n_resamples, rows):
        size = min(rows, n_resamples - first)
        drawn = rng.integers(0, n_clusters, size=(size, n_clusters))
        means[first : first + size] = sums[drawn].sum(axis=1) / sizes[drawn].sum(axis=1)
    return means
