"""pass@k and pass^k from repeated trials of each task, with exact combinatorics.

Each task's estimate depends only on its (trials, successes); the distinct pairs are few
(at most 21 for 5 trials), so each is computed once, as one correctly rounded quotient of
Python integers (``math.comb``), and looked up for every task.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import InputError
from kagreport.stats._student import same_length, t_interval

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["PassEstimate", "pass_at_k", "pass_hat_k"]

_Ints = np.ndarray[Any, np.dtype[np.int64]]

#: Coverage of the t interval of ``PassEstimate``.
_CONFIDENCE = 0.95


@dataclass(frozen=True)
class PassEstimate:
    """The mean over tasks of a per-task probability from repeated trials.

    Attributes
    ----------
    estimate : float
        The mean of ``per_task``, in [0, 1].
    se : float
        Its standard error over tasks: sample SD of ``per_task`` (ddof 1) / sqrt(T).
    ci : tuple of (float, float)
        ``(low, high)``: the 95% t interval on T - 1 degrees of freedom,
        ``estimate -/+ t_{0.975, T-1} * se`` (not clipped to [0, 1]).
    per_task : ndarray of float64, shape (T,)
        Each task's unbiased estimate, in the order the tasks were given.
    """

    estimate: float
    se: float
    ci: tuple[float, float]
    per_task: np.ndarray[Any, np.dtype[np.float64]]


def _as_counts(values: npt.ArrayLike, name: str) -> _Ints:
    if isinstance(values, np.ndarray) and values.dtype.kind == "i" and values.ndim == 1:
        if values.size and values.min() < 0:
            at = int(np.flatnonzero(values < 0)[0])
            raise InputError(f"`{name}` must be whole numbers >= 0; task {at} has {values[at]}")
        return values.astype(np.int64, copy=False)
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"`{name}` must be whole numbers: {exc}") from None
    if array.ndim != 1:
        raise InputError(f"`{name}` must be one-dimensional, not of shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array) | (array != np.round(array)) | (array < 0))
    if bad.size:
        at = int(bad[0])
        raise InputError(f"`{name}` must be whole numbers >= 0; task {at} has {float(array[at])!r}")
    if array.size and array.max() >= 2**53:
        raise InputError(f"`{name}` must be below 2**53, not {array.max():.0f}")
    return array.astype(np.int64)


def _check(successes: npt.ArrayLike, trials: npt.ArrayLike, k: int) -> tuple[_Ints, _Ints, int]:
    c = _as_counts(successes, "successes")
    n = _as_counts(trials, "trials")
    same_length(c, n, ("successes", "trials"))
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"`k` must be a positive integer, not {k!r}")
    k = int(k)
    if c.size < 2:
        raise InputError(f"`successes` must hold at least 2 tasks, not {c.size}")
    over = np.flatnonzero(c > n)
    if over.size:
        at = int(over[0])
        raise InputError(f"task {at} has more successes than trials: {c[at]} of {n[at]}")
    short = np.flatnonzero(n < k)
    if short.size:
        at = int(short[0])
        raise InputError(f"`k` = {k} exceeds the {n[at]} trials of task {at}")
    return c, n, k


def _estimate(c: _Ints, n: _Ints, k: int, exact: Callable[[int, int, int], float]) -> PassEstimate:
    """Per task ``exact(n, c, k)``, computed once per distinct (n, c); mean, SE, interval."""
    smallest, largest = int(n.min()), int(n.max())
    if smallest == largest and largest < c.size:
        # One number of trials (the usual case): a table over c = 0..n.
        table = np.array([exact(largest, successes, k) for successes in range(largest + 1)])
        where = c
    elif largest < 2**31:
        keys = n * 2**31 + c
        pairs, where = np.unique(keys, return_inverse=True)
        table = np.array([exact(int(p) >> 31, int(p) & (2**31 - 1), k) for p in pairs])
    else:
        stacked, where = np.unique(np.stack([n, c]), axis=1, return_inverse=True)
        table = np.array([exact(int(a), int(b), k) for a, b in stacked.T])
    per_task = table[where.reshape(-1)]
    per_task.setflags(write=False)
    tasks = per_task.size
    estimate = float(np.sort(per_task).sum()) / tasks  # sorted: the same sum in any order
    deviations = np.sort((per_task - estimate) ** 2)
    se = math.sqrt(float(deviations.sum()) / (tasks - 1) / tasks)
    return PassEstimate(estimate, se, t_interval(estimate, se, tasks - 1, _CONFIDENCE), per_task)


def _at_k(n: int, c: int, k: int) -> float:
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total  # int / int: one correct rounding


def _hat_k(n: int, c: int, k: int) -> float:
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(successes: npt.ArrayLike, trials: npt.ArrayLike, k: int) -> PassEstimate:
    """pass@k: the chance that at least one of k trials of a task succeeds, over tasks.

    Parameters
    ----------
    successes : array_like of int, shape (T,)
        Successful trials c of each task, ``0 <= c <= n``.
    trials : array_like of int, shape (T,)
        Trials n of each task (they may differ by task), each at least ``k``.
    k : int
        Trials per attempt, ``k >= 1``.

    Returns
    -------
    PassEstimate
        ``per_task`` is ``1 - C(n - c, k) / C(n, k)``; ``estimate`` its mean over tasks,
        with a 95% t interval over tasks.

    Raises
    ------
    InputError
        If ``successes`` or ``trials`` is not one-dimensional, holds a number that is not
        a whole number >= 0, or differs from the other in length; if a task has more
        successes than trials or fewer trials than ``k``; if ``k`` is not a positive
        integer; or if there are fewer than 2 tasks.
    MissingExtraError
        If SciPy (the ``stats`` extra) is not installed (t quantiles).

    Notes
    -----
    The unbiased estimator of Chen et al. [1]_ (eq. 1): of the C(n, k) sets of k among a
    task's n trials, the share with at least one success, computed exactly (one rounding
    of a quotient of integers). Never the plug-in ``1 - (1 - c / n)**k``, which is
    biased.

    References
    ----------
    .. [1] M. Chen et al. (2021), "Evaluating Large Language Models Trained on Code",
       arXiv:2107.03374.

    Examples
    --------
    Two tasks of 4 trials with 1 and 2 successes, k = 2: 1 - C(3, 2)/C(4, 2) = 1/2 and
    1 - C(2, 2)/C(4, 2) = 5/6.

    >>> r = pass_at_k([1, 2], [4, 4], 2)
    >>> r.per_task.tolist(), round(r.estimate, 4)
    ([0.5, 0.8333333333333334], 0.6667)
    """
    c, n, k = _check(successes, trials, k)
    return _estimate(c, n, k, _at_k)


def pass_hat_k(successes: npt.ArrayLike, trials: npt.ArrayLike, k: int) -> PassEstimate:
    """pass^k: the chance that all of k trials of a task succeed, over tasks.

    Parameters
    ----------
    successes : array_like of int, shape (T,)
        Successful trials c of each task, ``0 <= c <= n``.
    trials : array_like of int, shape (T,)
        Trials n of each task (they may differ by task), each at least ``k``.
    k : int
        Trials that must all succeed, ``k >= 1``.

    Returns
    -------
    PassEstimate
        ``per_task`` is ``C(c, k) / C(n, k)``; ``estimate`` its mean over tasks, with a
        95% t interval over tasks.

    Raises
    ------
    InputError
        As :func:`pass_at_k`.
    MissingExtraError
        If SciPy (the ``stats`` extra) is not installed (t quantiles).

    Notes
    -----
    The unbiased estimator of Yao et al. [1]_ (tau-bench, sec. 5.1): the share of the
    C(n, k) sets of k among a task's n trials in which every trial succeeds, computed
    exactly (one rounding of a quotient of integers). Never the plug-in ``(c / n)**k``,
    which overstates it (for 2 of 4, k = 2: 1/4 against 1/6).

    References
    ----------
    .. [1] S. Yao, N. Shinn, P. Razavi and K. Narasimhan (2024), "tau-bench: A Benchmark
       for Tool-Agent-User Interaction in Real-World Domains", arXiv:2406.12045.

    Examples
    --------
    >>> r = pass_hat_k([2, 4], [4, 4], 2)
    >>> r.per_task.tolist(), round(r.estimate, 4)
    ([0.16666666666666666, 1.0], 0.5833)
    """
    c, n, k = _check(successes, trials, k)
    return _estimate(c, n, k, _hat_k)
