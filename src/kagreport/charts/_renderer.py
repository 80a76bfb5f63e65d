"""The Altair renderer of kagreport: live, offline charts in notebooks, and a static SVG saved.

Altair's default renderer emits HTML that loads Vega from a CDN (blank offline, or in an
exported notebook: PITFALLS.md B13), and Altair 6's Vega-Lite mimetype (v6) is not drawn by
JupyterLab 4. This renderer's display bundle holds:

- the view of a live, offline :func:`~kagreport.charts._live.live_spec` widget (Altair's
  ``JupyterChart``), which JupyterLab 4, Notebook 7 and VS Code draw interactively, as wide
  as the output area (``notebook_spec``);
- ``image/svg+xml`` drawn by vl-convert: the static figure kept in the saved notebook for
  nbconvert, GitHub and any front end without the widget;
- the Vega-Lite spec itself, which the report site draws with its own script;
- a one-line ``text/plain``.

Importing :mod:`kagreport.charts` enables it unless another renderer than Altair's
``"default"`` was chosen (:func:`enable_by_default`); :func:`enable_notebook_renderer`
enables it whatever was chosen.
"""

from __future__ import annotations

from typing import Any

from kagreport.charts._live import WIDGET_VIEW, live_available, live_spec
from kagreport.charts._theme import fit_container, is_faceted

__all__ = [
    "NOTEBOOK_WIDTH",
    "RENDERER_NAME",
    "enable_by_default",
    "enable_notebook_renderer",
    "notebook_spec",
    "render_bundle",
]

RENDERER_NAME = "kagreport"

#: Width, CSS pixels, that small multiples are laid out for in a notebook: the live view
#: cannot measure its output area from Python (a single view fills it: width "container").
NOTEBOOK_WIDTH = 860
#: Narrowest panel of small multiples on screen (as the report site's script lays them out).
_MIN_PANEL = 200
#: What lies beside a facet's panels (axis, labels, spacing), pixels.
_FACET_OVERHEAD = 80


#: Characters a title or subtitle line holds on screen (lines were cut for a paper column).
_SCREEN_LINE = 110


def _unwrap_title(spec: dict[str, Any]) -> None:
    """Join a title's lines (and its subtitle's) cut for paper, and cut them for a screen."""
    import textwrap

    title = spec.get("title")
    if not isinstance(title, dict):
        return
    for key in ("text", "subtitle"):
        lines = title.get(key)
        if isinstance(lines, list) and all(isinstance(line, str) for line in lines):
            wrapped = textwrap.wrap(" ".join(lines), _SCREEN_LINE, break_on_hyphens=False)
            title[key] = wrapped[0] if key == "text" and len(wrapped) == 1 else wrapped


def notebook_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The screen spec of a chart in a notebook's live view.

    A single or layered view fills the output area (``fit_container``:
    width ``"container"``, screen text sizes); small multiples get as many panels a row as
    ``NOTEBOOK_WIDTH`` holds. The paper figure stays in its ``usermeta`` (what the
    static SVG and :func:`~kagreport.charts.save_figure` draw).
    """
    screen = fit_container(spec)
    _unwrap_title(screen)
    if is_faceted(screen):
        meta = screen.get("usermeta", {}).get("kagreport", {})
        panels = int(meta.get("panels") or 1)
        columns = max(1, min(panels, NOTEBOOK_WIDTH // _MIN_PANEL))
        screen["columns"] = columns
        screen["spec"]["width"] = max(60, (NOTEBOOK_WIDTH - _FACET_OVERHEAD) // columns - 1)
    return screen


def render_bundle(
    spec: dict[str, Any], *, live: bool = True, embed_options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The display bundle of a Vega-Lite spec (module docstring).

    Parameters
    ----------
    spec : dict
        A Vega-Lite spec, data inline (what Altair passes to its renderers).
    live : bool
        Include the live widget's view (when ``anywidget`` is installed).
    embed_options : dict, optional
        vega-embed options of the live view (default: the actions menu without the
        Vega Editor link, :data:`kagreport.charts._live.EMBED_OPTIONS`).

    Returns
    -------
    dict
        Mimetype -> data. A spec vl-convert cannot draw has no ``image/svg+xml`` (the
        ``text/plain`` says why) but still its live view.
    """
    import vl_convert

    bundle: dict[str, Any] = {f"application/vnd.vegalite.v{_vegalite_major()}+json": spec}
    plain = "<kagreport chart: live Vega view, with a static SVG>"
    try:
        bundle["image/svg+xml"] = vl_convert.vegalite_to_svg(spec)
    except Exception as exc:  # the live view may still draw it; say why there is no figure
        plain = f"<kagreport chart: no static SVG ({type(exc).__name__}: {exc})>"
    if live and live_available():
        widget = live_spec(notebook_spec(spec), embed_options=embed_options)
        widget_bundle = widget._repr_mimebundle_()
        if isinstance(widget_bundle, tuple):  # (data, metadata)
            widget_bundle = widget_bundle[0]
        if widget_bundle and WIDGET_VIEW in widget_bundle:
            bundle[WIDGET_VIEW] = widget_bundle[WIDGET_VIEW]
    bundle["text/plain"] = plain
    return bundle


def _render(spec: dict[str, Any], **options: Any) -> dict[str, Any]:
    return render_bundle(
        spec, live=bool(options.get("live", True)), embed_options=options.get("embed_options")
    )


def _vegalite_major() -> str:
    import altair as alt

    return str(getattr(alt, "SCHEMA_VERSION", "v5")).lstrip("v").split(".")[0]


def _register() -> Any:
    import altair as alt

    if RENDERER_NAME not in alt.renderers.names():
        alt.renderers.register(RENDERER_NAME, _render)
    return alt


def enable_notebook_renderer(*, live: bool = True) -> None:
    """Make Altair charts live and offline in notebooks, and keep a static SVG of each.

    Registers and enables the ``"kagreport"`` Altair renderer (module docstring), whatever
    renderer was enabled before. Importing :mod:`kagreport.charts` already does so when
    Altair's ``"default"`` is active; ``alt.renderers.enable("default")`` goes back to
    Altair's own.

    Parameters
    ----------
    live : bool
        ``False``: the static SVG (and the Vega-Lite spec) only, no widget.
    """
    _register().renderers.enable(RENDERER_NAME, live=live)


def enable_by_default() -> None:
    """Enable the renderer if Altair's ``"default"`` one is active (a choice of another,
    e.g. by the report site's notebook set-up, is kept)."""
    alt = _register()
    if alt.renderers.active == "default":
        alt.renderers.enable(RENDERER_NAME)
