"""The percentile bootstrap interval of a mean paired difference (Efron and Tibshirani 1993).

Resampling runs over the differences in a canonical (sorted) order, so the interval depends
only on the multiset of differences: permuting the items never changes a digit.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import numpy as np

from kagreport.stats._intervals import ConfidenceInterval
from kagreport.stats._signflip import (
    _as_differences,
    _check_confidence,
    _check_n_resamples,
    _check_seed,
    _tamed,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["bootstrap_mean_interval"]

# Memory bound of the resampling loop (bytes of the largest temporary block).
_BOOTSTRAP_BLOCK_BYTES: Final = 16 * 2**20
# Resamples handled together; bounds the per-resample accumulators.
_MAX_COLUMNS: Final = 2**16
# Above this many distinct values the bootstrap draws indices instead of counts.
_MAX_DISTINCT_FOR_MULTINOMIAL: Final = 64


# Over 80 lines only with its docstring (a public function's parameters, errors, sources).
def bootstrap_mean_interval(
    differences: npt.ArrayLike,
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ConfidenceInterval[float]:
    """Percentile bootstrap confidence interval of the mean paired difference.

    Parameters
    ----------
    differences : array_like, shape (n,)
        Paired differences, finite, in the metric's units.
    n_resamples : int, default 10000
        Bootstrap resamples (each of n pairs drawn with replacement).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high``: the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
        quantiles of the resampled means (numpy's default linear interpolation), in the
        metric's units, both NaN when there are no differences; ``level`` is
        ``confidence``, ``method`` ``"percentile-bootstrap"``.

    Raises
    ------
    ValueError
        If ``differences`` is not one-dimensional or holds NaN or an infinity, or
        if ``n_resamples``, ``seed`` or ``confidence`` is out of range.

    Notes
    -----
    The percentile interval of Efron and Tibshirani (1993, ch. 13). Resampling n
    pairs with replacement is the same as drawing the counts of each distinct
    value from Multinomial(n, counts / n); when there are at most 64 distinct
    values (0/1 correctness gives at most 3 differences: -1, 0, 1), the counts
    are drawn directly, which costs O(distinct values) per resample instead of
    O(n). Otherwise indices are drawn, in blocks of about 16 MiB, into the sorted
    differences, so permuting the pairs never changes the interval.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani (1993), *An Introduction to the
       Bootstrap*, Chapman & Hall, ch. 13.
    """
    # Sorted: the canonical order, so the interval depends on the multiset of pairs only.
    d = np.sort(_as_differences(differences)) + 0.0  # + 0.0: -0.0 becomes 0.0
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    _check_confidence(confidence)
    level = float(confidence)
    if d.size == 0:
        return ConfidenceInterval(math.nan, math.nan, level, "percentile-bootstrap")
    n = d.size
    d, shift = _tamed(d)  # resampled sums of scores near 1.8e308 must not overflow
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    values, counts = np.unique(d, return_counts=True)
    if values.size <= _MAX_DISTINCT_FOR_MULTINOMIAL:
        probabilities = counts / n
        for first in range(0, n_resamples, _MAX_COLUMNS):
            size = min(_MAX_COLUMNS, n_resamples - first)
            drawn = rng.multinomial(n, probabilities, size=size)  # (size, distinct values)
            means[first : first + size] = drawn @ values / n
    else:
        # int64 indices plus float64 values: 16 bytes per drawn pair.
        per_block = max(1, _BOOTSTRAP_BLOCK_BYTES // (16 * n))
        looked_up = np.empty((min(per_block, n_resamples), n))
        for first in range(0, n_resamples, per_block):
            size = min(per_block, n_resamples - first)
            indices = rng.integers(0, n, size=(size, n))
            out = looked_up[:size]
            np.take(d, indices, out=out, mode="clip")  # indices < n: "clip" never clips
            means[first : first + size] = out.sum(axis=1) / n
    alpha = 1.0 - float(confidence)
    low, high = np.ldexp(np.quantile(means, [alpha / 2, 1.0 - alpha / 2]), shift)
    return ConfidenceInterval(float(low), float(high), level, "percentile-bootstrap")
