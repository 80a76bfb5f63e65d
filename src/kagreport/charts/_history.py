"""The history chart: each system's value of a metric across runs in time order, with its
interval, the changes that are significant after Holm's adjustment marked. It draws
:func:`kagreport.runs.history`'s frame and computes nothing."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

import altair as alt
import numpy as np
import pandas as pd

from kagreport._errors import KagreportError
from kagreport._format import (
    NAME_LIMIT,
    difference_interval,
    is_proportion,
    isolated,
    p_value,
    percent_interval,
)
from kagreport.charts._data import (
    SIMULATED,
    drawn_names,
    inline_data,
    quantity_interval,
    require_columns,
    title_params,
)
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme

__all__ = ["history_chart"]

_NEEDED: Final = (
    "run", "time", "time_source", "position", "system", "metric", "value", "low", "high",
    "change", "change_low", "change_high", "p_value_holm", "significant",
)  # fmt: skip


def _run_label(run: str, time: Any, source: Any) -> str:
    """The run on the axis: ``"name · 2026-01-02"``, ``" (file time)"`` after it when the
    time is a file's (the full time is in the tooltip, :func:`_time_text`)."""
    if pd.isna(time):
        return f"{run} · no time"
    shown = pd.Timestamp(time).strftime("%Y-%m-%d")
    return f"{run} · {shown}" + (" (file time)" if source == "file" else "")


def _time_text(time: Any, source: Any) -> str:
    """The run's time in full for the tooltip, and where it comes from."""
    if pd.isna(time):
        return "none: the run records no time (placed last)"
    shown = pd.Timestamp(time).strftime("%Y-%m-%d %H:%M:%S UTC")
    if source == "file":
        return f"{shown}, file time: a file's modification time (the run records none)"
    return f"{shown}, recorded by the run's tool"


