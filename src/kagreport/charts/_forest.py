"""The forest plot of a paired comparison: one row per metric."""

from __future__ import annotations

from typing import Any, Final

import altair as alt
import numpy as np
import pandas as pd

from kagreport._errors import KagreportError
from kagreport._format import (
    NAME_LIMIT,
    count,
    difference_interval,
    is_proportion,
    isolated,
    p_value,
    pair_label,
    score,
)
from kagreport._format import percent as percent_text
from kagreport.charts._accuracy import RING
from kagreport.charts._data import (
    drawn_names,
    inline_data,
    require_columns,
    rows_height,
    title_params,
)
from kagreport.charts._names import axis_names
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme
from kagreport.evaluation import EvaluationComparison
from kagreport.frames import comparison_frame
from kagreport.runs import SetupComparison, SetupComparisons

Comparisons = EvaluationComparison | SetupComparison | SetupComparisons | pd.DataFrame

__all__ = ["forest_data", "forest_plot"]

_COLUMNS: Final = ("metric", "mean_difference", "ci_low", "ci_high", "p_value_holm", "n_pairs")
_COLOUR: Final = "#4c78a8"


def _labels(alpha: float) -> tuple[str, str]:
    """The two values of the forest plot's ``status`` field at level ``alpha``."""
    return (f"Holm p < {alpha:g}", "not significant")


def _pairs_frame(comparisons: SetupComparisons, metric: str | None) -> pd.DataFrame:
    """One row per pair of a run's comparisons, on one metric, with the run-level Holm p."""
    name = comparisons.metrics[0] if metric is None and comparisons.metrics else metric
    if name not in comparisons.metrics:
        raise KagreportError(
            f"the comparisons have no metric {name!r}; metrics: "
            f"{', '.join(comparisons.metrics) or 'none'}"
        )
    rows = []
    drawn = drawn_names(n for c in comparisons.comparisons for n in (c.candidate, c.baseline))
    for c in comparisons.comparisons:
        row: dict[str, Any] = {"candidate": drawn[c.candidate], "baseline": drawn[c.baseline]}
        row |= c.comparison.metrics[name].to_dict()
        # A pair against the one baseline is named by its candidate.
        row["metric"] = (
            pair_label(c.candidate, c.baseline) if comparisons.pairs == "all-pairs" else c.candidate
        )
        rows.append(row)
    return pd.DataFrame(rows)


