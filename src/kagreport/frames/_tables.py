"""Tidy pandas DataFrames from runs and evaluation reports.

The frames of a run draw a :class:`kagreport.runs.Run`: anything else a frame of a run
takes (a ``StatsReport``, evaluations, a path) becomes one by
:func:`kagreport.sources.as_run` at the edge. kag's metrics come from
``kagreport.runs.setup_metrics`` (equal to ``report.setups`` for
``Run.from_stats(report)``). Undefined numbers are NaN here (pandas' missing value),
never 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from kagreport._errors import KagreportError
from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, RetrievalEvaluation
from kagreport.runs import (
    Run,
    SetupComparison,
    SetupComparisons,
    leaderboard,
    repeat_scores,
    setup_metrics,
)
from kagreport.runs._costs import COSTS, cost_axis, recorded_columns
from kagreport.runs._leaderboard import CLUSTER_INTERVAL
from kagreport.sources import as_run
from kagreport.stats import pareto_front, wilson_interval

__all__ = [
    "COST_AXES",
    "OVERALL",
    "RETRIEVAL_COSTS",
    "agreement_frame",
    "comparison_frame",
    "cost_values",
    "evaluation_frame",
    "items_frame",
    "metrics_frame",
    "no_retrieval",
    "stats_frame",
]

#: The ``dataset`` value of a setup's overall row ("(" is not valid in kag names).
OVERALL = "(overall)"

#: Cost columns of :func:`stats_frame`, by the short name the charts use
#: (from ``runs._costs.COSTS``, the one table of cost names).
COST_AXES = {name: (axis.stats_column, axis.title) for name, axis in COSTS.items()}

#: The cost axes a setup pays only by retrieving: a setup that retrieves nothing costs 0 on them.
RETRIEVAL_COSTS = frozenset(name for name, axis in COSTS.items() if axis.retrieval)

#: Columns of :func:`stats_frame` that a run without the cost column cannot know (NaN).
#: Cost columns whose all-zero column means "not recorded" (recorded_columns).
_ZERO_IS_UNKNOWN = frozenset({"generation_secs", "context_bytes"})
_UNKNOWN_WITHOUT = {
    "generation_secs": ("avg_generation_secs", "total_generation_secs"),
    "context_bytes": ("avg_context_length",),
    "retrieval_secs": ("retrieval_samples", "avg_retrieval_secs"),
}


def no_retrieval(frame: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Rows of a :func:`stats_frame` that answered without retrieving anything.

    True where the row has a committed answer (``parsed > 0``) and no retrieval
    sample (``retrieval_samples == 0``: a native setup, no retriever). A row with
    no committed answer is False: whether it would have retrieved is unknown.
    All False when the frame lacks either column.

    Returns
    -------
    ndarray of bool, shape (len(frame),)
    """
    if "retrieval_samples" not in frame.columns or "parsed" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    samples = pd.to_numeric(frame["retrieval_samples"], errors="coerce").to_numpy(dtype=float)
    parsed = pd.to_numeric(frame["parsed"], errors="coerce").to_numpy(dtype=float)
    return np.asarray((samples == 0) & (parsed > 0), dtype=bool)


def cost_values(frame: pd.DataFrame, cost: str) -> npt.NDArray[np.float64]:
    """Each row's mean cost on the accuracy-against-cost plane, in the unit of ``COST_AXES[cost]``.

    The frame's ``COST_AXES[cost]`` column, except that on the retrieval axes
    (``RETRIEVAL_COSTS``: retrieval seconds, graph elements) a row that
    answered without retrieving (``no_retrieval``) costs exactly 0 rather
    than NaN: it spent no retrieval time and rendered no graph element, so it can
    sit on, and dominate along, the Pareto frontier. Generation time and context
    length are what they are. NaN where the cost stays undefined (no committed
    answer, or a column the frame does not hold).

    Raises
    ------
    ValueError
        For an unknown ``cost``.

    Returns
    -------
    ndarray of float64, shape (len(frame),)
    """
    if cost not in COST_AXES:
        raise ValueError(f"`cost` must be one of {', '.join(map(repr, COST_AXES))}, not {cost!r}")
    column = COST_AXES[cost][0]
    if column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float).copy()
    else:
        values = np.full(len(frame), np.nan)
    if cost in RETRIEVAL_COSTS:
        values[no_retrieval(frame)] = 0.0
    return values


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


#: The columns of a :func:`stats_frame` row before the intervals are added.
_METRIC_COLUMNS = (
    "setup",
    "dataset",
    "rank",
    "total",
    "correct",
    "incorrect",
    "errors",
    "parsed",
    "accuracy",
    "precision",
    "coverage",
    "avg_generation_secs",
    "total_generation_secs",
    "avg_context_length",
    "retrieval_samples",
    "avg_retrieval_secs",
    "avg_vertices",
    "avg_relationships",
    "avg_properties",
    "avg_graph_elements",
)


