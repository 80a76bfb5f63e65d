"""Honest leaderboards: which systems of a 0/1 items x systems matrix can be told apart.

``tie_groups`` cuts the accuracy order where adjacent systems differ significantly;
:func:`rank_sets` gives each system the interval of ranks it may hold. Both rest on the
exact McNemar test (``mcnemar_p_values``: the two-sided binomial test of the discordant
pairs) and Holm's adjustment (:func:`kagreport.stats.holm_adjust`). Every pair's discordant
counts come from one matrix product, so 100 systems x 10,000 items take milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kagreport._errors import InputError
from kagreport.stats._holm import holm_adjust

__all__ = ["mcnemar_p_values", "rank_sets", "tie_groups"]

# A tail's terms are summed until the rest is below this share of the sum.
_EPSILON = 2.0**-60
_LN2 = math.log(2.0)


def mcnemar_p_values(b: npt.ArrayLike, c: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Exact McNemar p-values: the two-sided binomial test of ``b`` successes in ``b + c``
    trials at probability 1/2, element by element.

    Parameters
    ----------
    b, c : array_like of int, broadcast together
        The two discordant counts of each pair (items only the first system gets right,
        items only the second does), >= 0.

    Returns
    -------
    ndarray of float64, the broadcast shape
        ``min(1, 2 * P(X <= min(b, c)))`` for X ~ Binomial(b + c, 1/2): the p-value of
        :func:`scipy.stats.binomtest` (which sums the outcomes no likelier than the one
        observed; at probability 1/2 that is twice the smaller tail), 1 when ``b == c``
        and when there is no discordant pair. A p-value below the smallest double is 0.

    Raises
    ------
    InputError
        If a count is negative or not a whole number.

    Notes
    -----
    The smaller tail is ``pmf(k) * (1 + r_k + r_k r_{k-1} + ...)`` with
    ``r_j = j / (n - j + 1)`` the ratio of consecutive binomial probabilities, summed for
    all pairs at once until the rest (a geometric bound) is below 2**-60 of the sum;
    ``pmf(k)`` is taken in logarithms (:func:`math.lgamma`), so nothing underflows
    before the last step. Relative error below 1e-10 (scipy.stats.binomtest) up to a
    million pairs.

    References
    ----------
    .. [1] Q. McNemar (1947), "Note on the sampling error of the difference between
       correlated proportions or percentages", *Psychometrika* 12(2), 153-157.
    .. [2] M. P. Fay (2010), "Two-sided exact tests and matching confidence intervals for
       discrete data", *The R Journal* 2(1), 53-58 (the central two-sided p-value).

    Examples
    --------
    >>> round(float(mcnemar_p_values(1, 9)[()]), 12)  # 2 * (1 + 10) / 1024
    0.021484375
    """
    b_array = np.asarray(b, dtype=np.float64)
    c_array = np.asarray(c, dtype=np.float64)
    both = np.broadcast_arrays(b_array, c_array)
    for array, name in zip(both, ("b", "c"), strict=True):
        if not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array % 1 != 0):
            raise InputError(f"`{name}` must hold whole numbers, 0 or more")
    k_all = np.minimum(both[0], both[1]).ravel()
    n_all = (both[0] + both[1]).ravel()
    p = np.ones(k_all.shape)
    # 2k >= n - 1: the smaller tail holds half the mass or more (b == c, or b and c one
    # apart with the middle pair of outcomes equally likely): p is 1.
    todo = np.flatnonzero(2.0 * k_all < n_all - 1.0)
    if todo.size:
        k, n = k_all[todo], n_all[todo]
        lgamma = np.frompyfunc(math.lgamma, 1, 1)
        log_pmf = (lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) - n * _LN2).astype(
            np.float64
        )
        p[todo] = np.minimum(1.0, 2.0 * np.exp(log_pmf + np.log(_tail_factor(k, n))))
    return p.reshape(both[0].shape)


def _tail_factor(k: npt.NDArray[np.float64], n: npt.NDArray[np.float64]) -> Any:
    """sum_{j <= k} pmf(j) / pmf(k) for Binomial(n, 1/2), k < (n - 1) / 2."""
    total = np.ones(k.shape)
    term = np.ones(k.shape)
    j = k.copy()
    active = np.flatnonzero(j > 0)
    while active.size:
        ratio = j[active] / (n[active] - j[active] + 1.0)
        term[active] *= ratio
        total[active] += term[active]
        j[active] -= 1.0
        # The ratios fall as j falls: the rest is below term * r / (1 - r).
        next_ratio = j[active] / (n[active] - j[active] + 1.0)
        rest = term[active] * next_ratio / (1.0 - next_ratio)
        active = active[(j[active] > 0) & (rest > _EPSILON * total[active])]
    return total


def _check_matrix(
    correct: npt.ArrayLike, systems: Sequence[str], alpha: float
) -> tuple[npt.NDArray[np.float64], list[str], float]:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InputError(f"`alpha` must be in (0, 1), not {alpha!r}")
    names = [str(s) for s in systems]
    if len(set(names)) != len(names):
        raise InputError("`systems` must be distinct names")
    try:
        matrix = np.asarray(correct, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"`correct` must be a 0/1 matrix: {exc}") from None
    if matrix.ndim != 2 or matrix.shape[1] != len(names):
        raise InputError(
            f"`correct` must be items x systems, shape (n, {len(names)}), not {matrix.shape}"
        )
    if not np.isin(matrix, (0.0, 1.0)).all():
        raise InputError("`correct` must hold 0 and 1 only (no NaN)")
    return matrix, names, float(alpha)


