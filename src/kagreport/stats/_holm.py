"""Holm's step-down adjustment of p-values for multiple comparisons (Holm 1979)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["holm_adjust"]


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of p-values for multiple comparisons.

    Parameters
    ----------
    p_values : sequence of float, length k
        Unadjusted p-values in [0, 1]; NaN entries (tests not run) are passed
        through as NaN and are not counted among the tests.

    Returns
    -------
    list of float, length k
        Adjusted p-values in the input order: with the t defined p-values sorted
        ascending, p_(i) -> max_{j <= i} min(1, (t - j + 1) p_(j)). Monotone in the
        unadjusted p-values and capped at 1. Rejecting where the adjusted value is
        below alpha controls the family-wise error rate at alpha.

    Raises
    ------
    ValueError
        If a p-value is outside [0, 1].

    References
    ----------
    .. [1] S. Holm (1979), "A simple sequentially rejective multiple test
       procedure", *Scandinavian Journal of Statistics* 6(2), 65-70.

    Examples
    --------
    >>> [round(p, 12) for p in holm_adjust([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = np.asarray([float(v) for v in p_values], dtype=np.float64)
    defined = ~np.isnan(p)
    if ((p[defined] < 0.0) | (p[defined] > 1.0)).any():
        raise ValueError(f"`p_values` must lie in [0, 1] (or be NaN), not {list(p_values)!r}")
    adjusted = np.full(p.shape, math.nan)
    positions = np.flatnonzero(defined)
    t = positions.size
    if t:
        order = np.argsort(p[positions], kind="stable")
        ranked = p[positions][order]
        stepped = np.minimum(1.0, np.maximum.accumulate((t - np.arange(t)) * ranked))
        adjusted[positions[order]] = stepped
    return [float(v) for v in adjusted]
