"""Holm's step-down adjustment of p-values for multiple comparisons (Holm 1979)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["holm_adjust", "holm_levels"]


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


def holm_levels(p_values: Sequence[float], alpha: float = 0.05) -> list[float]:
    """The level at which Holm's procedure tests each hypothesis, so that an interval at
    confidence ``1 - level`` excludes the null exactly when the adjusted test rejects.

    Parameters
    ----------
    p_values : sequence of float, length k
        Unadjusted p-values in [0, 1]; NaN entries are not counted and get NaN.
    alpha : float, default 0.05
        The family-wise error rate, in (0, 1).

    Returns
    -------
    list of float, length k
        With the t defined p-values sorted ascending and s the first step that does not
        reject (p_(s) >= alpha / (t - s + 1); s = t + 1 when all reject), the hypothesis
        at step i gets ``alpha / (t - min(i, s) + 1)``: the step-down level it was
        rejected at, or, once the procedure stopped, the level it stopped at. Then
        ``p_i < level_i`` exactly when :func:`holm_adjust` gives ``p_i`` an adjusted
        value below ``alpha``. Equal p-values share the level of the first of them (Holm
        rejects all of them or none), so no level depends on the order of the input.

    Raises
    ------
    ValueError
        If a p-value is outside [0, 1] or ``alpha`` is not in (0, 1).

    References
    ----------
    .. [1] S. Holm (1979), "A simple sequentially rejective multiple test
       procedure", *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [2] K. Strassburger, F. Bretz (2008), "Compatible simultaneous lower confidence
       bounds for the Holm procedure and other Bonferroni-based closed tests",
       *Statistics in Medicine* 27(24), 4914-4927 (intervals matching Holm's decisions).

    Examples
    --------
    >>> holm_levels([0.01, 0.04, 0.03])  # 0.01 < 0.05/3; 0.03 >= 0.05/2: stops there
    [0.016666666666666666, 0.025, 0.025]
    """
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1), not {alpha!r}")
    p = np.asarray([float(v) for v in p_values], dtype=np.float64)
    defined = ~np.isnan(p)
    if ((p[defined] < 0.0) | (p[defined] > 1.0)).any():
        raise ValueError(f"`p_values` must lie in [0, 1] (or be NaN), not {list(p_values)!r}")
    levels = np.full(p.shape, math.nan)
    positions = np.flatnonzero(defined)
    t = positions.size
    if t:
        order = np.argsort(p[positions], kind="stable")
        ranked = p[positions][order]
        steps = alpha / (t - np.arange(t))  # alpha / t, alpha / (t - 1), ..., alpha
        failed = np.flatnonzero(ranked >= steps)
        stop = failed[0] if failed.size else t
        # Equal p-values take the step of the first of them: Holm rejects all or none of
        # them, and their levels then do not depend on the order they were given in.
        first = np.searchsorted(ranked, ranked, side="left")
        levels[positions[order]] = steps[np.minimum(first, stop)]
    return [float(v) for v in levels]
