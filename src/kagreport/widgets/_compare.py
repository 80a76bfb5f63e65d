""":class:`ComparisonView`: a paired comparison of two setups, and the items that flipped.

Every number comes from :func:`kagreport.runs.compare_setups` on the run cut to the chosen
pair, the function the report site calls for a run's comparisons, so the same pair shows
the same p-value, interval and flipped items in both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd

from kagreport._errors import KagreportError
from kagreport._format import (
    MISSING,
    difference_interval,
    is_proportion,
    p_value,
    percent,
    score,
)
from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, RetrievalEvaluation
from kagreport.evaluation._compare import primary_metrics
from kagreport.evaluation._text import family_label, method_label
from kagreport.frames import comparison_frame
from kagreport.runs import Run, SetupComparison, compare_setups
from kagreport.sources import as_run
from kagreport.widgets._base import ChartPane, ChartResult, View, build_chart
from kagreport.widgets._html import (
    RESPONSE_LIMIT,
    html_table,
    message_html,
    truncated_html,
)

__all__ = ["ComparisonView", "threshold_run"]

_FLIP_COLUMNS = ["identifier", "candidate_score", "baseline_score", "flipped_to"]
_Evaluation = AnswerEvaluation | RetrievalEvaluation


def threshold_run(run: Run, metric: str, threshold: float) -> tuple[Run, str]:
    """``run`` with one metric: 1 where ``metric`` is at least ``threshold``, 0 below, NaN
    where undefined; and that metric's name (``"<metric> >= <threshold>"``).

    :func:`kagreport.runs.compare_setups` on it lists the items right on one side only,
    which is how :class:`ComparisonView` finds its flips (a comparison, not a statistic).
    """
    values = run.metrics[metric]
    right = np.where(np.isnan(values), np.nan, (values >= threshold).astype(np.float64))
    name = f"{metric} >= {threshold:g}"
    return dataclasses.replace(run, metrics={name: right}), name


class ComparisonView(View):
    """Pick a candidate and a baseline; see their paired comparison and the flipped items.

    The comparison is :func:`kagreport.runs.compare_setups` of the run cut to the two
    setups (``baseline=`` the baseline): the paired sign-flip test, Holm adjustment across
    the compared metrics, the Holm-adjusted interval that agrees with it and the verdict
    (better, worse, equivalent, inconclusive), over the items both hold. It is the call
    the report site makes for a run, with the same ``n_resamples`` and ``seed`` by
    default, so a pair shows here the p-value it shows on the site (the site's second
    p-value is Holm-adjusted across all of a run's comparisons, a family this view of one
    pair does not have).

    Parameters
    ----------
    source : Run, Mapping[str, AnswerEvaluation], or what :func:`kagreport.sources.as_run` takes
        A run (:class:`kagreport.runs.Run`; a graded kag tree becomes
        ``Run.from_stats(report)``, whose responses are read from their files when
        shown); or named evaluations (each pair becomes ``Run.from_evaluations`` of the
        two, cut to the items both hold).
    metrics : sequence of str, optional
        The metrics compared. Default: every metric of a run (``mrr`` alone for a
        retrieval run that has it); for named evaluations the metrics
        ``AnswerEvaluation.compare`` tests by default for the pair (its Holm family).
    n_resamples : int
        Budget of the test and the bootstrap (the site's and ``compare``'s default).
    seed : int
        Seed of the test and the bootstrap.
    threshold : float
        An item counts as right on a side when its score on ``metric`` is at least
        this (``correct`` is 0 or 1, so any threshold in (0, 1] gives the site's flips).
        The flips are those of ``compare_setups`` on ``threshold_run``: which items
        differ, not a statistic.
    max_flips : int
        Flipped items shown (all of them are in :attr:`flips`).
    max_chars : int
        Characters of a response shown (the full length is stated).

    Attributes
    ----------
    run : Run or None
        The run of the source (None for named evaluations that do not all hold the same
        items: the run of each pair is built when it is picked).
    candidate, baseline, metric : ipywidgets.Dropdown
        The two setups, and the metric whose flips are listed (default ``correct``,
        else the first of ``metrics``, else the first metric).
    setup_comparison : SetupComparison or None
        What ``compare_setups`` returned for the pair.
    comparison : EvaluationComparison or None
        Its comparison (None when the two picks are the same or the comparison failed;
        :attr:`message` says why).
    frame : pandas.DataFrame
        :func:`kagreport.frames.comparison_frame` of it.
    flips : pandas.DataFrame
        Every flipped item, sorted by item: identifier, candidate_score, baseline_score
        and flipped_to (``"candidate"`` when only the candidate is right, else
        ``"baseline"``).
    dropped : int
        Items left out because only one side holds them.
    chart : altair chart or None
        ``kagreport.charts.forest_plot`` of the comparison.
    table_html, flips_html : str
        The comparison and flipped-items tables (escaped HTML).

    Notes
    -----
    Static fallback (:meth:`to_html`): the picks, the comparison table, the forest
    plot as inline SVG and the flipped items shown (at most ``max_flips``, each
    response cut to ``max_chars`` characters).
    """

    title = "kagreport ComparisonView"

    def __init__(
        self,
        source: Run | Mapping[str, AnswerEvaluation] | Any,
        *,
        metrics: Sequence[str] | None = None,
        n_resamples: int = 10000,
        seed: int = 0,
        threshold: float = 0.5,
        max_flips: int = 25,
        max_chars: int = RESPONSE_LIMIT,
    ) -> None:
        super().__init__()
        self._cache: dict[str, _Evaluation] = {}
        self.run: Run | None
        if not isinstance(source, Mapping):
            self.run = as_run(source)
            names = list(self.run.systems)
            options = list(self.run.metrics)
        else:
            self._cache = dict(source)
            names = list(source)
            options = list(dict.fromkeys(m for e in source.values() for m in e.metrics))
            try:
                self.run = Run.from_evaluations(list(source.values()), labels=names)
            except KagreportError:  # different items (or kinds): a run per pair, when picked
                self.run = None
        self._metrics = None if metrics is None else tuple(metrics)
        self.n_resamples = n_resamples
        self.seed = seed
        self.threshold = threshold
        self.max_flips = max_flips
        self.max_chars = max_chars
        self.candidate = widgets.Dropdown(
            options=names, value=names[0] if names else None, description="Candidate"
        )
        self.baseline = widgets.Dropdown(
            options=names, value=names[min(1, len(names) - 1)] if names else None,
            description="Baseline",
        )  # fmt: skip
        first = [m for m in (metrics or ()) if m in options] or options
        headline = self.run.headline if self.run is not None and self.run.metrics else None
        default = headline if headline in options else (first[0] if first else None)
        self.metric = widgets.Dropdown(options=options, value=default, description="Flips on")
        self.setup_comparison: SetupComparison | None = None
        self.comparison: EvaluationComparison | None = None
        #: The compared metrics shown in percent (means) and percentage points (differences).
        self._proportions: set[str] = set()
        self.frame = pd.DataFrame()
        self.flips = pd.DataFrame(columns=_FLIP_COLUMNS)
        self.dropped = 0
        self.chart: Any = None
        self.table_html = ""
        self.flips_html = ""
        self._chart = ChartResult()
        self.table_widget = widgets.HTML()
        self.chart_widget = ChartPane()
        self.flips_widget = widgets.HTML()
        for control in (self.candidate, self.baseline, self.metric):
            control.observe(self._changed, names="value")
        self.children = [
            widgets.HBox([self.candidate, self.baseline, self.metric]),
            self.message,
            self.table_widget,
            self.chart_widget,
            self.flips_widget,
        ]
        self.refresh()

    def _changed(self, change: Mapping[str, Any]) -> None:
        self.refresh()

    def evaluation(self, name: str) -> _Evaluation:
        """One of the named evaluations the view was given.

        Raises
        ------
        KeyError
            For an unknown name, or a source that is a run (it holds no evaluation).
        """
        try:
            return self._cache[name]
        except KeyError:
            raise KeyError(f"no evaluation named {name!r}") from None

    def _clear(self, note: str, kind: str = "info") -> None:
        self.setup_comparison = None
        self.comparison = None
        self.frame = pd.DataFrame()
        self.flips = pd.DataFrame(columns=_FLIP_COLUMNS)
        self.dropped = 0
        self._chart = ChartResult()
        self.table_html = self.flips_html = ""
        self._notify(note, kind=kind)

    def refresh(self) -> None:
        """Recompute the comparison and the flips from the picks (called on every change)."""
        a, b = self.candidate.value, self.baseline.value
        if a is None or b is None:
            self._clear("There is nothing to compare.")
        elif a == b:
            self._clear("Pick two different setups.")
        else:
            self._compare(a, b)
        self.chart = self._chart.chart
        self.table_widget.value = self.table_html
        self.chart_widget.show(self._chart)
        self.flips_widget.value = self.flips_html

    def pair_run(self, a: str, b: str) -> tuple[Run, tuple[str, ...], int]:
        """The run of the two setups (``a`` first), the metrics compared, and how many items
        one side holds that the pair's run leaves out (named evaluations of different items).

        Raises
        ------
        KagreportError, KeyError
            For an unknown setup.
        """
        if not self._cache:  # a run
            assert self.run is not None
            return self.run.select((a, b)), self._metrics or _default_metrics(self.run), 0
        first, second = self._cache[a], self._cache[b]
        shared = sorted(set(first.metrics) & set(second.metrics))
        kind = "retrieval" if isinstance(first, RetrievalEvaluation) else "answers"
        metrics = self._metrics or tuple(primary_metrics(first, second, shared, kind))
        if self.run is not None:
            return self.run.select((a, b)), metrics, 0
        common = {i.identifier for i in first.items} & {i.identifier for i in second.items}
        pair = [_restricted(e, common) for e in (first, second)]
        left_out = len(first.items) + len(second.items) - 2 * len(common)
        return Run.from_evaluations(pair, labels=[a, b]), metrics, left_out

    def _compare(self, a: str, b: str) -> None:
        try:
            run, metrics, left_out = self.pair_run(a, b)
            if not len(run):
                self._clear(f"{a} and {b} share no item.", kind="error")
                return
            found = compare_setups(
                run, metrics=metrics, baseline=b, n_resamples=self.n_resamples, seed=self.seed
            )
        except (ValueError, TypeError, KeyError) as exc:  # KagreportError is a ValueError
            self._clear(f"Cannot compare {a} with {b}: {exc}", kind="error")
            return
        if not found.comparisons:
            self._clear(f"{a} and {b} share no item.", kind="error")
            return
        (pair,) = found.comparisons
        comparison = pair.comparison
        self.setup_comparison = pair
        self.comparison = comparison
        self.dropped = pair.only_candidate + pair.only_baseline + left_out
        self.frame = comparison_frame(pair)
        note = f"{a} against {b} on {comparison.n_items:,} shared items"
        if self.dropped:
            plural = "item" if self.dropped == 1 else "items"
            note += f" ({self.dropped:,} {plural} held by only one of them left out)"
        self._notify(
            note + f"; {family_label(comparison)}; {self.n_resamples:,} resamples (Monte Carlo "
            f"only where no exact method applies), seed {self.seed}."
        )
        self._proportions = {
            name for name in comparison.metrics if is_proportion(name, run.metrics.get(name, ()))
        }
        self.table_html = self._comparison_table()
        self._chart = build_chart("forest_plot", comparison)
        rows = self._flips(run, a, b)
        self.flips_html = self._flips_table(run, rows)

    def _comparison_table(self) -> str:
        columns = [
            ("metric", "metric"),
            ("n_pairs", "pairs"),
            ("candidate_mean", "candidate"),
            ("baseline_mean", "baseline"),
            ("mean_difference", "difference [Holm-adjusted 95%]"),
            ("p_value", "p"),
            ("p_value_holm", "p (Holm)"),
            ("verdict", "verdict"),
            ("test", "test"),
        ]
        metrics = self.comparison.metrics if self.comparison is not None else {}
        tests = {name: method_label(m) for name, m in metrics.items()}
        share = self._proportions

        def mean(key: str) -> Any:
            return lambda r: percent(r[key]) if r["metric"] in share else score(r[key])

        formatters = {
            "test": lambda r: tests.get(r["metric"], MISSING),
            "candidate_mean": mean("candidate_mean"),
            "baseline_mean": mean("baseline_mean"),
            "p_value": lambda r: p_value(r["p_value"]),
            "p_value_holm": lambda r: p_value(r["p_value_holm"]),
            "mean_difference": lambda r: difference_interval(
                r["mean_difference"], r["ci_low"], r["ci_high"], proportion=r["metric"] in share
            ),
        }
        return html_table(self.frame.to_dict("records"), columns, formatters=formatters)

    def _flips(self, run: Run, a: str, b: str) -> dict[str, tuple[int, int]]:
        """Set :attr:`flips`; return each flipped item's (candidate row, baseline row)."""
        metric = self.metric.value
        if metric is None or metric not in run.metrics:
            self.flips = pd.DataFrame(columns=_FLIP_COLUMNS)
            return {}
        derived, name = threshold_run(run, metric, self.threshold)
        found = compare_setups(
            derived, metrics=[name], baseline=b, n_resamples=self.n_resamples, seed=self.seed
        )
        flipped = found.comparisons[0].flips if found.comparisons else ()
        mine_at, theirs_at = (_rows_by_label(run, system) for system in (a, b))
        at = {item: (mine_at[item], theirs_at[item]) for item, _, _ in flipped}
        values, right = run.metrics[metric], derived.metrics[name]
        records = []
        for item, _, _ in flipped:
            mine, theirs = at[item]
            records.append(
                {
                    "identifier": item,
                    "candidate_score": float(values[mine]),
                    "baseline_score": float(values[theirs]),
                    "flipped_to": "candidate" if right[mine] == 1 else "baseline",
                }
            )
        self.flips = pd.DataFrame(records, columns=_FLIP_COLUMNS)
        return at

    def _response(self, run: Run, row: int) -> str:
        """The response and error of one row as escaped HTML (a kag run's are read from
        its result file now)."""
        answer = None if run.responses is None else run.responses[row]
        error = None if run.errors is None else run.errors[row]
        text = truncated_html(answer, self.max_chars) if answer is not None else ""
        if error:
            text += message_html(f"error: {error[: self.max_chars]}", kind="error")
        return text or MISSING

    def _flips_table(self, run: Run, at: Mapping[str, tuple[int, int]]) -> str:
        total = len(self.flips)
        a, b = self.candidate.value, self.baseline.value
        metric = self.metric.value
        if not total:
            return message_html(f"No item flipped on {metric}.")
        won = int((self.flips["flipped_to"] == "candidate").sum())
        shown = self.flips.head(self.max_flips).to_dict("records")
        for row in shown:
            mine, theirs = at[row["identifier"]]
            row["candidate_response"] = self._response(run, mine)
            row["baseline_response"] = self._response(run, theirs)
        heading = (
            f"{total:,} items flipped on {metric} (threshold {self.threshold:g}): "
            f"{won:,} right only in {a}, {total - won:,} right only in {b}"
        )
        if total > len(shown):
            heading += f"; showing the first {len(shown):,} (all are in .flips)"
        if run.responses is None:
            heading += "; the run keeps no responses"
        columns = [
            ("identifier", "item"),
            ("candidate_score", f"{a}"),
            ("baseline_score", f"{b}"),
            ("candidate_response", f"{a} response"),
            ("baseline_response", f"{b} response"),
        ]
        return message_html(heading + ".") + html_table(
            shown, columns, raw=("candidate_response", "baseline_response")
        )

    def _controls_state(self) -> dict[str, str]:
        return {
            "candidate": str(self.candidate.value),
            "baseline": str(self.baseline.value),
            "flips on": str(self.metric.value),
        }

    def _sections(self) -> list[str]:
        return [self.table_html, self._chart.html, self.flips_html]


def _rows_by_label(run: Run, system: str) -> dict[str, int]:
    """Item label (:meth:`Run.item_label`, vectorised) -> row, over the rows of ``system``."""
    rows = run.rows_of(system)[0]
    datasets = np.array(run.dataset_names, dtype=object)[run.dataset[rows]]
    questions = np.array(run.question_names, dtype=object)[run.question[rows]]
    labels = np.where(datasets == "", questions, datasets + "/" + questions)
    return dict(zip(labels.tolist(), rows.tolist(), strict=True))


def _restricted(evaluation: Any, identifiers: set[str]) -> Any:
    """The evaluation's items with these identifiers (its run needs no metric recomputed)."""
    items = tuple(i for i in evaluation.items if i.identifier in identifiers)
    return dataclasses.replace(evaluation, items=items)


def _default_metrics(run: Run) -> tuple[str, ...]:
    """Every metric of the run; ``mrr`` alone for a retrieval run that has it (the family
    ``compare`` tests by default)."""
    if run.kind == "retrieval" and "mrr" in run.metrics:
        return ("mrr",)
    return tuple(run.metrics)