def history_chart(
    frame: pd.DataFrame,
    *,
    metric: str | None = None,
    systems: Sequence[str] | None = None,
    hrefs: Mapping[str, str] | None = None,
    simulated: Collection[str] = (),
    percent: bool | None = None,
    title: str | None = None,
    theme: bool = True,
) -> alt.LayerChart:
    """Each system's value of ``metric`` across runs, with its interval; significant
    changes marked.

    x = the runs in time order (``position``), labelled by run name and date ("file time"
    when ``time_source`` is ``"file"``; the full time and its source in the tooltip);
    y = the value with a bar for the leaderboard's
    interval; one colour and line per system. A point whose change from the system's
    previous run is significant (``significant``: Holm-adjusted over that system's sequence
    of changes, at the frame's ``attrs["alpha"]``) is drawn as a larger diamond; the
    subtitle says so. Tooltips give the value, the change with its interval and its
    adjusted p-value. Each point links (``href``) to its run's pages when ``hrefs`` maps
    the run's name to a link.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`kagreport.runs.history`.
    metric : str, optional
        The metric drawn (default the frame's first).
    systems : sequence of str, optional
        The systems drawn (default all of the metric's).
    hrefs : mapping of str to str, optional
        Run name -> link to its pages.
    simulated : collection of str, optional
        The runs whose data are SIMULATED (``run.metadata["simulated"]``: written by
        ``kagreport simulate``). The title starts with ``SIMULATED:`` when every run drawn
        is one; a subtitle line names them when some are.
    percent : bool, optional
        Draw values as percentages; default when the metric is a proportion by name or
        its values have Wilson intervals.
    title : str, optional
        Default ``"<metric> across runs"``.
    theme : bool
        Apply the paper theme.

    Raises
    ------
    KagreportError
        If the frame lacks a column :func:`kagreport.runs.history` gives, or holds no row
        of ``metric`` (or of ``systems``).
    """
    require_columns(frame, _NEEDED, "the history frame")
    name = metric if metric is not None else (str(frame["metric"].iloc[0]) if len(frame) else "")
    data = frame[frame["metric"] == name]
    if data.empty:
        raise KagreportError(f"the history holds no row of metric {name!r}")
    if systems is not None:
        held = data["system"].unique().tolist()
        missing = [s for s in systems if s not in held]
        if missing:
            raise KagreportError(
                f"the history of metric {name!r} holds no system "
                f"{', '.join(map(repr, missing))} (it holds {', '.join(map(repr, held))})"
            )
        data = data[data["system"].isin(list(systems))]
    alpha = float(frame.attrs.get("alpha", 0.05))
    if percent is None:
        wilson = "interval" in data and bool((data["interval"] == "wilson").any())
        percent = is_proportion(name) or wilson
    runs = data.drop_duplicates("run").sort_values("position")
    # Each name drawn safe (isolated, cut) and distinct, then its time beside it.
    names = drawn_names(runs["run"].astype(str))
    labels = {
        str(r.run): _run_label(names[str(r.run)], r.time, r.time_source) for r in runs.itertuples()
    }
    drawn_systems = drawn_names(data["system"].astype(str))
    order = [labels[str(r)] for r in runs["run"]]

    significant = data["significant"].fillna(False).astype(bool).to_numpy()
    table = pd.DataFrame(
        {
            "run": [labels[str(r)] for r in data["run"]],
            "run_name": [names[str(r)] for r in data["run"]],
            "time_text": [
                _time_text(t, src) for t, src in zip(data["time"], data["time_source"], strict=True)
            ],
            "system": [drawn_systems[str(s)] for s in data["system"]],
            "value": data["value"].astype(float).to_numpy(),
            "low": data["low"].astype(float).to_numpy(),
            "high": data["high"].astype(float).to_numpy(),
            "significant": significant,
            "value_text": [
                (percent_interval if percent else quantity_interval)(v, lo, hi)
                for v, lo, hi in zip(data["value"], data["low"], data["high"], strict=True)
            ],
            "change_text": [
                difference_interval(c, lo, hi, proportion=bool(percent))
                for c, lo, hi in zip(
                    data["change"], data["change_low"], data["change_high"], strict=True
                )
            ],
            "holm_text": [p_value(p) for p in data["p_value_holm"].astype(float)],
            "href": [(hrefs or {}).get(str(r)) for r in data["run"]],
        }
    )
    table["interval_defined"] = np.isfinite(table["low"]) & np.isfinite(table["high"])
    # The theme's label limit, which grows with the text on a screen (a fixed one here cut
    # the labels there).
    x = alt.X("run:N", sort=order, title="Run (time order)", axis=alt.Axis(labelAngle=-40))
    y = alt.Y(
        "value:Q",
        title=f"{isolated(name, NAME_LIMIT)} (%)" if percent else isolated(name, NAME_LIMIT),
        axis=alt.Axis(format="~%") if percent else alt.Undefined,
        scale=alt.Scale(zero=False, nice=True),
    )
    colour = alt.Color("system:N", title="System", sort=sorted(set(table["system"])))
    tooltip = [
        alt.Tooltip("system:N", title="System"),
        alt.Tooltip("run_name:N", title="Run"),
        alt.Tooltip("time_text:N", title="Time"),
        alt.Tooltip("value_text:N", title="Value [95% interval]"),
        alt.Tooltip("change_text:N", title="Change [Holm-adjusted interval]"),
        alt.Tooltip("holm_text:N", title="p (Holm over the sequence)"),
    ]
    marked = f"Holm p < {alpha:g}"
    base = alt.Chart(inline_data(table))
    layers = [
        base.mark_line(strokeWidth=1, opacity=0.6).encode(x=x, y=y, color=colour),
        base.transform_filter("datum.interval_defined")
        .mark_rule(strokeWidth=1.2)
        .encode(x=x, y="low:Q", y2="high:Q", color=colour, tooltip=tooltip),
        base.mark_point(filled=True, opacity=1).encode(
            x=x,
            y=y,
            color=colour,
            shape=alt.Shape(
                "status:N",
                title="Change from the previous run",
                scale=alt.Scale(domain=[marked, "not significant"], range=["diamond", "circle"]),
            ),
            # Ordinal: Vega-Lite warns of size on an unsorted nominal field.
            size=alt.Size(
                "status:O",
                sort=[marked, "not significant"],
                scale=alt.Scale(domain=[marked, "not significant"], range=[110, 30]),
                legend=None,
            ),
            href=alt.Href("href:N"),
            tooltip=tooltip,
        ),
    ]
    layers[2] = layers[2].transform_calculate(
        status=f"datum.significant ? '{marked}' : 'not significant'"
    )
    subtitle = [
        "Bars: the leaderboard's 95% intervals. Diamonds: a change from the system's "
        f"previous run significant at Holm-adjusted p < {alpha:g} (Holm over each system's "
        "sequence of changes; paired on shared items).",
    ]
    marked_runs = set(simulated)
    some = [str(r) for r in runs["run"] if str(r) in marked_runs]
    every = len(some) == len(runs)
    if some and not every:
        shown = ", ".join(names[r] for r in some[:5])
        more = f" and {len(some) - 5} more" if len(some) > 5 else ""
        subtitle.append(f"{SIMULATED} data (no model was run): {shown}{more}.")
    heading = f"{isolated(name, NAME_LIMIT)} across runs" if title is None else title
    chart = alt.LayerChart(
        layer=layers,
        title=title_params(heading, subtitle, simulated=every),
        width=max(COLUMN_WIDTH, 24.0 * len(order)),
        height=180.0,
    )
    return apply_theme(chart) if theme else chart