def _metrics_row(setup: str, dataset: str, rank: int, m: Any) -> dict[str, Any]:
    """One row of kag's metrics (``m``, a ``Metrics`` of :func:`setup_metrics`)."""
    r = m.retrieval
    return {
        "setup": setup,
        "dataset": dataset,
        "rank": rank,
        "total": m.total,
        "correct": m.correct,
        "incorrect": m.incorrect,
        "errors": m.errors,
        "parsed": m.parsed,
        "accuracy": _nan(m.accuracy),
        "precision": _nan(m.precision),
        "coverage": _nan(m.coverage),
        "avg_generation_secs": _nan(m.avg_generation_secs),
        "total_generation_secs": m.total_generation_secs,
        "avg_context_length": _nan(m.avg_context_length),
        "retrieval_samples": 0 if r is None else r.samples,
        "avg_retrieval_secs": math.nan if r is None else _nan(r.avg_time_secs),
        "avg_vertices": math.nan if r is None else _nan(r.avg_vertices),
        "avg_relationships": math.nan if r is None else _nan(r.avg_relationships),
        "avg_properties": math.nan if r is None else _nan(r.avg_properties),
        "avg_graph_elements": math.nan if r is None else _nan(r.avg_graph_elements),
    }


def stats_frame(report: Any, *, per_dataset: bool = True, confidence: float = 0.95) -> pd.DataFrame:
    """Setups x datasets metrics of a graded run, one row per (setup, dataset).

    Parameters
    ----------
    report : Run, or what :func:`kagreport.sources.as_run` takes
        A run (a graded kag tree becomes ``Run.from_stats(report)``): its kag metrics by
        ``kagreport.runs.setup_metrics``. The columns a run cannot know because it lacks
        the cost column (``generation_secs``, ``context_bytes``, ``retrieval_secs``)
        are NaN, ``retrieval_samples`` included: unknown, not "retrieves nothing"; so are
        the generation time and context length of a run that recorded none above 0
        (a column of zeros is not recorded: MMLU-Pro's files hold a time of 0).
    per_dataset : bool
        Include each setup's per-dataset rows besides its overall row
        (``dataset == OVERALL``).
    confidence : float
        Level of the Wilson intervals.

    Returns
    -------
    DataFrame
        Columns: setup, dataset, rank (kag's ranking, 1 = best), the counts,
        accuracy / precision / coverage in [0, 1] each with ``_low``/``_high``
        Wilson bounds (``wilson_interval``; accuracy and coverage over
        ``total``, precision over ``parsed``), the mean times (seconds), the mean
        context length (bytes), the retrieval means (NaN for a setup that retrieves
        nothing, as kag reports null) and ``pareto``: whether the overall row is on the
        accuracy / mean-retrieval-time frontier (``pareto_front`` on
        ``cost_values``, where a setup that retrieves nothing costs 0 s; False on
        per-dataset rows and for setups without a committed answer). Undefined values
        are NaN. A run with other tools' costs also gets ``avg_tokens``,
        ``avg_input_tokens``, ``avg_output_tokens``, ``avg_cost_usd`` (means per item
        over the rows where known, errors included) for each axis of
        cost axis whose columns it holds.

    Raises
    ------
    KagreportError
        For a run whose rows lack an outcome (no metric ``correct``), or anything
        :func:`kagreport.sources.as_run` does not take.
    """
    run = as_run(report)
    rows = []
    for rank, setup in enumerate(setup_metrics(run), start=1):
        rows.append(_metrics_row(setup.setup, OVERALL, rank, setup.overall))
        if per_dataset:
            rows += [
                _metrics_row(setup.setup, name, rank, metrics)
                for name, metrics in setup.per_dataset.items()
            ]
    frame = pd.DataFrame(rows, columns=list(_METRIC_COLUMNS) if not rows else None)
    for name, successes, trials in (
        ("accuracy", "correct", "total"),
        ("precision", "correct", "parsed"),
        ("coverage", "parsed", "total"),
    ):
        low, high = wilson_interval(frame[successes], frame[trials], confidence)
        position = list(frame.columns).index(name) + 1
        frame.insert(position, f"{name}_high", high)
        frame.insert(position, f"{name}_low", low)
    if confidence == 0.95:  # the leaderboard's level
        _cluster_accuracy(frame, run)
    recorded = recorded_columns(run)
    for column, unknown in _UNKNOWN_WITHOUT.items():
        # A time or length no item recorded above 0 is unknown (MMLU-Pro's files hold 0 s),
        # not 0; a retrieval time of 0 is a setup that retrieves nothing.
        never = column in _ZERO_IS_UNKNOWN and column not in recorded
        if column not in run.costs or never:
            for name in unknown:
                frame[name] = math.nan
    _add_tool_costs(frame, run)
    overall = frame["dataset"] == OVERALL
    front = np.zeros(len(frame), dtype=bool)
    if overall.any():
        overall_rows = frame[overall]
        front[overall.to_numpy()] = pareto_front(
            cost_values(overall_rows, "retrieval"), overall_rows["accuracy"].to_numpy(dtype=float)
        )
    frame["pareto"] = front
    if run.metadata.get("simulated"):
        frame.attrs["simulated"] = True  # the charts of it say SIMULATED
    return frame


