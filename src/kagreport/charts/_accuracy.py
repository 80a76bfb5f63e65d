"""The headline chart: accuracy against a mean cost, with the Pareto frontier.

Intervals on both axes: Wilson on accuracy (``frames.stats_frame``), the percentile bootstrap
on the mean cost (``runs._intervals.cost_intervals``); per dataset, one panel a dataset
(small multiples), each with its own frontier. Every point is identified without a tooltip
(a printed figure has none): by its name, placed clear of the others, or by a number that the
key in the subtitle maps to the full name (``kagreport.charts._labels``).
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any, Final, Literal

import altair as alt
import numpy as np
import pandas as pd

from kagreport._errors import KagreportError
from kagreport._format import MISSING, count, percent_interval, plural
from kagreport.charts._data import (
    inline_data,
    is_simulated_source,
    quantity_interval,
    require_columns,
    run_or_frame,
    sorted_setups,
    stats_rows,
    title_params,
)
from kagreport.charts._labels import POSITIONS, Box, name_points, nice_top
from kagreport.charts._names import key_lines
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme, preset_width
from kagreport.frames._tables import COST_AXES, OVERALL, RETRIEVAL_COSTS, cost_values, no_retrieval
from kagreport.runs import Run
from kagreport.runs._costs import cost_axis
from kagreport.runs._intervals import cost_intervals
from kagreport.stats import pareto_front

#: Pixels of a point's label before it is cut with an ellipsis: about half the plot of a
#: one-column figure.
_LABEL_LIMIT = 90
#: Panels a row of the per-dataset chart has at most (on paper: the two-column preset).
FACET_COLUMNS: Final = 3
_PLOT_HEIGHT: Final = 150  # pixels of one panel's plot
_FONT: Final = 8  # the paper theme's text size, pixels

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


def _cost_bounds(
    source: Run | pd.DataFrame,
    rows: pd.DataFrame,
    cost: str,
    per_dataset: bool,
    confidence: float,
) -> tuple[Any, Any]:
    """The bootstrap bounds of each row's mean cost (``runs._intervals.cost_intervals``).

    From the run's items; a frame brings its own as
    ``cost_low``/``cost_high`` columns, or has none (NaN: no horizontal bar).
    """
    n = len(rows)
    if isinstance(source, pd.DataFrame):
        found = [
            pd.to_numeric(rows[c], errors="coerce").to_numpy(dtype=float)
            if c in rows.columns
            else np.full(n, np.nan)
            for c in ("cost_low", "cost_high")
        ]
        return found[0], found[1]
    try:
        intervals = cost_intervals(source, cost, per_dataset=per_dataset, confidence=confidence)
    except KagreportError:
        return np.full(n, np.nan), np.full(n, np.nan)
    bounds = {
        (c.system, OVERALL if c.dataset is None else c.dataset): (c.low, c.high) for c in intervals
    }
    keys = zip(rows["setup"].astype(str), rows["dataset"].astype(str), strict=True)
    pairs = [bounds.get(key, (np.nan, np.nan)) for key in keys]
    return (
        np.array([p[0] for p in pairs], dtype=float),
        np.array([p[1] for p in pairs], dtype=float),
    )


def _point_labels(data: pd.DataFrame, per_dataset: bool) -> tuple[list[int], list[Any], list[str]]:
    """How each row's point is identified in a static figure, worked out per panel on the
    paper figure's plot (:func:`kagreport.charts._labels.name_points`): where its label goes
    (an index of ``_labels.POSITIONS``; -1: none), its number in the key (None: named by its
    name) and the label's text (the name, the number, or the numbers of every point drawn at
    its place, "1, 2"; "" for none).

    Numbers go to the keyed setups in kag's order, one per setup whatever its panels."""
    width = _cell_width(data["dataset"].nunique()) if per_dataset else COLUMN_WIDTH - 50.0
    height = _PLOT_HEIGHT if per_dataset else _plot_height(data["setup"].nunique())
    placed = data["cost_defined"].to_numpy(dtype=bool)
    x_values = np.concatenate([data["cost"], data["cost_high"]])[np.tile(placed, 2)]
    x_top = nice_top(float(np.nanmax(x_values)) if np.isfinite(x_values).any() else 1.0)
    y_values = data.loc[placed, ["accuracy_low", "accuracy_high", "accuracy"]].to_numpy(float)
    y_top = nice_top(float(np.nanmax(y_values)) if np.isfinite(y_values).any() else 1.0)
    positions = [-1] * len(data)
    keyed = [False] * len(data)
    groups: dict[int, list[int]] = {}  # a labelled row -> the rows its label names

    def px(cost: float, accuracy: float) -> tuple[float, float]:
        return (cost / x_top * width, (y_top - accuracy) / y_top * height)

    for _, group in data[placed].groupby("dataset", sort=False):
        # The frontier first, cheapest first: each next label avoids the ones before.
        ordered = group.sort_values(
            ["frontier", "cost", "accuracy"], ascending=[False, True, True], kind="stable"
        )
        rows = [int(i) for i in ordered.index]
        pairs = zip(ordered["cost"], ordered["accuracy"], strict=True)
        found = name_points(
            [px(float(c), float(a)) for c, a in pairs],
            [str(name) for name in ordered["setup"]],
            width=width,
            height=height,
            font_size=_FONT,
            limit=_LABEL_LIMIT,
            obstacles=_marks(ordered, px),
        )
        for row, label in zip(rows, found, strict=True):
            positions[row], keyed[row] = label.position, label.keyed
            if label.position >= 0:
                groups[row] = [rows[k] for k in label.group]
    setups = [str(s) for s, k in zip(data["setup"], keyed, strict=True) if k]
    numbers = {setup: n for n, setup in enumerate(dict.fromkeys(setups), start=1)}
    keys = [numbers[str(s)] if k else None for s, k in zip(data["setup"], keyed, strict=True)]
    texts = [""] * len(data)
    for row, members in groups.items():
        if keys[row] is None:
            texts[row] = str(data["setup"].iloc[row])
        else:
            texts[row] = ", ".join(str(n) for n in sorted(int(keys[m] or 0) for m in members))
    return positions, keys, texts


