"""Live charts in notebook front ends: Altair's ``JupyterChart`` widget, with no network.

``JupyterChart`` is an anywidget: the front end draws the chart with Vega (tooltips,
selections, vega-embed's actions menu) in JupyterLab 4, Notebook 7 and VS Code alike, each
through its own widget manager (the ``anywidget`` package ships the JupyterLab/Notebook
extension; VS Code's Jupyter extension loads anywidget front ends itself). Its JavaScript
imports Vega from a CDN by default; offline mode swaps that for vl-convert's bundled copy,
which travels with each widget to the front end (about 0.9 MB), so nothing is fetched.

Altair 6's own ``application/vnd.vegalite.v6+json`` output is not drawn by JupyterLab 4
(it knows v5), which is why the widget is used rather than the Vega-Lite mimetype.
"""

from __future__ import annotations

import threading
from importlib.util import find_spec
from typing import Any

__all__ = ["EMBED_OPTIONS", "WIDGET_VIEW", "live_available", "live_chart", "live_spec"]

#: The mimetype of a widget's view in a display bundle.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: vega-embed's actions menu: export as SVG or PNG, view the spec and the compiled Vega.
#: Not "open in the Vega Editor": that posts the chart with its data (model outputs) to a
#: web site.
#: Drawn as SVG (not canvas): crisp at any zoom and text that can be selected; kagreport's
#: charts hold at most a few thousand marks.
EMBED_OPTIONS: dict[str, Any] = {
    "actions": {"export": True, "source": True, "compiled": True, "editor": False},
    "renderer": "svg",
}

_lock = threading.Lock()


def live_available() -> bool:
    """Whether live, offline charts can be made: ``anywidget`` is installed and Altair's
    ``JupyterChart`` has its offline mode (Altair 5.3 and later)."""
    if find_spec("anywidget") is None:
        return False
    from altair import JupyterChart

    return hasattr(JupyterChart, "enable_offline")


def _offline_class() -> Any:
    """Altair's ``JupyterChart`` class in offline mode (its bundle is built once per process,
    about 2 s)."""
    from altair import JupyterChart

    with _lock:  # enable_offline sets class attributes; two threads would bundle twice
        JupyterChart.enable_offline()
    return JupyterChart


def _options(embed_options: dict[str, Any] | None) -> dict[str, Any]:
    return dict(EMBED_OPTIONS if embed_options is None else embed_options)


def live_chart(chart: Any, *, embed_options: dict[str, Any] | None = None) -> Any:
    """A live, offline widget of an Altair chart.

    Parameters
    ----------
    chart : altair chart
        Any top-level chart (layered, concatenated, faceted).
    embed_options : dict, optional
        vega-embed options; default :data:`EMBED_OPTIONS`.

    Returns
    -------
    altair.JupyterChart
        Setting its ``chart`` redraws the chart in place in the front end; its
        ``selections`` and ``params`` follow the reader's interactions.

    Raises
    ------
    ImportError
        Without the ``anywidget`` package (see :func:`live_available`).
    """
    return _offline_class()(chart, embed_options=_options(embed_options))


def live_spec(spec: dict[str, Any], *, embed_options: dict[str, Any] | None = None) -> Any:
    """A live, offline widget of a Vega-Lite spec (a dict), as :func:`live_chart`.

    The spec is sent as it is (no round trip through Altair's classes): what Altair's
    renderers receive. The widget's ``selections`` and ``params`` are not wired to Python
    (selections still work in the chart itself).
    """
    widget = _offline_class()(None, embed_options=_options(embed_options))
    # Set after construction: JupyterChart's observer of ``chart`` clears a spec given with
    # ``chart=None``. The update reaches the front end before the output that shows it.
    widget.spec = spec
    return widget
