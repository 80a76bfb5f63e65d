""":class:`StatsView`: a graded run's metrics and its accuracy-against-cost chart."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets
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
from kagreport.widgets._base import ChartResult, View, build_chart, describe
from kagreport.widgets._html import fmt_interval, fmt_number, html_table, message_html

__all__ = ["StatsView"]


def _sum_metrics(groups: Iterable[Metrics]) -> Metrics:
    """The metrics of the union of disjoint groups (every field of :class:`Metrics` adds)."""
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

    Controls: :attr:`setups` and :attr:`datasets` (multi-selects, all selected at
    first), :attr:`cost` (the cost axis of the chart, one of
    :data:`kagreport.frames.COST_AXES`) and :attr:`per_dataset` (one point per
    dataset in the chart and one table row per dataset). Changing any of them
    rebuilds :attr:`frame`, the table and :attr:`chart`.

    Parameters
    ----------
    report : StatsReport
        From :func:`kagreport.grade`.
    cost : str, optional
        Initial cost axis; default ``"retrieval"`` when some setup retrieves, else
        ``"generation"``.
    confidence : float
        Level of the Wilson intervals shown with accuracy, precision and coverage.

    Attributes
    ----------
    setups, datasets : ipywidgets.SelectMultiple
    cost : ipywidgets.Dropdown
    per_dataset : ipywidgets.Checkbox
    frame : pandas.DataFrame
        The rows of the table (:func:`kagreport.frames.stats_frame` columns).
        ``dataset == OVERALL`` rows hold each setup's metrics over the *selected*
        datasets; ranks are among the selected setups.
    selection : StatsReport
        The report restricted to the selection (what :attr:`frame` and the chart show).
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
        self, report: StatsReport, *, cost: str | None = None, confidence: float = 0.95
    ) -> None:
        super().__init__()
        self.report = report
        self.confidence = confidence
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
        self.table_widget = widgets.HTML()
        self.chart_widget = widgets.HTML()
        self.frame: pd.DataFrame = pd.DataFrame()
        self.selection: StatsReport = report
        self.chart: Any = None
        self.table_html = ""
        self._chart = ChartResult()
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

    def refresh(self) -> None:
        """Rebuild the frame, table and chart from the controls (called on every change)."""
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
        return {
            "setups": describe(list(self.setups.value)),
            "datasets": describe(list(self.datasets.value)),
            "cost": str(self.cost.value),
            "per dataset": "yes" if self.per_dataset.value else "no",
        }

    def _sections(self) -> list[str]:
        return [self.table_html, self._chart.html]