def _cluster_accuracy(frame: pd.DataFrame, run: Run) -> None:
    """A run that repeats its items: each row's accuracy interval is the leaderboard's
    cluster-robust one of ``correct`` (:func:`kagreport.runs.leaderboard` of the run, of
    the dataset's rows per dataset), so the chart's bars and the tables agree; the frame's
    ``attrs["accuracy_interval"]`` names it. Other rows keep their Wilson interval, and
    so does a frame at another confidence than the leaderboard's 95%."""
    if "correct" not in run.metrics or len(run) == 0:
        return
    if repeat_scores(run, "correct").source == "none":
        return
    found = {}
    for dataset in frame["dataset"].unique().tolist():
        part = run if dataset == OVERALL else run.select(run.systems, [dataset])
        for row in leaderboard(part, "correct"):
            if row.interval == CLUSTER_INTERVAL:
                found[(row.system, dataset)] = row.ci
    if not found:
        return
    keys = zip(frame["setup"], frame["dataset"], strict=True)
    bounds = [found.get(key) for key in keys]
    for column, side in (("accuracy_low", 0), ("accuracy_high", 1)):
        frame[column] = [
            old if new is None else new[side]
            for old, new in zip(frame[column].tolist(), bounds, strict=True)
        ]
    frame.attrs["accuracy_interval"] = CLUSTER_INTERVAL


def _add_tool_costs(frame: pd.DataFrame, run: Run) -> None:
    """Add the mean of each non-kag cost axis the run has (``avg_tokens``, ``avg_cost_usd``, ...).

    The mean is over the rows of the (setup, dataset) where the cost is known, as
    :func:`kagreport.runs.cost_frontier` takes it: a tool bills tokens for an error too.
    """
    system = {name: s for s, name in enumerate(run.systems)}
    dataset = {name: d for d, name in enumerate(run.dataset_names)}
    for name, axis in COSTS.items():
        if axis.stats_column in frame.columns or not all(c in run.costs for c in axis.columns):
            continue
        values = sum((run.costs[c] for c in cost_axis(run, name).columns), np.zeros(len(run)))
        means = []
        for setup, name_of_dataset in zip(frame["setup"], frame["dataset"], strict=True):
            mine = run.system == system[setup]
            if name_of_dataset != OVERALL:
                mine &= run.dataset == dataset[name_of_dataset]
            known = values[mine]
            known = known[~np.isnan(known)]
            means.append(math.fsum(known.tolist()) / len(known) if len(known) else math.nan)
        frame[axis.stats_column] = np.array(means, dtype=np.float64)


def items_frame(report: Any) -> pd.DataFrame:
    """The per-item table of a run, one row per run row, in its order.

    Columns: setup, dataset, question, outcome (categoricals; outcome NaN where
    unknown), then the run's cost columns (a kag run's: generation_secs,
    retrieval_secs, vertices, relationships, properties, context_bytes; float, NaN
    where absent: error records, results without retrieval), then one float column per
    metric (``correct``, judge scores, ...).

    Raises
    ------
    KagreportError
        For anything :func:`kagreport.sources.as_run` does not take.
    """
    return _run_items(as_run(report))


def _run_items(run: Run) -> pd.DataFrame:
    names = {
        "setup": (run.systems, run.system),
        "dataset": (run.dataset_names, run.dataset),
        "question": (run.question_names, run.question),
    }
    # As items_frame of a report: categories are the names present, sorted.
    frame = pd.DataFrame(
        {
            name: pd.Categorical(np.array(labels or ("",), dtype=object)[codes])
            for name, (labels, codes) in names.items()
        }
    )
    frame["outcome"] = pd.Categorical.from_codes(
        run.outcome.astype(np.int64), categories=pd.Index(["correct", "incorrect", "error"])
    )
    for name, values in run.costs.items():
        frame[name] = values
    for name, values in run.metrics.items():
        if name in frame.columns:
            raise KagreportError(f"the run's metric {name!r} has the name of a column")
        frame[name] = values
    return frame


