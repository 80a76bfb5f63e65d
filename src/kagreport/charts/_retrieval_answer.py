"""Retrieval against answer: which errors are the retriever's and which the generator's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import altair as alt
import pandas as pd

from kagreport._format import count, percent_interval
from kagreport.charts._data import drawn_names, inline_data, rows_height, title_params
from kagreport.charts._names import AxisNames, axis_names
from kagreport.charts._theme import COLUMN_WIDTH, apply_theme
from kagreport.evaluation import RetrievalAnswerTable

__all__ = ["CELL_LABELS", "retrieval_answer_chart", "retrieval_answer_data"]

#: The label of each (retrieval, answer) cell, in table order.
CELL_LABELS: Final = {
    ("hit", "right"): "hit, right",
    ("hit", "wrong"): "hit, wrong (generator)",
    ("miss", "right"): "miss, right",
    ("miss", "wrong"): "miss, wrong (retriever)",
}
_COLOURS: Final = {"": "#4c78a8", "generator": "#f58518", "retriever": "#e45756"}


def retrieval_answer_data(
    tables: RetrievalAnswerTable | Mapping[str, RetrievalAnswerTable],
) -> pd.DataFrame:
    """One row per setup and cell: setup (as charts draw it), cell, blame, count, n, share, low,
    high, and their texts as the tables write them (``kagreport._format``): count_text,
    n_text, share_text (the share and its interval in percent).

    ``tables`` is one table (setup ``""``) or setup -> table (a run's, one per
    system); ``share`` and its Wilson bounds are
    the table's, copied (nothing is computed here).
    """
    named = {"": tables} if isinstance(tables, RetrievalAnswerTable) else dict(tables)
    drawn = drawn_names(named)
    rows = []
    for setup, table in named.items():
        for cell in table.cells:
            rows.append(
                {
                    "setup": drawn[setup],
                    "cell": CELL_LABELS[cell.retrieval, cell.answer],
                    "blame": cell.blame or "",
                    "count": cell.count,
                    "n": cell.trials,
                    "share": cell.proportion,
                    "low": cell.low,
                    "high": cell.high,
                    "count_text": count(cell.count),
                    "n_text": count(cell.trials),
                    "share_text": percent_interval(cell.proportion, cell.low, cell.high),
                }
            )
    columns = ["setup", "cell", "blame", "count", "n", "share", "low", "high"]
    columns += ["count_text", "n_text", "share_text"]
    return pd.DataFrame(rows, columns=columns)


def retrieval_answer_chart(
    tables: RetrievalAnswerTable | Mapping[str, RetrievalAnswerTable],
    *,
    title: str | None = None,
    theme: bool = True,
) -> alt.LayerChart:
    """The share of items in each cell of retrieval hit/miss by answer right/wrong, per setup.

    Encodes y = cell (hit, right; hit, wrong: the generator's errors; miss, right; miss,
    wrong: the retriever's errors), y offset and colour = setup (or, for one table, the
    cell's blame), x = share of the setup's paired items as a bar, with a rule for its
    Wilson 95% interval and the count at the bar's end.

    Parameters
    ----------
    tables : RetrievalAnswerTable or mapping of str to RetrievalAnswerTable
        From :func:`kagreport.evaluation.retrieval_answer_table`, or a run of retrieval and
        answer evaluations (given as ``source``, one table per system).
    title : str, optional
        Defaults to "Retrieval against answer".
    theme : bool
        Apply the paper theme.

    Returns
    -------
    alt.LayerChart
        Its data: ``retrieval_answer_data``.
    """
    data = retrieval_answer_data(tables)
    many = not isinstance(tables, RetrievalAnswerTable) and len(data["setup"].unique()) > 1
    order = list(CELL_LABELS.values())
    y = alt.Y("cell:N", title=None, sort=order)
    x_scale = alt.Scale(domain=[0.0, 1.0])
    tooltip = [
        alt.Tooltip("setup:N", title="Setup"),
        alt.Tooltip("cell:N", title="Retrieval, answer"),
        alt.Tooltip("count_text:N", title="Items"),
        alt.Tooltip("n_text:N", title="Of"),
        alt.Tooltip("share_text:N", title="Share [95% interval]"),
    ]
    names = AxisNames()
    if many:
        setups = list(dict.fromkeys(data["setup"]))
        names = axis_names(setups)
        colour = alt.Color(
            "setup:N",
            title="Setup",
            sort=setups,
            legend=alt.Legend(labelExpr=names.expr(setups) or alt.Undefined),
        )
        offset: dict[str, alt.YOffset] = {"yOffset": alt.YOffset("setup:N", sort=setups)}
    else:
        colour = alt.Color(
            "blame:N",
            title="Whose error",
            scale=alt.Scale(domain=list(_COLOURS), range=list(_COLOURS.values())),
            legend=None,
        )
        offset = {}
    base = alt.Chart(inline_data(data))
    layers = [
        base.mark_bar(opacity=0.85).encode(
            x=alt.X(
                "share:Q", title="Share of paired items", scale=x_scale, axis=alt.Axis(format=".0%")
            ),
            y=y,
            color=colour,
            tooltip=tooltip,
            **offset,
        ),
        base.mark_rule(color="#333333", strokeWidth=1).encode(
            x=alt.X("low:Q", scale=x_scale), x2="high:Q", y=y, tooltip=tooltip, **offset
        ),
        # Text last (vega/vl-convert#147).
        base.mark_text(align="left", dx=3, color="#333333").encode(
            x=alt.X("high:Q", scale=x_scale), y=y, text="count_text:N", tooltip=tooltip, **offset
        ),
    ]
    subtitle = [
        "Share of the items where both are known; lines: Wilson 95% intervals; numbers: items.",
        *names.key_lines(),
    ]
    heading = "Retrieval against answer" if title is None else title
    chart = alt.LayerChart(
        layer=layers,
        title=title_params(heading, subtitle),
        width=COLUMN_WIDTH,
        # A number, not alt.Step: a discrete height drops the theme's fit (a console warning).
        height=rows_height(14, len(order) * data["setup"].nunique())
        if many
        else rows_height(18, len(order)),
    )
    return apply_theme(chart) if theme else chart