def _marks(group: pd.DataFrame, px: Any) -> list[Box]:
    """The boxes (pixels) of a panel's error bars and of its frontier's step line."""

    def column(name: str) -> list[float]:
        return [float(v) for v in group[name].to_numpy(dtype=float)]

    boxes: list[Box] = []
    rows = zip(
        *(column(c) for c in ("cost", "accuracy", "accuracy_low", "accuracy_high")),
        *(column(c) for c in ("cost_low", "cost_high")),
        strict=True,
    )
    for cost, accuracy, low, high, cost_low, cost_high in rows:
        x, y = px(cost, accuracy)
        if math.isfinite(low) and math.isfinite(high):
            boxes.append((x - 1.0, px(0.0, high)[1], x + 1.0, px(0.0, low)[1]))
        if math.isfinite(cost_low) and math.isfinite(cost_high):
            boxes.append((px(cost_low, 0.0)[0], y - 1.0, px(cost_high, 0.0)[0], y + 1.0))
    on = group["frontier"].to_numpy(dtype=bool)
    front = [px(c, a) for c, a, f in zip(column("cost"), column("accuracy"), on, strict=True) if f]
    for (x0, y0), (x1, y1) in itertools.pairwise(front):
        boxes.append((x0, y0 - 1.0, x1, y0 + 1.0))  # step-after: across, then up
        boxes.append((x1 - 1.0, min(y0, y1), x1 + 1.0, max(y0, y1)))
    return boxes


def _add_texts(data: pd.DataFrame, cost: str) -> None:
    """The tooltips' texts, as every table writes them (``kagreport._format``): accuracy
    and its interval in percent, the mean cost and its interval as quantities, counts."""
    accuracy = zip(data["accuracy"], data["accuracy_low"], data["accuracy_high"], strict=True)
    data["accuracy_text"] = [percent_interval(*values) for values in accuracy]
    costs = zip(data["cost"], data["cost_low"], data["cost_high"], strict=True)
    data["cost_text"] = [
        quantity_interval(*values) if defined else MISSING
        for values, defined in zip(costs, data["cost_defined"], strict=True)
    ]
    for name in ("total", "correct", "errors"):
        data[f"{name}_text"] = [count(v) for v in data[name]]


