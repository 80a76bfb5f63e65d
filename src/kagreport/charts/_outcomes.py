"""Per-setup outcome bars and the setups x datasets heatmap."""

from __future__ import annotations

from typing import Any, Final

import altair as alt
import numpy as np
import pandas as pd

from kagreport._format import MISSING, count, percent, quantity
from kagreport.charts._data import (
    inline_data,
    is_simulated_source,
    require_columns,
    rows_height,
    sorted_setups,
    stats_rows,
    title_params,
)
from kagreport.charts._names import axis_names
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme
from kagreport.frames._tables import OVERALL
from kagreport.runs import Run

__all__ = ["OUTCOME_COLOURS", "dataset_heatmap", "heatmap_data", "outcomes_chart", "outcomes_data"]

#: Outcome -> colour (colour-blind safe: blue, orange, grey).
OUTCOME_COLOURS: Final = {"correct": "#4c78a8", "incorrect": "#f58518", "error": "#9d9d9d"}

_COUNTS: Final = {"correct": "correct", "incorrect": "incorrect", "error": "errors"}

# Columns of stats_frame that are proportions in [0, 1] (shown as percentages).
_PROPORTIONS: Final = frozenset(
    f"{name}{suffix}"
    for name in ("accuracy", "precision", "coverage")
    for suffix in ("", "_low", "_high")
)


def outcomes_data(report_or_frame: Run | pd.DataFrame | Any) -> pd.DataFrame:
    """The table :func:`outcomes_chart` draws: one row per setup and outcome.

    Columns: setup (as charts draw it), outcome (correct / incorrect / error), count (result
    files), total, share (count / total; NaN when total is 0), stack (0, 1, 2: the stacking
    order), rank, and the texts of count, share and total as the tables write them
    (``kagreport._format``): count_text, share_text, total_text.
    """
    frame = stats_rows(report_or_frame, 0.95)
    require_columns(frame, ("total", *_COUNTS.values()), "the stats frame")
    overall = frame[frame["dataset"].astype(str) == OVERALL]
    setups = sorted_setups(overall)
    rows = []
    for rank, setup in enumerate(setups, start=1):
        row = overall[overall["setup"].astype(str) == setup].iloc[0]
        total = int(row["total"])
        for stack, (outcome, column) in enumerate(_COUNTS.items()):
            files = int(row[column])
            share = files / total if total else np.nan
            rows.append(
                {
                    "setup": setup,
                    "outcome": outcome,
                    "count": files,
                    "total": total,
                    "share": share,
                    "stack": stack,
                    "rank": rank,
                    "count_text": count(files),
                    "share_text": percent(share),
                    "total_text": count(total),
                }
            )
    columns = ["setup", "outcome", "count", "total", "share", "stack", "rank"]
    columns += ["count_text", "share_text", "total_text"]
    return pd.DataFrame(rows, columns=columns)


def outcomes_chart(
    report_or_frame: Run | pd.DataFrame | Any,
    *,
    normalize: bool = False,
    title: str | None = None,
    theme: bool = True,
) -> alt.Chart:
    """Correct / incorrect / error result files per setup, as stacked horizontal bars.

    Encodes one bar per setup (in kag's ranking order, best first), split into the counts of
    correct, incorrect and error records (kag's outcomes over every result file of the setup),
    or, with ``normalize``, their shares of the setup's files (0-100%). Tooltips give counts and
    shares.

    Parameters
    ----------
    report_or_frame : Run, DataFrame, or what :func:`kagreport.sources.as_run` takes
        A :class:`kagreport.runs.Run` (a ``StatsReport`` becomes one; its outcomes), or a
        frame from :func:`kagreport.frames.stats_frame` (its overall rows).
    normalize : bool
        Shares of each setup's result files instead of counts.
    title : str, optional
        Defaults to "Outcomes per setup".
    theme : bool
        Apply the paper theme.

    Returns
    -------
    alt.Chart
        Its inline data is ``outcomes_data``.
    """
    data = outcomes_data(report_or_frame)
    setups = list(dict.fromkeys(data["setup"]))
    names = axis_names(setups)
    value = "share" if normalize else "count"
    x = alt.X(
        f"{value}:Q",
        title="Share of result files" if normalize else "Result files",
        stack="zero",
        axis=alt.Axis(format=".0%") if normalize else alt.Axis(format="d"),
        scale=alt.Scale(domain=[0, 1]) if normalize else alt.Scale(),
    )
    chart: alt.Chart = (
        alt.Chart(inline_data(data))
        .mark_bar(stroke="white", strokeWidth=0.5)
        .encode(
            x=x,
            y=alt.Y(
                "setup:N",
                title=None,
                sort=setups,
                axis=alt.Axis(labelExpr=names.expr(setups) or alt.Undefined),
            ),
            color=alt.Color(
                "outcome:N",
                title=None,
                scale=alt.Scale(domain=list(OUTCOME_COLOURS), range=list(OUTCOME_COLOURS.values())),
            ),
            order=alt.Order("stack:Q"),
            tooltip=[
                alt.Tooltip("setup:N", title="Setup"),
                alt.Tooltip("outcome:N", title="Outcome"),
                alt.Tooltip("count_text:N", title="Files"),
                alt.Tooltip("share_text:N", title="Share"),
                alt.Tooltip("total_text:N", title="Setup total"),
            ],
        )
        .properties(
            title=title_params(
                "Outcomes per setup" if title is None else title,
                names.key_lines(),
                simulated=is_simulated_source(report_or_frame),
            ),
            width=COLUMN_WIDTH,
            height=rows_height(names.step(14), len(setups)),
        )
    )
    return apply_theme(chart) if theme else chart


