"""The paired t test of two systems' scores, on per-cluster mean differences.

Sums run in a canonical order (see :mod:`kagreport.stats._clustered`), so neither the
order of the pairs nor the names of the clusters changes a digit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kagreport.stats._clustered import check_clusters, cluster_sums, sorted_sum
from kagreport.stats._student import (
    as_finite,
    check_confidence,
    same_length,
    t_interval,
    t_two_sided_pvalue,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["PairedDifference", "paired_difference"]


@dataclass(frozen=True)
class PairedDifference:
    """A paired t test of the mean difference between two systems (:func:`paired_difference`).

    Attributes
    ----------
    estimate : float
        The mean of the per-cluster mean differences ``a - b`` (per item without clusters).
    se : float
        Its standard error, ``sqrt(variance / n)``.
    ci : tuple of (float, float)
        ``(low, high)``: the t interval on ``df`` degrees of freedom.
    pvalue : float
        Two-sided p-value of the t test of a zero mean difference, in [0, 1]; NaN when
        ``variance`` is 0 (the t statistic is undefined).
    n : int
        Number of differences: clusters, or items without clusters.
    df : int
        ``n - 1``.
    variance : float
        Sample variance (ddof 1) of the differences, in squared units of the values.
    """

    estimate: float
    se: float
    ci: tuple[float, float]
    pvalue: float
    n: int
    df: int
    variance: float


def paired_difference(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    clusters: npt.ArrayLike | None = None,
    *,
    confidence: float = 0.95,
) -> PairedDifference:
    """The paired t test of the mean difference ``a - b``, on per-cluster mean differences.

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Finite scores of two systems on the same n items (or repeats), paired by index.
    clusters : array_like, shape (n,), optional
        Each pair's cluster label (integers, other numbers or strings, of one kind), e.g. the
        item of a repeat. None: each pair its own cluster.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).

    Returns
    -------
    PairedDifference

    Raises
    ------
    InputError
        If ``a`` or ``b`` is not one-dimensional or holds NaN or an infinity, if ``a``,
        ``b`` and ``clusters`` differ in length, if ``clusters`` holds NaN or mixes kinds
        of labels, if there are fewer than 2 differences, or if ``confidence`` is not in
        (0, 1).
    MissingExtraError
        If SciPy (the ``stats`` extra) is not installed (t quantiles).

    Notes
    -----
    Each cluster g contributes the mean d_g of its differences ``a_i - b_i``; with G of
    them, mean D and sample variance s**2 (ddof 1), ``se = s / sqrt(G)``, ``t = D / se`` on
    G - 1 degrees of freedom (Student's paired t test [1]_; the cluster means as the
    unit of analysis, Miller [2]_, sec. 2.3), ``p = 2 P(T > |t|)`` and the interval
    ``D -/+ t_{(1 + confidence) / 2, G - 1} * se``. Each cluster weighs the same, however
    many pairs it holds. ``scipy.stats.ttest_rel`` on the per-cluster means gives the same.

    References
    ----------
    .. [1] Student (1908), "The Probable Error of a Mean", *Biometrika* 6(1), 1-25.
    .. [2] E. Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to
       Language Model Evaluations", arXiv:2411.00640.
    """
    first = as_finite(a, "a")
    second = as_finite(b, "b")
    same_length(first, second, ("a", "b"))
    confidence = check_confidence(confidence)
    d = first - second
    codes, n_clusters = check_clusters(clusters, d.size, "a")
    if codes is not None:
        sums, sizes = cluster_sums(d, codes, n_clusters)
        d = sums / sizes
    estimate = sorted_sum(d) / n_clusters
    variance = sorted_sum((d - estimate) ** 2) / (n_clusters - 1)
    se = math.sqrt(variance / n_clusters)
    df = n_clusters - 1
    pvalue = t_two_sided_pvalue(estimate / se, df) if se > 0 else math.nan
    ci = t_interval(estimate, se, df, confidence)
    return PairedDifference(estimate, se, ci, pvalue, n_clusters, df, variance)
