"""Per-system summaries of a run's metrics, with intervals, and retrieval against answer.

:func:`metric_summaries` gives each system's mean of each metric with a 95% interval:
Wilson (1927) when the metric is a proportion (every defined value 0 or 1), else the
percentile bootstrap of the mean (Efron and Tibshirani 1993, ch. 13); the interval's
``method`` names which. ``retrieval_answer_tables`` gives each system's 2 x 2 of
retrieval hit/miss by answer right/wrong (:func:`kagreport.evaluation.retrieval_answer_table`).
No statistics are computed here: the intervals are :mod:`kagreport.stats`'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kagreport.runs._model import Run

if TYPE_CHECKING:
    from kagreport.evaluation import RetrievalAnswerTable

__all__ = ["MetricSummary", "metric_summaries", "retrieval_answer_tables"]


@dataclass(frozen=True)
class MetricSummary:
    """One system's mean of one metric, with its interval.

    Attributes
    ----------
    system, metric : str
    mean : float
        Over the system's items where the metric is defined; NaN if none.
    n_defined : int
        Items where it is defined.
    low, high : float
        The interval's bounds (NaN with no defined item).
    method : str
        ``"wilson"`` (a proportion) or ``"percentile-bootstrap"`` (any other score).
    level : float
        Nominal coverage (0.95).
    proportion : bool
        Whether every defined value is 0 or 1 (shown as a percentage).
    """

    system: str
    metric: str
    mean: float
    n_defined: int
    low: float
    high: float
    method: str
    level: float
    proportion: bool


def metric_summaries(
    run: Run,
    metrics: Sequence[str] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[MetricSummary, ...]:
    """Each system's mean of each metric with an interval, systems in run order, metrics
    in the given order (default: the run's).

    Parameters
    ----------
    run : Run
    metrics : sequence of str, optional
    confidence : float
        Coverage of the intervals, in (0, 1).
    n_resamples, seed
        Of the bootstrap (:func:`kagreport.stats.bootstrap_mean_interval`); a proportion's
        Wilson interval needs neither.

    Raises
    ------
    KagreportError
        For a metric the run does not have.
    """
    from kagreport.stats import bootstrap_mean_interval, wilson_interval

    names = list(run.metrics) if metrics is None else list(metrics)
    columns = {m: run.metric(m) for m in names}
    out = []
    for system in run.systems:
        # Rows in (dataset, question) name order: the bootstrap resamples the same values
        # whatever the row order of the run.
        rows, _ = run.rows_of(system)
        for metric in names:
            values = columns[metric][rows]
            defined = values[~np.isnan(values)]
            n = len(defined)
            mean = math.fsum(defined.tolist()) / n if n else math.nan
            proportion = bool(n) and bool(np.isin(defined, (0.0, 1.0)).all())
            if proportion:
                bounds = wilson_interval(int(defined.sum()), n, confidence)
                low, high, method = float(bounds.low), float(bounds.high), "wilson"
            else:
                boot = bootstrap_mean_interval(
                    defined, n_resamples=n_resamples, seed=seed, confidence=confidence
                )
                low, high, method = float(boot.low), float(boot.high), boot.method
            out.append(
                MetricSummary(system, metric, mean, n, low, high, method, confidence, proportion)
            )
    return tuple(out)


def retrieval_answer_tables(
    run: Run,
    retrieval_metric: str,
    answer_metric: str = "correct",
    *,
    confidence: float = 0.95,
) -> dict[str, RetrievalAnswerTable]:
    """System -> its 2 x 2 of retrieval hit/miss (``retrieval_metric``, 0/1 per item) by
    answer right/wrong (``answer_metric``, 0/1 per item), in run order.

    Raises
    ------
    KagreportError
        For a metric the run does not have.
    ValueError
        If a metric is not 0/1 per item
        (:func:`kagreport.evaluation.retrieval_answer_table`).
    """
    from kagreport.evaluation import retrieval_answer_table

    hits, right = run.metric(retrieval_metric), run.metric(answer_metric)
    tables = {}
    for system in run.systems:
        rows, _ = run.rows_of(system)
        tables[system] = retrieval_answer_table(
            hits[rows],
            right[rows],
            confidence=confidence,
            retrieval_metric=retrieval_metric,
            answer_metric=answer_metric,
        )
    return tables
