"""The leaderboard of a run: each system's mean of a metric, its interval (Wilson, or
cluster-robust when the run repeats its items), and for a 0/1 metric the ranks the data
cannot rule out and the groups of systems that cannot be told apart
(:func:`kagreport.stats.rank_sets`, ``stats._ranks.tie_groups``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kagreport.runs._model import Run
from kagreport.runs._repeats import RepeatScores, repeat_scores
from kagreport.stats import clustered_mean, rank_sets, wilson_interval
from kagreport.stats._ranks import tie_groups

__all__ = ["CLUSTER_INTERVAL", "RANK_ALPHA", "LeaderboardRow", "leaderboard", "system_means"]

#: ``LeaderboardRow.interval`` of a mean over every repeat, its items the clusters.
CLUSTER_INTERVAL = "cluster (CR1)"

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
        The 95% interval of ``mean``. A run that repeats its items (Inspect epochs,
        promptfoo ``repeat``: :func:`kagreport.runs.repeat_scores`), when ``mean`` is
        the mean of every scored repeat (promptfoo's rows; Inspect's ``mean`` reducer
        with the same number of scored epochs for each item): the cluster-robust
        interval of :func:`kagreport.stats.clustered_mean` over every repeat, an item's
        repeats one cluster (CR1 standard error, t on G - 1 degrees of freedom; Miller
        2024, arXiv:2411.00640), which equals the t interval of the item means when
        items have equal repeats, cut to [0, 1] for scores in [0, 1]. Otherwise (no
        repeats, or a reducer such as ``mode`` whose row is the item's one score) the
        Wilson score interval (Wilson
        1927; ``kagreport.stats.wilson_interval`` of the defined values' sum over
        ``n_defined``) when every defined value is 0 or 1 (a proportion, such as
        ``correct``); NaN otherwise (a score in [0, 1] is not a proportion) and when
        no value is defined.
    interval : str or None
        ``"cluster (CR1)"`` (``CLUSTER_INTERVAL``) or ``"wilson"`` when
        ``low``/``high`` are set, else None.
    rank_low, rank_high : int or None
        The ranks the data cannot rule out (:func:`kagreport.stats.rank_sets`, exact
        McNemar tests of every pair Holm-adjusted at a family-wise 5%): 1 + the systems
        significantly better, N - the systems significantly worse, among the N ranked
        systems. Computed on the items every ranked system holds with the metric
        defined, when every system's defined values are 0 or 1; None otherwise (a score
        metric) and for a system with no defined value (which is not ranked).
    tie_group : int or None
        1, 2, ... : the group of systems that cannot be told apart from their
        neighbours (``stats._ranks.tie_groups``: the accuracy order on those
        shared items, cut where adjacent systems differ at a family-wise 5%), 1 the best
        group; None where ``rank_low`` is. Systems holding different items may stand in
        a slightly different order on the shared items than by ``mean``. Ranks and tie
        groups are of the rows' values whatever the interval: an Inspect row is the
        item's reduced score (0/1 with a ``mode`` reducer, none with ``mean``); a
        promptfoo repeat is its own row, so its McNemar tests pair the systems' runs of
        a test repeat by repeat.
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
    intervals and tie groups for a 0/1 metric (``LeaderboardRow``); a run that
    repeats its items gets cluster-robust intervals (``LeaderboardRow.low``).

    Raises
    ------
    KagreportError
        If the run has no such metric.
    """
    name = run.headline if metric is None else metric
    values = run.metric(name)
    rows, binary = mean_rows(run, name)
    ranked = [r for r in rows if r.n_defined]
    if ranked and all(binary[run.systems.index(r.system)] for r in ranked):
        ranks = _ranks(run, values, [r.system for r in ranked])
        rows = [
            dataclasses.replace(r, rank_low=ranks[r.system][0], rank_high=ranks[r.system][1],
                                tie_group=ranks[r.system][2])
            if r.system in ranks else r
            for r in rows
        ]  # fmt: skip
    return tuple(rows)


def mean_rows(run: Run, name: str) -> tuple[list[LeaderboardRow], list[bool]]:
    """The leaderboard's rows of metric ``name`` without their rank intervals (ranked by mean,
    each with its interval), and whether each system's defined values are all 0 or 1 (in the
    run's system order): what :func:`kagreport.runs.history` needs of every run, without the
    McNemar tests of every pair."""
    values = run.metric(name)
    means, n_items, n_defined = system_means(run, values)
    found = repeat_scores(run, name)
    repeats = None if found.source == "none" else found
    binary = [False] * len(run.systems)
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
        binary[s] = bool(len(defined)) and bool(np.isin(defined, (0.0, 1.0)).all())
        clustered = None if repeats is None else cluster_interval(run, repeats, s, means[s])
        if clustered is not None:
            row = dataclasses.replace(
                row, low=clustered[0], high=clustered[1], interval=CLUSTER_INTERVAL
            )
        elif binary[s]:
            # A proportion: k successes of n, its sum exact in float64 (n < 2**53).
            bounds = wilson_interval(int(defined.sum()), len(defined))
            row = dataclasses.replace(
                row, low=float(bounds.low), high=float(bounds.high), interval="wilson"
            )
        rows.append(row)
    return rows, binary


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


def cluster_interval(
    run: Run, repeats: RepeatScores, system: int, mean: float
) -> tuple[float, float] | None:
    """The 95% cluster-robust interval (CR1, t on G - 1) of ``system``'s mean over its
    scored repeats, items the clusters, when that mean is ``mean`` (the number a view
    shows) and some item has two scored repeats; else None (a reducer such as ``mode``,
    whose rows are not the repeats' mean; fewer than 2 items)."""
    mine = (run.system[repeats.cluster] == system) & ~np.isnan(repeats.values)
    values, cluster = repeats.values[mine], repeats.cluster[mine]
    if math.isnan(mean) or len(np.unique(cluster)) < 2 or len(np.unique(cluster)) == len(cluster):
        return None
    estimate = clustered_mean(values, cluster)
    low, high = float(estimate.ci[0]), float(estimate.ci[1])
    if values.min() >= 0.0 and values.max() <= 1.0:
        # The mean of scores in [0, 1] lies in it: the t interval's overhang covers nothing.
        low, high = max(low, 0.0), min(high, 1.0)
    # The rows' mean and the repeats' mean agree to rounding when the rows are the means of
    # equally many repeats (or the repeats themselves); a mode's or an unbalanced mean's not.
    if not math.isclose(estimate.mean, mean, rel_tol=1e-12, abs_tol=1e-12):
        return None
    return (low, high)
