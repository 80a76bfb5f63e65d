"""The headline chart: accuracy against a mean cost, with the Pareto frontier."""

from __future__ import annotations

import re
from typing import Any, Final, Literal

import altair as alt
import numpy as np
import pandas as pd

from kagreport.charts._data import (
    inline_data,
    require_columns,
    sorted_setups,
    stats_rows,
    title_params,
)
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme
from kagreport.frames import (
    COST_AXES,
    OVERALL,
    RETRIEVAL_COSTS,
    cost_values,
    no_retrieval,
    pareto_front,
)
from kagreport.grading import StatsReport
from kagreport.runs import Run, cost_axis

#: Pixels of a point's label before it is cut with an ellipsis: a label sits on the side of
#: its point with more room, about half the plot of a one-column figure.
_LABEL_LIMIT = 90

__all__ = ["FRONTIER_LABELS", "accuracy_cost_chart", "accuracy_cost_data"]

Cost = Literal[
    "retrieval",
    "generation",
    "context",
    "graph",
    "latency",
    "tokens",
    "input_tokens",
    "output_tokens",
    "money",
]

#: The two values of the ``status`` field, in legend order (filled, hollow).
FRONTIER_LABELS: Final = ("on the Pareto frontier", "dominated")

_FORMATS: Final = {
    "retrieval": ".3~f",
    "generation": ".3~f",
    "context": ",.0f",
    "graph": ",.1f",
    "latency": ".3~f",
    "tokens": ",.1f",
    "input_tokens": ",.1f",
    "output_tokens": ",.1f",
    "money": ".6~f",
}
#: The note of a setup that retrieves nothing, drawn at 0 on a retrieval axis.
ZERO_NOTES: Final = {"retrieval": "no retrieval, 0 s", "graph": "no retrieval, 0 elements"}
_COLOUR: Final = "#4c78a8"
_RULE_COLOUR: Final = "#777777"

#: A ring (a unit circle with a hole, drawn filled), the hollow marker of dominated setups.
#: A filled shape rather than a stroke keeps the marker and its legend symbol alike in every
#: colour (Vega-Lite draws no legend for ``fillOpacity``).
RING: Final = (
    "M-1,0A1,1,0,1,0,1,0A1,1,0,1,0,-1,0ZM-0.55,0A0.55,0.55,0,1,1,0.55,0A0.55,0.55,0,1,1,-0.55,0Z"
)


def _cost_axis(cost: str) -> tuple[str, str]:
    if cost not in COST_AXES:
        raise ValueError(f"`cost` must be one of {', '.join(map(repr, COST_AXES))}, not {cost!r}")
    return COST_AXES[cost]


def _note(row: pd.Series[Any], cost: str) -> str:
    """Why a row has no cost on this axis."""
    if row.get("parsed", 1) == 0:
        return "no parsed answer"
    if cost in RETRIEVAL_COSTS and not row.get("retrieval_samples", 0) > 0:
        return "no retrieval"  # a frame without the columns that tell a native setup apart
    return "undefined"


