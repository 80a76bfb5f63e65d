"""LaTeX tables for papers (booktabs), sized for a column or the page, proportions in percent.

Cells are formatted first and escaped afterwards, by ``latex_escape``, so a
percent sign or ampersand in a formatted cell is escaped too (pandas#61478,
#57980; PITFALLS.md B16). ``±`` becomes ``$\\pm$``, a minus sign ``$-$``.

A table fits one column of a two-column paper (``table``, ``\\footnotesize``: 221 pt
on A4, 229.5 pt on letter) or, with ``wide=True``, the page (``table*``, ``\\small``):
short headers with their units beneath, intervals on a second line in a smaller size,
long names cut after a hyphen or underscore, no gap at the outer edges.
tests/frames/test_latex.py compiles them with pdflatex and finds no overfull box.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from kagreport._errors import InputError
from kagreport._format import (
    MISSING,
    count,
    is_missing,
    is_proportion,
    number,
    p_value,
    printable,
    quantity,
    rank_range,
    signed,
)
from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, RetrievalEvaluation
from kagreport.evaluation._text import compared_proportion, family_label, method_label
from kagreport.frames._booktabs import Cell, Column, Sub, latex_escape, name_lines, render
from kagreport.frames._tables import (
    OVERALL,
    comparison_frame,
    evaluation_frame,
    metrics_frame,
    stats_frame,
)
from kagreport.runs import Run, SetupComparison, leaderboard
from kagreport.sources import as_run

__all__ = ["latex_escape", "to_latex"]

#: Characters of a name per line: in one column, and across the page.
_NAME_CHARS = {False: 12, True: 22}
_DAGGER = r"$^{\dagger}$"


def _names(name: Any, wide: bool) -> Cell:
    # Escaped controls first, so that the lines are cut to their printed length.
    shown = printable(str(name), bidi=True)
    return tuple(latex_escape(line) for line in name_lines(shown, _NAME_CHARS[wide]))


def _num(value: Any, digits: int) -> str:
    """A number cell: floats with ``digits`` decimals, a real minus; integers with commas."""
    if is_missing(value):
        return latex_escape(MISSING)
    if isinstance(value, float | np.floating):
        return latex_escape(signed(value, digits))
    return latex_escape(number(value, digits, grouping=True))


def _quantity(value: Any) -> str:
    """A time, size or count of graph elements: three significant digits, the integer part
    in full (``kagreport._format.quantity``, as on the site); the unit is in the header."""
    return latex_escape(quantity(value))


def _pct(value: Any, digits: int) -> str:
    """A proportion in percent, without a ``%`` (the header says ``(%)``)."""
    return latex_escape(MISSING) if is_missing(value) else latex_escape(signed(100 * value, digits))


def _interval(low: Any, high: Any, digits: int, scale: float = 100.0) -> Sub:
    """The ``[low, high]`` line beneath a value (empty when a bound is undefined)."""
    if is_missing(low) or is_missing(high):
        return Sub("")
    bounds = ", ".join(signed(scale * float(x), digits) for x in (low, high))
    return Sub(latex_escape(f"[{bounds}]"))


def _stats(report: Run, digits: int, wide: bool) -> tuple[list[Column], list[Any]]:
    """kag's metrics per setup. In one column: accuracy with its interval, coverage, items
    and the two mean times (precision is accuracy over coverage); across the page also
    precision and coverage with their intervals, errors, context length and graph
    elements where recorded."""
    frame = stats_frame(report, per_dataset=False)
    shown = ("accuracy", "precision", "coverage") if wide else ("accuracy", "coverage")
    titles = {"accuracy": "Acc.", "precision": "Prec.", "coverage": "Cov."}
    bounded = set(shown) if wide else {"accuracy"}
    columns = [Column(("Setup",), "l"), *(Column((titles[n], r"(\%)")) for n in shown)]
    columns += [Column(("Items",) if wide else ("$n$",))]
    costs: list[tuple[str, Column]] = [
        ("avg_generation_secs", Column(("Gen.", "(s)"))),
        ("avg_retrieval_secs", Column(("Ret.", "(s)"))),
    ]
    if wide:
        columns.append(Column(("Err.",)))
        # Context length and graph elements where some setup records them.
        costs += [
            (name, column)
            for name, column in (
                ("avg_context_length", Column(("Context", "(B)"))),
                ("avg_graph_elements", Column(("Graph", "(el.)"))),
            )
            if frame[name].notna().any()
        ]
    columns += [column for _, column in costs]
    rows = []
    for record in frame.to_dict("records"):
        row: list[Cell] = [_names(record["setup"], wide)]
        for name in shown:
            value = _pct(record[name], digits)
            if name in bounded:
                row.append(
                    (value, _interval(record[f"{name}_low"], record[f"{name}_high"], digits))
                )
            else:
                row.append((value,))
        row.append((_num(int(record["total"]), 0),))
        if wide:
            row.append((_num(int(record["errors"]), 0),))
        row += [(_quantity(float(record[name])),) for name, _ in costs]
        rows.append(row)
    assert OVERALL  # overall rows only (per_dataset=False)
    return columns, rows


def _comparison(
    comparison: EvaluationComparison, digits: int, alpha: float, wide: bool
) -> tuple[list[Column], list[Any]]:
    frame = comparison_frame(comparison)
    kinds = [compared_proportion(comparison, str(m)) for m in frame.get("metric", [])]
    # Units in the header when every metric has the same; else beside each number.
    same = len(set(kinds)) <= 1
    share = bool(kinds) and kinds[0] and same
    mean_unit, diff_unit = (r"(\%)", "(pp)") if share else ("", "")
    columns = [
        Column(("Metric",), "l"),
        Column(("$n$",)),
        Column(("Cand.", mean_unit) if mean_unit else ("Cand.",)),
        Column(("Base.", mean_unit) if mean_unit else ("Base.",)),
        Column(("Diff.", diff_unit) if diff_unit else ("Diff.",)),
        *([Column(("$p$",))] if wide else []),
        Column((r"$p_{\mathrm{Holm}}$",)),
    ]
    rows = []
    for record, proportion in zip(frame.to_dict("records"), kinds, strict=True):
        places = digits if proportion else digits + 2
        scale = 100.0 if proportion else 1.0
        units = ("", "") if same else ((r"\%", " pp") if proportion else ("", ""))

        def mean(value: Any, unit: str = units[0], scale: float = scale, d: int = places) -> str:
            return latex_escape(MISSING) if is_missing(value) else _num(scale * value, d) + unit

        difference = latex_escape(MISSING)
        if not is_missing(record["mean_difference"]):
            difference = latex_escape(signed(scale * record["mean_difference"], places, plus=True))
            difference += units[1]
        holm = record["p_value_holm"]  # None or NaN for a metric outside Holm's family
        mark = _DAGGER if not is_missing(holm) and float(holm) < alpha else ""
        rows.append(
            [
                _names(record["metric"], wide),
                (_num(int(record["n_pairs"]), 0),),
                (mean(record["candidate_mean"]),),
                (mean(record["baseline_mean"]),),
                (difference, _interval(record["ci_low"], record["ci_high"], places, scale)),
                *([(latex_escape(p_value(record["p_value"])),)] if wide else []),
                (latex_escape(p_value(record["p_value_holm"])) + mark,),
            ]
        )
    return columns, rows


def _breakable(name: str) -> str:
    """A name in running text: escaped, and breakable after ``_`` and ``/``."""
    return latex_escape(name).replace(r"\_", r"\_\allowbreak{}").replace("/", r"/\allowbreak{}")


def _comparison_note(
    comparison: EvaluationComparison, alpha: float, family: str | None = None, wide: bool = False
) -> str:
    """The footnote of a comparison table: who is compared, how p was computed, Holm's family."""
    methods = list(dict.fromkeys(method_label(m) for m in comparison.metrics.values()))
    methods = [m for m in methods if m != MISSING] or [MISSING]
    family = family_label(comparison) if family is None else family
    confidence = comparison.settings.get("confidence", 0.95)
    level = latex_escape(f"{100 * float(confidence):g}")
    # A lone comparison's table draws its verdicts' intervals (comparison_frame), as a
    # run's comparison carries them: Holm-adjusted either way.
    kind = (
        f"Holm-adjusted {level}\\% interval (test-based: it excludes 0 exactly when "
        f"$p_{{\\mathrm{{Holm}}}} < {alpha}$"
        + (
            "; unadjusted, on $p$, for a metric outside the family)"
            if any(
                str(m) not in (comparison.family or ()) and str(m) not in comparison.same_as
                for m in comparison.metrics
            )
            and not str(comparison.settings.get("interval", "")).startswith("test-based")
            else ")"
        )
    )
    return (
        f"Cand.: {_breakable(comparison.candidate)}; Base.: {_breakable(comparison.baseline)}; "
        f"$n$: paired items; Diff.: Cand.\\ $-$ Base.\\ with its {kind}. "
        f"{'$p$, ' if wide else ''}$p_{{\\mathrm{{Holm}}}}$: paired sign-flip test, "
        f"{latex_escape('; '.join(methods))}. "
        f"$^{{\\dagger}}$ Holm-adjusted $p < {alpha}$; {latex_escape(family)}."
    )


