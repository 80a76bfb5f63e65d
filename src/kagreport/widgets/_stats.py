""":class:`StatsView`: a graded run's metrics and its accuracy-against-cost chart; a run's
leaderboard and cost frontier."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd

from kagreport.frames import (
    COST_AXES,
    OVERALL,
    RETRIEVAL_COSTS,
    cost_values,
    no_retrieval,
    stats_frame,
)
from kagreport.grading import Metrics, RetrievalMetrics, SetupReport, StatsReport
from kagreport.runs import Run, cost_frontier, leaderboard
from kagreport.widgets._base import ChartResult, View, build_chart, describe
from kagreport.widgets._html import fmt_interval, fmt_number, html_table, message_html
from kagreport.widgets._runs import lacks_note, select_run

__all__ = ["StatsView"]


def _sum_metrics(groups: Iterable[Metrics]) -> Metrics:
    """The metrics of the union of disjoint groups (every field of :class:`Metrics` adds).

    kag's own arithmetic (counts and nanoseconds add; the ratios are properties of the
    sum), so the overall of the selected datasets is what kag would report for them.
    """
    groups = list(groups)
    retrievals = [m.retrieval for m in groups if m.retrieval is not None]
    retrieval = None
    if retrievals:
        retrieval = RetrievalMetrics(
            sum(r.time_ns for r in retrievals),
            sum(r.vertices for r in retrievals),
            sum(r.relationships for r in retrievals),
            sum(r.properties for r in retrievals),
            sum(r.samples for r in retrievals),
        )
    return Metrics(
        sum(m.correct for m in groups),
        sum(m.incorrect for m in groups),
        sum(m.errors for m in groups),
        sum(m.generation_ns for m in groups),
        sum(m.generation_samples for m in groups),
        sum(m.context_bytes for m in groups),
        retrieval,
    )


def _rank_key(setup: SetupReport) -> tuple[bool, float, str]:
    accuracy = setup.overall.accuracy
    return (accuracy is None, -(accuracy or 0.0), setup.setup)


def select(report: StatsReport, setups: Sequence[str], datasets: Sequence[str]) -> StatsReport:
    """The report restricted to some setups and datasets, ranked again as kag ranks.

    Each setup's overall metrics become those of the selected datasets together
    (the report's own overall when every dataset is selected). The item table is
    kept whole.
    """
    every = {name for s in report.setups for name in s.per_dataset}
    chosen = set(datasets)
    kept = []
    for setup in report.setups:
        if setup.setup not in setups:
            continue
        per = {name: m for name, m in setup.per_dataset.items() if name in chosen}
        overall = setup.overall if chosen >= every else _sum_metrics(per.values())
        kept.append(SetupReport(setup.setup, overall, per))
    kept.sort(key=_rank_key)
    return dataclasses.replace(report, setups=tuple(kept))


class StatsView(View):
    """Metrics of the selected setups on the selected datasets, with the headline chart.

    Over a :class:`kagreport.runs.Run` the view shows what a run has: each selected
    system's mean of :attr:`metric` (:func:`kagreport.runs.leaderboard`) and mean cost
    with its place on the Pareto frontier (:func:`kagreport.runs.cost_frontier`), over
    the selected datasets; and it says what a run lacks: kag's precision, coverage,
    Wilson intervals and the accuracy-against-cost chart are drawn from a
    ``StatsReport`` (pass it to have them).

    Controls: :attr:`setups` and :attr:`datasets` (multi-selects, all selected at
    first), :attr:`cost` (the cost axis of the chart, one of
    :data:`kagreport.frames.COST_AXES`) and :attr:`per_dataset` (one point per
    dataset in the chart and one table row per dataset). Changing any of them
    rebuilds :attr:`frame`, the table and :attr:`chart`.

    Parameters
    ----------
    report : StatsReport or Run
        From :func:`kagreport.grade`, or a run.
    cost : str, optional
        Initial cost axis; default ``"retrieval"`` when some setup retrieves, else
        ``"generation"``. For a run, one of its cost columns (default
        ``retrieval_secs``, else ``generation_secs``, else the first with a value).
    confidence : float
        Level of the Wilson intervals shown with accuracy, precision and coverage.
    metric : str, optional
        For a run: the metric ranked (default ``correct``, else the first).

    Attributes
    ----------
    setups, datasets : ipywidgets.SelectMultiple
    cost : ipywidgets.Dropdown
    per_dataset : ipywidgets.Checkbox
    metric : ipywidgets.Dropdown or None
        For a run, the metric ranked (None for a StatsReport).
    frame : pandas.DataFrame
        The rows of the table (:func:`kagreport.frames.stats_frame` columns).
        ``dataset == OVERALL`` rows hold each setup's metrics over the *selected*
        datasets; ranks are among the selected setups. For a run: setup, dataset,
        rank, mean, n_items, n_defined, n_errors (:class:`kagreport.runs.LeaderboardRow`),
        cost and on_frontier (:class:`kagreport.runs.FrontierPoint`; NaN and False
        without a cost column).
    selection : StatsReport or Run
        The report (run) restricted to the selection (what :attr:`frame` and the chart
        show).
    chart : altair chart or None
        ``kagreport.charts.accuracy_cost_chart`` of the selection (None when there is
        nothing to draw or the chart failed; :attr:`message` says why).
    table_html : str
        The current table, escaped HTML.
    table_widget, chart_widget, message : ipywidgets.HTML
        What is displayed; the chart is inline SVG (no JavaScript, works offline).

    Notes
    -----
    Static fallback (:meth:`to_html`, in ``_repr_mimebundle_``): the control values,
    the table and the chart as inline SVG.
    """

    title = "kagreport StatsView"

    def __init__(
        self,
        report: StatsReport | Run,
        *,
        cost: str | None = None,
        confidence: float = 0.95,
        metric: str | None = None,
    ) -> None:
        super().__init__()
        self.confidence = confidence
        self.metric: Any = None
        self.table_widget = widgets.HTML()
        self.chart_widget = widgets.HTML()
        self.frame: pd.DataFrame = pd.DataFrame()
        self.chart: Any = None
        self.table_html = ""
        self._chart = ChartResult()
        if isinstance(report, Run):
            self._init_run(report, cost, metric)
            return
        if not isinstance(report, StatsReport):
            raise TypeError(
                f"StatsView takes a kagreport.runs.Run or a StatsReport, "
                f"not {type(report).__name__}"
            )
        self.run: Run | None = None
        self.report: StatsReport | None = report
        names = list(report.setup_names)
        datasets = sorted({name for s in report.setups for name in s.per_dataset})
        if cost is None:
            retrieves = any(s.overall.retrieval is not None for s in report.setups)
            cost = "retrieval" if retrieves else "generation"
        if cost not in COST_AXES:
            raise ValueError(f"cost must be one of {', '.join(COST_AXES)}, not {cost!r}")
        self.setups = widgets.SelectMultiple(
            options=names, value=tuple(names), description="Setups", rows=min(8, max(2, len(names)))
        )
        self.datasets = widgets.SelectMultiple(
            options=datasets,
            value=tuple(datasets),
            description="Datasets",
            rows=min(8, max(2, len(datasets))),
        )
        self.cost = widgets.Dropdown(
            options=[(label, key) for key, (_, label) in COST_AXES.items()],
            value=cost,
            description="Cost",
        )
        self.per_dataset = widgets.Checkbox(value=False, description="Per dataset")
        self.selection: StatsReport | Run = report
        for control in (self.setups, self.datasets, self.cost, self.per_dataset):
            control.observe(self._changed, names="value")
        self.children = [
            widgets.HBox([self.setups, self.datasets]),
            widgets.HBox([self.cost, self.per_dataset]),
            self.message,
            self.table_widget,
            self.chart_widget,
        ]
        self.refresh()

    def _changed(self, change: Mapping[str, Any]) -> None:
        self.refresh()

    def _init_run(self, run: Run, cost: str | None, metric: str | None) -> None:
        """The controls over a run: setups, datasets, metric, cost column, per dataset."""
        self.run = run
        self.report = None
        self.selection = run
        names = list(run.systems)
        datasets = sorted(set(run.dataset_names))
        costs = [c for c, v in run.costs.items() if (~np.isnan(v)).any()]
        if cost is None:
            preferred = [c for c in ("retrieval_secs", "generation_secs") if c in costs]
            cost = (preferred or costs or [None])[0]
        elif cost not in run.costs:
            raise ValueError(f"the run has no cost {cost!r}; costs: {', '.join(run.costs)}")
        metrics = list(run.metrics)
        if metric is None:
            metric = "correct" if "correct" in metrics else (metrics[0] if metrics else None)
        elif metric not in metrics:
            raise ValueError(f"the run has no metric {metric!r}; metrics: {', '.join(metrics)}")
        rows = min(8, max(2, len(names)))
        self.setups = widgets.SelectMultiple(
            options=names, value=tuple(names), description="Setups", rows=rows
        )
        self.datasets = widgets.SelectMultiple(
            options=[(d or "(none)", d) for d in datasets],
            value=tuple(datasets),
            description="Datasets",
            rows=min(8, max(2, len(datasets))),
        )
        self.metric = widgets.Dropdown(options=metrics, value=metric, description="Metric")
        self.cost = widgets.Dropdown(
            options=[("(none)", None), *((c, c) for c in run.costs)], value=cost,
            description="Cost",
        )  # fmt: skip
        self.per_dataset = widgets.Checkbox(value=False, description="Per dataset")
        for control in (self.setups, self.datasets, self.metric, self.cost, self.per_dataset):
            control.observe(self._changed, names="value")
        self.children = [
            widgets.HBox([self.setups, self.datasets]),
            widgets.HBox([self.metric, self.cost, self.per_dataset]),
            self.message,
            self.table_widget,
            self.chart_widget,
        ]
        self.refresh()

    def _refresh_run(self, run: Run) -> None:
        """The run's leaderboard and cost frontier over the selection."""
        setups = [s for s in run.systems if s in set(self.setups.value)]
        datasets = list(self.datasets.value)
        metric, cost = self.metric.value, self.cost.value
        self.selection = select_run(run, setups, datasets)
        if not setups or not datasets or metric is None:
            empty = not self.setups.options or not self.datasets.options
            self._notify(
                "This run has no row." if empty else "Select at least one setup and one dataset."
            )
            self.frame = pd.DataFrame()
            self.table_html = ""
        else:
            parts = [(OVERALL, self.selection)]
            if self.per_dataset.value:
                parts += [(d, select_run(run, setups, [d])) for d in datasets]
            self.frame = pd.DataFrame(
                [row for dataset, part in parts for row in _run_rows(part, dataset, metric, cost)]
            )
            every = len(datasets) == len(self.datasets.options)
            scope = "all datasets" if every else "the selected datasets"
            note = f"Mean {metric} per setup over {scope} (kagreport.runs.leaderboard)"
            if cost:
                note += f", mean {cost} and the Pareto frontier (cost_frontier)"
                overall = self.frame[self.frame["dataset"] == OVERALL]
                unknown = [
                    s for s, c in zip(overall["setup"], overall["cost"], strict=True) if pd.isna(c)
                ]
                if unknown:
                    note += f"; {', '.join(unknown)} record no {cost} (not placed on the frontier)"
            self._notify(
                note + ". A run carries no precision, coverage, Wilson interval or "
                "accuracy-against-cost chart: those are drawn from a StatsReport. "
                + lacks_note(run)
            )
            self.table_html = self._run_table(metric, cost)
        self.chart = None
        self.table_widget.value = self.table_html
        self.chart_widget.value = ""

    def _run_table(self, metric: str, cost: str | None) -> str:
        columns = [
            ("setup", "setup"),
            ("dataset", "dataset"),
            ("rank", "rank"),
            ("mean", f"mean {metric}"),
            ("n_items", "items"),
            ("n_defined", "defined"),
            ("n_errors", "errors"),
        ]
        if cost:
            columns += [("cost", f"mean {cost}"), ("on_frontier", "Pareto frontier")]
        records = self.frame.to_dict("records")
        if not records:
            return message_html("No rows.")
        formatters = {"mean": lambda r: fmt_number(r["mean"], 4)}
        return html_table(records, columns, formatters=formatters)

    def refresh(self) -> None:
        """Rebuild the frame, table and chart from the controls (called on every change)."""
        if self.run is not None:
            self._refresh_run(self.run)
            return
        assert self.report is not None
        setups = [s for s in self.report.setup_names if s in set(self.setups.value)]
        datasets = list(self.datasets.value)
        column, label = COST_AXES[self.cost.value]
        self.selection = select(self.report, setups, datasets)
        full = stats_frame(self.selection, per_dataset=True, confidence=self.confidence)
        rows = full if self.per_dataset.value else full[full["dataset"] == OVERALL]
        self.frame = rows.reset_index(drop=True)
        if not setups or not datasets:
            empty = not self.setups.options or not self.datasets.options
            self._notify(
                "This report has no graded result."
                if empty
                else "Select at least one setup and one dataset."
            )
            self.table_html = ""
            self._chart = ChartResult()
        else:
            every = len(datasets) == len(self.datasets.options)
            scope = "all datasets" if every else f"the selected datasets ({', '.join(datasets)})"
            note = (
                f"{OVERALL} rows are over {scope}; Wilson {self.confidence:.0%} intervals "
                "in brackets; rank among the selected setups."
            )
            note += self._cost_note(full, self.cost.value, label)
            self._notify(note)
            self.table_html = self._table(column, label)
            self._chart = build_chart(
                "accuracy_cost_chart",
                full,
                cost=self.cost.value,
                per_dataset=self.per_dataset.value,
                confidence=self.confidence,
            )
        self.chart = self._chart.chart
        self.table_widget.value = self.table_html
        self.chart_widget.value = self._chart.html

    @staticmethod
    def _cost_note(frame: pd.DataFrame, cost: str, label: str) -> str:
        """What the table and chart do with setups without this cost (as the chart does)."""
        overall = frame[frame["dataset"] == OVERALL]
        if not pd.notna(cost_values(overall, cost)).any():
            return f" No selected setup has a value for {label.lower()}."
        if cost in RETRIEVAL_COSTS and no_retrieval(overall).any():
            return " Setups without retrieval cost 0 on this axis (drawn at 0)."
        return ""

    def _table(self, column: str, label: str) -> str:
        records = self.frame.to_dict("records")
        # A setup that retrieves nothing costs 0 on a retrieval axis, as the chart draws it.
        zero = no_retrieval(self.frame) & (self.cost.value in RETRIEVAL_COSTS)
        for record, at_zero in zip(records, zero.tolist(), strict=True):
            record["_no_retrieval"] = at_zero

        def interval(name: str) -> Any:
            return lambda r: fmt_interval(r[name], r[f"{name}_low"], r[f"{name}_high"])

        columns = [
            ("setup", "setup"),
            ("dataset", "dataset"),
            ("rank", "rank"),
            ("total", "total"),
            ("correct", "correct"),
            ("incorrect", "incorrect"),
            ("errors", "errors"),
            ("accuracy", "accuracy"),
            ("precision", "precision"),
            ("coverage", "coverage"),
            (column, label),
        ]
        formatters = {name: interval(name) for name in ("accuracy", "precision", "coverage")}
        digits = 3 if "secs" in column else 1
        formatters[column] = lambda r: (
            "0 (no retrieval)" if r["_no_retrieval"] else fmt_number(r[column], digits)
        )
        if not records:
            return message_html("No rows.")
        return html_table(records, columns, formatters=formatters)

    def _controls_state(self) -> dict[str, str]:
        state = {
            "setups": describe(list(self.setups.value)),
            "datasets": describe(list(self.datasets.value)),
            "cost": str(self.cost.value),
            "per dataset": "yes" if self.per_dataset.value else "no",
        }
        if self.metric is not None:
            state["metric"] = str(self.metric.value)
        return state

    def _sections(self) -> list[str]:
        return [self.table_html, self._chart.html]


def _run_rows(run: Run, dataset: str, metric: str, cost: str | None) -> list[dict[str, Any]]:
    """The table rows of one (selected) run: leaderboard and, with a cost, cost frontier."""
    frontier = {p.system: p for p in cost_frontier(run, cost, metric)} if cost else {}
    rows = []
    for row in leaderboard(run, metric):
        point = frontier.get(row.system)
        rows.append(
            {
                "setup": row.system,
                "dataset": dataset,
                "rank": row.rank,
                "mean": row.mean,
                "n_items": row.n_items,
                "n_defined": row.n_defined,
                "n_errors": row.n_errors,
                "cost": math.nan if point is None else point.cost,
                "on_frontier": False if point is None else point.on_frontier,
            }
        )
    return rows
