""":class:`StatsView`: kag's metrics of a run (:class:`~kagreport.runs.Run`; a
``StatsReport`` becomes one) with the accuracy-against-cost chart; the leaderboard and
cost frontier of a run without outcomes."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import numpy as np
import pandas as pd

from kagreport._format import is_missing, is_proportion, quantity, rank_range, score_interval
from kagreport.frames import stats_frame
from kagreport.frames._tables import COST_AXES, OVERALL, RETRIEVAL_COSTS, cost_values, no_retrieval
from kagreport.runs import Run, cost_frontier, leaderboard, setup_metrics
from kagreport.runs._costs import COSTS, cost_axis
from kagreport.sources import as_run
from kagreport.widgets._base import ChartPane, ChartResult, View, build_chart, describe
from kagreport.widgets._html import fmt_percent_interval, html_table, message_html
from kagreport.widgets._runs import lacks_note

if TYPE_CHECKING:
    from kagreport import EngineOptions
    from kagreport.widgets._follow import Follower

__all__ = ["StatsView"]


_EMPTY = "This run has no graded result."
_SELECT = "Select at least one setup and one dataset."

#: The axes a kag tree records; the others (tokens, money, ...) come from other tools.
_KAG_COSTS = ("retrieval", "generation", "context", "graph")


def _missing(run: Run) -> dict[str, list[str]]:
    """Each cost axis and the columns it sums that the run lacks."""
    return {name: [c for c in COSTS[name].columns if c not in run.costs] for name in COST_AXES}


class StatsView(View):
    """kag's metrics of the selected setups on the selected datasets, with the headline chart.

    A run whose rows all have an outcome (a kag tree's, or evaluations with a ``correct``
    metric) shows the rows of :func:`kagreport.frames.stats_frame` (kag's counts,
    accuracy, precision and coverage with Wilson intervals, by
    ``kagreport.runs.setup_metrics`` on the selected rows) and
    :func:`kagreport.charts.accuracy_cost_chart`; for ``Run.from_stats(report)`` the
    numbers are the report's. A run offers
    the cost axes it has the columns for and says what it lacks (a run from evaluations
    records no retrieval: no retrieval or graph axis). A run without outcomes (a judge's
    or token F1's scores only), or one viewed on another ``metric``, shows what it has:
    each system's mean of :attr:`metric` (:func:`kagreport.runs.leaderboard`) and mean cost
    with its place on the Pareto frontier (:func:`kagreport.runs.cost_frontier`; a system
    that retrieves nothing costs 0 on the retrieval axes and takes part), and says that
    kag's counts, intervals and the chart need each row's outcome.

    Controls: ``setups`` and ``datasets`` (multi-selects, all selected at
    first), :attr:`cost` (the cost axis of the chart, one of
    the cost axes; for a run without outcomes one of its cost
    columns) and :attr:`per_dataset` (one point per dataset in the chart and one table
    row per dataset). Changing any of them rebuilds :attr:`frame`, the table and
    :attr:`chart`.

    Parameters
    ----------
    report : Run, or what :func:`kagreport.sources.as_run` takes
        A run (a ``StatsReport`` from :func:`kagreport.grade` becomes
        ``Run.from_stats(report)``).
    cost : str, optional
        Initial cost axis; default ``"retrieval"`` when some setup retrieves, else
        ``"generation"`` (else the first axis the run has). A cost column naming an
        axis (``"retrieval_secs"``) selects that axis. For a run without outcomes, one
        of its cost columns (default ``retrieval_secs``, else ``generation_secs``, else
        the first with a value).
    confidence : float
        Level of the Wilson intervals shown with accuracy, precision and coverage.
    metric : str, optional
        ``None`` or ``"correct"``: kag's metrics when every row has an outcome. Another
        metric of the run: its leaderboard (the default for a run without outcomes is
        ``correct`` if it has it, else its first metric).

    Attributes
    ----------
    setups, datasets : ipywidgets.SelectMultiple
    cost : ipywidgets.Dropdown
    per_dataset : ipywidgets.Checkbox
    metric : ipywidgets.Dropdown or None
        The metric ranked in the leaderboard view (None when kag's metrics are shown).
    run : Run
        The run shown.
    frame : pandas.DataFrame
        The rows of the table (:func:`kagreport.frames.stats_frame` columns).
        ``dataset == OVERALL`` rows hold each setup's metrics over the *selected*
        datasets; ranks are among the selected setups. In the leaderboard view: setup,
        dataset, rank, mean, n_items, n_defined, n_errors, low, high, rank_low,
        rank_high, tie_group (a row of :func:`kagreport.runs.leaderboard`), cost and
        on_frontier (of :func:`kagreport.runs.cost_frontier`; NaN and False without a cost
        column).
    selection : Run
        The run restricted to the selection (what :attr:`frame` and the chart show).
    chart : altair chart or None
        ``kagreport.charts.accuracy_cost_chart`` of the selection (None when there is
        nothing to draw, the chart failed, or in the leaderboard view; ``message``
        says why).
    table_html : str
        The current table, escaped HTML.
    table_widget, message : ipywidgets.HTML
        What is displayed.
    chart_widget : ChartPane
        The chart, live and offline (redrawn in place when a control changes); its
        ``value`` is the inline SVG.

    Raises
    ------
    KagreportError
        For anything :func:`kagreport.sources.as_run` does not take.
    ValueError
        For a ``cost`` or ``metric`` the source does not have (the message lists those
        it has).

    Notes
    -----
    Static fallback (:meth:`to_html`, in ``_repr_mimebundle_``): the control values,
    the table and the chart as inline SVG.
    """

    title = "kagreport StatsView"

    def __init__(
        self,
        report: Run | Any,
        *,
        cost: str | None = None,
        confidence: float = 0.95,
        metric: str | None = None,
    ) -> None:
        super().__init__()
        self.confidence = confidence
        self.metric: Any = None
        self.status = widgets.HTML()
        self._follower: Follower | None = None
        # A followed run's thread updates the view while a person uses its controls.
        self._lock = threading.RLock()
        self._quiet = False
        self.table_widget = widgets.HTML()
        self.chart_widget = ChartPane()
        self.frame: pd.DataFrame = pd.DataFrame()
        self.chart: Any = None
        self.table_html = ""
        self._chart = ChartResult()
        self.run: Run = as_run(report)
        self._run = run = self.run
        self.selection: Run = run
        #: Whether the view shows kag's metrics (every row has an outcome).
        self._kag = bool((run.outcome >= 0).all()) and metric in (None, "correct")
        names = list(run.systems)
        datasets = sorted(set(run.dataset_names))
        self.setups = widgets.SelectMultiple(
            options=names, value=tuple(names), description="Setups", rows=min(8, max(2, len(names)))
        )
        self.datasets = widgets.SelectMultiple(
            options=datasets if all(datasets) else [(d or "(none)", d) for d in datasets],
            value=tuple(datasets),
            description="Datasets",
            rows=min(8, max(2, len(datasets))),
        )
        self.per_dataset = widgets.Checkbox(value=False, description="Per dataset")
        if self._kag:
            self.cost = self._kag_cost(cost)
            controls = [self.cost, self.per_dataset]
        else:
            self._init_board(cost, metric)
            controls = [self.metric, self.cost, self.per_dataset]
        for control in (self.setups, self.datasets, *controls):
            control.observe(self._changed, names="value")
        self.children = [
            widgets.HBox([self.setups, self.datasets]),
            widgets.HBox(controls),
            self.message,
            self.table_widget,
            self.chart_widget,
        ]
        self.refresh()

    def _changed(self, change: Mapping[str, Any]) -> None:
        if not self._quiet:
            self.refresh()

    # -- following a running benchmark ---------------------------------------------

    @classmethod
    def follow(
        cls,
        datasets: str | os.PathLike[str] | Any,
        results: str | os.PathLike[str] = ".",
        prefix: str = "",
        *,
        interval: float | None = None,
        store: str | os.PathLike[str] | Any = None,
        engine: str | None = None,
        client: Any = None,
        storage_options: Mapping[str, Any] | None = None,
        workers: int | None = None,
        cost: str | None = None,
        confidence: float = 0.95,
        options: EngineOptions | None = None,
    ) -> StatsView:
        """A view of a running benchmark: graded now, then again every ``interval``
        seconds on a background thread, reading only the files that are new or changed
        (``kagreport.sources.watch_run``), the view updated in place when the run
        changes (:meth:`update`). :meth:`stop` ends it.

        Parameters are those of ``kagreport.sources.watch_run`` (``options``, a
        :class:`kagreport.EngineOptions`, and its shorthands; a ``store`` folder serves a
        later ``stats --store``) and of the view. A later pass that fails is said in
        ``status``, and the next one tries again.

        Raises
        ------
        KagreportError
            As :func:`kagreport.grade`, from the first pass.
        ValueError
            For an option out of range (``interval`` <= 0, ...) or an unknown ``cost``.
        """
        from kagreport.widgets._follow import Follower

        holder: list[StatsView] = []
        lines: list[str] = []

        def status(line: str) -> None:  # before the view exists: kept for it
            if holder:
                holder[0].status.value = line
            else:
                lines.append(line)

        args = {
            "datasets": datasets, "results": results, "prefix": prefix, "interval": interval,
            "store": store, "engine": engine, "client": client,
            "storage_options": storage_options, "workers": workers, "options": options,
        }  # fmt: skip
        follower = Follower(args, lambda run: holder[0].update(run), status)
        view = cls(follower.first(), cost=cost, confidence=confidence)
        view._follower = follower
        holder.append(view)
        view.status.value = lines[-1] if lines else ""
        view.children = [view.status, *view.children]
        follower.start()
        return view

    @property
    def following(self) -> bool:
        """Whether the view is following a running benchmark (:meth:`follow`)."""
        return self._follower is not None and self._follower.running

    def stop(self, timeout: float = 5.0) -> None:
        """Stop following (after the pass under way; waits up to ``timeout`` s). The view
        keeps its last report. Nothing happens for a view that does not follow."""
        if self._follower is not None:
            self._follower.stop(timeout)

    def close(self) -> None:
        """Stop following (without waiting for the pass under way), then close the widget
        (ipywidgets keeps every open widget: one never closed is never collected)."""
        if self._follower is not None:
            self._follower.stop(timeout=0)
        super().close()

    def update(self, report: Run | Any) -> None:
        """Show a newer state of the same run (anything :func:`as_run` takes), keeping the
        selection: setups and datasets that were selected stay so, new ones are selected,
        the cost axis stays (when the run still has it).

        Raises
        ------
        TypeError
            If the view shows a run without outcomes (a leaderboard): only kag's metrics
            are updated in place.
        """
        if not self._kag:
            raise TypeError("StatsView.update is for a view of kag's metrics")
        with self._lock:
            self.run = self._run = self.selection = run = as_run(report)
            self._quiet = True
            try:
                _reselect(self.setups, list(run.systems))
                datasets = sorted(set(run.dataset_names))
                _reselect(self.datasets, datasets)
                options, value = self._kag_cost_options(
                    self.cost.value if self.cost.value in self._offered() else None
                )
                if list(self.cost.options) != options:
                    self.cost.options = options
                self.cost.value = value
            finally:
                self._quiet = False
            self.refresh()

    # -- controls ------------------------------------------------------------------

    def _offered(self) -> list[str]:
        """The cost axes the source has (one per column set: "latency" is "generation"
        under another title)."""
        missing = _missing(self._run)
        firsts = {COSTS[n].columns: n for n in reversed(COST_AXES)}
        return [
            name
            for name, columns in missing.items()
            if not columns and firsts[COSTS[name].columns] == name
        ]

    def _kag_cost(self, cost: str | None) -> Any:
        """The cost dropdown over the axes the source has (all four for a kag tree)."""
        options, value = self._kag_cost_options(cost)
        return widgets.Dropdown(options=options, value=value, description="Cost")

    def _kag_cost_options(self, cost: str | None) -> tuple[list[tuple[str, str | None]], Any]:
        """The cost dropdown's options and value (``cost``, else the default axis)."""
        missing = _missing(self._run)
        offered = self._offered()
        if cost is None:
            retrieves = any(s.overall.retrieval is not None for s in setup_metrics(self._run))
            order = ["retrieval", "generation"] if retrieves else ["generation"]
            cost = next((c for c in [*order, *offered] if c in offered), None)
        else:
            named = [n for n, axis in COSTS.items() if axis.columns == (cost,)]
            cost = named[0] if named else cost
            if cost not in COST_AXES:
                raise ValueError(f"cost must be one of {', '.join(COST_AXES)}, not {cost!r}")
            if missing[cost]:
                raise ValueError(
                    f"the run has no cost column {', '.join(map(repr, missing[cost]))} for the "
                    f"cost {cost!r}; its cost columns: {', '.join(self._run.costs) or 'none'}"
                )
        options: list[tuple[str, str | None]] = [(COST_AXES[n][1], n) for n in offered]
        return options or [("(none)", None)], cost

    def _init_board(self, cost: str | None, metric: str | None) -> None:
        """The metric and cost controls of the leaderboard view (a run without outcomes)."""
        run = self._run
        costs = [c for c, v in run.costs.items() if (~np.isnan(v)).any()]
        if cost is None:
            preferred = [c for c in ("retrieval_secs", "generation_secs") if c in costs]
            cost = (preferred or costs or [None])[0]
        elif cost not in run.costs:
            raise ValueError(f"the run has no cost {cost!r}; costs: {', '.join(run.costs)}")
        metrics = list(run.metrics)
        if metric is None:
            metric = run.headline if metrics else None
        elif metric not in metrics:
            raise ValueError(f"the run has no metric {metric!r}; metrics: {', '.join(metrics)}")
        self.metric = widgets.Dropdown(options=metrics, value=metric, description="Metric")
        self.cost = widgets.Dropdown(
            options=[("(none)", None), *((c, c) for c in run.costs)], value=cost,
            description="Cost",
        )  # fmt: skip

    def _refresh_board(self) -> None:
        """The run's leaderboard and cost frontier over the selection."""
        run = self._run
        setups = [s for s in run.systems if s in set(self.setups.value)]
        datasets = list(self.datasets.value)
        metric, cost = self.metric.value, self.cost.value
        self.selection = run.select(setups, datasets)
        if not setups or not datasets or metric is None:
            empty = not self.setups.options or not self.datasets.options
            self._notify(
                "This run has no graded result."
                if empty
                else "Select at least one setup and one dataset."
            )
            self.frame = pd.DataFrame()
            self.table_html = ""
        else:
            parts = [(OVERALL, self.selection)]
            if self.per_dataset.value:
                parts += [(d, run.select(setups, [d])) for d in datasets]
            self.frame = pd.DataFrame(
                [row for dataset, part in parts for row in _run_rows(part, dataset, metric, cost)]
            )
            every = len(datasets) == len(self.datasets.options)
            scope = "all datasets" if every else "the selected datasets"
            note = f"Mean {metric} per setup over {scope} (kagreport.runs.leaderboard)"
            if cost:
                note += f", mean {cost} and the Pareto frontier (cost_frontier)"
                if cost_axis(run, cost).retrieval:
                    note += "; a setup that retrieves nothing costs 0 on this axis"
                overall = self.frame[self.frame["dataset"] == OVERALL]
                unknown = [
                    s for s, c in zip(overall["setup"], overall["cost"], strict=True) if pd.isna(c)
                ]
                if unknown:
                    note += f"; {', '.join(unknown)} record no {cost} (not placed on the frontier)"
            if (run.outcome >= 0).all():
                why = f"metric 'correct' (this view ranks {metric})"
            else:
                why = "each row's outcome (metric 'correct'), which this run lacks"
            self._notify(
                f"{note}. kag's counts, precision, coverage, Wilson intervals and the "
                f"accuracy-against-cost chart need {why}. {lacks_note(run)}".rstrip()
            )
            self.table_html = self._run_table(metric, cost)
        self.chart = None
        self._chart = ChartResult()
        self.table_widget.value = self.table_html
        self.chart_widget.clear()

    def _run_table(self, metric: str, cost: str | None) -> str:
        columns = [
            ("setup", "setup"),
            ("dataset", "dataset"),
            ("rank", "rank"),
            ("ranks", "rank interval"),
            ("tie_group", "tie group"),
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
        if is_proportion(metric, self._run.metrics[metric]):  # in percent, with Wilson's bounds
            formatters = {"mean": lambda r: fmt_percent_interval(r["mean"], r["low"], r["high"])}
        else:
            formatters = {"mean": lambda r: score_interval(r["mean"], r["low"], r["high"])}
        if cost:
            formatters["cost"] = lambda r: quantity(r["cost"])
        formatters["ranks"] = lambda r: _ranks(r, "rank_low", "rank_high")
        formatters["tie_group"] = lambda r: _ranks(r, "tie_group", "tie_group")
        return html_table(records, columns, formatters=formatters, numeric=("mean", "ranks"))

    def refresh(self) -> None:
        """Rebuild the frame, table and chart from the controls (called on every change)."""
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        if not self._kag:
            self._refresh_board()
            return
        run = self._run
        setups = [s for s in run.systems if s in set(self.setups.value)]
        datasets = list(self.datasets.value)
        cost = self.cost.value
        selected = run.select(setups, datasets)
        self.selection = selected
        full = stats_frame(selected, per_dataset=True, confidence=self.confidence)
        rows = full if self.per_dataset.value else full[full["dataset"] == OVERALL]
        self.frame = rows.reset_index(drop=True)
        if not setups or not datasets:
            empty = not self.setups.options or not self.datasets.options
            self._notify(
                "This run has no graded result."
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
            if cost is None:
                note += " The run records no cost the chart draws."
                self._chart = ChartResult()
            else:
                note += self._cost_note(full, cost, COST_AXES[cost][1])
                # The selected run, not its frame: the chart's cost intervals are
                # bootstrapped over its items (runs._intervals.cost_intervals).
                self._chart = build_chart(
                    "accuracy_cost_chart",
                    selected,
                    cost=cost,
                    per_dataset=self.per_dataset.value,
                    confidence=self.confidence,
                )
            note += self._lacks_note()
            self._notify(note)
            self.table_html = self._table(*(COST_AXES[cost] if cost else (None, None)))
        self.chart = self._chart.chart
        self.table_widget.value = self.table_html
        self.chart_widget.show(self._chart)

    def _lacks_note(self) -> str:
        """What a run shown with kag's metrics does not record (empty for a kag tree's run)."""
        missing = _missing(self._run)
        # kag's axes only: a kag run lacking tokens or money is the normal case.
        absent = [name for name, columns in missing.items() if columns and name in _KAG_COSTS]
        note = ""
        if absent:
            columns = sorted({c for name in absent for c in missing[name]})
            note = (
                f" The run records no {', '.join(columns)}: no {' or '.join(absent)} axis, "
                "and the table's columns of them are NaN (unknown)."
            )
        other = lacks_note(self._run)
        return f"{note} {other}".rstrip() if other else note

    @staticmethod
    def _cost_note(frame: pd.DataFrame, cost: str, label: str) -> str:
        """What the table and chart do with setups without this cost (as the chart does)."""
        overall = frame[frame["dataset"] == OVERALL]
        if not pd.notna(cost_values(overall, cost)).any():
            return f" No selected setup has a value for {label.lower()}."
        if cost in RETRIEVAL_COSTS and no_retrieval(overall).any():
            return " Setups without retrieval cost 0 on this axis (drawn at 0)."
        return ""

    def _table(self, column: str | None, label: str | None) -> str:
        records = self.frame.to_dict("records")
        # A setup that retrieves nothing costs 0 on a retrieval axis, as the chart draws it.
        zero = no_retrieval(self.frame) & (self.cost.value in RETRIEVAL_COSTS)
        for record, at_zero in zip(records, zero.tolist(), strict=True):
            record["_no_retrieval"] = at_zero

        def interval(name: str) -> Any:  # a proportion in percent, its Wilson bounds beside
            return lambda r: fmt_percent_interval(r[name], r[f"{name}_low"], r[f"{name}_high"])

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
        ]
        formatters = {name: interval(name) for name in ("accuracy", "precision", "coverage")}
        if column is not None and label is not None:  # no cost column without a cost axis
            columns.append((column, label))
            formatters[column] = lambda r: (
                "0 (no retrieval)" if r["_no_retrieval"] else quantity(r[column])
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
            {"setup": row.system, "dataset": dataset}
            | {k: v for k, v in asdict(row).items() if k not in ("system", "interval")}
            | {"cost": math.nan if point is None else point.cost}
            | {"on_frontier": False if point is None else point.on_frontier}
        )
    return rows


def _ranks(row: dict[str, Any], low: str, high: str) -> str:  # a missing rank is NaN in a frame
    return rank_range(*(None if is_missing(row[k]) else int(row[k]) for k in (low, high)))


def _reselect(control: Any, names: list[str]) -> None:
    """New options for a multi-select: what was selected stays so, new names are selected."""
    before, selected = set(control.options), set(control.value)
    value = tuple(n for n in names if n in selected or n not in before)
    if list(control.options) != names:
        control.options = names
    control.value = value
