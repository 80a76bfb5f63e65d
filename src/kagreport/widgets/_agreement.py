""":class:`AgreementView`: how far an evaluation's judges agree, criterion by criterion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import pandas as pd

from kagreport._format import score_interval
from kagreport.evaluation import AnswerEvaluation
from kagreport.frames import agreement_frame
from kagreport.widgets._base import ChartPane, ChartResult, View, build_chart
from kagreport.widgets._html import html_table, message_html

__all__ = ["AgreementView"]


class AgreementView(View):
    """Krippendorff's alpha between an evaluation's judges, and pairwise for one criterion.

    Parameters
    ----------
    evaluation : AnswerEvaluation
        An evaluation with at least one judge criterion scored by several judges
        (``evaluation.agreement`` not empty), e.g.
        :func:`kagreport.examples.llmbar_natural`.
    criterion : str, optional
        The initial criterion; default the first of ``evaluation.agreement``.

    Attributes
    ----------
    criterion : ipywidgets.Dropdown
        The criterion of the pairwise chart.
    frame : pandas.DataFrame
        :func:`kagreport.frames.agreement_frame`: alpha, its interval and the number
        of judges per criterion.
    chart : altair chart or None
        ``kagreport.charts.agreement_chart`` (every criterion; built once).
    pairwise_chart : altair chart or None
        ``kagreport.charts.pairwise_agreement_chart`` for the current criterion
        (built once per criterion).
    table_html : str
        The alpha table, escaped HTML; the current criterion is marked.
    table_widget, message : ipywidgets.HTML
    chart_widget, pairwise_widget : ChartPane
        The charts, live and offline; each ``value`` is the inline SVG.

    Notes
    -----
    Static fallback (:meth:`to_html`): the criterion, the alpha table and both
    charts as inline SVG.
    """

    title = "kagreport AgreementView"

    def __init__(self, evaluation: AnswerEvaluation, *, criterion: str | None = None) -> None:
        super().__init__()
        self.evaluation = evaluation
        criteria = list(evaluation.agreement)
        if criterion is not None and criterion not in criteria:
            known = ", ".join(criteria) or "none"
            raise ValueError(f"no agreement for criterion {criterion!r} (criteria: {known})")
        self.criterion = widgets.Dropdown(
            options=criteria,
            value=criterion if criterion is not None else (criteria[0] if criteria else None),
            description="Criterion",
        )
        self.frame: pd.DataFrame = agreement_frame(evaluation)
        self.table_widget = widgets.HTML()
        self.chart_widget = ChartPane()
        self.pairwise_widget = ChartPane()
        self.table_html = ""
        self._pairwise: dict[str, ChartResult] = {}
        self._chart = build_chart("agreement_chart", evaluation) if criteria else ChartResult()
        self.chart: Any = self._chart.chart
        self.pairwise_chart: Any = None
        self.criterion.observe(self._changed, names="value")
        self.children = [
            self.criterion,
            self.message,
            self.table_widget,
            widgets.HBox([self.chart_widget, self.pairwise_widget]),
        ]
        self.chart_widget.show(self._chart)
        self.refresh()

    def _changed(self, change: Mapping[str, Any]) -> None:
        self.refresh()

    def _pairwise_for(self, criterion: str) -> ChartResult:
        cached = self._pairwise.get(criterion)
        if cached is None:
            cached = self._pairwise[criterion] = build_chart(
                "pairwise_agreement_chart", self.evaluation, criterion
            )
        return cached

    def refresh(self) -> None:
        """Redraw the table mark and the pairwise chart for the current criterion."""
        criterion = self.criterion.value
        if criterion is None:
            self._notify(
                "This evaluation has no judge agreement: no criterion is scored by two or "
                "more judges."
            )
            self.pairwise_chart = None
            self.table_html = ""
            self.table_widget.value = ""
            self.pairwise_widget.clear()
            return
        row = self.frame[self.frame["criterion"] == criterion]
        judges = int(row["judges"].iloc[0]) if len(row) else 0
        note = self.evaluation.agreement_note(criterion)
        self._notify(
            f"{criterion}: Krippendorff's alpha between {judges} judges, with its bootstrap "
            "interval; the pairwise chart shows alpha for each pair of judges."
            + (f" {note[0].upper()}{note[1:]}." if note else "")
        )
        result = self._pairwise_for(criterion)
        self.pairwise_chart = result.chart
        self.table_html = self._table(criterion)
        self.table_widget.value = self.table_html
        self.pairwise_widget.show(result)

    def _table(self, current: str) -> str:
        columns = [
            ("mark", ""),
            ("criterion", "criterion"),
            ("alpha", "alpha [interval]"),
            ("judges", "judges"),
        ]
        formatters = {
            "mark": lambda r: "▶" if r["criterion"] == current else "",
            "alpha": lambda r: score_interval(r["alpha"], r["low"], r["high"]),
        }
        records = self.frame.to_dict("records")
        if not records:
            return message_html("No criterion.")
        notes = {r["criterion"]: self.evaluation.agreement_note(r["criterion"]) for r in records}
        if any(notes.values()):
            # Why an alpha or interval is missing, next to the gap it explains.
            columns.append(("note", "note"))
            formatters["note"] = lambda r: notes[r["criterion"]]
        return html_table(records, columns, formatters=formatters)

    def _controls_state(self) -> dict[str, str]:
        return {"criterion": str(self.criterion.value)}

    def _sections(self) -> list[str]:
        pairwise = self._pairwise.get(self.criterion.value) if self.criterion.value else None
        return [self.table_html, self._chart.html, "" if pairwise is None else pairwise.html]