def _key_lines(data: pd.DataFrame, *, wide: bool) -> list[str]:
    """The key of the numbered points, as subtitle lines (:func:`_names.key_lines`)."""
    keyed = data.dropna(subset=["key"]).drop_duplicates("key").sort_values("key")
    entries = [(int(k), str(s)) for k, s in zip(keyed["key"], keyed["setup"], strict=True)]
    return key_lines(entries, wide=wide)


def _plot_height(setups: int) -> int:
    """The plot's height (pixels) of the one-panel chart of ``setups`` setups."""
    return max(160, 14 * min(setups, 12))


def _cell_width(panels: int) -> float:
    """A panel's width in the two-column figure (a first guess; ``paper_spec`` fits it)."""
    columns = max(1, min(panels, FACET_COLUMNS))
    return max(60.0, (preset_width("two-column") - 50.0) / columns - 12.0)


def _note(row: pd.Series[Any], cost: str) -> str:
    """Why a row has no cost on this axis."""
    if row.get("parsed", 1) == 0:
        return "no parsed answer"
    if cost in RETRIEVAL_COSTS and not row.get("retrieval_samples", 0) > 0:
        return "no retrieval"  # a frame without the columns that tell a native setup apart
    return "undefined"


# Over 80 lines with its docstring: one table's columns, built in the order they are documented.
def accuracy_cost_data(
    report_or_frame: Run | pd.DataFrame | Any,
    *,
    cost: Cost = "retrieval",
    per_dataset: bool = False,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The table :func:`accuracy_cost_chart` draws, one row per setup (x dataset).

    Columns: setup, dataset, accuracy, accuracy_low, accuracy_high (proportions in [0, 1]),
    cost (the chosen mean, in the unit of ``COST_AXES[cost]``, by
    ``frames._tables.cost_values``: exactly 0 on the retrieval axes for a setup that
    answered without retrieving; NaN where undefined), cost_defined, no_retrieval (drawn at 0
    because it retrieves nothing), frontier (on the Pareto frontier of lower cost and higher
    accuracy, :func:`kagreport.stats.pareto_front`, computed anew for this cost axis and, with
    ``per_dataset``, within each dataset; setups at 0 take part and dominate), status (one of
    ``FRONTIER_LABELS``, or ``""`` where the cost is undefined), note (``"no retrieval, 0
    s"`` / ``"no retrieval, 0 elements"`` (``ZERO_NOTES``) for a setup drawn at 0, or why
    the cost is undefined: ``"no parsed answer"``, or ``"no retrieval"`` for a frame without
    the ``parsed`` and ``retrieval_samples`` columns), total, correct, errors, label (the setup,
    with the note), order (kag's ranking of the setup), label_position (where the point's
    label goes: an index of ``_labels.POSITIONS``, -1 for none), key (the setup's number in
    the chart's key where the point is numbered rather than named, else null), point_label
    (the text beside the point: the setup, its number, or "1, 2" for points drawn at one
    place; "" for none), and the tooltips' texts as the tables write them
    (``kagreport._format``): accuracy_text (accuracy and its interval in percent),
    cost_text (the mean cost and its interval as quantities, "—" where undefined),
    total_text, correct_text, errors_text (counts). Names are as charts draw them (see
    :mod:`kagreport.charts`).

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
        If ``report_or_frame`` is neither a DataFrame nor anything
        :func:`kagreport.sources.as_run` takes.
    """
    column, _ = _cost_axis(cost)
    source = run_or_frame(report_or_frame)
    if not isinstance(source, pd.DataFrame):
        cost_axis(source, cost)  # names the missing cost column
    frame = stats_rows(source, confidence)
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
    low, high = _cost_bounds(source, rows, cost, per_dataset, confidence)
    zero = data["no_retrieval"].to_numpy(dtype=bool)
    # A mean cost is never negative: a frame's interval that reaches below 0 stops at 0.
    data["cost_low"] = np.where(zero, 0.0, np.maximum(low, 0.0))
    data["cost_high"] = np.where(zero, 0.0, high)
    data["order"] = data["setup"].map(order).astype(int)
    data = data.sort_values(["order", "dataset"], kind="stable").reset_index(drop=True)
    found = _point_labels(data, per_dataset)
    data["label_position"], keys, data["point_label"] = found[0], found[1], found[2]
    data["key"] = pd.array(keys, dtype="Int64")
    _add_texts(data, cost)
    if frame.attrs.get("accuracy_interval"):  # a run with repeats: say how the bars are made
        data.attrs["accuracy_interval"] = frame.attrs["accuracy_interval"]
    return data


# Over 80 lines with its docstring: one chart's encodings and layers, read top to bottom.
def accuracy_cost_chart(
    report_or_frame: Run | pd.DataFrame | Any,
    *,
    cost: Cost = "retrieval",
    per_dataset: bool = False,
    title: str | None = None,
    confidence: float = 0.95,
    theme: bool = True,
) -> alt.LayerChart | alt.FacetChart:
    """Accuracy against a mean cost per setup: which setup gives the most accuracy per unit cost.

    Encodes one point per setup: x = the setup's mean cost (the cost axis's column:
    seconds of retrieval or generation per answered item, bytes of context, graph elements
    retrieved, tokens, US dollars), with its percentile bootstrap interval
    over the run's items as a horizontal bar; y =
    accuracy (correct / total, as a percentage) with its Wilson interval as a vertical bar.
    The Pareto frontier (no other setup is at most as costly and at least as accurate) is
    recomputed for the chosen cost with :func:`kagreport.stats.pareto_front`, drawn as a step
    line through the frontier setups, whose points are filled; the others are hollow. **Every
    point is identified** in a static figure: by its name beside it, placed clear of the
    other labels and points, or, where a name is too long for the plot, finds no free place,
    or shares its place with another point, by a number beside it ("1, 2" for points drawn
    at one place) that the key ("Key: 1 name; 2 name", last lines of the subtitle) maps to
    the full name. No name is cut. Both axes start at 0 (a
    cost and an accuracy are never negative). Tooltips give the exact numbers, written as
    the tables write them.

    With ``per_dataset`` the chart is small multiples: one panel per dataset (at most
    ``FACET_COLUMNS`` a row), each with its own frontier and labels, on shared axes; it is
    meant for the two-column paper preset (``usermeta["kagreport"]["preset"]``).

    A setup that answers without retrieving (a native setup: no retrieval sample) spends 0
    seconds on retrieval and renders 0 graph elements, so on those two axes it is **drawn at
    0** and takes part in the frontier like any point: a native setup at least as accurate as
    a KAG setup dominates it. The subtitle says how many setups sit at 0 for that reason.

    Setups whose cost stays undefined (a setup without a parsed answer has no mean time, and
    no way to tell whether it would have retrieved) are **not placed on the cost axis and never
    on the frontier**: each is a dashed horizontal rule at its accuracy; the subtitle names
    the reason.

    Parameters
    ----------
    report_or_frame : Run, DataFrame, or what :func:`kagreport.sources.as_run` takes
        A :class:`kagreport.runs.Run` (a ``StatsReport`` becomes one), or a frame from
        :func:`kagreport.frames.stats_frame` (overall rows have ``dataset == OVERALL``; with
        ``per_dataset`` the other rows are drawn; optional ``cost_low``/``cost_high``
        columns give the cost intervals, which a frame cannot compute).
    cost : str
        The cost axis: ``"retrieval"``,
        ``"generation"``, ``"context"``, ``"graph"``, or other tools' ``"latency"``,
        ``"tokens"``, ``"input_tokens"``, ``"output_tokens"``, ``"money"`` (a
        :class:`~kagreport.runs.Run` read by :func:`kagreport.sources.read_run`).
    per_dataset : bool
        One panel per dataset, each with its own frontier.
    title : str, optional
        Defaults to "Accuracy against mean <cost>", the site's title (``"Accuracy against
        mean retrieval time"``); ``""`` for none (the subtitle stays).
    confidence : float
        Level of the Wilson and bootstrap intervals when a report or run is given (a frame
        brings its own intervals; this is then only the level named in the subtitle).
    theme : bool
        Apply the paper theme; False gives a chart that
        can be layered or concatenated.

    Returns
    -------
    alt.LayerChart or alt.FacetChart
        A facet with ``per_dataset``. Its data (one inline table, ``accuracy_cost_data``)
        carries the exact numbers.

    Raises
    ------
    ValueError
        For an unknown ``cost``, or a frame without the needed columns.
    KagreportError
        For a run without the cost column the axis needs, or without outcomes.
    """
    _, axis_title = _cost_axis(cost)
    source = run_or_frame(report_or_frame)
    data = accuracy_cost_data(source, cost=cost, per_dataset=per_dataset, confidence=confidence)
    setups = list(dict.fromkeys(data["setup"]))
    undefined = list(dict.fromkeys(data.loc[~data["cost_defined"], "setup"]))
    notes = sorted(set(data.loc[~data["cost_defined"], "note"]))

    # A run with repeats: the leaderboard's cluster-robust accuracy intervals (stats_frame).
    accuracy = (
        "cluster-robust, items as clusters" if data.attrs.get("accuracy_interval") else "Wilson"
    )
    subtitle = [
        f"Bars: {confidence:.0%} intervals, {accuracy} (accuracy) and bootstrap (mean cost);"
        " filled: the Pareto frontier."
    ]
    at_zero = list(dict.fromkeys(data.loc[data["no_retrieval"].astype(bool), "setup"]))
    if at_zero:
        shown = plural(len(at_zero), "setup")
        unit = "s" if cost == "retrieval" else "elements"
        subtitle.append(f"At 0: {shown} without retrieval (0 {unit}).")
    if undefined:
        shown = plural(len(undefined), "setup")
        subtitle.append(
            f"Dashed: {shown} with {' / '.join(notes)} (no cost): {', '.join(undefined)}."
        )
    name = re.sub(r"\s*\(.*\)$", "", axis_title).lower()
    heading = f"Accuracy against {name}" if title is None else title
    simulated = is_simulated_source(source)

    key = _key_lines(data, wide=per_dataset)
    subtitle += key
    # The texts of the tables (kagreport._format), computed in Python: d3's formats cannot
    # write them (an interval in one cell, a quantity's significant digits).
    tooltip = [
        alt.Tooltip("setup:N", title="Setup"),
        *([alt.Tooltip("dataset:N", title="Dataset")] if per_dataset else []),
        alt.Tooltip("accuracy_text:N", title=f"Accuracy [{confidence:.0%} interval]"),
        alt.Tooltip("cost_text:N", title=f"{axis_title} [{confidence:.0%} interval]"),
        alt.Tooltip("total_text:N", title="Items"),
        alt.Tooltip("correct_text:N", title="Correct"),
        alt.Tooltip("errors_text:N", title="Errors"),
        alt.Tooltip("status:N", title="Pareto"),
        alt.Tooltip("note:N", title="Note"),
    ]
    # Both quantities are never negative: both axes start at 0, and nothing (an interval,
    # Vega's padding) extends them below it.
    x = alt.X(
        "cost:Q",
        title=axis_title,
        scale=alt.Scale(zero=True, nice=True, domainMin=0),
        # "0" under its tick, not pushed right of it (as if the axis began below 0); fewer
        # ticks on a panel of the small multiples.
        axis=alt.Axis(labelFlush=False, tickCount=4 if per_dataset else alt.Undefined),
    )
    y = alt.Y(
        "accuracy:Q",
        title="Accuracy",
        axis=alt.Axis(format=".0%"),
        scale=alt.Scale(zero=True, nice=True, domainMin=0),
    )
    hue = {"color": alt.value(_COLOUR)}
    shape = alt.Shape(
        "status:N",
        title=None,
        scale=alt.Scale(domain=list(FRONTIER_LABELS), range=["circle", RING]),
        legend=alt.Legend(
            symbolFillColor=_COLOUR, symbolStrokeColor="transparent", direction="horizontal"
        )
        if bool(data["cost_defined"].any())
        else None,
    )

    base = alt.Chart()
    placed = base.transform_filter("datum.cost_defined")
    frontier = placed.transform_filter("datum.frontier")
    # Only layers with rows: an empty layer's scale has no extent (Vega warns of it).
    layers: list[Any] = []
    if undefined:
        layers.append(
            base.transform_filter("!datum.cost_defined")
            .mark_rule(strokeDash=[4, 3], strokeWidth=1)
            .encode(y=y, tooltip=tooltip, color=alt.value(_RULE_COLOUR))
        )
    layers.append(
        placed.mark_rule(strokeWidth=1).encode(
            x=x, y=alt.Y("accuracy_low:Q"), y2="accuracy_high:Q", tooltip=tooltip, **hue
        )
    )
    if bool(np.isfinite(data["cost_low"].to_numpy(dtype=float)).any()):
        layers.append(
            placed.transform_filter("datum.cost_low != null && datum.cost_high != null")
            .mark_rule(strokeWidth=1)
            .encode(x=alt.X("cost_low:Q"), x2="cost_high:Q", y=y, tooltip=tooltip, **hue)
        )
    layers += [
        frontier.mark_line(interpolate="step-after", strokeWidth=1, strokeDash=[2, 2]).encode(
            x=x, y=y, order=alt.Order("cost:Q"), color=alt.value("#333333")
        ),
        placed.mark_point(filled=True, size=40, opacity=1).encode(
            x=x, y=y, shape=shape, tooltip=tooltip, **hue
        ),
    ]
    # Text comes last: vl-convert's PDF draws text above shapes declared after it
    # (vega/vl-convert#147), so no shape may follow a text layer. One layer per position
    # a label takes (Vega-Lite's dx, dy and align are properties of a mark, not channels).
    # No limit: a name is drawn whole or replaced by its key number (_labels.name_points).
    used = sorted({int(k) for k in data["label_position"] if k >= 0})
    for k in used:
        p = POSITIONS[k]
        layers.append(
            placed.transform_filter(f"datum.label_position === {k}")
            .mark_text(align=p.align, baseline=p.baseline, dx=p.dx, dy=p.dy)  # type: ignore[arg-type]
            .encode(x=x, y=y, text="point_label:N", tooltip=tooltip)
        )
    values = inline_data(data)
    if not per_dataset:
        chart: alt.LayerChart | alt.FacetChart = alt.LayerChart(
            data=values,
            layer=layers,
            title=title_params(heading, subtitle, simulated=simulated),
            width=COLUMN_WIDTH,
            height=_plot_height(len(setups)),
        )
        return apply_theme(chart) if theme else chart
    panels = int(data["dataset"].nunique())
    columns = max(1, min(panels, FACET_COLUMNS))
    inner = alt.LayerChart(layer=layers, width=_cell_width(panels), height=_PLOT_HEIGHT)
    chart = alt.FacetChart(
        data=values,
        spec=inner,
        facet=alt.Facet("dataset:N", title=None, sort=sorted(set(data["dataset"]))),
        columns=columns,
        title=title_params(heading, subtitle, wide=True, simulated=simulated),
        # Vega-Lite fits only single and layered views to a width; a facet is sized by its
        # panels (charts._export.paper_spec fits them to the preset).
        autosize=alt.AutoSizeParams(type="pad", contains="padding"),
        spacing=_panel_spacing(data),
        usermeta={"kagreport": {"preset": "two-column", "panels": panels, "columns": columns}},
    )
    return apply_theme(chart) if theme else chart


def _panel_spacing(data: pd.DataFrame) -> int:
    """Pixels between panels: room for half the last x label of one panel ("1,200", centred
    on its tick at the panel's edge) and half the next one's "0", at the screen's 12 px
    (about 7 px a digit), so the two never read as one number ("1,2000")."""
    values = np.concatenate([data["cost"], data["cost_high"]]).astype(float)
    top = nice_top(float(np.nanmax(values)) if np.isfinite(values).any() else 1.0)
    chars = max(len(f"{top:,.0f}") if top >= 1 else 4, 1)
    return max(12, math.ceil(3.5 * chars + 8))