def _mean_cell(name: str, mean: Any, values: Iterable[Any], digits: int) -> str:
    if is_proportion(name, values):
        return _pct(mean, digits) + ("" if is_missing(mean) else r"\%")
    return _num(float(mean), digits + 2)


def _evaluation(
    evaluation: AnswerEvaluation | RetrievalEvaluation, digits: int, wide: bool
) -> tuple[list[Column], list[Any]]:
    frame = metrics_frame(evaluation)
    items = evaluation_frame(evaluation)
    columns = [Column(("Metric",), "l"), Column(("Mean",)), Column(("Items",))]
    rows = [
        [
            _names(record["metric"], wide),
            (_mean_cell(record["metric"], record["mean"], items[record["metric"]], digits),),
            (_num(int(record["items"]), 0),),
        ]
        for record in frame.to_dict("records")
    ]
    return columns, rows


def _run_table(
    source: Any, metric: str | None, digits: int, wide: bool
) -> tuple[list[Column], list[Any]]:
    """The table of a run (anything :func:`kagreport.sources.as_run` takes): kag's
    metrics when every row has an outcome and no ``metric`` is asked for, else the
    leaderboard of ``metric``."""
    try:
        run = as_run(source)
    except InputError:
        raise TypeError(f"cannot make a LaTeX table from {type(source).__name__}") from None
    if not run.metrics:
        raise TypeError("cannot make a LaTeX table from a Run without a metric")
    if metric is None and bool((run.outcome >= 0).all()):
        return _stats(run, digits, wide)
    chosen = metric or run.headline
    return _leaderboard(run, chosen, digits, wide)


