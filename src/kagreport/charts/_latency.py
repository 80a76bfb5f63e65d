"""Latency distributions per setup, binned in pandas before they reach Altair."""

from __future__ import annotations

from typing import Any, Final, Literal

import altair as alt
import numpy as np
import pandas as pd

from kagreport._errors import KagreportError
from kagreport._format import count, percent, quantity
from kagreport.charts._data import (
    inline_data,
    is_simulated_source,
    require_columns,
    rows_height,
    run_or_frame,
    title_params,
)
from kagreport.charts._names import axis_names
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme
from kagreport.frames import items_frame
from kagreport.runs import Run

__all__ = ["latency_bins", "latency_chart", "latency_summary"]

Kind = Literal["generation", "retrieval"]

_KINDS: Final = {"generation": "generation_secs", "retrieval": "retrieval_secs"}


def _times(report_or_items: Run | pd.DataFrame | Any, kind: str) -> tuple[pd.DataFrame, str]:
    if kind not in _KINDS:
        raise ValueError(f"`kind` must be one of {', '.join(map(repr, _KINDS))}, not {kind!r}")
    column = _KINDS[kind]
    source = run_or_frame(report_or_items)
    if isinstance(source, pd.DataFrame):
        items = source
        require_columns(items, ("setup", column), "the items frame")
    else:
        if column not in source.costs:
            raise KagreportError(
                f"the run has no cost column {column!r} for a {kind} time chart; its cost "
                f"columns: {', '.join(source.costs) or 'none'}"
            )
        items = items_frame(source)
    times = pd.DataFrame(
        {
            "setup": items["setup"].astype(str).to_numpy(),
            "secs": pd.to_numeric(items[column], errors="coerce").astype(float).to_numpy(),
        }
    )
    return times, column


def _edges(values: np.ndarray, bins: int, log: bool) -> np.ndarray:
    if log:
        positive = values[values > 0]
        if positive.size == 0:
            return np.geomspace(1e-3, 1.0, bins + 1)
        low, high = float(positive.min()), float(positive.max())
        if low == high:
            low, high = low / 2, high * 2
        return np.geomspace(low, high, bins + 1)
    low, high = float(values.min()), float(values.max())
    if low == high:
        low, high = low - 0.5, high + 0.5
    return np.linspace(low, high, bins + 1)


def latency_summary(
    report_or_items: Run | pd.DataFrame | Any, kind: Kind = "generation"
) -> pd.DataFrame:
    """Per-setup summary of the item latencies (seconds), one row per setup.

    Columns: setup, n (items with a time), missing (items without: error records, and every
    item of a setup without retrieval for ``kind="retrieval"``), mean, median, p10, p90, max.
    Rows are sorted by median (setups without any time last, with NaN statistics).
    """
    times, _ = _times(report_or_items, kind)
    return _summary(times)