def evaluation_frame(evaluation: AnswerEvaluation | RetrievalEvaluation) -> pd.DataFrame:
    """One row per item: identifier, the item's texts, latency, error and one column per
    metric (NaN where undefined)."""
    rows = evaluation.to_rows()
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=["identifier", *evaluation.metrics, "latency", "error"])
    for metric in evaluation.metrics:
        frame[metric] = pd.to_numeric(frame[metric], errors="coerce").astype(float)
    frame["latency"] = pd.to_numeric(frame["latency"], errors="coerce").astype(float)
    return frame


def metrics_frame(evaluation: AnswerEvaluation | RetrievalEvaluation) -> pd.DataFrame:
    """One row per metric: metric, mean, items (where defined)."""
    coverage = evaluation.coverage
    return pd.DataFrame(
        {
            "metric": list(evaluation.metrics),
            "mean": [float(v) for v in evaluation.metrics.values()],
            "items": [coverage.get(m, 0) for m in evaluation.metrics],
        }
    )


def agreement_frame(evaluation: AnswerEvaluation) -> pd.DataFrame:
    """One row per judge criterion (per criterion and scale when judges score it on several):
    criterion, alpha, low, high (bootstrap interval), judges, note (why alpha or its interval
    is missing, :meth:`~kagreport.evaluation.AnswerEvaluation.agreement_note`; ``""`` when
    both are there)."""
    judges_per = {
        criterion: len(evaluation.agreement_judges[criterion])
        if criterion in evaluation.agreement_judges
        # A report written before the judges were recorded: count the metrics named for
        # the criterion (a single-criterion judge's metric is its name alone, so unknown).
        else sum(
            1
            for metric in evaluation.metrics
            if metric == criterion or metric.endswith("." + criterion)
        )
        for criterion in evaluation.agreement
    }
    rows = []
    for criterion, alpha in evaluation.agreement.items():
        low, high = evaluation.agreement_intervals.get(criterion, (math.nan, math.nan))
        rows.append(
            {
                "criterion": criterion,
                "alpha": float(alpha),
                "low": float(low),
                "high": float(high),
                "judges": judges_per[criterion],
                "note": evaluation.agreement_note(criterion),
            }
        )
    return pd.DataFrame(rows, columns=["criterion", "alpha", "low", "high", "judges", "note"])


def comparison_frame(
    comparison: EvaluationComparison | SetupComparison | SetupComparisons,
) -> pd.DataFrame:
    """One row per compared metric: the paired test's numbers and ``significant``
    (Holm-adjusted p below 0.05).

    A ``SetupComparison`` gives its comparison, one family:
    ``p_value_holm`` is Holm-adjusted across the run's family (every pair x metric) and
    ``ci_low``/``ci_high`` is the Holm-adjusted interval that agrees with it, plus
    ``verdict`` (:class:`~kagreport.evaluation.MetricVerdict`). A
    ``SetupComparisons`` gives every pair's rows, in pair order.

    A lone :class:`~kagreport.evaluation.EvaluationComparison` gives the interval the
    views draw beside its p-values: ``ci_low``/``ci_high`` is its verdict's
    (:meth:`~kagreport.evaluation.EvaluationComparison.verdicts`: test-based at the level
    Holm tested the metric at, so it excludes 0 exactly when ``p_value_holm`` is below
    0.05; judged alone on ``p_value`` for a metric outside the family), with ``verdict``,
    ``interval`` (which interval it is: ``"Holm-adjusted 95%"`` or ``"unadjusted 95%"``)
    and the spec's bootstrap interval as ``bootstrap_low``/``bootstrap_high``.
    """
    if isinstance(comparison, SetupComparisons):
        frames = [comparison_frame(c) for c in comparison.comparisons]
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True)
    verdicts = None
    lone = not isinstance(comparison, SetupComparison)
    if isinstance(comparison, SetupComparison):
        verdicts = comparison.verdicts
        comparison = comparison.comparison
    elif not str(comparison.settings.get("interval", "")).startswith("test-based"):
        verdicts = comparison.verdicts()
    else:
        lone = False  # a run's comparison, its intervals already Holm-adjusted
    frame = pd.DataFrame(comparison.to_rows())
    if frame.empty:
        return frame
    frame["significant"] = frame["p_value_holm"].astype(float) < 0.05
    if verdicts is not None:
        frame["verdict"] = [verdicts[m].verdict if m in verdicts else None for m in frame["metric"]]
    if lone and verdicts is not None:
        # The interval drawn beside a p-value is the verdict's, at the family's level.
        frame["bootstrap_low"], frame["bootstrap_high"] = frame["ci_low"], frame["ci_high"]
        frame["ci_low"] = [verdicts[m].low for m in frame["metric"]]
        frame["ci_high"] = [verdicts[m].high for m in frame["metric"]]
        frame["interval"] = [verdicts[m].label for m in frame["metric"]]
    return frame