def _leaderboard(run: Run, metric: str, digits: int, wide: bool) -> tuple[list[Column], list[Any]]:
    proportion = is_proportion(metric, run.metrics.get(metric, ()))
    head = _names(metric, wide)
    columns = [
        Column(("Setup",), "l"),
        Column((*head, r"(\%)") if proportion else head),
        Column(("Items",)),
        Column(("Errors",)),
    ]
    board = leaderboard(run, metric)
    ranked = any(row.rank_low is not None for row in board)
    if ranked:  # a 0/1 metric: the ranks the data allow and the groups of ties
        columns[1:1] = [Column(("Ranks",)), Column(("Group",))]
    rows = []
    for row in board:
        if proportion:
            value: Cell = (_pct(row.mean, digits), _interval(row.low, row.high, digits))
        else:  # a score, with its interval where the leaderboard gives one
            places = digits + 2
            value = (_num(float(row.mean), places), _interval(row.low, row.high, places, 1.0))
        cells: list[Any] = [
            _names(row.system, wide),
            value,
            (_num(row.n_defined, 0),),
            (_num(row.n_errors, 0),),
        ]
        if ranked:
            ranks = latex_escape(rank_range(row.rank_low, row.rank_high))  # 1--3: an en dash
            group = latex_escape(rank_range(row.tie_group, row.tie_group))
            cells[1:1] = [(ranks,), (group,)]
        rows.append(cells)
    return columns, rows


