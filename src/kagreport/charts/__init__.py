"""Altair charts of kagreport's reports, and their offline export for papers.

Every function takes a report object, a :class:`kagreport.runs.Run` (and the comparisons of
:func:`kagreport.runs.compare_setups`) or the matching frame of :mod:`kagreport.frames`, returns an
Altair chart and never displays it; a run lacking a cost the chart needs raises a
:class:`kagreport.KagreportError` naming the column. The data is aggregated in pandas first (a
chart holds at most a few thousand rows, whatever the size of the run) and embedded inline, so
charts render offline and from ``file://``. Undefined numbers are ``null`` in the data and drawn as
missing, never as 0. By default each chart carries the paper theme (237.6 px =
3.3 in wide, Liberation Sans, text of 8 pt or more, no border); ``theme=False`` leaves it out so
that charts can be layered or concatenated. Every name a chart draws, in its data too, is
drawn safe for every renderer (at most 100 characters): a control character as its escape
(``\\x01``), a name of 100,000 characters by its start and end, a right-to-left one isolated
from the text beside it; ordinary names as they are.

- :func:`accuracy_cost_chart`: accuracy against a mean cost, with the Pareto frontier.
- :func:`outcomes_chart`: correct / incorrect / error per setup.
- :func:`dataset_heatmap`: a metric per setup and dataset.
- :func:`latency_chart`: per-item generation or retrieval time per setup.
- :func:`history_chart`: a metric per system across runs (:func:`kagreport.runs.history`).
- :func:`forest_plot`: paired differences of two evaluations, or of a run's setup pairs.
- :func:`agreement_chart`, :func:`pairwise_agreement_chart`: agreement between judges.
- :func:`retrieval_answer_chart`: retrieval hit/miss by answer right/wrong, per setup.
- :func:`save_figure`: SVG, PNG (300 dpi), PDF (or HTML) with vl-convert, at a paper
  width (``"one-column"``, ``"two-column"``); the site's charts, as wide as their column on
  screen, are exported back at their paper width.
- :func:`live_chart`: a chart as a live, offline widget (Altair's ``JupyterChart``) whose
  selections Python can read; importing this module makes every chart displayed in a notebook
  live and offline, with a static SVG kept in the saved notebook (:func:`enable_notebook_renderer`).

Importing this module loads pandas, Altair and vl-convert.
"""

from __future__ import annotations

from kagreport._optional import need, optional

# What this package needs from its extra: one line naming the extra when one is missing.
_NEEDS = ("altair", "pandas", "vl_convert")
with optional(*_NEEDS):
    need(*_NEEDS)
    from kagreport.charts._accuracy import accuracy_cost_chart
    from kagreport.charts._agreement import agreement_chart, pairwise_agreement_chart
    from kagreport.charts._export import register_font_directory, save_figure
    from kagreport.charts._forest import forest_plot
    from kagreport.charts._history import history_chart
    from kagreport.charts._latency import latency_chart
    from kagreport.charts._live import live_chart
    from kagreport.charts._outcomes import dataset_heatmap, outcomes_chart
    from kagreport.charts._renderer import enable_by_default as _enable_by_default
    from kagreport.charts._renderer import enable_notebook_renderer
    from kagreport.charts._retrieval_answer import retrieval_answer_chart

    # A chart as a cell's last expression is live and offline in notebooks, with a static SVG
    # saved (charts._renderer), unless the notebook chose another renderer than Altair's default.
    _enable_by_default()


__all__ = [
    "accuracy_cost_chart",
    "agreement_chart",
    "dataset_heatmap",
    "enable_notebook_renderer",
    "forest_plot",
    "history_chart",
    "latency_chart",
    "live_chart",
    "outcomes_chart",
    "pairwise_agreement_chart",
    "register_font_directory",
    "retrieval_answer_chart",
    "save_figure",
]