def forest_data(
    comparison_or_frame: Comparisons, *, alpha: float = 0.05, metric: str | None = None
) -> pd.DataFrame:
    """The table :func:`forest_plot` draws: one row per metric (or per pair).

    ``comparison_or_frame`` is an :class:`EvaluationComparison`, a
    ``kagreport.runs.SetupComparison`` (its rows carry the Holm adjustment across the
    run's family and the Holm-adjusted intervals that agree with it), a
    ``kagreport.runs.SetupComparisons`` (one row per pair on ``metric``, default the
    first compared, named by the candidate against one baseline or ``"a − b"`` for all
    pairs, with the run-level Holm p), or a frame from
    :func:`kagreport.frames.comparison_frame`.

    Columns: metric (the row's label as charts draw it), mean_difference, ci_low, ci_high
    (candidate - baseline, in the metric's unit), p_value, p_value_holm, n_pairs,
    candidate_mean, baseline_mean (NaN where absent), significant (Holm-adjusted p below
    ``alpha``; never for NaN), status (its legend label), defined (the difference is a number),
    proportion (the metric is a proportion, decided as the tables decide:
    ``kagreport.evaluation._text.compared_proportion``, by its name or its 0/1 items on both
    sides; a frame's own ``proportion`` column, else its name), test (how the p-value was
    computed: "exact (enumeration)", "exact (lattice)", "Monte Carlo, N resamples"; "-" where
    unknown), alone (a lone comparison's metric outside Holm's family: judged, point and bar,
    on its unadjusted p-value). A lone :class:`EvaluationComparison`'s intervals are its
    verdicts' (:func:`kagreport.frames.comparison_frame`), at the family's Holm level.

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 1], or a frame lacks the needed columns.
    KagreportError
        If ``metric`` is not a metric of the comparisons.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha <= 1:
        raise ValueError(f"`alpha` must be in (0, 1], not {alpha!r}")
    if isinstance(comparison_or_frame, SetupComparisons):
        frame = _pairs_frame(comparison_or_frame, metric)
    elif isinstance(comparison_or_frame, EvaluationComparison | SetupComparison):
        frame = comparison_frame(comparison_or_frame)
    elif isinstance(comparison_or_frame, pd.DataFrame):
        frame = comparison_or_frame
    else:
        raise TypeError(
            "expected an EvaluationComparison, a SetupComparison(s) or a DataFrame from "
            f"kagreport.frames.comparison_frame, not {type(comparison_or_frame).__name__}"
        )
    if frame.empty:
        frame = pd.DataFrame(columns=list(_COLUMNS))
    require_columns(frame, _COLUMNS, "the comparison frame")

    def numbers(name: str) -> Any:
        if name in frame.columns:
            return pd.to_numeric(frame[name], errors="coerce").astype(float).to_numpy()
        return np.full(len(frame), np.nan)

    holm = numbers("p_value_holm")
    # A lone comparison's metric outside Holm's family is judged on its own p-value, as
    # its interval (comparison_frame) is: the filled point agrees with the bar.
    judged = holm
    alone_rows = np.zeros(len(frame), dtype=bool)
    if "interval" in frame.columns:
        alone_rows = frame["interval"].astype(str).str.startswith("unadjusted").to_numpy()
        judged = np.where(alone_rows & np.isnan(holm), numbers("p_value"), holm)
    significant = np.nan_to_num(judged, nan=1.0) < alpha
    labels = _labels(alpha)
    difference = numbers("mean_difference")
    drawn = drawn_names(frame["metric"].astype(str))
    return pd.DataFrame(
        {
            "metric": [drawn[m] for m in frame["metric"].astype(str)],
            "mean_difference": difference,
            "ci_low": numbers("ci_low"),
            "ci_high": numbers("ci_high"),
            "p_value": numbers("p_value"),
            "p_value_holm": holm,
            "n_pairs": numbers("n_pairs"),
            "candidate_mean": numbers("candidate_mean"),
            "baseline_mean": numbers("baseline_mean"),
            "significant": significant,
            "status": np.where(significant, labels[0], labels[1]),
            "defined": np.isfinite(difference),
            "proportion": _proportion_flags(comparison_or_frame, frame, metric),
            "test": _tests(frame),
            "alone": alone_rows,
        }
    )


def _tests(frame: pd.DataFrame) -> Any:
    """The ``test`` column: :func:`~kagreport.evaluation._text.method_label` per row."""
    from types import SimpleNamespace

    from kagreport.evaluation._text import method_label

    if "method" not in frame.columns or "exact" not in frame.columns:
        return np.full(len(frame), "-", dtype=object)
    return np.array(
        [
            method_label(
                SimpleNamespace(
                    method=r.get("method") or "",
                    exact=bool(r.get("exact")),
                    n_resamples=r.get("n_resamples", 0),
                )
            )
            if isinstance(r.get("method"), str) and r.get("method")
            else "-"
            for r in frame.to_dict("records")
        ],
        dtype=object,
    )


#: A percentage-point axis label: 0.05 reads "+5", -0.05 "−5" (a real minus), 0 "0".
_POINTS_LABEL: Final = (
    "datum.value > 0 ? '+' + format(datum.value * 100, '~r')"
    " : datum.value < 0 ? '\u2212' + format(-datum.value * 100, '~r') : '0'"
)


def _proportion_flags(source: Comparisons, frame: pd.DataFrame, metric: str | None) -> Any:
    """Whether each row's metric is a proportion, as the tables decide
    (``compared_proportion``: its name, or 0/1 items on both
    sides of the comparison); a run's pairs share one metric, a proportion when it is one in
    every pair. A frame: its ``proportion`` column where it has one, else the name."""
    from kagreport.evaluation._text import compared_proportion

    names = [str(m) for m in frame["metric"]]
    if isinstance(source, SetupComparisons):
        name = metric or (source.metrics or ("",))[0]
        pairs = source.comparisons
        flag = bool(pairs) and all(compared_proportion(c.comparison, name) for c in pairs)
        return np.full(len(frame), flag or is_proportion(name), dtype=bool)
    if isinstance(source, SetupComparison | EvaluationComparison):
        compared = source.comparison if isinstance(source, SetupComparison) else source
        return np.array([compared_proportion(compared, n) for n in names], dtype=bool)
    if "proportion" in frame.columns:
        return frame["proportion"].fillna(False).astype(bool).to_numpy()
    return np.array([is_proportion(n) for n in names], dtype=bool)


def _with_texts(data: pd.DataFrame, proportion: list[bool]) -> Any:
    """``data`` with the tooltips' texts, as the tables write them (:mod:`kagreport._format`):
    differences and their intervals in percentage points for proportions, else as scores;
    means as percentages or scores; p-values; pairs."""
    rows = zip(data["mean_difference"], data["ci_low"], data["ci_high"], proportion, strict=True)

    def means(column: str) -> list[str]:
        pairs = zip(data[column], proportion, strict=True)
        return [percent_text(v) if p else score(v) for v, p in pairs]

    return data.assign(
        difference_text=[difference_interval(d, lo, hi, proportion=p) for d, lo, hi, p in rows],
        candidate_text=means("candidate_mean"),
        baseline_text=means("baseline_mean"),
        p_text=[p_value(p) for p in data["p_value"]],
        holm_text=[p_value(p) for p in data["p_value_holm"]],
        pairs_text=[count(n) for n in data["n_pairs"]],
    )


# Over 80 lines with its docstring: one chart's encodings and layers, read top to bottom.
def forest_plot(
    comparison_or_frame: Comparisons,
    *,
    alpha: float = 0.05,
    title: str | None = None,
    percent: bool = False,
    theme: bool = True,
    metric: str | None = None,
) -> alt.LayerChart:
    """Paired differences between two evaluations, one row per metric (a forest plot).

    Encodes y = metric (the comparison's order), x = mean difference candidate - baseline over
    the paired items (in each metric's own unit: metrics on different scales share the axis),
    a horizontal bar for its interval, and a dashed rule at zero (no difference). The bars
    of a run's comparisons are Holm-adjusted (test-based, at the level Holm tested each
    hypothesis: a bar excludes 0 exactly when its point is filled, at ``alpha`` 0.05); those
    of a lone comparison are its verdicts' (Holm-adjusted the same way, within its
    family). A frame may name its intervals in an ``interval`` column (``"test-based ..."``
    or ``"Holm-adjusted 95%"`` for Holm-adjusted ones).
    Metrics whose Holm-adjusted sign-flip p-value is below ``alpha`` have a filled point, the
    others a hollow one (legend). A metric without pairs (difference undefined) keeps its row,
    marked "no pairs". Tooltips give the means, interval, p-values and pairs.

    Parameters
    ----------
    comparison_or_frame : EvaluationComparison, SetupComparison, SetupComparisons or DataFrame
        From ``AnswerEvaluation.compare``, :func:`kagreport.runs.compare_setups` (one pair,
        its p-values Holm-adjusted across the run; or all of them, one row per pair on
        ``metric``), or :func:`kagreport.frames.comparison_frame`.
    alpha : float
        Significance level for the Holm-adjusted p-values.
    title : str, optional
        Defaults to "<candidate> − <baseline>".
    percent : bool
        Treat every metric as a proportion: differences in percentage points, means as
        percentages. Without it, metrics that are proportions (``forest_data``'s
        ``proportion``: by name, or scored 0 or 1 on every item, as the tables decide) are
        shown so, and the axis is in points when all of them are.
    theme : bool
        Apply the paper theme.
    metric : str, optional
        The metric of a ``SetupComparisons`` (default the first).

    Returns
    -------
    alt.LayerChart
        Its inline data is ``forest_data``.
    """
    data = forest_data(comparison_or_frame, alpha=alpha, metric=metric)
    confidence = 0.95
    interval = ""  # settings["interval"] of the comparisons drawn, if known
    heading = "Paired differences"
    if isinstance(comparison_or_frame, SetupComparisons):
        pairs = comparison_or_frame.comparisons
        if pairs:
            confidence = float(pairs[0].comparison.settings.get("confidence", 0.95))
            interval = str(pairs[0].comparison.settings.get("interval", ""))
        name = metric or (comparison_or_frame.metrics or ("",))[0]
        shown = isolated(name, NAME_LIMIT)
        heading = (
            f"Differences in {shown} between the setups"
            if comparison_or_frame.pairs == "all-pairs" or not pairs
            else f"Difference in {shown} against {isolated(pairs[0].baseline, NAME_LIMIT)}"
        )
    elif isinstance(comparison_or_frame, EvaluationComparison | SetupComparison):
        settings = (
            comparison_or_frame.comparison.settings
            if isinstance(comparison_or_frame, SetupComparison)
            else comparison_or_frame.settings
        )
        confidence = float(settings.get("confidence", 0.95))
        interval = str(settings.get("interval", ""))
        if isinstance(comparison_or_frame, EvaluationComparison):
            # A lone comparison draws its verdicts' intervals (comparison_frame).
            interval, confidence = "test-based (Holm-adjusted)", 0.95
        heading = pair_label(comparison_or_frame.candidate, comparison_or_frame.baseline)
    elif {"candidate", "baseline"} <= set(comparison_or_frame.columns) and len(comparison_or_frame):
        first = comparison_or_frame.iloc[0]
        heading = pair_label(str(first["candidate"]), str(first["baseline"]))
    if isinstance(comparison_or_frame, pd.DataFrame) and "interval" in comparison_or_frame:
        interval = str(comparison_or_frame["interval"].iloc[0]) if len(comparison_or_frame) else ""
    # Test-based intervals at Holm's levels agree with the filled points; bootstrap ones
    # (a frame that names them so) are unadjusted and may not.
    adjusted = interval.startswith(("test-based", "Holm-adjusted", "unadjusted"))
    bars = f"Holm-adjusted {confidence:.0%}" if adjusted else f"bootstrap {confidence:.0%}"
    alone = bool(data["alone"].any())
    if alone:
        bars += " (unadjusted for metrics outside Holm's family)"
    metrics = list(data["metric"])
    names = axis_names(metrics)
    labels = _labels(alpha)
    y = alt.Y(
        "metric:N",
        title=None,
        sort=metrics,
        axis=alt.Axis(labelExpr=names.expr(metrics) or alt.Undefined),
    )
    proportion = [percent or bool(p) for p in data["proportion"]]
    points = bool(proportion) and all(proportion)
    x = alt.X(
        "mean_difference:Q",
        # Differences of proportions in percentage points, as every table writes them.
        title="Mean difference (pp, candidate − baseline)"
        if points
        else "Mean difference (candidate − baseline)",
        axis=alt.Axis(labelExpr=_POINTS_LABEL) if points else alt.Undefined,
        # 0 (no difference) always inside the plot, on a tick, never at its edge.
        scale=alt.Scale(zero=True, nice=True, padding=6),
    )
    tooltip = [
        alt.Tooltip("metric:N", title="Metric"),
        alt.Tooltip("difference_text:N", title=f"Mean difference [{bars} interval]"),
        alt.Tooltip("candidate_text:N", title="Candidate mean"),
        alt.Tooltip("baseline_text:N", title="Baseline mean"),
        alt.Tooltip("p_text:N", title="p"),
        alt.Tooltip("holm_text:N", title="p (Holm)"),
        alt.Tooltip("test:N", title="Test"),
        alt.Tooltip("pairs_text:N", title="Pairs"),
    ]
    base = alt.Chart(inline_data(_with_texts(data, proportion)))
    defined = base.transform_filter("datum.defined")
    layers = [
        alt.Chart(inline_data(pd.DataFrame({"zero": [0.0]})))
        .mark_rule(color="#555555", strokeDash=[4, 3], strokeWidth=1)
        .encode(x="zero:Q"),
        defined.mark_rule(color=_COLOUR, strokeWidth=1.2).encode(
            x=alt.X("ci_low:Q"), x2="ci_high:Q", y=y, tooltip=tooltip
        ),
        defined.mark_point(filled=True, size=40, opacity=1, color=_COLOUR).encode(
            x=x,
            y=y,
            # No legend: the subtitle says what filled means, and a legend below the plot
            # would run past a one-column figure when the row labels are long.
            shape=alt.Shape(
                "status:N",
                title=None,
                scale=alt.Scale(domain=list(labels), range=["circle", RING]),
                legend=None,
            ),
            tooltip=tooltip,
        ),
        # Text last (vega/vl-convert#147).
        base.transform_filter("!datum.defined")
        .mark_text(align="left", dx=3, color="#777777")
        .encode(x=alt.datum(0), y=y, text=alt.value("no pairs"), tooltip=tooltip),
    ]
    # No-break spaces keep "Holm p < 0.05" on one line when the subtitle wraps.
    subtitle = [
        f"Bars: {bars} intervals. "
        f"Filled: {labels[0].replace(' ', chr(0xA0))}; hollow: {labels[1]}.",
        *names.key_lines(),
    ]
    chart = alt.LayerChart(
        layer=layers,
        title=title_params(heading if title is None else title, subtitle),
        width=COLUMN_WIDTH,
        # A plot of one or two rows keeps room for its bars (16 px a row beyond).
        height=rows_height(names.step(16), len(metrics)) if len(metrics) > 2 else 48.0,
    )
    return apply_theme(chart) if theme else chart