def _kind(frame: pd.DataFrame, column: Any) -> str:
    """How a frame's column shows: ``"percent"`` (a proportion by name whose values all lie
    in [0, 1]: a count such as kag's ``correct`` never does), ``"p"`` (a p-value),
    ``"count"`` (integers), ``"quantity"`` (other numbers: times, sizes, scores) or
    ``"text"``. ``<name>_low``/``<name>_high`` take the kind of ``<name>`` when the frame has it."""
    name = str(column)
    base = name.rpartition("_")[0] if name.endswith(("_low", "_high")) else ""
    if base and base in frame.columns:
        return _kind(frame, base)
    values = frame[column]
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        return "text"
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    if is_proportion(base or name) and bool(numbers.between(0.0, 1.0).all()):
        return "percent"
    if name.startswith("p_value"):
        return "p"
    return "count" if pd.api.types.is_integer_dtype(values) else "quantity"


def _cell(value: Any, kind: str, digits: int) -> str:
    if isinstance(value, str) or kind == "text":
        return latex_escape(number(value, digits))
    if is_missing(value):
        return latex_escape(MISSING)
    if kind == "percent":
        return _pct(value, digits)
    if kind == "p":
        return latex_escape(p_value(value))
    return latex_escape(count(value) if kind == "count" else quantity(value))


def _frame(frame: pd.DataFrame, digits: int) -> tuple[list[Column], list[Any]]:
    """A DataFrame as is, each column by its kind (:func:`_kind`): proportions in percent
    with ``digits`` decimals, ``<name>_low``/``<name>_high`` beneath ``<name>`` as its
    interval (in its unit), counts in full (:func:`kagreport._format.count`), other numbers
    with three significant digits (``kagreport._format.quantity``, as on the site)."""
    kinds = {c: _kind(frame, c) for c in frame.columns}
    # An interval joins its value when both bounds are there.
    bounded = {
        c
        for c in frame.columns
        if kinds[c] != "text" and {f"{c}_low", f"{c}_high"} <= set(map(str, frame.columns))
    }
    joined = {f"{c}_{end}" for c in bounded for end in ("low", "high")}
    shown = [c for c in frame.columns if str(c) not in joined]
    first = "" if frame.index.name is None else latex_escape(str(frame.index.name))
    columns = [Column((first,), "l")]
    for c in shown:
        text = latex_escape(str(c))
        columns.append(Column((text, r"(\%)") if kinds[c] == "percent" else (text,)))
    rows = []
    for index, record in zip(frame.index, frame.to_dict("records"), strict=True):
        cells: list[Cell] = [(latex_escape(str(index)),)]
        for c in shown:
            value = _cell(record[c], kinds[c], digits)
            if c in bounded:
                low, high = record[f"{c}_low"], record[f"{c}_high"]
                cells.append((value, _bounds(low, high, kinds[c], digits)))
            else:
                cells.append((value,))
        rows.append(cells)
    return columns, rows


def _bounds(low: Any, high: Any, kind: str, digits: int) -> Sub:
    """The ``[low, high]`` line beneath a frame's value, in the value's unit."""
    if is_missing(low) or is_missing(high):
        return Sub("")
    return Sub("[" + ", ".join(_cell(x, kind, digits) for x in (low, high)) + "]")