def _summary(times: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for setup, group in times.groupby("setup", sort=False):
        secs = group["secs"].to_numpy()
        ok = secs[np.isfinite(secs)]
        if ok.size:
            p10, median, p90 = np.quantile(ok, [0.1, 0.5, 0.9])
            stats = [float(ok.mean()), float(median), float(p10), float(p90), float(ok.max())]
        else:
            stats = [np.nan] * 5
        rows.append([str(setup), int(ok.size), int(secs.size - ok.size), *stats])
    summary = pd.DataFrame(
        rows, columns=["setup", "n", "missing", "mean", "median", "p10", "p90", "max"]
    )
    return summary.sort_values("median", kind="stable", na_position="last").reset_index(drop=True)


def latency_bins(
    report_or_items: Run | pd.DataFrame | Any,
    kind: Kind = "generation",
    *,
    bins: int = 30,
    log: bool = False,
) -> pd.DataFrame:
    """Histogram of the item latencies per setup, on bins shared by all setups.

    Columns: setup, bin_start, bin_end (seconds; the last bin includes its end), count (items),
    share (count / the setup's items with a time). Empty bins are left out. The table has at
    most ``setups x bins`` rows however many items there are (PITFALLS.md B15).

    Raises
    ------
    ValueError
        For an unknown ``kind`` or ``bins < 1``.
    """
    _check_bins(bins)
    times, _ = _times(report_or_items, kind)
    return _bins(times, bins, log)


def _check_bins(bins: int) -> None:
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise ValueError(f"`bins` must be a positive integer, not {bins!r}")


def _bins(times: pd.DataFrame, bins: int, log: bool) -> pd.DataFrame:
    usable = np.isfinite(times["secs"].to_numpy())
    if log:
        usable &= times["secs"].to_numpy() > 0
    times = times[usable]
    columns = ["setup", "bin_start", "bin_end", "count", "share"]
    if times.empty:
        return pd.DataFrame(columns=columns)
    edges = _edges(times["secs"].to_numpy(), bins, log)
    parts = []
    for setup, group in times.groupby("setup", sort=False):
        counts, _ = np.histogram(group["secs"].to_numpy(), bins=edges)
        keep = counts > 0
        parts.append(
            pd.DataFrame(
                {
                    "setup": str(setup),
                    "bin_start": edges[:-1][keep],
                    "bin_end": edges[1:][keep],
                    "count": counts[keep],
                    "share": counts[keep] / len(group),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)[columns]


# Over 80 lines with its docstring: one chart's encodings and layers, read top to bottom.
def latency_chart(
    report_or_items: Run | pd.DataFrame | Any,
    kind: Kind = "generation",
    *,
    bins: int = 30,
    log: bool = False,
    title: str | None = None,
    theme: bool = True,
) -> alt.LayerChart:
    """Distribution of per-item generation or retrieval time for each setup.

    Encodes one row per setup (sorted by median time): a strip of ``bins`` histogram bins along
    x = time in seconds (shared bins; logarithmic with ``log``), whose colour is the share of the
    setup's items in the bin, and a black tick at the setup's median. Items without a time (error
    records; every item of a native setup for retrieval) are left out; setups with none are named
    in the subtitle. The items are binned in pandas first, so the chart's data has at most
    ``setups x bins + setups`` rows whatever the number of items: 100,000 items neither raise
    Altair's ``MaxRowsError`` nor bloat a saved notebook (PITFALLS.md B15).

    Parameters
    ----------
    report_or_items : Run, DataFrame, or what :func:`kagreport.sources.as_run` takes
        A :class:`kagreport.runs.Run` (a ``StatsReport`` becomes one; drawn from
        :func:`kagreport.frames.items_frame` of it), or a frame from
        :func:`kagreport.frames.items_frame`.
    kind : {"generation", "retrieval"}
        Which time.
    bins : int
        Number of bins.
    log : bool
        Logarithmic time axis and bins (non-positive times are then left out).
    title : str, optional
        Defaults to "Generation time per item" (or retrieval).
    theme : bool
        Apply the paper theme.

    Returns
    -------
    alt.LayerChart
        The first layer's data is ``latency_bins``, the second's ``latency_summary``.

    Raises
    ------
    ValueError
        For an unknown ``kind`` or ``bins < 1``.
    KagreportError
        For a run without the time column (``retrieval_secs`` for a run from
        evaluations): the message names it.
    """
    _check_bins(bins)
    times, _ = _times(report_or_items, kind)
    histogram = _bins(times, bins, log)
    summary = _summary(times)
    timed = summary[summary["n"] > 0]
    untimed = list(summary.loc[summary["n"] == 0, "setup"])
    order = list(timed["setup"])
    # A time is never negative: a linear axis starts at 0.
    x_scale = alt.Scale(type="log") if log else alt.Scale(zero=True, nice=True, domainMin=0)
    x_title = f"{kind.capitalize()} time per item (s)"
    names = axis_names(order)
    y = alt.Y(
        "setup:N",
        title=None,
        sort=order,
        axis=alt.Axis(labelExpr=names.expr(order) or alt.Undefined),
    )
    # The tooltips' texts, as the tables write them (kagreport._format).
    histogram = histogram.assign(
        from_text=[quantity(v) for v in histogram["bin_start"]],
        to_text=[quantity(v) for v in histogram["bin_end"]],
        count_text=[count(v) for v in histogram["count"]],
        share_text=[percent(v) for v in histogram["share"]],
    )
    timed = timed.assign(
        **{f"{name}_text": [count(v) for v in timed[name]] for name in ("n", "missing")},
        **{
            f"{name}_text": [quantity(v) for v in timed[name]]
            for name in ("median", "mean", "p10", "p90", "max")
        },
    )
    strip = (
        alt.Chart(inline_data(histogram))
        .mark_rect()
        .encode(
            x=alt.X("bin_start:Q", title=x_title, scale=x_scale),
            x2="bin_end:Q",
            y=y,
            color=alt.Color(
                "share:Q",
                title="Share of the setup's items",
                scale=alt.Scale(scheme="blues", domainMin=0),
                legend=alt.Legend(format=".0%", gradientLength=120),
            ),
            tooltip=[
                alt.Tooltip("setup:N", title="Setup"),
                alt.Tooltip("from_text:N", title="From (s)"),
                alt.Tooltip("to_text:N", title="To (s)"),
                alt.Tooltip("count_text:N", title="Items"),
                alt.Tooltip("share_text:N", title="Share"),
            ],
        )
    )
    medians = (
        alt.Chart(inline_data(timed))
        .mark_tick(color="black", thickness=1.5, size=12)
        .encode(
            x=alt.X("median:Q", scale=x_scale),
            y=y,
            tooltip=[
                alt.Tooltip("setup:N", title="Setup"),
                alt.Tooltip("n_text:N", title="Items with a time"),
                alt.Tooltip("missing_text:N", title="Without"),
                alt.Tooltip("median_text:N", title="Median (s)"),
                alt.Tooltip("mean_text:N", title="Mean (s)"),
                alt.Tooltip("p10_text:N", title="10th percentile (s)"),
                alt.Tooltip("p90_text:N", title="90th percentile (s)"),
                alt.Tooltip("max_text:N", title="Max (s)"),
            ],
        )
    )
    subtitle = ["Tick: median."]
    if untimed:
        shown = ", ".join(untimed) if len(untimed) <= 3 else f"{len(untimed)} setups"
        subtitle.append(f"No {kind} time: {shown}.")
    subtitle += names.key_lines()
    heading = f"{kind.capitalize()} time per item" if title is None else title
    chart = alt.LayerChart(
        layer=[strip, medians],
        title=title_params(heading, subtitle, simulated=is_simulated_source(report_or_items)),
        width=COLUMN_WIDTH,
        height=rows_height(names.step(16), len(order)),
    )
    return apply_theme(chart) if theme else chart