# Over 80 lines with its docstring: one table's columns, built in the order they are documented.
def accuracy_cost_data(
    report_or_frame: StatsReport | Run | pd.DataFrame,
    *,
    cost: Cost = "retrieval",
    per_dataset: bool = False,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The table :func:`accuracy_cost_chart` draws, one row per setup (x dataset).

    Columns: setup, dataset, accuracy, accuracy_low, accuracy_high (proportions in [0, 1]),
    cost (the chosen mean, in the unit of ``COST_AXES[cost]``, by
    :func:`kagreport.frames.cost_values`: exactly 0 on the retrieval axes for a setup that
    answered without retrieving; NaN where undefined), cost_defined, no_retrieval (drawn at 0
    because it retrieves nothing), frontier (on the Pareto frontier of lower cost and higher
    accuracy, :func:`kagreport.frames.pareto_front`, computed anew for this cost axis and, with
    ``per_dataset``, within each dataset; setups at 0 take part and dominate), status (one of
    :data:`FRONTIER_LABELS`, or ``""`` where the cost is undefined), note (``"no retrieval, 0
    s"`` / ``"no retrieval, 0 elements"`` (:data:`ZERO_NOTES`) for a setup drawn at 0, or why
    the cost is undefined: ``"no parsed answer"``, or ``"no retrieval"`` for a frame without
    the ``parsed`` and ``retrieval_samples`` columns), total, correct, errors, label (the setup,
    with the note), label_side (``"left"`` for points in the right part of the plot, whose
    label goes to their left), order (kag's ranking of the setup).

    A :class:`~kagreport.runs.Run` gives the rows of ``stats_frame(run)``: the same
    numbers as its report for ``Run.from_stats(report)``; a run from evaluations draws
    accuracy against the costs it records.

    Raises
    ------
    ValueError
        For an unknown ``cost``, or a frame without the columns needed.
    KagreportError
        For a run without the cost column the axis needs (``retrieval_secs``, ...: the
        message names it) or without outcomes (no metric ``correct``).
    TypeError
        If ``report_or_frame`` is neither a StatsReport, a Run nor a DataFrame.
    """
    column, _ = _cost_axis(cost)
    if isinstance(report_or_frame, Run):
        cost_axis(report_or_frame, cost)  # names the missing cost column
    frame = stats_rows(report_or_frame, confidence)
    require_columns(frame, ("accuracy", "accuracy_low", "accuracy_high", column), "the stats frame")
    overall = frame["dataset"].astype(str) == OVERALL
    rows = frame[~overall] if per_dataset else frame[overall]
    order = {setup: i for i, setup in enumerate(sorted_setups(frame))}

    def numbers(name: str) -> Any:
        if name in rows.columns:
            return pd.to_numeric(rows[name], errors="coerce").astype(float).to_numpy()
        return np.full(len(rows), np.nan)

    data = pd.DataFrame(
        {
            "setup": rows["setup"].astype(str).to_numpy(),
            "dataset": rows["dataset"].astype(str).to_numpy(),
            "accuracy": numbers("accuracy"),
            "accuracy_low": numbers("accuracy_low"),
            "accuracy_high": numbers("accuracy_high"),
            "cost": cost_values(rows, cost),
            "total": numbers("total"),
            "correct": numbers("correct"),
            "errors": numbers("errors"),
        }
    )
    data["cost_defined"] = np.isfinite(data["cost"].to_numpy())
    data["no_retrieval"] = no_retrieval(rows) if cost in RETRIEVAL_COSTS else False
    front = np.zeros(len(data), dtype=bool)
    for _, index in data.groupby("dataset", sort=False).groups.items():
        positions = data.index.get_indexer(index)
        front[positions] = pareto_front(
            data["cost"].to_numpy()[positions], data["accuracy"].to_numpy()[positions]
        )
    data["frontier"] = front & data["cost_defined"].to_numpy()  # an infinite cost is undefined
    data["status"] = np.where(
        ~data["cost_defined"],
        "",
        np.where(data["frontier"], FRONTIER_LABELS[0], FRONTIER_LABELS[1]),
    )
    notes = [
        (ZERO_NOTES[cost] if zero else "") if defined else _note(row, cost)
        for defined, zero, (_, row) in zip(
            data["cost_defined"], data["no_retrieval"], rows.iterrows(), strict=True
        )
    ]
    data["note"] = notes
    data["label"] = [
        setup if not note else f"{setup} ({note})"
        for setup, note in zip(data["setup"], notes, strict=True)
    ]
    # Labels of points in the right part of the plot go to their left, inside the figure.
    right = np.nanmax(data["cost"].to_numpy()) if bool(data["cost_defined"].any()) else 0.0
    data["label_side"] = np.where(
        data["cost_defined"] & (data["cost"] > 0.6 * right), "left", "right"
    )
    data["order"] = data["setup"].map(order).astype(int)
    return data.sort_values(["order", "dataset"], kind="stable").reset_index(drop=True)


# Over 80 lines with its docstring: one chart's encodings and layers, read top to bottom.
def accuracy_cost_chart(
    report_or_frame: StatsReport | Run | pd.DataFrame,
    *,
    cost: Cost = "retrieval",
    per_dataset: bool = False,
    title: str | None = None,
    confidence: float = 0.95,
    theme: bool = True,
) -> alt.LayerChart:
    """Accuracy against a mean cost per setup: which setup gives the most accuracy per unit cost.

    Encodes one point per setup (per setup and dataset with ``per_dataset``, coloured by
    dataset): x = the setup's mean cost (``kagreport.frames.COST_AXES[cost]``: seconds of
    retrieval or generation per answered item, bytes of context, or graph elements retrieved),
    y = accuracy (correct / total, as a percentage) with its Wilson interval as a vertical bar.
    The Pareto frontier (no other setup is at most as costly and at least as accurate) is
    recomputed for the chosen cost with :func:`kagreport.frames.pareto_front`, drawn as a step
    line through the frontier setups, whose points are filled; the others are hollow. Text
    labels name the setups; tooltips give the exact numbers (accuracy and interval, cost,
    items, errors).

    A setup that answers without retrieving (a native setup: no retrieval sample) spends 0
    seconds on retrieval and renders 0 graph elements, so on those two axes it is **drawn at
    0**, labelled ``"native (no retrieval, 0 s)"``, and takes part in the frontier like any
    point: a native setup at least as accurate as a KAG setup dominates it. The subtitle says
    how many setups sit at 0 for that reason.

    Setups whose cost stays undefined (a setup without a parsed answer has no mean time, and
    no way to tell whether it would have retrieved) are **not placed on the cost axis and never
    on the frontier**: each is a dashed horizontal rule at its accuracy, labelled with the
    reason (``"x (no parsed answer)"``), so it reads as a reference level. The subtitle says so.

    Parameters
    ----------
    report_or_frame : StatsReport, Run or DataFrame
        A graded run, a :class:`kagreport.runs.Run`, or a frame from
        :func:`kagreport.frames.stats_frame` (overall rows have ``dataset == OVERALL``; with
        ``per_dataset`` the other rows are drawn).
    cost : str
        The cost axis, a name of :data:`kagreport.runs.COSTS`: ``"retrieval"``,
        ``"generation"``, ``"context"``, ``"graph"``, or other tools' ``"latency"``,
        ``"tokens"``, ``"input_tokens"``, ``"output_tokens"``, ``"money"`` (a
        :class:`~kagreport.runs.Run` read by :func:`kagreport.sources.read_run`).
    per_dataset : bool
        One point per setup and dataset, coloured by dataset, each dataset with its own frontier.
    title : str, optional
        Defaults to "Accuracy against mean <cost>", the site's title (``"Accuracy against
        mean retrieval time"``); ``""`` for none (the subtitle stays).
    confidence : float
        Level of the Wilson intervals when a report is given (a frame brings its own intervals;
        this is then only the level named in the subtitle).
    theme : bool
        Apply the paper theme (:func:`kagreport.charts.apply_theme`); False gives a chart that
        can be layered or concatenated.

    Returns
    -------
    alt.LayerChart
        Its data (one inline table, :func:`accuracy_cost_data`) carries the exact numbers.

    Raises
    ------
    ValueError
        For an unknown ``cost``, or a frame without the needed columns.
    KagreportError
        For a run without the cost column the axis needs, or without outcomes.
    """
    _, axis_title = _cost_axis(cost)
    data = accuracy_cost_data(
        report_or_frame, cost=cost, per_dataset=per_dataset, confidence=confidence
    )
    fmt = _FORMATS[cost]
    setups = list(dict.fromkeys(data["setup"]))
    undefined = list(dict.fromkeys(data.loc[~data["cost_defined"], "setup"]))
    notes = sorted(set(data.loc[~data["cost_defined"], "note"]))

    subtitle = [f"Bars: Wilson {confidence:.0%} intervals; filled: Pareto frontier."]
    at_zero = list(dict.fromkeys(data.loc[data["no_retrieval"].astype(bool), "setup"]))
    if at_zero:
        shown = f"{len(at_zero)} setup" + ("s" if len(at_zero) > 1 else "")
        unit = "s" if cost == "retrieval" else "elements"
        subtitle.append(f"At 0: {shown} without retrieval (0 {unit}).")
    if undefined:
        shown = f"{len(undefined)} setup" + ("s" if len(undefined) > 1 else "")
        subtitle.append(f"Dashed: {shown} with {' / '.join(notes)} (no cost).")
    name = re.sub(r"\s*\(.*\)$", "", axis_title).lower()
    heading = f"Accuracy against {name}" if title is None else title

    tooltip = [
        alt.Tooltip("setup:N", title="Setup"),
        *([alt.Tooltip("dataset:N", title="Dataset")] if per_dataset else []),
        alt.Tooltip("accuracy:Q", title="Accuracy", format=".2%"),
        alt.Tooltip("accuracy_low:Q", title=f"{confidence:.0%} low", format=".2%"),
        alt.Tooltip("accuracy_high:Q", title=f"{confidence:.0%} high", format=".2%"),
        alt.Tooltip("cost:Q", title=axis_title, format=fmt),
        alt.Tooltip("total:Q", title="Items", format="d"),
        alt.Tooltip("correct:Q", title="Correct", format="d"),
        alt.Tooltip("errors:Q", title="Errors", format="d"),
        alt.Tooltip("status:N", title="Pareto"),
        alt.Tooltip("note:N", title="Note"),
    ]
    x = alt.X("cost:Q", title=axis_title, scale=alt.Scale(zero=True, nice=True))
    y = alt.Y(
        "accuracy:Q",
        title="Accuracy",
        axis=alt.Axis(format=".0%"),
        scale=alt.Scale(zero=False, nice=True),
    )
    if per_dataset:
        hue: dict[str, Any] = {
            "color": alt.Color(
                "dataset:N",
                title="Dataset",
                scale=alt.Scale(scheme="tableau10"),
                legend=alt.Legend(direction="vertical"),
            )
        }
        rule_hue = line_hue = hue
    else:
        hue = {"color": alt.value(_COLOUR)}
        rule_hue = {"color": alt.value(_RULE_COLOUR)}
        line_hue = {"color": alt.value("#333333")}
    legend_colour = "#555555" if per_dataset else _COLOUR
    shape = alt.Shape(
        "status:N",
        title=None,
        scale=alt.Scale(domain=list(FRONTIER_LABELS), range=["circle", RING]),
        # Two legends side by side must fit the column: stack the entries of both.
        legend=alt.Legend(
            symbolFillColor=legend_colour,
            symbolStrokeColor="transparent",
            direction="vertical" if per_dataset else "horizontal",
        )
        if bool(data["cost_defined"].any())
        else None,
    )

    base = alt.Chart(inline_data(data))
    placed = base.transform_filter("datum.cost_defined")
    unplaced = base.transform_filter("!datum.cost_defined")
    layers = [
        unplaced.mark_rule(strokeDash=[4, 3], strokeWidth=1).encode(
            y=y, tooltip=tooltip, **rule_hue
        ),
        placed.mark_rule(strokeWidth=1).encode(
            x=x, y=alt.Y("accuracy_low:Q"), y2="accuracy_high:Q", tooltip=tooltip, **hue
        ),
        placed.transform_filter("datum.frontier")
        .mark_line(interpolate="step-after", strokeWidth=1, strokeDash=[2, 2])
        .encode(x=x, y=y, order=alt.Order("cost:Q"), detail="dataset:N", **line_hue),
        placed.mark_point(filled=True, size=40, opacity=1).encode(
            x=x, y=y, shape=shape, tooltip=tooltip, **hue
        ),
        # Text comes last: vl-convert's PDF draws text above shapes declared after it
        # (vega/vl-convert#147), so no shape may follow a text layer.
        placed.transform_filter("datum.label_side === 'right' && !datum.no_retrieval")
        .mark_text(align="left", baseline="middle", dx=5, dy=-5, limit=_LABEL_LIMIT)
        .encode(x=x, y=y, text="label:N", tooltip=tooltip),
        # A point at 0 sits at the left edge, with the plot's width for its longer label.
        placed.transform_filter("datum.no_retrieval")
        .mark_text(align="left", baseline="middle", dx=5, dy=-5, limit=2 * _LABEL_LIMIT)
        .encode(x=x, y=y, text="label:N", tooltip=tooltip),
        placed.transform_filter("datum.label_side === 'left'")
        .mark_text(align="right", baseline="middle", dx=-5, dy=-5, limit=_LABEL_LIMIT)
        .encode(x=x, y=y, text="label:N", tooltip=tooltip),
        unplaced.mark_text(align="left", baseline="bottom", dy=-2, limit=2 * _LABEL_LIMIT).encode(
            x=alt.value(2), y=y, text="label:N", tooltip=tooltip
        ),
    ]
    chart = alt.LayerChart(
        layer=layers,
        title=title_params(heading, subtitle),
        width=COLUMN_WIDTH,
        height=max(160, 14 * min(len(setups), 12)),
    )
    return apply_theme(chart) if theme else chart