def to_latex(
    table: pd.DataFrame
    | Run
    | EvaluationComparison
    | SetupComparison
    | AnswerEvaluation
    | RetrievalEvaluation
    | Any,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = 1,
    alpha: float = 0.05,
    wide: bool = False,
    escape_caption: bool = True,
    metric: str | None = None,
) -> str:
    """A booktabs LaTeX table, ready for ``\\input`` in a paper.

    - A :class:`~kagreport.runs.Run` with outcomes (or anything
      :func:`kagreport.sources.as_run` takes, such as a ``StatsReport``): one row per
      setup, accuracy / precision / coverage in % with their Wilson 95% intervals
      beneath, items, mean generation and retrieval seconds (:func:`stats_frame`; a run's
      unknown costs as ``---``). ``wide`` adds errors, and the mean context length and
      graph elements where recorded.
    - A :class:`~kagreport.runs.Run` without outcomes, or with ``metric``: its
      leaderboard (:func:`kagreport.runs.leaderboard`): the mean of ``metric`` per
      setup (in % with its Wilson interval for a proportion), items defined, errors;
      for a 0/1 metric also the ranks each setup may hold (``1--3``) and its tie group
      (``LeaderboardRow``).
    - :class:`EvaluationComparison`: one row per metric, both means, the mean difference
      (percentage points for a proportion) with its bootstrap interval beneath, p and
      Holm-adjusted p; ``†`` marks Holm p < ``alpha``; a note names both sides.
    - ``SetupComparison``: the same, Holm-adjusted across the
      run's family, and its interval the Holm-adjusted one that agrees with it.
    - :class:`AnswerEvaluation` / :class:`RetrievalEvaluation`: metric, mean (in % for a
      proportion: by its name, or every per-item value 0 or 1), items.
    - A DataFrame: as is, each column by its kind: a proportion (by its name, such as
      ``accuracy``) whose values lie in [0, 1] in %,
      ``<name>_low``/``<name>_high`` as the interval beneath ``<name>`` in its unit,
      integers as counts (``1,105``), p-values as p, other numbers with three significant
      digits.

    Parameters
    ----------
    digits : int
        Decimals of a percentage (other means get two more).
    wide : bool
        ``table*`` in ``\\small`` across both columns of a two-column paper (fits
        ``\\textwidth``); default ``table`` in ``\\footnotesize``, fitting
        ``\\columnwidth``.
    escape_caption : bool
        Escape the caption (default); ``False`` passes it as LaTeX (``$\\alpha$``,
        ``\\cite{...}``).
    metric : str, optional
        For a run: rank by this metric (its leaderboard) instead of kag's metrics.

    Returns
    -------
    str
        With neither caption nor label, a bare ``tabular`` in a group setting its font size
        (for your own float). Every header, index label and cell is escaped after
        formatting. Needs ``\\usepackage{booktabs}``.

    Raises
    ------
    TypeError
        For any other object, a run without metrics, or ``metric`` with anything but a run.
    KagreportError
        For a ``metric`` the run does not have.
    """
    note = None
    known = (SetupComparison, EvaluationComparison, AnswerEvaluation, RetrievalEvaluation)
    if metric is not None and isinstance(table, (*known, pd.DataFrame)):
        raise TypeError(f"`metric` ranks a Run's systems; got a {type(table).__name__}")
    if isinstance(table, SetupComparison):
        family = f"Holm across the run's {table.family_size} hypotheses (pairs x metrics)"
        comparison = table.comparison
        columns, rows = _comparison(comparison, digits, alpha, wide)
        note = _comparison_note(comparison, alpha, family, wide)
    elif isinstance(table, EvaluationComparison):
        columns, rows = _comparison(table, digits, alpha, wide)
        note = _comparison_note(table, alpha, wide=wide)
    elif isinstance(table, AnswerEvaluation | RetrievalEvaluation):
        columns, rows = _evaluation(table, digits, wide)
    elif isinstance(table, pd.DataFrame):
        columns, rows = _frame(table, digits)
    else:
        columns, rows = _run_table(table, metric, digits, wide)
    if caption is not None and escape_caption:
        caption = latex_escape(caption)
    return render(columns, rows, caption=caption, label=label, wide=wide, note=note)
