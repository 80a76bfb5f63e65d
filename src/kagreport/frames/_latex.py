"""LaTeX tables for papers (booktabs), with intervals and significance marks.

Cells are formatted first and escaped afterwards, by :func:`latex_escape`, so a
percent sign or ampersand in a formatted cell is escaped too (pandas#61478,
#57980; PITFALLS.md B16). ``±`` becomes ``$\\pm$``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from kagreport._format import MISSING, fixed, is_missing, p_value
from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, RetrievalEvaluation
from kagreport.evaluation._text import family_label, method_label
from kagreport.frames._tables import OVERALL, comparison_frame, metrics_frame, stats_frame
from kagreport.grading import StatsReport
from kagreport.runs import Run, SetupComparison

__all__ = ["latex_escape", "to_latex"]

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "±": r"$\pm$",
    "–": "--",
    "—": "---",
    "−": r"$-$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
}


def latex_escape(text: str) -> str:
    """Escape text for LaTeX (the ten special characters, and ``±`` as ``$\\pm$``)."""
    return "".join(_SPECIAL.get(ch, ch) for ch in str(text))


def _interval(value: float, low: float, high: float, digits: int, scale: float = 100.0) -> str:
    if is_missing(value):
        return MISSING
    if is_missing(low) or is_missing(high):
        return f"{value * scale:.{digits}f}"
    return f"{value * scale:.{digits}f} [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


def _number(value: Any, digits: int) -> str:
    if is_missing(value):
        return MISSING
    return fixed(value, digits) if isinstance(value, float) else str(value)


def _stats_table(report: StatsReport | Run, digits: int) -> pd.DataFrame:
    frame = stats_frame(report, per_dataset=False)
    rows = {}
    for row in frame.itertuples(index=False):
        r: Any = row
        rows[r.setup] = {
            "Accuracy (%)": _interval(r.accuracy, r.accuracy_low, r.accuracy_high, digits),
            "Precision (%)": _interval(r.precision, r.precision_low, r.precision_high, digits),
            "Coverage (%)": _interval(r.coverage, r.coverage_low, r.coverage_high, digits),
            "Items": str(r.total),
            "Gen. (s)": _number(r.avg_generation_secs, 2),
            "Ret. (s)": _number(r.avg_retrieval_secs, 2),
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "setup"
    assert OVERALL  # overall rows only
    return table


def _comparison_table(comparison: EvaluationComparison, digits: int, alpha: float) -> pd.DataFrame:
    frame = comparison_frame(comparison)
    rows = {}
    for row in frame.itertuples(index=False):
        r: Any = row
        mark = r"$^{\dagger}$" if r.p_value_holm < alpha else ""
        rows[r.metric] = {
            "Pairs": str(r.n_pairs),
            comparison.candidate: _number(r.candidate_mean, digits + 2),
            comparison.baseline: _number(r.baseline_mean, digits + 2),
            "Difference [95% CI]": f"{_number(r.mean_difference, digits + 2)} "
            f"[{_number(r.ci_low, digits + 2)}, {_number(r.ci_high, digits + 2)}]",
            "p": p_value(r.p_value),
            "p (Holm)": p_value(r.p_value_holm) + "\0" + mark,
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "metric"
    return table


def _comparison_note(
    comparison: EvaluationComparison, alpha: float, family: str | None = None
) -> str:
    """The footnote of a comparison table: how p was computed, and Holm's family."""
    methods = list(dict.fromkeys(method_label(m) for m in comparison.metrics.values()))
    methods = [m for m in methods if m != MISSING] or [MISSING]
    family = family_label(comparison) if family is None else family
    return (
        f"p: paired sign-flip test, {latex_escape('; '.join(methods))}. "
        f"$^{{\\dagger}}$ Holm-adjusted $p < {alpha}$; {latex_escape(family)}."
    )


def to_latex(
    table: pd.DataFrame
    | StatsReport
    | Run
    | EvaluationComparison
    | SetupComparison
    | AnswerEvaluation
    | RetrievalEvaluation,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = 1,
    alpha: float = 0.05,
) -> str:
    """A booktabs LaTeX table, ready for ``\\input`` in a paper.

    - :class:`StatsReport` or :class:`~kagreport.runs.Run`: one row per setup,
      accuracy / precision / coverage in % with their Wilson 95% intervals, items, mean
      generation and retrieval seconds (:func:`stats_frame`; a run's unknown costs as
      ``-``).
    - :class:`EvaluationComparison`: one row per metric, both means, the mean
      difference with its bootstrap interval, p and Holm-adjusted p; ``†`` marks
      Holm p < ``alpha``.
    - :class:`~kagreport.runs.SetupComparison`: the same, Holm-adjusted across the
      run's family (:meth:`~kagreport.runs.SetupComparison.family_comparison`).
    - :class:`AnswerEvaluation` / :class:`RetrievalEvaluation`: metric, mean, items.
    - A DataFrame: as is, floats with ``digits`` decimals.

    Every header, index label and cell is escaped after formatting.
    Needs ``\\usepackage{booktabs}``.
    """
    marked = False
    family = None
    if isinstance(table, SetupComparison):
        family = f"Holm across the run's {table.family_size} hypotheses (pairs x metrics)"
        table = table.family_comparison()
    if isinstance(table, StatsReport | Run):
        frame = _stats_table(table, digits)
    elif isinstance(table, EvaluationComparison):
        frame = _comparison_table(table, digits, alpha)
        marked = True
    elif isinstance(table, AnswerEvaluation | RetrievalEvaluation):
        frame = metrics_frame(table).set_index("metric")
        frame["mean"] = [_number(v, digits + 2) for v in frame["mean"]]
    elif isinstance(table, pd.DataFrame):
        frame = table.copy()
    else:
        raise TypeError(f"cannot make a LaTeX table from {type(table).__name__}")

    def cell(value: Any) -> str:
        # After a NUL comes LaTeX already written (a significance mark).
        text = _number(value, digits)
        plain, _, raw = text.partition("\0")
        return latex_escape(plain) + raw

    body = frame.apply(lambda column: column.map(cell))
    body.columns = [latex_escape(str(c)) for c in frame.columns]
    # The index becomes the first column, headed by its name: one header row, not two.
    first = "" if frame.index.name is None else latex_escape(str(frame.index.name))
    body.insert(0, first, [latex_escape(str(i)) for i in frame.index])
    styler = body.style.hide(axis="index")
    latex = str(
        styler.to_latex(
            caption=None if caption is None else latex_escape(caption),
            label=label,
            hrules=True,
            column_format="l" + "r" * (len(body.columns) - 1),
            position_float="centering" if caption or label else None,
            environment="table" if caption or label else None,
        )
    )
    if marked:
        assert isinstance(table, EvaluationComparison)
        note = f"\\par\\smallskip{{\\footnotesize {_comparison_note(table, alpha, family)}}}\n"
        at = latex.find("\\end{table}")
        latex = latex[:at] + note + latex[at:] if at >= 0 else latex + note
    return latex
