"""An Altair renderer for notebooks that must work offline and export with their charts.

Altair's default renderer emits HTML that loads Vega from a CDN: offline, or in a notebook
exported to HTML, the charts are blank (PITFALLS.md B13). This renderer emits the Vega-Lite
mimetype, which JupyterLab draws with its own bundled Vega (interactive, no network), plus an
inline SVG drawn by vl-convert, which nbconvert and other front ends show as a static figure.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RENDERER_NAME", "enable_notebook_renderer"]

RENDERER_NAME = "kagreport"


def _render(spec: dict[str, Any], **options: Any) -> dict[str, Any]:
    import vl_convert

    version = "v" + ".".join(_vegalite_version().split(".")[:1])
    return {
        f"application/vnd.vegalite.{version}+json": spec,
        "image/svg+xml": vl_convert.vegalite_to_svg(spec),
        "text/plain": "<kagreport chart: Vega-Lite, with an SVG fallback>",
    }


def _vegalite_version() -> str:
    import altair as alt

    return str(getattr(alt, "SCHEMA_VERSION", "v5")).lstrip("v")


def enable_notebook_renderer() -> None:
    """Make Altair charts render offline in notebooks and survive HTML export.

    Registers and enables the ``"kagreport"`` Altair renderer (module docstring).
    Call it once at the top of a notebook; ``alt.renderers.enable("default")``
    goes back to Altair's own.
    """
    import altair as alt

    if RENDERER_NAME not in alt.renderers.names():
        alt.renderers.register(RENDERER_NAME, _render)
    alt.renderers.enable(RENDERER_NAME)