def _discordant(matrix: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Entry (i, j): items system i gets right and system j wrong (one matrix product;
    exact in float64 below 2**53 items)."""
    both: npt.NDArray[np.float64] = matrix.T @ matrix
    totals: npt.NDArray[np.float64] = matrix.sum(axis=0)
    return totals[:, None] - both


def _order(matrix: npt.NDArray[np.float64], names: list[str]) -> list[int]:
    totals = matrix.sum(axis=0)
    return sorted(range(len(names)), key=lambda s: (-totals[s], names[s]))


def tie_groups(
    correct: npt.ArrayLike, systems: Sequence[str], *, alpha: float = 0.05
) -> list[list[str]]:
    """Systems that cannot be told apart from their neighbours in the accuracy order.

    Parameters
    ----------
    correct : array_like, shape (n_items, n_systems)
        1 where the system got the item right, 0 where not; every system on every item.
    systems : sequence of str, length n_systems
        Distinct names of the columns.
    alpha : float, default 0.05
        Family-wise error rate over the adjacent pairs, in (0, 1).

    Returns
    -------
    list of list of str
        The systems ordered by accuracy (descending, then by name), cut between two
        neighbours where their exact McNemar test (``mcnemar_p_values``; p = 1 with no
        discordant item), Holm-adjusted over the ``n_systems - 1`` adjacent pairs, is below
        ``alpha``: the maximal runs whose adjacent adjusted p-values are all >= ``alpha``.
        Empty for no system.

    Raises
    ------
    InputError
        If ``correct`` is not an items x systems 0/1 matrix, the names are not distinct,
        or ``alpha`` is not in (0, 1).

    References
    ----------
    .. [1] Q. McNemar (1947), *Psychometrika* 12(2), 153-157.
    .. [2] S. Holm (1979), *Scandinavian Journal of Statistics* 6(2), 65-70.

    Examples
    --------
    >>> tie_groups([[1, 1, 0], [1, 0, 0]] * 10, ["a", "b", "c"])
    [['a'], ['b'], ['c']]
    """
    matrix, names, alpha = _check_matrix(correct, systems, alpha)
    order = _order(matrix, names)
    if not order:
        return []
    discordant = _discordant(matrix)
    above, below = np.array(order[:-1], dtype=np.intp), np.array(order[1:], dtype=np.intp)
    raw = mcnemar_p_values(discordant[above, below], discordant[below, above])
    adjusted = holm_adjust(raw.tolist())
    groups = [[names[order[0]]]]
    for p, s in zip(adjusted, order[1:], strict=True):
        if p < alpha:
            groups.append([])
        groups[-1].append(names[s])
    return groups


def rank_sets(
    correct: npt.ArrayLike, systems: Sequence[str], *, alpha: float = 0.05
) -> dict[str, tuple[int, int]]:
    """Each system's interval of ranks: the ranks the data cannot rule out.

    Parameters
    ----------
    correct : array_like, shape (n_items, n_systems)
        1 where the system got the item right, 0 where not.
    systems : sequence of str, length n_systems
        Distinct names of the columns.
    alpha : float, default 0.05
        Family-wise error rate over all ``n_systems * (n_systems - 1) / 2`` pairs.

    Returns
    -------
    dict of str to (int, int)
        System -> ``(1 + B, N - W)``, in the order of ``systems``, where N is the number of
        systems and B (W) the number of systems significantly better (worse): the exact
        McNemar test of the pair (``mcnemar_p_values``), Holm-adjusted over all pairs,
        below ``alpha``, in the direction of the pair's discordant counts. Ranks are
        competition ranks (1 is the best; tied systems share the smaller rank), so a
        system no test separates from the others holds ``(1, N)``.

    Raises
    ------
    InputError
        As ``tie_groups``.

    References
    ----------
    .. [1] Q. McNemar (1947), *Psychometrika* 12(2), 153-157.
    .. [2] S. Holm (1979), *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [3] M. Mogstad, J. P. Romano, A. M. Shaikh, D. Wilhelm (2024), "Inference for
       ranks with applications to mobility across neighbourhoods and academic achievement
       across countries", *Review of Economic Studies* 91(1), 476-518 (confidence sets
       for ranks from pairwise tests with a family-wise error rate).

    Examples
    --------
    >>> rank_sets([[1, 1, 0], [1, 0, 0]] * 10, ["a", "b", "c"])
    {'a': (1, 1), 'b': (2, 2), 'c': (3, 3)}
    """
    matrix, names, alpha = _check_matrix(correct, systems, alpha)
    k = len(names)
    discordant = _discordant(matrix)
    first, second = np.triu_indices(k, 1)
    up, down = discordant[first, second], discordant[second, first]
    adjusted = np.asarray(holm_adjust(mcnemar_p_values(up, down).tolist()))
    separated = adjusted < alpha
    better = np.zeros(k, dtype=np.intp)  # systems significantly better than each
    worse = np.zeros(k, dtype=np.intp)
    first_wins = separated & (up > down)
    second_wins = separated & (down > up)
    np.add.at(better, second[first_wins], 1)
    np.add.at(worse, first[first_wins], 1)
    np.add.at(better, first[second_wins], 1)
    np.add.at(worse, second[second_wins], 1)
    return {name: (1 + int(better[s]), k - int(worse[s])) for s, name in enumerate(names)}
