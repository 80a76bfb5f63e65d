"""The leaderboard of a run: each system's mean of a metric, its Wilson interval, and for a
0/1 metric the ranks the data cannot rule out and the groups of systems that cannot be told
apart (:func:`kagreport.stats.rank_sets`, :func:`kagreport.stats.tie_groups`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kagreport.runs._model import Run
from kagreport.stats import rank_sets, tie_groups, wilson_interval

__all__ = ["RANK_ALPHA", "LeaderboardRow", "leaderboard", "system_means"]

#: Family-wise error rate of the rank intervals and tie groups.
RANK_ALPHA = 0.05


@dataclass(frozen=True)
class LeaderboardRow:
    """One system's mean of a metric.

    Attributes
    ----------
    rank : int
        1 for the highest mean; ties keep the run's system order; systems with no
        defined value come last.
    system : str
    mean : float
        Mean over the system's items where the metric is defined; NaN if none.
    n_items : int
        The system's rows.
    n_defined : int
        Rows where the metric is defined.
    n_errors : int
        Rows with outcome ``error``.
    low, high : float
        The 95% Wilson score interval of ``mean`` (Wilson 1927; ``kagreport.stats.
        wilson_interval`` of the defined values' sum over ``n_defined``) when every
        defined value is 0 or 1 (a proportion, such as ``correct``); NaN otherwise
        (a score in [0, 1] is not a proportion) and when no value is defined.
    interval : str or None
        ``"wilson"`` when ``low``/``high`` are set, else None.
    rank_low, rank_high : int or None
        The ranks the data cannot rule out (:func:`kagreport.stats.rank_sets`, exact
        McNemar tests of every pair Holm-adjusted at a family-wise 5%): 1 + the systems
        significantly better, N - the systems significantly worse, among the N ranked
        systems. Computed on the items every ranked system holds with the metric
        defined, when every system's defined values are 0 or 1; None otherwise (a score
        metric) and for a system with no defined value (which is not ranked).
    tie_group : int or None
        1, 2, ... : the group of systems that cannot be told apart from their
        neighbours (:func:`kagreport.stats.tie_groups`: the accuracy order on those
        shared items, cut where adjacent systems differ at a family-wise 5%), 1 the best
        group; None where ``rank_low`` is. Systems holding different items may stand in
        a slightly different order on the shared items than by ``mean``.
    """

    rank: int
    system: str
    mean: float
    n_items: int
    n_defined: int
    n_errors: int
    low: float = math.nan
    high: float = math.nan
    interval: str | None = None
    rank_low: int | None = None
    rank_high: int | None = None
    tie_group: int | None = None

    @property
    def ci(self) -> tuple[float, float]:
        """``(low, high)``: the interval of :attr:`mean` (NaN, NaN when undefined)."""
        return (self.low, self.high)


def system_means(
    run: Run, values: npt.NDArray[np.float64]
) -> tuple[list[float], list[int], list[int]]:
    """Each system's mean of ``values`` (one per row) where defined, its rows and its
    defined rows, in the run's system order."""
    means, n_items, n_defined = [], [], []
    for s in range(len(run.systems)):
        mine = values[run.system == s]
        defined = mine[~np.isnan(mine)]
        n_items.append(len(mine))
        n_defined.append(len(defined))
        # math.fsum: the exact mean, independent of the row order.
        means.append(math.fsum(defined.tolist()) / len(defined) if len(defined) else math.nan)
    return means, n_items, n_defined


def leaderboard(run: Run, metric: str | None = None) -> tuple[LeaderboardRow, ...]:
    """The systems of ``run`` ranked by their mean of ``metric`` (highest first; default:
    :attr:`Run.headline`, the tool's own headline metric, else ``correct``), with rank
    intervals and tie groups for a 0/1 metric (:class:`LeaderboardRow`).

    Raises
    ------
    KagreportError
        If the run has no such metric.
    """
    values = run.metric(run.headline if metric is None else metric)
    means, n_items, n_defined = system_means(run, values)
    order = sorted(
        range(len(run.systems)),
        key=lambda s: (math.isnan(means[s]), -means[s] if not math.isnan(means[s]) else 0, s),
    )
    errors = [
        int(np.count_nonzero((run.system == s) & (run.outcome == 2)))
        for s in range(len(run.systems))
    ]
    rows = []
    for rank, s in enumerate(order, start=1):
        row = LeaderboardRow(rank, run.systems[s], means[s], n_items[s], n_defined[s], errors[s])
        mine = values[run.system == s]
        defined = mine[~np.isnan(mine)]
        if len(defined) and bool(np.isin(defined, (0.0, 1.0)).all()):
            # A proportion: k successes of n, its sum exact in float64 (n < 2**53).
            bounds = wilson_interval(int(defined.sum()), len(defined))
            row = dataclasses.replace(
                row, low=float(bounds.low), high=float(bounds.high), interval="wilson"
            )
        rows.append(row)
    ranked = [r for r in rows if r.n_defined]
    if ranked and all(r.interval == "wilson" for r in ranked):
        ranks = _ranks(run, values, [r.system for r in ranked])
        rows = [
            dataclasses.replace(r, rank_low=ranks[r.system][0], rank_high=ranks[r.system][1],
                                tie_group=ranks[r.system][2])
            if r.system in ranks else r
            for r in rows
        ]  # fmt: skip
    return tuple(rows)


def _ranks(
    run: Run, values: npt.NDArray[np.float64], systems: list[str]
) -> dict[str, tuple[int, int, int]]:
    """System -> (rank_low, rank_high, tie group) on the items all ``systems`` hold with
    the metric defined."""
    keyed = []
    for system in systems:
        rows, keys = run.rows_of(system)
        defined = ~np.isnan(values[rows])
        keyed.append((rows[defined], keys[defined]))
    shared = keyed[0][1]
    for _, keys in keyed[1:]:
        shared = np.intersect1d(shared, keys, assume_unique=True)
    correct = np.empty((len(shared), len(systems)), dtype=np.float64)
    for column, (rows, keys) in enumerate(keyed):
        correct[:, column] = values[rows[np.searchsorted(keys, shared)]]
    sets = rank_sets(correct, systems, alpha=RANK_ALPHA)
    groups = tie_groups(correct, systems, alpha=RANK_ALPHA)
    group_of = {name: g for g, group in enumerate(groups, start=1) for name in group}
    return {name: (*sets[name], group_of[name]) for name in systems}
