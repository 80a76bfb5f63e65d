"""The paper theme: font sizes for print, no view border, a fixed column width.

Sizes are in CSS pixels. :func:`kagreport.charts.save_figure` writes them at 72 pixels per inch,
so one pixel is one typographic point on paper: the default figure is 240 px = 3.33 in wide, the
width of one column of a two-column paper, and no text is smaller than 8 pt.
"""

from __future__ import annotations

import copy
from typing import Any, Final, TypeVar, cast

import altair as alt

__all__ = [
    "COLUMN_WIDTH",
    "FONT",
    "PAPER_CONFIG",
    "THEME_NAME",
    "apply_theme",
    "paper_config",
]

#: Width of a figure in one column of a two-column paper: 3.33 in at 72 px per inch.
COLUMN_WIDTH: Final = 240

#: The font of every text. vl-convert ships Liberation Sans (metric-compatible with Arial), so
#: exports look the same on every host, with or without system fonts.
FONT: Final = "Liberation Sans"

_TEXT = 8  # pt: labels, legends, mark text; the smallest size used
_TITLE = 10  # pt: the chart title
_AXIS_TITLE = 9  # pt

#: The Vega-Lite ``config`` of the paper theme (a plain JSON-compatible mapping).
PAPER_CONFIG: Final[dict[str, Any]] = {
    "font": FONT,
    "background": "white",
    # The width of a chart is the width of the whole figure (axes, legends and title included),
    # so a 240 px figure fits a paper column; heights are of the plotting area.
    "autosize": {"type": "fit-x", "contains": "padding"},
    "padding": 4,
    "view": {"stroke": None, "continuousWidth": COLUMN_WIDTH, "continuousHeight": 160},
    "title": {
        "fontSize": _TITLE,
        "subtitleFontSize": _TEXT,
        "subtitleColor": "#444444",
        "anchor": "start",
        "offset": 6,
    },
    "axis": {
        "labelFontSize": _TEXT,
        "titleFontSize": _AXIS_TITLE,
        "titleFontWeight": "normal",
        "labelColor": "#222222",
        "titleColor": "#222222",
        "domainColor": "#555555",
        "tickColor": "#555555",
        "gridColor": "#e8e8e8",
        "labelLimit": 140,
    },
    # An x-axis title ends at the plot's right edge: centred, a title wider than the plot
    # (long row labels leave it narrow) would run past the figure.
    "axisX": {"titleAnchor": "end"},
    "legend": {
        "orient": "bottom",
        "direction": "horizontal",
        # A bottom legend starts at the plot's left edge, after the axis labels: one entry a
        # row keeps it inside the figure however long those labels are.
        "columns": 1,
        "labelFontSize": _TEXT,
        "titleFontSize": _TEXT,
        "titleFontWeight": "normal",
        "symbolSize": 40,
        "labelLimit": 160,
    },
    "text": {"fontSize": _TEXT},
    "header": {"labelFontSize": _TEXT, "titleFontSize": _AXIS_TITLE},
}

#: Name under which the theme is registered with ``alt.theme`` (not enabled): run
#: ``alt.theme.enable("kagreport-paper")`` to give charts that you compose yourself the same look.
THEME_NAME: Final = "kagreport-paper"

_Chart = TypeVar("_Chart", bound=alt.TopLevelMixin)


def paper_config() -> dict[str, Any]:
    """A deep copy of :data:`PAPER_CONFIG`, safe to modify."""
    return copy.deepcopy(PAPER_CONFIG)


def apply_theme(chart: _Chart) -> _Chart:
    """Return a copy of ``chart`` carrying the paper theme as its top-level ``config``.

    A chart with a top-level ``config`` cannot go inside ``alt.layer``/``alt.hconcat``; build the
    parts with ``theme=False`` and apply the theme to the composition instead.
    """
    return chart.configure(**paper_config())  # type: ignore[no-any-return]


def _register() -> None:
    @alt.theme.register(THEME_NAME, enable=False)
    def _paper() -> alt.theme.ThemeConfig:
        return cast("alt.theme.ThemeConfig", {"config": paper_config()})


_register()
