"""The base of every view: an ipywidgets ``VBox`` that also carries a static HTML fallback,
and the pane where a view draws a chart live (``ChartPane``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from kagreport.widgets._html import chart_svg, message_html, snapshot_html

__all__ = ["ChartPane", "ChartResult", "View", "build_chart", "describe"]


class ChartResult:
    """A chart built for a view: the Altair object, its inline SVG and any problem.

    Attributes
    ----------
    chart : altair chart or None
        ``None`` when the chart could not be built.
    svg : str
        Inline SVG (empty without a chart).
    error : str or None
        Why there is no chart (shown, escaped, in the view).
    """

    __slots__ = ("chart", "error", "svg")

    def __init__(self, chart: Any = None, svg: str = "", error: str | None = None) -> None:
        self.chart = chart
        self.svg = svg
        self.error = error

    @property
    def html(self) -> str:
        """The SVG, or an escaped notice saying why there is no chart."""
        if self.error is not None:
            return message_html(self.error, kind="error")
        return self.svg


def build_chart(name: str, *args: Any, **kwargs: Any) -> ChartResult:
    """Call ``kagreport.charts.<name>(*args, **kwargs)`` and render the chart to SVG.

    Never raises: a missing charts module or function, or a chart that cannot be
    built or rendered, gives a :class:`ChartResult` with ``error`` set.
    """
    try:
        import kagreport.charts as charts
    except ImportError as exc:
        return ChartResult(error=f"charts are unavailable: {exc}")
    function: Callable[..., Any] | None = getattr(charts, name, None)
    if function is None:
        return ChartResult(error=f"charts are unavailable: kagreport.charts has no {name}()")
    try:
        chart = function(*args, **kwargs)
    except Exception as exc:  # a view shows the problem instead of raising in a callback
        return ChartResult(error=f"cannot draw the chart: {type(exc).__name__}: {exc}")
    try:
        svg = chart_svg(chart)
    except Exception as exc:
        return ChartResult(chart, error=f"cannot render the chart: {type(exc).__name__}: {exc}")
    return ChartResult(chart, svg)


class ChartPane(widgets.Box):  # type: ignore[misc]  # ipywidgets is untyped
    """Where a view shows its chart: live and offline in a notebook, redrawn in place.

    A chart is drawn by one live widget (Altair's ``JupyterChart`` in offline mode,
    :func:`kagreport.charts.live_chart`: tooltips, selections, the export menu, no
    network); :meth:`show` of the next chart replaces the widget's chart, so the front end
    redraws it where it is (no new output). Without a chart (an error, nothing to draw) or
    without ``anywidget``, the pane holds an HTML widget with the inline SVG or the
    escaped notice instead.

    Attributes
    ----------
    live : altair.JupyterChart or None
        The live widget, once a chart was shown with ``anywidget`` installed.
    static : ipywidgets.HTML
        The static form of what is shown (see :attr:`value`).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.static = widgets.HTML(value="")
        self.live: Any = None
        self.children = (self.static,)

    @property
    def value(self) -> str:
        """The static HTML of what is shown: the chart's inline SVG or the notice (escaped),
        empty when nothing is; what the view's snapshot holds."""
        return str(self.static.value)

    def show(self, result: ChartResult) -> None:
        """Show ``result``: its chart live when possible, else its static HTML."""
        self.static.value = result.html
        if result.chart is not None and result.error is None and self._draw_live(result.chart):
            self.children = (self.live,)
        else:
            self.children = (self.static,)

    def clear(self) -> None:
        """Show nothing."""
        self.show(ChartResult())

    def _draw_live(self, chart: Any) -> bool:
        try:
            from kagreport.charts import live_chart
            from kagreport.charts._live import live_available
            from kagreport.charts._renderer import notebook_spec

            if not live_available():
                return False
            # As wide as the output area (the static SVG keeps the paper figure).
            spec = notebook_spec(chart.to_dict())
            if self.live is None:
                self.live = live_chart(spec)
            else:
                self.live.spec = spec  # the front end re-embeds the new spec in place
        except Exception:  # the static SVG is shown instead: a view never raises in a callback
            return False
        return True


class View(widgets.VBox):  # type: ignore[misc]  # ipywidgets is untyped
    """A kagreport view: live ipywidgets controls plus a static HTML snapshot.

    Subclasses build their controls, call ``refresh`` whenever one changes,
    and implement :meth:`to_html`.
    """

    #: Name shown in the static snapshot.
    title = "kagreport view"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: One-line notices and errors (escaped HTML).
        self.message = widgets.HTML(value="")

    def _notify(self, text: str | None, *, kind: str = "info") -> None:
        self.message.value = "" if not text else message_html(text, kind=kind)

    def _controls_state(self) -> dict[str, str]:
        """Control name -> current value, for the snapshot header."""
        return {}

    def _sections(self) -> list[str]:
        """The snapshot's body: already-escaped HTML fragments."""
        raise NotImplementedError

    def to_html(self) -> str:
        """The static snapshot of the view's current state (see ``_repr_mimebundle_``).

        Returns
        -------
        str
            Self-contained HTML: no script, no external resource. Every response,
            error, label and control value is HTML-escaped.
        """
        return snapshot_html(
            self.title, self._controls_state(), [self.message.value, *self._sections()]
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The live widget's bundle plus a ``text/html`` static snapshot.

        Front ends with a widget manager and a kernel show the widget; an exported
        notebook without widget state (nbconvert, static sites, GitHub) falls back to
        ``text/html``: the view's current table(s) and chart(s) as inline SVG made by
        vl-convert (no JavaScript, no network), see :meth:`to_html`.
        """
        bundle: dict[str, Any] = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.to_html()
        include = kwargs.get("include")
        exclude = kwargs.get("exclude")
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def describe(value: object) -> str:
    """A control value as plain text for the snapshot header (escaped there)."""
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value) or "(none)"
    return "" if value is None else str(value)
