"""Interactive notebook views (ipywidgets) of runs, graded kag trees and evaluations.

- :class:`StatsView`: kag's metrics with Wilson intervals and the accuracy-against-cost
  chart, by setup, dataset and cost axis, the same over a ``StatsReport`` and over a
  :class:`kagreport.runs.Run` whose rows have outcomes; over a run without outcomes, its
  leaderboard and cost frontier.
- :class:`ComparisonView`: paired comparison of two setups (or evaluations) and the
  items that flipped, from :func:`kagreport.runs.compare_setups` (the site's call).
- :class:`ItemBrowser`: filter a run's items by setup, dataset, outcome and a regex
  over the responses, page by page; responses are read lazily for the visible page.
- :class:`AgreementView`: agreement between judges, per criterion and per pair.

The views taking a run (StatsView, ComparisonView, ItemBrowser) also take a
``StatsReport`` (as ``Run.from_stats`` of it). They compute no statistics: the numbers
come from :mod:`kagreport.runs`, :mod:`kagreport.frames` and :mod:`kagreport.evaluation`,
so a pair shows here the p-value it shows on the site. A view of a run says what the run
lacks (responses, datasets, costs, outcomes).

Each view is an ``ipywidgets.VBox``: display it, or drive its controls from Python
(their values are attributes), and read the current table and chart back.

Safety and size. Responses, errors and labels are untrusted: every one is
HTML-escaped, and responses are cut to ``RESPONSE_LIMIT`` characters with the
full length stated (PITFALLS.md B15). Charts are live (``ChartPane``: Altair's
``JupyterChart`` with its offline bundle, redrawn in place when a control changes), with no
network (PITFALLS.md B13); without ``anywidget`` they are inline SVG drawn by vl-convert.

Static fallback. ``view._repr_mimebundle_()`` returns the widget's own bundle plus
``text/html``: a labelled snapshot of the view's current state (control values,
the table(s) shown and the chart(s) as inline SVG; for :class:`ItemBrowser` only the
visible page). A notebook exported without a live kernel or widget state (nbconvert,
static sites) shows that snapshot; it never embeds the whole item table.
``to_html()`` returns the same snapshot.
"""

from __future__ import annotations

from kagreport._optional import need, optional

# What this package needs from its extra: one line naming the extra when one is missing.
_NEEDS = ("ipywidgets", "pandas", "altair", "vl_convert")
with optional(*_NEEDS):
    need(*_NEEDS)
    from kagreport.widgets._agreement import AgreementView
    from kagreport.widgets._compare import ComparisonView
    from kagreport.widgets._items import ItemBrowser
    from kagreport.widgets._stats import StatsView

__all__ = [
    "AgreementView",
    "ComparisonView",
    "ItemBrowser",
    "StatsView",
]
