""":class:`ComparisonView`: a paired comparison of two setups, and the items that flipped."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import pandas as pd

from kagreport._format import MISSING, p_value
from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, evaluation_from_stats
from kagreport.evaluation._report import mean_scores
from kagreport.evaluation._text import family_label, method_label
from kagreport.frames import comparison_frame
from kagreport.grading import ItemRow, Outcome, StatsReport
from kagreport.kag import read_result
from kagreport.widgets._base import ChartResult, View, build_chart
from kagreport.widgets._html import (
    RESPONSE_LIMIT,
    fmt_number,
    html_table,
    message_html,
    truncated_html,
)

__all__ = ["ComparisonView", "shared_items"]

_FLIP_COLUMNS = ["identifier", "candidate_score", "baseline_score", "flipped_to"]


def shared_items(
    candidate: AnswerEvaluation, baseline: AnswerEvaluation
) -> tuple[AnswerEvaluation, AnswerEvaluation]:
    """Both evaluations restricted to the item identifiers they share (metrics recomputed).

    A paired comparison needs the same items on both sides; setups of one run can
    differ by the questions one of them has no result file for.
    """
    ours = {item.identifier for item in candidate.items}
    theirs = {item.identifier for item in baseline.items}
    if ours == theirs:
        return candidate, baseline
    common = ours & theirs

    def restrict(evaluation: AnswerEvaluation) -> AnswerEvaluation:
        items = tuple(item for item in evaluation.items if item.identifier in common)
        return dataclasses.replace(evaluation, items=items, metrics=mean_scores(items))

    return restrict(candidate), restrict(baseline)


def _named(evaluation: AnswerEvaluation, name: str) -> AnswerEvaluation:
    """The evaluation labelled ``name`` (the comparison takes its labels from metadata)."""
    if evaluation.metadata.get("name") == name:
        return evaluation
    return dataclasses.replace(evaluation, metadata={**evaluation.metadata, "name": name})


class ComparisonView(View):
    """Pick a candidate and a baseline; see their paired comparison and the flipped items.

    The comparison is ``candidate.compare(baseline, n_resamples=..., seed=...,
    shared_only=True)`` (paired sign-flip test, bootstrap interval, Holm adjustment)
    over the items both hold; its table names each p-value's method and the message
    the Holm family. Evaluations are built once per setup and cached.

    Parameters
    ----------
    source : StatsReport or Mapping[str, AnswerEvaluation]
        A graded run (each setup becomes
        ``evaluation_from_stats(report, setup, answers=False)``; responses of the
        flipped items shown are read from their files), or named evaluations.
    n_resamples : int
        Budget of the test and the bootstrap (lower than ``compare``'s default of
        10,000, to stay interactive).
    seed : int
        Seed of the test and the bootstrap.
    threshold : float
        An item counts as right on a side when its score on :attr:`metric` is at
        least this (``correct`` is 0 or 1).
    max_flips : int
        Flipped items shown (all of them are in :attr:`flips`).
    max_chars : int
        Characters of a response shown (the full length is stated).

    Attributes
    ----------
    candidate, baseline, metric : ipywidgets.Dropdown
        The two setups, and the metric whose flips are listed.
    comparison : EvaluationComparison or None
        The current comparison (None when the two picks are the same or the
        comparison failed; :attr:`message` says why).
    frame : pandas.DataFrame
        :func:`kagreport.frames.comparison_frame` of it.
    flips : pandas.DataFrame
        Every flipped item: identifier, candidate_score, baseline_score and
        flipped_to (``"candidate"`` when only the candidate is right, else
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
        source: StatsReport | Mapping[str, AnswerEvaluation],
        *,
        n_resamples: int = 10000,
        seed: int = 0,
        threshold: float = 0.5,
        max_flips: int = 25,
        max_chars: int = RESPONSE_LIMIT,
    ) -> None:
        super().__init__()
        self.report: StatsReport | None
        if isinstance(source, StatsReport):
            self.report = source
            names = list(source.setup_names)
            self._cache: dict[str, AnswerEvaluation] = {}
            metrics = ["correct"]
        else:
            self.report = None
            self._cache = dict(source)
            names = list(source)
            metrics = list(dict.fromkeys(m for e in source.values() for m in e.metrics))
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
        default = "correct" if "correct" in metrics else (metrics[0] if metrics else None)
        self.metric = widgets.Dropdown(options=metrics, value=default, description="Flips on")
        self.comparison: EvaluationComparison | None = None
        self.frame = pd.DataFrame()
        self.flips = pd.DataFrame(columns=_FLIP_COLUMNS)
        self.dropped = 0
        self.chart: Any = None
        self.table_html = ""
        self.flips_html = ""
        self._chart = ChartResult()
        self.table_widget = widgets.HTML()
        self.chart_widget = widgets.HTML()
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

    def evaluation(self, name: str) -> AnswerEvaluation:
        """The evaluation of one setup (built on first use, then cached).

        Raises
        ------
        KeyError
            For an unknown name.
        """
        cached = self._cache.get(name)
        if cached is None:
            if self.report is None:
                raise KeyError(f"no evaluation named {name!r}")
            cached = self._cache[name] = evaluation_from_stats(self.report, name, answers=False)
        return cached

    def _clear(self, note: str, kind: str = "info") -> None:
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
        self.chart_widget.value = self._chart.html
        self.flips_widget.value = self.flips_html

    def _compare(self, a: str, b: str) -> None:
        try:
            full_a, full_b = _named(self.evaluation(a), a), _named(self.evaluation(b), b)
            candidate, baseline = shared_items(full_a, full_b)
            if not candidate.items:
                self._clear(f"{a} and {b} share no item.", kind="error")
                return
            # The public call every view makes (the site, the CLI, compare): identical
            # numbers, and the counts left out recorded in the comparison's metadata.
            comparison = full_a.compare(
                full_b, n_resamples=self.n_resamples, seed=self.seed, shared_only=True
            )
        except (ValueError, TypeError, KeyError) as exc:
            self._clear(f"Cannot compare {a} with {b}: {exc}", kind="error")
            return
        self.comparison = comparison
        self.dropped = len(full_a.items) + len(full_b.items) - 2 * len(candidate.items)
        self.frame = comparison_frame(comparison)
        note = f"{a} against {b} on {comparison.n_items:,} shared items"
        if self.dropped:
            plural = "item" if self.dropped == 1 else "items"
            note += f" ({self.dropped:,} {plural} held by only one of them left out)"
        self._notify(
            note + f"; {family_label(comparison)}; {self.n_resamples:,} resamples (Monte Carlo "
            f"only where no exact method applies), seed {self.seed}."
        )
        self.table_html = self._comparison_table()
        self._chart = build_chart("forest_plot", comparison)
        self.flips = self._flips(candidate, baseline)
        self.flips_html = self._flips_table(candidate, baseline)

    def _comparison_table(self) -> str:
        columns = [
            ("metric", "metric"),
            ("n_pairs", "pairs"),
            ("candidate_mean", "candidate"),
            ("baseline_mean", "baseline"),
            ("mean_difference", "difference"),
            ("ci", "95% interval"),
            ("p_value", "p"),
            ("p_value_holm", "p (Holm)"),
            ("significant", "significant"),
            ("test", "test"),
        ]
        metrics = self.comparison.metrics if self.comparison is not None else {}
        tests = {name: method_label(m) for name, m in metrics.items()}
        formatters = {
            "test": lambda r: tests.get(r["metric"], MISSING),
            "ci": lambda r: f"[{fmt_number(r['ci_low'], 4)}, {fmt_number(r['ci_high'], 4)}]",
            "p_value": lambda r: p_value(r["p_value"]),
            "p_value_holm": lambda r: p_value(r["p_value_holm"]),
            "mean_difference": lambda r: fmt_number(r["mean_difference"], 4),
        }
        return html_table(self.frame.to_dict("records"), columns, formatters=formatters)

    def _flips(self, candidate: AnswerEvaluation, baseline: AnswerEvaluation) -> pd.DataFrame:
        metric = self.metric.value
        rows = []
        theirs = {item.identifier: item for item in baseline.items}
        for item in candidate.items:
            other = theirs[item.identifier]
            x, y = item.scores.get(metric), other.scores.get(metric)
            if x is None or y is None or math.isnan(x) or math.isnan(y):
                continue
            right_a, right_b = x >= self.threshold, y >= self.threshold
            if right_a != right_b:
                rows.append(
                    {
                        "identifier": item.identifier,
                        "candidate_score": float(x),
                        "baseline_score": float(y),
                        "flipped_to": "candidate" if right_a else "baseline",
                    }
                )
        return pd.DataFrame(rows, columns=_FLIP_COLUMNS)

    def _response(self, item: Any, setup: str) -> str:
        """The response and error of one item as escaped HTML; read from its file for a run."""
        answer, error = item.answer, item.error
        if self.report is not None and self.report.items.results is not None:
            meta = item.metadata
            row = ItemRow(
                setup, str(meta.get("dataset")), str(meta.get("question")), Outcome.ERROR,
                None, None, None, None, None, None,
            )  # fmt: skip
            try:
                record = read_result(self.report.items.path(row))
                answer, error = record.result, record.error
            except Exception as exc:  # an unreadable file is shown, never raised
                answer, error = None, f"cannot read the result file: {exc}"
        text = truncated_html(answer, self.max_chars) if answer is not None else ""
        if error:
            text += message_html(f"error: {error[: self.max_chars]}", kind="error")
        return text or MISSING

    def _flips_table(self, candidate: AnswerEvaluation, baseline: AnswerEvaluation) -> str:
        total = len(self.flips)
        a, b = self.candidate.value, self.baseline.value
        metric = self.metric.value
        if not total:
            return message_html(f"No item flipped on {metric}.")
        won = int((self.flips["flipped_to"] == "candidate").sum())
        shown = self.flips.head(self.max_flips).to_dict("records")
        wanted = {row["identifier"] for row in shown}
        ours = {i.identifier: i for i in candidate.items if i.identifier in wanted}
        theirs = {i.identifier: i for i in baseline.items if i.identifier in wanted}
        for row in shown:
            row["candidate_response"] = self._response(ours[row["identifier"]], a)
            row["baseline_response"] = self._response(theirs[row["identifier"]], b)
        heading = (
            f"{total:,} items flipped on {metric} (threshold {self.threshold:g}): "
            f"{won:,} right only in {a}, {total - won:,} right only in {b}"
        )
        if total > len(shown):
            heading += f"; showing the first {len(shown):,} (all are in .flips)"
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
