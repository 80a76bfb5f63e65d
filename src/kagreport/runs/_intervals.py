"""Bootstrap intervals of a run's mean costs, per system (and dataset).

The accuracy-against-cost chart draws accuracy with its Wilson interval on one axis and a
mean cost on the other; ``cost_intervals`` gives the interval of that mean: the
percentile bootstrap of :func:`kagreport.stats.bootstrap_mean_interval` over the items
the mean averages. Which items those are follows kag's means (``runs._metrics``), so the
interval surrounds the number the tables show:

- ``retrieval`` (seconds) and ``graph`` (vertices + relationships + properties): the
  committed answers (correct or incorrect) with a retrieval time (kag's retrieval
  samples; missing element counts are 0, as kag sums them). A system with no retrieval
  sample but a committed answer retrieved nothing: its mean and both bounds are exactly 0.
- ``generation`` / ``latency`` (seconds): the committed answers with a generation time.
- ``context`` (bytes): the committed answers with a generation time (kag divides the
  summed context length by them; a missing length counts 0).
- every other axis (tokens, money, a plain cost column): the rows where the cost is
  known, errors included (a tool bills an error too), as ``frames.stats_frame`` averages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from kagreport.runs._costs import CostAxis, cost_axis, item_costs
from kagreport.runs._model import Run
from kagreport.stats import bootstrap_mean_interval

__all__ = ["N_RESAMPLES", "CostInterval", "cost_intervals", "cost_sample"]

#: Resamples of each interval: enough for the 2.5% and 97.5% quantiles of a chart's error
#: bar (the tables' paired tests use 10,000); about 5 ms per 1,000 items.
N_RESAMPLES: Final = 1000


@dataclass(frozen=True)
class CostInterval:
    """The mean cost of one system (on one dataset) and its bootstrap interval.

    Attributes
    ----------
    system : str
    dataset : str or None
        The dataset name; None for the system's items over all datasets.
    mean : float
        Mean cost over the ``n`` items, in the axis' unit; NaN when ``n`` is 0 (except
        a retrieval axis' 0 for a system that retrieved nothing).
    low, high : float
        Percentile bootstrap bounds of ``mean`` (``kagreport.stats.bootstrap_mean_interval``);
        equal to ``mean`` for one item or identical costs, NaN when ``mean`` is NaN.
    n : int
        Items the mean averages.
    level : float
        Nominal coverage.
    """

    system: str
    dataset: str | None
    mean: float
    low: float
    high: float
    n: int
    level: float


_KAG_COMMITTED: Final = {"retrieval_secs", "generation_secs"}


def cost_sample(run: Run, axis: CostAxis) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Each row's cost on ``axis`` and whether the row is one the mean averages.

    Returns
    -------
    values : ndarray of float64, shape (len(run),)
        The row's cost (NaN counted as 0 where kag sums it so: graph elements, context).
    used : ndarray of bool, shape (len(run),)
        The rows of the sample (see the module's notes).
    """
    committed = (run.outcome >= 0) & (run.outcome <= 1)
    if axis.retrieval and "retrieval_secs" in run.costs:
        used = committed & ~np.isnan(run.costs["retrieval_secs"])
        values = np.zeros(len(run))
        for column in axis.columns:
            values = values + np.nan_to_num(run.costs[column], nan=0.0)
        return values, used
    if axis.columns == ("context_bytes",) and "generation_secs" in run.costs:
        used = committed & ~np.isnan(run.costs["generation_secs"])
        return np.nan_to_num(run.costs["context_bytes"], nan=0.0), used
    values = item_costs(run, axis)
    used = ~np.isnan(values)
    if set(axis.columns) <= _KAG_COMMITTED:  # kag's mean times are of committed answers
        used &= committed
    return values, used


def cost_intervals(
    run: Run,
    cost: str,
    *,
    per_dataset: bool = False,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> tuple[CostInterval, ...]:
    """The mean of ``cost`` per system (and dataset) with its percentile bootstrap interval.

    Parameters
    ----------
    run : Run
    cost : str
        A cost axis (as :func:`kagreport.runs.cost_frontier` takes) or a cost column of the run.
    per_dataset : bool
        One interval per system and dataset (in dataset-name order) instead of per system.
    confidence : float
        Coverage of the intervals, in (0, 1).
    n_resamples : int
        Bootstrap resamples per interval.
    seed : int
        Seed of every interval's resampling (the same for each group, so an interval
        depends on its group's costs only).

    Returns
    -------
    tuple of CostInterval
        In the run's system order; systems without rows (in the dataset) are left out.

    Raises
    ------
    KagreportError
        If the run has no such cost (the message names the missing column).
    ValueError
        If ``confidence``, ``n_resamples`` or ``seed`` is out of range.

    Notes
    -----
    Each interval resamples the group's n costs with replacement, ``n_resamples`` times,
    and takes the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
    resampled means (Efron and Tibshirani 1993, ch. 13). The costs are sorted first, so
    the interval does not depend on the order of the rows; see
    :func:`kagreport.stats.bootstrap_mean_interval` for how the resamples are drawn.
    """
    axis = cost_axis(run, cost)
    values, used = cost_sample(run, axis)
    committed = (run.outcome >= 0) & (run.outcome <= 1)
    by_name = sorted(range(len(run.dataset_names)), key=run.dataset_names.__getitem__)
    datasets: list[int | None] = list(by_name) if per_dataset else [None]
    groups = [(s, d) for s in range(len(run.systems)) for d in datasets]
    found = []
    for s, d in groups:
        mine = run.system == s
        if d is not None:
            mine = mine & (run.dataset == d)
        if not mine.any():
            continue
        sample = values[mine & used]
        if axis.retrieval and not len(sample) and bool((mine & committed).any()):
            mean = low = high = 0.0  # answered without retrieving: no retrieval cost
        elif not len(sample):
            mean = low = high = math.nan
        else:
            mean = math.fsum(sample.tolist()) / len(sample)
            interval = bootstrap_mean_interval(
                sample, n_resamples=n_resamples, seed=seed, confidence=confidence
            )
            # One item or identical costs: every resample has the same mean.
            low, high = (mean, mean) if np.ptp(sample) == 0 else (interval.low, interval.high)
        found.append(
            CostInterval(
                run.systems[s],
                None if d is None else run.dataset_names[d],
                mean,
                float(low),
                float(high),
                len(sample),
                float(confidence),
            )
        )
    return tuple(found)
