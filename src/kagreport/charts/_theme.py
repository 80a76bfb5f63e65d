"""The paper theme (font sizes for print, no view border, a fixed column width) and the sizes
of a chart on paper and on screen.

Sizes are in CSS pixels. :func:`kagreport.charts.save_figure` writes them at 72 pixels per inch,
so one pixel is one typographic point on paper: the default figure is 237.6 px = 3.3 in wide,
the width of one column of a two-column paper (``PRESETS``), and no text is smaller than
8 pt. PNGs are written at ``DPI`` (300) pixels per inch.

On screen a chart fills its container instead (``fit_container``: Vega-Lite's width
``"container"``, larger text); the paper size it came with is kept in its
``usermeta["kagreport"]["paper"]``, so that an export from the screen (the site's PNG and SVG
buttons, ``charts._export.paper_spec``) is the paper figure again.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, TypeVar, cast

import altair as alt

__all__ = [
    "COLUMN_WIDTH",
    "DPI",
    "FONT",
    "LABEL_LIMIT",
    "PAPER_CONFIG",
    "POINTS_PER_INCH",
    "PRESETS",
    "TEXT_SIZE",
    "THEME_NAME",
    "apply_theme",
    "fit_container",
    "paper_config",
    "preset_width",
]

#: CSS pixels per inch of a figure: one pixel is one typographic point.
POINTS_PER_INCH: Final = 72
#: Pixels per inch of the PNGs of :func:`kagreport.charts.save_figure` and of the site's export.
DPI: Final = 300
#: Figure widths of a two-column paper, in inches, by name: one column, or both (a
#: ``figure*``). Faceted (small-multiple) charts default to ``"two-column"``.
PRESETS: Mapping[str, float] = MappingProxyType({"one-column": 3.3, "two-column": 7.0})


def preset_width(preset: str) -> float:
    """The width of a named preset in CSS pixels (points): ``PRESETS[preset] * 72``.

    Raises
    ------
    ValueError
        For a name not in ``PRESETS`` (the message lists them).
    """
    if preset not in PRESETS:
        raise ValueError(f"`preset` must be one of {', '.join(map(repr, PRESETS))}, not {preset!r}")
    return round(PRESETS[preset] * POINTS_PER_INCH, 6)


#: Width of a figure in one column of a two-column paper: 3.3 in at 72 px per inch.
COLUMN_WIDTH: Final = preset_width("one-column")

#: The font of every text. vl-convert ships Liberation Sans (metric-compatible with Arial), so
#: exports look the same on every host, with or without system fonts.
FONT: Final = "Liberation Sans"

#: Points: labels, legends, mark text; the smallest size used.
TEXT_SIZE: Final = 8
_TEXT = TEXT_SIZE
#: The widest an axis or legend label is drawn on paper (pixels at :data:`TEXT_SIZE`; Vega
#: cuts a longer one with an ellipsis). The charts draw a longer name on two lines or as a
#: number of their key instead (:mod:`kagreport.charts._names`); on a screen the limit
#: grows with the text (:data:`TEXT_SIZES`).
LABEL_LIMIT: Final = 140
_TITLE = 10  # pt: the chart title
_AXIS_TITLE = 9  # pt
_TICKS = 6  # ticks Vega aims for on a quantitative axis

#: The Vega-Lite ``config`` of the paper theme (a plain JSON-compatible mapping).
PAPER_CONFIG: Final[dict[str, Any]] = {
    "font": FONT,
    "background": "white",
    # The width of a chart is the width of the whole figure (axes, legends and title included),
    # so a 237.6 px figure fits a paper column; heights are of the plotting area.
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
        "labelLimit": LABEL_LIMIT,
    },
    # About six ticks on a quantitative axis, on paper and on a wide screen alike: Vega's
    # default (one every 40 px) gives 36 on a 1,400 px page. d3 rounds the count to steps of
    # 1, 2 or 5, so an axis has at most 10 labels.
    "axisQuantitative": {"tickCount": _TICKS},
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
        "labelLimit": LABEL_LIMIT,
    },
    "text": {"fontSize": _TEXT},
    "header": {"labelFontSize": _TEXT, "titleFontSize": _AXIS_TITLE},
}

#: Name under which the theme is registered with ``alt.theme`` (not enabled): run
#: ``alt.theme.enable("kagreport-paper")`` to give charts that you compose yourself the same look.
THEME_NAME: Final = "kagreport-paper"

_Chart = TypeVar("_Chart", bound=alt.TopLevelMixin)


def paper_config() -> dict[str, Any]:
    """A deep copy of ``PAPER_CONFIG``, safe to modify."""
    return copy.deepcopy(PAPER_CONFIG)


def apply_theme(chart: _Chart) -> _Chart:
    """Return a copy of ``chart`` carrying the paper theme as its top-level ``config``.

    A chart with a top-level ``config`` cannot go inside ``alt.layer``/``alt.hconcat``; build the
    parts with ``theme=False`` and apply the theme to the composition instead.
    """
    return chart.configure(**paper_config())  # type: ignore[no-any-return]


#: Text sizes (config section, property) -> (paper pt, screen px). On a 1,400 px page the
#: paper's 8 pt labels are too small to read; the screen sizes are those of the page's text.
#: The label limits grow with the labels' text (12 / 8), so a name whole on paper is whole
#: on a screen.
TEXT_SIZES: Final = {
    ("axis", "labelLimit"): (LABEL_LIMIT, LABEL_LIMIT * 12 // _TEXT),
    ("legend", "labelLimit"): (LABEL_LIMIT, LABEL_LIMIT * 12 // _TEXT),
    ("title", "fontSize"): (_TITLE, 15),
    ("title", "subtitleFontSize"): (_TEXT, 12),
    ("axis", "labelFontSize"): (_TEXT, 12),
    ("axis", "titleFontSize"): (_AXIS_TITLE, 13),
    ("legend", "labelFontSize"): (_TEXT, 12),
    ("legend", "titleFontSize"): (_TEXT, 12),
    ("text", "fontSize"): (_TEXT, 12),
    ("header", "labelFontSize"): (_TEXT, 12),
    ("header", "titleFontSize"): (_AXIS_TITLE, 13),
}
#: How much taller a chart is on screen than on paper (a full-width plot 160 px high is flat).
SCREEN_HEIGHT_FACTOR: Final = 1.6


def text_sizes(spec: dict[str, Any], medium: str) -> None:
    """Set the theme's text sizes of ``spec["config"]`` (in place) for ``"paper"`` or ``"screen"``.

    Only the sizes the config sets are changed: a chart without the theme keeps its own.
    """
    config = spec.get("config")
    if not isinstance(config, dict):
        return
    index = 0 if medium == "paper" else 1
    for (section, name), sizes in TEXT_SIZES.items():
        part = config.get(section)
        if isinstance(part, dict) and name in part:
            part[name] = sizes[index]


def _as_spec(chart: alt.TopLevelMixin | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(chart, Mapping):
        spec: dict[str, Any] = json.loads(json.dumps(chart))
        return spec
    if isinstance(chart, alt.TopLevelMixin):
        return chart.to_dict(validate=False)
    raise TypeError(f"expected an Altair chart or a Vega-Lite spec, not {type(chart).__name__}")


def is_faceted(spec: Mapping[str, Any]) -> bool:
    """Whether ``spec`` is a facet (small multiples: a ``facet`` and an inner ``spec``)."""
    return "facet" in spec and isinstance(spec.get("spec"), Mapping)


def fit_container(
    chart: alt.TopLevelMixin | Mapping[str, Any], *, preset: str | None = None
) -> dict[str, Any]:
    """The spec of ``chart`` for a screen: as wide as its container, with screen text sizes.

    A single or layered view gets ``width: "container"`` (a concatenation keeps its parts'
    widths) and a height
    ``SCREEN_HEIGHT_FACTOR`` times its own; a facet keeps its cells' widths (Vega-Lite
    sizes a facet by its cells: the site's script sets them from the container's width) and
    its cells' heights grow alike. What the paper figure had is kept in
    ``usermeta["kagreport"]["paper"]``: ``preset`` (the given one, else the chart's
    ``usermeta`` preset, else ``"two-column"`` for a facet and ``"one-column"`` otherwise),
    ``width`` (the figure's, pixels: the preset's, or the chart's own fixed width),
    ``height``, ``cell_width`` and ``padding`` where set, and ``config`` (the paper text
    sizes), so that ``charts._export.paper_spec`` and the site's export restore it.
    The title becomes the spec's ``description`` (unless it has one): what Vega gives screen
    readers as the chart's label.

    Returns
    -------
    dict
        A new Vega-Lite spec (``chart`` is not changed).

    Raises
    ------
    ValueError
        For an unknown ``preset``.
    TypeError
        If ``chart`` is neither an Altair chart nor a mapping.
    """
    spec = _as_spec(chart)
    meta = spec.setdefault("usermeta", {}).setdefault("kagreport", {})
    faceted = is_faceted(spec)
    name = preset or meta.get("preset") or ("two-column" if faceted else "one-column")
    view = spec["spec"] if faceted else spec
    own = spec.get("width")
    width = own if isinstance(own, int | float) and preset is None else preset_width(name)
    paper: dict[str, Any] = {"preset": name, "width": width}
    if isinstance(view.get("height"), int | float):
        paper["height"] = view["height"]
        view["height"] = round(view["height"] * SCREEN_HEIGHT_FACTOR)
    if faceted and isinstance(view.get("width"), int | float):
        paper["cell_width"] = view["width"]
    if "padding" in spec:
        paper["padding"] = spec["padding"]
    if "mark" in spec or "layer" in spec:  # concatenations keep their parts' widths
        spec["width"] = "container"
    config = spec.get("config")
    if isinstance(config, dict):
        merged: dict[str, dict[str, Any]] = {}
        for section, key in TEXT_SIZES:
            if isinstance(config.get(section), dict) and key in config[section]:
                merged.setdefault(section, {})[key] = config[section][key]
        paper["config"] = merged
    meta["paper"] = paper
    text_sizes(spec, "screen")
    if (
        "description" not in spec
    ):  # Vega's ARIA label of the drawn chart (else "Vega visualization")
        description = _title_text(spec.get("title"))
        if description:
            spec["description"] = description
    return spec


def _title_text(title: Any) -> str:
    """A chart title as one line of plain text ("" without one)."""
    if isinstance(title, Mapping):
        title = title.get("text")
    if isinstance(title, list):
        return " ".join(str(line) for line in title)
    return title if isinstance(title, str) else ""


def _register() -> None:
    @alt.theme.register(THEME_NAME, enable=False)
    def _paper() -> alt.theme.ThemeConfig:
        return cast("alt.theme.ThemeConfig", {"config": paper_config()})


_register()