def _labels(values: Any, proportion: bool) -> list[str]:
    """Each cell's text as the tables write it (``kagreport._format``): a percentage for
    a proportion, a count where every value is a whole number, else a quantity."""
    finite = values[np.isfinite(values)]
    whole = not proportion and bool(np.all(finite == np.round(finite)))
    return [
        MISSING
        if not np.isfinite(v)
        else percent(v)
        if proportion
        else count(int(v))
        if whole
        else quantity(float(v))
        for v in values
    ]


def heatmap_data(
    report_or_frame: Run | pd.DataFrame | Any,
    metric: str = "accuracy",
    *,
    overall: bool = True,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The table :func:`dataset_heatmap` draws: one row per setup and dataset.

    Every setup x dataset pair is present; ``value`` is NaN where the metric is undefined
    (for example precision without a parsed answer) or the setup has no result in the dataset.
    Columns: setup, dataset (as charts draw them), value, label (the value as the tables write it,
    ``kagreport._format``: a percentage with one decimal for proportions, a count for
    whole numbers, a quantity (3 significant digits) otherwise, ``"—"`` where missing),
    defined, dark (whether the cell is dark enough for a white label).

    Raises
    ------
    ValueError
        If ``metric`` is not a numeric column of the stats frame (the message lists them).
    """
    frame = stats_rows(report_or_frame, confidence)
    numeric = [
        str(c)
        for c in frame.columns
        if c not in ("setup", "dataset", "rank", "pareto")
        and (frame.empty or pd.api.types.is_numeric_dtype(frame[c]))
        and not pd.api.types.is_bool_dtype(frame[c])
    ]
    if metric not in numeric:
        raise ValueError(f"`metric` must be one of {', '.join(numeric)}; not {metric!r}")
    setups = sorted_setups(frame)
    present = [str(d) for d in dict.fromkeys(frame["dataset"].astype(str))]
    datasets = sorted(d for d in present if d != OVERALL)
    if overall and OVERALL in present:
        datasets.append(OVERALL)
    lookup = {
        (str(s), str(d)): float(v)
        for s, d, v in zip(
            frame["setup"],
            frame["dataset"],
            pd.to_numeric(frame[metric], errors="coerce").astype(float),
            strict=True,
        )
    }
    proportion = metric in _PROPORTIONS
    values = np.array([lookup.get((s, d), np.nan) for s in setups for d in datasets], dtype=float)
    finite = values[np.isfinite(values)]
    low, high = (
        (0.0, 1.0)
        if proportion
        else ((float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0))
    )
    middle = low + 0.6 * (high - low)
    return pd.DataFrame(
        {
            "setup": [s for s in setups for _ in datasets],
            "dataset": [d for _ in setups for d in datasets],
            "value": values,
            "label": _labels(values, proportion),
            "defined": np.isfinite(values),
            "dark": np.isfinite(values) & (values > middle),
        }
    )


# Over 80 lines with its docstring: one chart's encodings and layers, read top to bottom.
def dataset_heatmap(
    report_or_frame: Run | pd.DataFrame | Any,
    metric: str = "accuracy",
    *,
    overall: bool = True,
    title: str | None = None,
    confidence: float = 0.95,
    theme: bool = True,
) -> alt.LayerChart:
    """A setups x datasets heatmap of one metric, with the value written in each cell.

    Encodes rows = setups (kag's ranking order), columns = datasets (alphabetical, then the
    setup's overall value in the column ``(overall)``), colour = the metric: proportions
    (accuracy, precision, coverage and their Wilson bounds) on a fixed 0-100% scale and labelled
    in percent with one decimal, other metrics (seconds, bytes, counts) on the range of the data
    as counts or quantities, as the tables write them. Undefined values (precision of a
    setup without a parsed answer, a setup absent from a dataset) are **missing**: a light grey
    cell labelled "—", never 0.

    Parameters
    ----------
    report_or_frame : Run, DataFrame, or what :func:`kagreport.sources.as_run` takes
        A :class:`kagreport.runs.Run` (a ``StatsReport`` becomes one), or a frame from
        :func:`kagreport.frames.stats_frame`.
    metric : str
        A numeric column of the stats frame (``accuracy``, ``precision``, ``coverage``,
        ``avg_generation_secs``, ``errors``, ...).
    overall : bool
        Add the overall column (when the frame has overall rows).
    title : str, optional
        Defaults to "<metric> per setup and dataset".
    confidence : float
        Level of the Wilson bounds when a report is given and a bound is drawn.
    theme : bool
        Apply the paper theme.

    Returns
    -------
    alt.LayerChart
        Its inline data is ``heatmap_data``.

    Raises
    ------
    ValueError
        If ``metric`` is not a numeric column of the stats frame.
    """
    data = heatmap_data(report_or_frame, metric, overall=overall, confidence=confidence)
    proportion = metric in _PROPORTIONS
    setups = list(dict.fromkeys(data["setup"]))
    datasets = list(dict.fromkeys(data["dataset"]))
    names = axis_names(setups)
    rows_expr = names.expr(setups)
    # Upright column labels: one line each (two would sit across the next column).
    columns_expr = names.add(datasets, lines=1).expr(datasets)
    name = metric.replace("_", " ")
    legend_title = f"{name} (%)" if proportion else name
    x = alt.X(
        "dataset:N",
        title=None,
        sort=datasets,
        # Upright labels: slanted ones run past the right edge of a one-column figure.
        axis=alt.Axis(
            orient="top",
            labelAngle=-90,
            labelAlign="left",
            domain=False,
            ticks=False,
            labelExpr=columns_expr or alt.Undefined,
        ),
    )
    y = alt.Y(
        "setup:N",
        title=None,
        sort=setups,
        axis=alt.Axis(domain=False, ticks=False, labelExpr=rows_expr or alt.Undefined),
    )
    tooltip: list[Any] = [
        alt.Tooltip("setup:N", title="Setup"),
        alt.Tooltip("dataset:N", title="Dataset"),
        alt.Tooltip("label:N", title=name),
    ]
    base = alt.Chart(inline_data(data))
    colour_scale = (
        alt.Scale(scheme="blues", domain=[0, 1]) if proportion else alt.Scale(scheme="blues")
    )
    layers = [
        base.mark_rect(color="#f0f0f0", stroke="white", strokeWidth=1).encode(
            x=x, y=y, tooltip=tooltip
        ),
        base.transform_filter("datum.defined")
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "value:Q",
                title=legend_title,
                scale=colour_scale,
                # Every cell prints its value, so no legend (a gradient below the plot would
                # run past a one-column figure when the setup names are long).
                legend=None,
            ),
            tooltip=tooltip,
        ),
        # Text last: no shape may be declared after a text layer (vega/vl-convert#147).
        base.mark_text(baseline="middle").encode(
            x=x,
            y=y,
            text="label:N",
            color=alt.condition("datum.dark", alt.value("white"), alt.value("#222222")),
            tooltip=tooltip,
        ),
    ]
    heading = f"{name.capitalize()} per setup and dataset" if title is None else title
    subtitle = [f"Grey cells with “{MISSING}”: undefined."] if not data["defined"].all() else []
    subtitle += names.key_lines()
    chart = alt.LayerChart(
        layer=layers,
        title=title_params(heading, subtitle, simulated=is_simulated_source(report_or_frame)),
        width=COLUMN_WIDTH,
        height=rows_height(names.step(18), len(setups)),
    )
    return apply_theme(chart) if theme else chart
