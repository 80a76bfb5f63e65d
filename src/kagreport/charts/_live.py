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


#: A widget's element is a block as wide as the output area (vega-embed makes it an inline
#: block as wide as its content: 38 px for the actions button, so a chart of width "container"
#: was drawn 0 px wide). Lumino widgets in JupyterLab and Notebook 7; VS Code's output cells.
_CSS = """
.lm-Widget.vega-embed,
.cell-output-ipywidget-background .vega-embed {
    display: block;
    width: 100%;
    box-sizing: border-box;
}
"""

_classes: dict[str, Any] = {}


def _offline_class() -> Any:
    """Altair's ``JupyterChart``, in offline mode and as wide as its output area (its bundle
    is built once per process, about 2 s)."""
    from altair import JupyterChart

    with _lock:  # enable_offline sets class attributes; two threads would bundle twice
        cls = _classes.get("live")
        if cls is None:
            cls = _classes["live"] = type(
                "KagreportChart", (JupyterChart,), {"_css": JupyterChart._css + _CSS}
            )
        if not getattr(cls, "_is_offline", False):
            _enable_offline(cls)
    return cls


#: Put after the chart is embedded (Altair's ``finalize = api.finalize;``): Vega-Lite sizes a
#: chart of width "container" when it is drawn, before the widget's element is on the page
#: (0 px wide), and again only on a window resize; so one is sent whenever the element's
#: width changes.
_RESIZE_ANCHOR = "finalize = api.finalize;"
_RESIZE_JS = """
        if (typeof ResizeObserver !== "undefined" && spec.width === "container") {
            let drawnWidth = -1;
            const resized = new ResizeObserver(() => {
                const width = el.clientWidth;
                if (width > 0 && width !== drawnWidth) {
                    drawnWidth = width;
                    window.dispatchEvent(new Event("resize"));
                }
            });
            resized.observe(el);
            const finalizeChart = finalize;
            finalize = () => { resized.disconnect(); finalizeChart(); };
        }
"""


def _enable_offline(cls: Any) -> None:
    """Offline mode, with the chart following its element's width (:data:`_RESIZE_JS`).

    Altair's ``enable_offline`` bundles its widget's JavaScript with vl-convert's Vega; this
    does the same with the resize observer added. Where Altair's source has changed shape
    (the anchor is gone) or its helpers moved, Altair's own offline mode is used as it is.
    """
    try:
        import vl_convert
        from altair.jupyter.jupyter_chart import load_js_src
        from altair.utils._importers import vl_version_for_vl_convert

        source = load_js_src()
        if _RESIZE_ANCHOR not in source:
            raise LookupError(_RESIZE_ANCHOR)
        source = source.replace(_RESIZE_ANCHOR, _RESIZE_ANCHOR + _RESIZE_JS, 1)
        # The CDN imports go (vl-convert's bundle provides vegaEmbed and lodashDebounce).
        lines = [line for line in source.split("\n") if not line.startswith("import ")]
        cls._esm = vl_convert.javascript_bundle(
            "\n".join(lines), vl_version=vl_version_for_vl_convert()
        )
        cls._is_offline = True
    except (ImportError, LookupError, AttributeError, ValueError):
        cls.enable_offline()


def _options(embed_options: dict[str, Any] | None) -> dict[str, Any]:
    return dict(EMBED_OPTIONS if embed_options is None else embed_options)


def live_chart(chart: Any, *, embed_options: dict[str, Any] | None = None) -> Any:
    """A live, offline widget of an Altair chart.

    Parameters
    ----------
    chart : altair chart or dict
        Any top-level chart (layered, concatenated, faceted), or its Vega-Lite spec as a
        dict (e.g. from ``notebook_spec``), sent as it is; a spec's widget does not wire
        ``selections`` and ``params`` to Python (they still work in the chart itself).
    embed_options : dict, optional
        vega-embed options; default ``EMBED_OPTIONS``.

    Returns
    -------
    altair.JupyterChart
        Setting its ``chart`` redraws the chart in place in the front end; its
        ``selections`` and ``params`` follow the reader's interactions.

    Raises
    ------
    ImportError
        Without the ``anywidget`` package (see ``live_available``).
    """
    if isinstance(chart, dict):
        return live_spec(chart, embed_options=embed_options)
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
