"""Agreement between judges: alpha per criterion, and alpha for each pair of judges."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import altair as alt
import numpy as np
import pandas as pd

from kagreport._format import NAME_LIMIT, count, isolated, plural, score, score_interval, signed
from kagreport.charts._data import (
    drawn_names,
    inline_data,
    require_columns,
    rows_height,
    title_params,
)
from kagreport.charts._names import axis_names
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme
from kagreport.evaluation import AnswerEvaluation
from kagreport.evaluation._agreement import pairwise_agreement
from kagreport.frames import agreement_frame

__all__ = [
    "RELIABILITY_THRESHOLDS",
    "agreement_chart",
    "criterion_ratings",
    "pairwise_agreement_chart",
    "pairwise_agreement_data",
]

#: Krippendorff's (2004, p. 241) guidance: alpha >= 0.800 to rely on the data, >= 0.667 for
#: tentative conclusions.
RELIABILITY_THRESHOLDS: Final = (0.667, 0.800)

_COLOUR: Final = "#4c78a8"
_MISSING: Final = "#f0f0f0"


# Over 80 lines with its docstring: one chart's encodings and layers, read top to bottom.
def agreement_chart(
    evaluation_or_frame: AnswerEvaluation | pd.DataFrame,
    *,
    title: str | None = None,
    theme: bool = True,
) -> alt.LayerChart:
    """Krippendorff's alpha between the judges of each criterion, with its bootstrap interval.

    Encodes y = criterion (labelled with the number of judges that score it), x = alpha
    (1 = perfect agreement, 0 = chance, below 0 systematic disagreement) as a point with a bar
    for its bootstrap interval over items (``AnswerEvaluation.agreement_intervals``), a rule at 0
    and dashed rules at Krippendorff's thresholds 0.667 and 0.800. An undefined alpha (fewer
    than two judges, no variation) keeps its row, marked "undefined" with its reason (from
    ``AnswerEvaluation.agreement_notes``, or a ``note`` column of the frame), never drawn as 0.

    Parameters
    ----------
    evaluation_or_frame : AnswerEvaluation or DataFrame
        An evaluation, or :func:`kagreport.frames.agreement_frame` of one.
    title : str, optional
        Defaults to "Agreement between judges".
    theme : bool
        Apply the paper theme.

    Returns
    -------
    alt.LayerChart
        Its data: criterion, alpha, low, high, judges, label, defined, note (why alpha or its
        interval is missing, "" otherwise), shown (the text of an undefined row).

    References
    ----------
    .. [1] Krippendorff, K. (2004). Content Analysis: An Introduction to Its Methodology
       (2nd ed.). Sage, p. 241.
    """
    if isinstance(evaluation_or_frame, AnswerEvaluation):
        frame = agreement_frame(evaluation_or_frame)
        level = str(evaluation_or_frame.settings.get("agreement_level", "interval"))
        notes = [evaluation_or_frame.agreement_note(str(c)) for c in frame["criterion"]]
    elif isinstance(evaluation_or_frame, pd.DataFrame):
        frame = evaluation_or_frame
        level = ""
        notes = (
            ["" if pd.isna(n) else str(n) for n in frame["note"]]
            if "note" in frame.columns
            else [""] * len(frame)
        )
    else:
        raise TypeError(
            "expected an AnswerEvaluation or a DataFrame from kagreport.frames.agreement_frame, "
            f"not {type(evaluation_or_frame).__name__}"
        )
    require_columns(frame, ("criterion", "alpha", "low", "high"), "the agreement frame")
    alpha = pd.to_numeric(frame["alpha"], errors="coerce").astype(float).to_numpy()
    judges = (
        pd.to_numeric(frame["judges"], errors="coerce").to_numpy()
        if "judges" in frame.columns
        else np.full(len(frame), np.nan)
    )
    drawn = drawn_names(frame["criterion"].astype(str))
    criteria = [drawn[c] for c in frame["criterion"].astype(str)]
    data = pd.DataFrame(
        {
            "criterion": criteria,
            "alpha": alpha,
            "low": pd.to_numeric(frame["low"], errors="coerce").astype(float).to_numpy(),
            "high": pd.to_numeric(frame["high"], errors="coerce").astype(float).to_numpy(),
            "judges": judges,
            "label": [
                f"{c} ({plural(int(n), 'judge')})" if np.isfinite(n) else c
                for c, n in zip(criteria, judges, strict=True)
            ],
            "defined": np.isfinite(alpha),
            "note": notes,
            "alpha_text": [
                score_interval(a, lo, hi)
                for a, lo, hi in zip(alpha, frame["low"], frame["high"], strict=True)
            ],
            "judges_text": [count(n) for n in judges],
            # Why alpha is undefined, shown in its row: "alpha undefined: x" -> "undefined: x".
            "shown": [
                n.removeprefix("alpha ") if n.startswith("alpha undefined") else "undefined"
                for n in notes
            ],
        }
    )
    labels = list(data["label"])
    bounds = np.concatenate([data["low"].to_numpy(), data["alpha"].to_numpy()])
    finite = bounds[np.isfinite(bounds)]
    lowest = min(0.0, float(finite.min())) if finite.size else 0.0
    x_scale = alt.Scale(domain=[math.floor(lowest * 10) / 10, 1.0])
    names = axis_names(labels)
    y = alt.Y(
        "label:N",
        title=None,
        sort=labels,
        axis=alt.Axis(labelExpr=names.expr(labels) or alt.Undefined),
    )
    tooltip = [
        alt.Tooltip("criterion:N", title="Criterion"),
        alt.Tooltip("alpha_text:N", title="alpha [95% interval]"),
        alt.Tooltip("judges_text:N", title="Judges"),
        alt.Tooltip("note:N", title="Note"),
    ]
    base = alt.Chart(inline_data(data))
    guides = alt.Chart(
        inline_data(pd.DataFrame({"at": [0.0, *RELIABILITY_THRESHOLDS], "dash": [0, 1, 1]}))
    )
    layers = [
        guides.transform_filter("datum.dash == 0")
        .mark_rule(color="#555555", strokeWidth=1)
        .encode(x=alt.X("at:Q", scale=x_scale)),
        guides.transform_filter("datum.dash == 1")
        .mark_rule(color="#999999", strokeWidth=1, strokeDash=[4, 3])
        .encode(x=alt.X("at:Q", scale=x_scale)),
        base.transform_filter("datum.defined")
        .mark_rule(color=_COLOUR, strokeWidth=1.2)
        .encode(x=alt.X("low:Q", scale=x_scale), x2="high:Q", y=y, tooltip=tooltip),
        base.transform_filter("datum.defined")
        .mark_point(filled=True, size=40, opacity=1, color=_COLOUR)
        .encode(
            x=alt.X("alpha:Q", title="Krippendorff's alpha", scale=x_scale), y=y, tooltip=tooltip
        ),
        # Text last (vega/vl-convert#147).
        base.transform_filter("!datum.defined")
        .mark_text(align="left", dx=3, color="#777777")
        .encode(x=alt.datum(0, scale=x_scale), y=y, text="shown:N", tooltip=tooltip),
    ]
    level_text = f" ({level})" if level else ""
    subtitle = [
        f"Alpha{level_text} with bootstrap 95% intervals over items.",
        "Dashed: 0.667 and 0.800 (Krippendorff, 2004).",
        *names.key_lines(),
    ]
    heading = "Agreement between judges" if title is None else title
    chart = alt.LayerChart(
        layer=layers,
        title=title_params(heading, subtitle),
        width=COLUMN_WIDTH,
        height=rows_height(names.step(18), len(labels)),
    )
    return apply_theme(chart) if theme else chart


def criterion_ratings(evaluation: AnswerEvaluation, criterion: str) -> dict[str, np.ndarray]:
    """Judge -> its per-item scores on ``criterion`` (NaN where undefined), in item order.

    The judges are those whose metrics the alpha compared (``agreement_judges``: one criterion
    on one scale). A report written before they were recorded falls back on the names: a
    judge with several criteria scores ``criterion`` through its metric
    ``<judge>.<criterion>``; a judge with a single criterion has the metric ``<judge>``, which
    does not name the criterion: it is included when ``criterion`` is the evaluation's only
    criterion, and left out otherwise.

    Raises
    ------
    ValueError
        If the evaluation has no agreement entry for ``criterion`` (the message lists them).
    """
    if criterion not in evaluation.agreement:
        known = ", ".join(map(repr, evaluation.agreement)) or "none"
        raise ValueError(f"no judge criterion {criterion!r} in this evaluation (criteria: {known})")
    compared = evaluation.agreement_judges.get(criterion)
    if compared is not None:
        # Metric -> its judge: the metric itself, or "<judge>.<criterion>" (longest judge name).
        owners = {
            metric: max(
                (j for j in evaluation.judges if metric == j or metric.startswith(j + ".")),
                key=len,
                default=metric,
            )
            for metric in compared
        }
        return {owners[m]: evaluation.per_item(m) for m in compared if m in evaluation.metrics}
    only = len(evaluation.agreement) == 1
    ratings: dict[str, np.ndarray] = {}
    for judge in evaluation.judges:
        dotted = f"{judge}.{criterion}"
        if dotted in evaluation.metrics:
            ratings[judge] = evaluation.per_item(dotted)
        elif only and judge in evaluation.metrics:
            ratings[judge] = evaluation.per_item(judge)
    return ratings


def pairwise_agreement_data(
    evaluation: AnswerEvaluation,
    criterion: str,
    *,
    judges: Sequence[str] | None = None,
    max_judges: int | None = 30,
    level: str | None = None,
) -> tuple[pd.DataFrame, int]:
    """The cells of :func:`pairwise_agreement_chart` and the number of judges available.

    The judges are sorted by their mean alpha with the other judges (highest first; a judge
    whose pairs are all undefined last), then cut to ``max_judges``, unless ``judges`` names
    them (kept in the order given). One row per pair (i, j), i after j in that order (the lower
    triangle): judge_a (row), judge_b (column) (as charts draw names:
    ``drawn_names``), alpha (NaN where undefined), items (units both
    rated), label (alpha to 2 decimals with a real minus, or "—"), defined, mean_a (judge_a's
    mean alpha).

    Raises
    ------
    ValueError
        If ``criterion`` is unknown, ``judges`` names a judge without ratings on it, fewer than
        two judges remain, or ``max_judges`` < 2.
    """
    ratings = criterion_ratings(evaluation, criterion)
    available = len(ratings)
    if max_judges is not None and (isinstance(max_judges, bool) or max_judges < 2):
        raise ValueError(f"`max_judges` must be None or at least 2, not {max_judges!r}")
    if judges is not None:
        unknown = [j for j in judges if j not in ratings]
        if unknown:
            raise ValueError(
                f"no ratings on {criterion!r} by {', '.join(map(repr, unknown))}; judges "
                f"with ratings: {', '.join(map(repr, ratings))}"
            )
        ratings = {j: ratings[j] for j in dict.fromkeys(judges)}
    if len(ratings) < 2:
        raise ValueError(
            f"pairwise agreement on {criterion!r} needs at least two judges, not {len(ratings)}"
        )
    level = level or str(evaluation.settings.get("agreement_level", "interval"))
    values = {j: [None if math.isnan(v) else float(v) for v in r] for j, r in ratings.items()}
    pairs = pairwise_agreement(values, level)
    names = list(ratings)
    matrix = np.full((len(names), len(names)), np.nan)
    index = {name: i for i, name in enumerate(names)}
    for (a, b), alpha in pairs.items():
        matrix[index[a], index[b]] = matrix[index[b], index[a]] = alpha
    with np.errstate(invalid="ignore"):
        defined = np.isfinite(matrix).sum(axis=1)
        means = np.where(defined > 0, np.nansum(matrix, axis=1) / np.maximum(defined, 1), np.nan)
    if judges is None:
        order = sorted(
            range(len(names)), key=lambda i: (math.isnan(means[i]), -np.nan_to_num(means[i]))
        )
        if max_judges is not None:
            order = order[:max_judges]
    else:
        order = list(range(len(names)))
    rated = {name: np.isfinite(ratings[name]) for name in names}
    rows: list[dict[str, Any]] = []
    drawn = drawn_names(names)
    for position, i in enumerate(order):
        for j in order[:position]:
            alpha = float(matrix[i, j])
            rows.append(
                {
                    "judge_a": drawn[names[i]],
                    "judge_b": drawn[names[j]],
                    "alpha": alpha,
                    "items": int((rated[names[i]] & rated[names[j]]).sum()),
                    "label": signed(alpha, 2),  # a cell's width: 2 decimals
                    "defined": not math.isnan(alpha),
                    "mean_a": float(means[i]),
                }
            )
    columns = ["judge_a", "judge_b", "alpha", "items", "label", "defined", "mean_a"]
    return pd.DataFrame(rows, columns=columns), available


# Over 80 lines with its docstring: one chart's encodings and layers, read top to bottom.
def pairwise_agreement_chart(
    evaluation: AnswerEvaluation,
    criterion: str,
    *,
    judges: Sequence[str] | None = None,
    max_judges: int | None = 30,
    level: str | None = None,
    labels: bool | None = None,
    title: str | None = None,
    theme: bool = True,
) -> alt.LayerChart:
    """A heatmap of Krippendorff's alpha for each pair of judges on one criterion.

    Encodes rows and columns = judges, colour = alpha between the two (diverging, -1 to 1,
    white at 0), one cell per pair (the lower triangle). Judges are sorted by their mean alpha
    with the others, so outliers gather at the bottom right. Ratings are the per-item values of
    the metrics ``<judge>.<criterion>`` (``<judge>`` for single-criterion judges, see
    ``criterion_ratings``), at the evaluation's agreement level. Undefined pairs (no item
    rated by both, or no variation) are grey.

    For legibility at most ``max_judges`` judges are shown (30 by default: the ones with the
    highest mean alpha; the subtitle gives the count); pass ``judges`` to choose them, or
    ``max_judges=None`` for all (65 LLMBar judges give a 65 x 65 figure of about 7 x 7 in).
    The chart is sized by its cells, not the paper column: a full-width figure.

    Parameters
    ----------
    evaluation : AnswerEvaluation
    criterion : str
        A key of ``evaluation.agreement``.
    judges : sequence of str, optional
        The judges to show, in this order.
    max_judges : int or None
        Cap on the number of judges when ``judges`` is not given.
    level : str, optional
        Level of measurement; defaults to the evaluation's ``agreement_level`` setting.
    labels : bool, optional
        Write alpha in each cell; by default when at most 12 judges are shown.
    title : str, optional
        Defaults to "Pairwise agreement: <criterion>".
    theme : bool
        Apply the paper theme.

    Returns
    -------
    alt.LayerChart
        Its data is ``pairwise_agreement_data``.

    Raises
    ------
    ValueError
        As ``pairwise_agreement_data``.
    """
    data, available = pairwise_agreement_data(
        evaluation, criterion, judges=judges, max_judges=max_judges, level=level
    )
    shown = len(set(data["judge_a"]) | set(data["judge_b"]))
    # The tooltips' texts, as the tables write them (kagreport._format).
    data = data.assign(
        alpha_text=[score(a) for a in data["alpha"]], items_text=[count(n) for n in data["items"]]
    )
    rows = list(dict.fromkeys(data["judge_a"]))
    columns = list(dict.fromkeys(data["judge_b"]))
    write = shown <= 12 if labels is None else labels
    cell = 24 if write else 16 if shown <= 12 else 11 if shown <= 30 else 8
    # One line a judge: a cell is too small for two (the same number on both axes).
    names = axis_names([*rows, *columns], lines=1)
    x = alt.X(
        "judge_b:N",
        title=None,
        sort=columns,
        axis=alt.Axis(labelAngle=-60, ticks=False, labelExpr=names.expr(columns) or alt.Undefined),
    )
    y = alt.Y(
        "judge_a:N",
        title=None,
        sort=rows,
        axis=alt.Axis(ticks=False, labelExpr=names.expr(rows) or alt.Undefined),
    )
    tooltip = [
        alt.Tooltip("judge_a:N", title="Judge"),
        alt.Tooltip("judge_b:N", title="Judge"),
        alt.Tooltip("alpha_text:N", title="alpha"),
        alt.Tooltip("items_text:N", title="Items both rated"),
    ]
    base = alt.Chart(inline_data(data))
    layers: list[Any] = [
        base.mark_rect(color=_MISSING, stroke="white", strokeWidth=0.5).encode(
            x=x, y=y, tooltip=tooltip
        ),
        base.transform_filter("datum.defined")
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "alpha:Q",
                title="alpha",
                scale=alt.Scale(scheme="redblue", domain=[-1, 1]),
                legend=alt.Legend(orient="right", direction="vertical", gradientLength=100),
            ),
            tooltip=tooltip,
        ),
    ]
    if write:
        # Text last (vega/vl-convert#147).
        layers.append(
            base.mark_text(baseline="middle").encode(
                x=x,
                y=y,
                text="label:N",
                color=alt.condition(
                    "abs(datum.alpha) > 0.6", alt.value("white"), alt.value("#222222")
                ),
                tooltip=tooltip,
            )
        )
    evaluation_level = level or str(evaluation.settings.get("agreement_level", "interval"))
    subtitle = [f"Krippendorff's alpha ({evaluation_level}); sorted by mean alpha."]
    if shown < available:
        which = " (chosen)" if judges is not None else ": those with the highest mean alpha"
        subtitle.append(f"{shown} of {available} judges{which}.")
    if not data["defined"].all():
        subtitle.append("Grey: undefined.")
    subtitle += names.key_lines()
    heading = f"Pairwise agreement: {isolated(criterion, NAME_LIMIT)}" if title is None else title
    chart = alt.LayerChart(
        layer=layers,
        title=title_params(heading, subtitle),
        width=alt.Step(cell),
        height=alt.Step(cell),
        # Sized by the cells: the column-width fit of the paper theme would squash them.
        autosize=alt.AutoSizeParams(type="pad"),
    )
    return apply_theme(chart) if theme else chart
