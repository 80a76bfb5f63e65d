"""Static export with vl-convert (offline): SVG, PNG, PDF, and HTML with the JavaScript inlined.

What vl-convert 1.9 does with fonts (checked on a Debian host without Arial or CJK fonts):

- It bundles Liberation Sans (metric-compatible with Arial) and uses it for ``sans-serif``
  and when a named font is missing; other fonts come from the host (fontconfig folders) and
  from folders given to :func:`register_font_directory`. The paper theme names Liberation Sans
  so that a figure looks the same on every host.
- A character that no available font has is drawn **silently** as an empty box ("tofu") in PNG
  and PDF, with no error or warning; in the PDF the text layer is wrong as well (``精度``
  extracts as ``度度``: both boxes map to one glyph). :func:`save_figure` therefore checks every
  character it is about to draw with vl-convert's own renderer (``missing_glyphs``) and
  emits a ``MissingGlyphWarning`` naming them. SVG keeps the text as text (the viewer's
  fonts draw it), so SVG export does not warn.
- ``labelFontSize=0`` exports fine (vega/vl-convert#172 is fixed in this version).
- PDF: text is embedded as text (``pdftotext`` finds it) and drawn above the shapes that are
  declared after it (vega/vl-convert#147): every chart of this package declares its text layers
  last, so PNG and PDF agree.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import unicodedata
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from xml.sax.saxutils import escape, quoteattr

import altair as alt
import vl_convert as vlc

from kagreport._atomic import write_atomic
from kagreport._format import printable
from kagreport.charts._theme import (
    DPI,
    FONT,
    POINTS_PER_INCH,
    PRESETS,
    is_faceted,
    preset_width,
)

__all__ = [
    "FORMATS",
    "MissingGlyphWarning",
    "missing_glyphs",
    "paper_spec",
    "register_font_directory",
    "save_figure",
]

#: The suffixes :func:`save_figure` writes.
FORMATS: Final = (".svg", ".png", ".pdf", ".html")

# An unassigned code point: no font has a glyph for it, so it renders as the missing glyph.
_NO_GLYPH: Final = "\u0378"
_SVG_NS: Final = "{http://www.w3.org/2000/svg}"


class MissingGlyphWarning(UserWarning):
    """A PNG or PDF export contains characters that no font available to vl-convert draws.

    Attributes
    ----------
    characters : str
        The characters, each once, in order of appearance.
    font : str
        The font family the text asked for.
    """

    def __init__(self, message: str, characters: str, font: str) -> None:
        super().__init__(message)
        self.characters = characters
        self.font = font


def _probe(character: str, font: str) -> bytes:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48">'
        f'<text x="6" y="36" font-family={quoteattr(font)} font-size="32">'
        f"{escape(character)}</text></svg>"
    )
    return bytes(vlc.svg_to_png(svg))


@functools.lru_cache(maxsize=8192)
def _has_glyph(character: str, font: str) -> bool:
    # vl-convert falls back through every font it knows; when none has the character it draws
    # the missing-glyph box, exactly as for a code point that no font can have.
    return _probe(character, font) != _probe(_NO_GLYPH, font)


def _checked(character: str) -> bool:
    # Not spaces, controls, format characters or surrogates; unassigned and private-use
    # characters are checked (a font rarely has them, and then they come out as boxes).
    category = unicodedata.category(character)
    return not character.isascii() and category[0] != "Z" and category not in ("Cc", "Cf", "Cs")


def missing_glyphs(text: str, font: str = FONT) -> str:
    """The characters of ``text`` that vl-convert cannot draw in ``font`` on this host.

    Each character is drawn alone with vl-convert (through its font fallback) and compared with
    the drawing of an unassigned code point, which no font has; ASCII, spaces, control and
    format characters are not checked. Results are cached per font and character.

    Returns
    -------
    str
        The missing characters, each once, in order of appearance ("" when all are drawn).
    """
    seen = dict.fromkeys(c for c in text if _checked(c))
    return "".join(c for c in seen if not _has_glyph(c, font))


def register_font_directory(path: str | os.PathLike[str]) -> None:
    """Make the fonts in a folder available to vl-convert (for example a CJK font).

    Applies to every later export in this process.

    Raises
    ------
    NotADirectoryError
        If ``path`` is not a folder.
    """
    folder = Path(path).resolve()
    if not folder.is_dir():
        raise NotADirectoryError(f"not a folder of fonts: {folder}")
    vlc.register_font_directory(str(folder))
    _has_glyph.cache_clear()


def _drawn_text(svg: str) -> dict[str, str]:
    """Font family -> the text the SVG draws with it (text of size 0 is not drawn)."""
    texts: dict[str, list[str]] = {}
    for element in ET.fromstring(svg).iter(f"{_SVG_NS}text"):
        size = re.match(r"\s*([0-9.]+)", element.get("font-size", "1"))
        if size is not None and float(size.group(1)) == 0:
            continue
        family = element.get("font-family", "sans-serif")
        texts.setdefault(family, []).append("".join(element.itertext()))
    return {family: "".join(parts) for family, parts in texts.items()}


def _warn_missing(svg: str, name: str) -> None:
    for family, text in _drawn_text(svg).items():
        missing = missing_glyphs(text, family)
        if missing:
            points = ", ".join(f"U+{ord(c):04X}" for c in missing)
            warnings.warn(
                MissingGlyphWarning(
                    f"{name}: no font available to vl-convert has {missing!r} ({points}) for "
                    f"{family}; they are drawn as empty boxes. Register a font that has them "
                    "with kagreport.charts.register_font_directory(folder), e.g. Noto Sans CJK",
                    missing,
                    family,
                ),
                stacklevel=3,
            )


@functools.lru_cache(maxsize=1)
def vegalite_version() -> str | None:
    """The Vega-Lite version Altair writes, as vl-convert names it (None: vl-convert's latest)."""
    match = re.match(r"v?(\d+)\.(\d+)", alt.SCHEMA_VERSION)
    version = f"{match.group(1)}.{match.group(2)}" if match else None
    return version if version in vlc.get_vegalite_versions() else None


def _svg_width(svg: str) -> float:
    match = re.search(r'<svg[^>]*\swidth="([0-9.]+)"', svg)
    return float(match.group(1)) if match else math.nan


def _fit_facet(spec: dict[str, Any], width: float) -> None:
    """Set the cells' width of a facet so that the whole figure is ``width`` pixels wide.

    A facet's width is its cells' plus what lies beside them (axes, legend, spacing), which
    only a rendering measures; Vega rounds a cell's width up to whole pixels. One rendering at
    a first guess gives the overhead, the cells take the whole pixels left, and the right
    padding the fraction that remains.
    """
    columns = spec.get("columns")
    if not isinstance(columns, int) or columns < 1:
        columns = 1
    inner = spec["spec"]
    version = vegalite_version()
    guess = float(max(20, math.floor((width - 60.0) / columns - 10.0)))
    inner["width"] = guess
    measured = _svg_width(vlc.vegalite_to_svg(spec, vl_version=version))
    if not math.isfinite(measured):
        return
    inner["width"] = float(max(20, math.floor(guess + (width - measured) / columns)))
    measured = _svg_width(vlc.vegalite_to_svg(spec, vl_version=version))
    rest = width - measured
    if math.isfinite(rest) and rest > 0:
        padding = spec.get("padding", spec.get("config", {}).get("padding", 0))
        if isinstance(padding, int | float):
            padding = {"left": padding, "top": padding, "right": padding, "bottom": padding}
        if isinstance(padding, dict):
            spec["padding"] = {**padding, "right": round(padding.get("right", 0) + rest, 6)}


def _printable_strings(value: Any) -> Any:
    """``value`` (a spec) with every string, keys included, made printable
    (``kagreport._format.printable``): vl-convert aborts the whole process, with no
    exception to catch, on a character its text measuring cannot put in XML (a NUL, an
    ESC, U+FFFE). The charts of this package draw names printable already; this is for any
    other spec, and it changes nothing else (an expression's string literals are escaped
    JSON, so ASCII)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k): _printable_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable_strings(v) for v in value]
    return value


def paper_spec(
    chart: alt.TopLevelMixin | Mapping[str, Any],
    preset: str | None = None,
    *,
    validate: bool = False,
) -> dict[str, Any]:
    """The spec of ``chart`` at its paper size: the inverse of ``fit_container``.

    A spec of ``fit_container`` gets back the figure it kept (width, height, cells,
    padding, text sizes); ``preset``, when given and different, then resizes it. Otherwise
    the width becomes that of ``preset`` (``kagreport.charts.PRESETS``) when one is
    given, when the chart fills its container (``width: "container"``), or when it is a
    facet whose ``usermeta["kagreport"]["preset"]`` names one; the preset is then the one it
    names, else ``"two-column"`` for a facet and ``"one-column"`` otherwise. A facet's cells
    are sized so that the whole figure has that width (rendered to measure it). A chart of
    fixed width without ``preset`` keeps its width.

    Parameters
    ----------
    chart : alt.TopLevelMixin or Mapping
        An Altair chart or a Vega-Lite spec.
    preset : str, optional
        A name of ``kagreport.charts.PRESETS``.
    validate : bool
        Validate an Altair chart against the schema (``to_dict()``).

    Returns
    -------
    dict
        A new spec, every string in it ``kagreport._format.printable`` (the exporter
        takes no control character).

    Raises
    ------
    ValueError
        For an unknown preset.
    TypeError
        If ``chart`` is neither an Altair chart nor a mapping.
    """
    if isinstance(chart, Mapping):
        spec: dict[str, Any] = json.loads(json.dumps(chart))
    elif isinstance(chart, alt.TopLevelMixin):
        spec = chart.to_dict(validate=validate)
    else:
        raise TypeError(f"expected an Altair chart or a Vega-Lite spec, not {type(chart).__name__}")
    spec = _printable_strings(spec)
    usermeta = spec.get("usermeta")
    meta = usermeta.get("kagreport", {}) if isinstance(usermeta, dict) else {}
    paper = meta.pop("paper", None) if isinstance(meta.get("paper"), dict) else None
    faceted = is_faceted(spec)
    view = spec["spec"] if faceted else spec
    if paper is not None:  # a spec of fit_container: its paper figure again
        for section, values in paper.get("config", {}).items():
            spec.setdefault("config", {}).setdefault(section, {}).update(values)
        if "height" in paper:
            view["height"] = paper["height"]
        if "padding" in paper:
            spec["padding"] = paper["padding"]
        if not faceted:
            if spec.get("width") == "container":
                spec["width"] = paper["width"]
            if preset is None or preset == paper.get("preset"):
                return spec
        elif "cell_width" in paper:
            view["width"] = paper["cell_width"]
        preset = preset or paper.get("preset")  # a facet is fitted to it (again)
    # A facet that names its preset is fitted to it; a fixed width is kept without a preset.
    resize = preset is not None or spec.get("width") == "container"
    resize = resize or (faceted and meta.get("preset") in PRESETS)
    if not resize:
        return spec
    name = preset or meta.get("preset") or ("two-column" if faceted else "one-column")
    width = preset_width(name)
    if faceted:
        _fit_facet(spec, width)
    elif "mark" in spec or "layer" in spec:  # a concatenation has no width of its own
        spec["width"] = width
    return spec


def _spec(
    chart: alt.TopLevelMixin | Mapping[str, Any],
    preset: str | None,
    width: float | None,
    height: float | None,
    font: str | None,
) -> dict[str, Any]:
    if not isinstance(chart, Mapping | alt.TopLevelMixin):
        raise TypeError(f"expected an Altair chart or a Vega-Lite spec, not {type(chart).__name__}")
    spec = paper_spec(chart, preset, validate=True)
    for name, value in (("width", width), ("height", height)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"`{name}` must be a positive number of pixels, not {value!r}")
        if name == "width" and is_faceted(spec):
            _fit_facet(spec, float(value))
        else:
            (spec["spec"] if is_faceted(spec) else spec)[name] = value
    if font is not None:
        spec.setdefault("config", {})["font"] = font
    return spec


# Over 80 lines only with its docstring (the body is about 35 lines).
def save_figure(
    chart: alt.TopLevelMixin | Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    preset: str | None = None,
    width: float | None = None,
    height: float | None = None,
    dpi: float = DPI,
    scale: float | None = None,
    font: str | None = None,
) -> Path:
    """Write a chart to SVG, PNG, PDF or self-contained HTML, chosen by the suffix of ``path``.

    Rendering is vl-convert's, offline: no browser and no network (the data must be inline, as
    in every chart of :mod:`kagreport.charts`). The file is written atomically (a temporary file
    in the same folder, then ``os.replace``): an existing file is replaced whole or left intact.

    Sizes are CSS pixels at 72 per inch, so 1 px = 1 pt: the charts of this package are
    237.6 px = 3.3 in wide (the ``"one-column"`` preset) with text of at least 8 pt. PNG
    pixels are ``dpi / 72`` times that, with the PNG's density (``pHYs``) set to ``dpi``, so
    the image keeps its physical size: a one-column PNG at 300 dpi is 990 pixels wide. SVG
    and PDF are vectors (``dpi`` does not apply).

    Parameters
    ----------
    chart : alt.TopLevelMixin or Mapping
        An Altair chart (validated by ``to_dict``) or a Vega-Lite spec.
    path : path-like
        The output file; its suffix (``.svg``, ``.png``, ``.pdf``, ``.html``; any case) picks
        the format.
    preset : str, optional
        A figure width preset (``"one-column"``: 3.3 in,
        ``"two-column"``: 7 in). Without it a chart keeps its own width, except one that
        fills its container (``width: "container"``, as the site's charts do), which takes
        its paper preset.
    width, height : float, optional
        Override the chart's ``width``/``height`` (pixels; with the paper theme the width is
        that of the whole figure and the height that of the plot; a facet's cells are sized
        to make the figure ``width`` wide).
    dpi : float
        PNG resolution, pixels per inch (default 300).
    scale : float, optional
        PNG pixels per CSS pixel instead of ``dpi`` (``dpi = 72 * scale``).
    font : str, optional
        Override the font of every text (``config.font``).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        For an unknown suffix (named, with the allowed ones) or preset, a non-positive size,
        dpi or scale, or a spec vl-convert cannot render.
    OSError
        If the file cannot be written.

    Warns
    -----
    MissingGlyphWarning
        PNG and PDF only: characters no font available to vl-convert can draw (see
        ``missing_glyphs``), which would come out as empty boxes.

    Notes
    -----
    HTML embeds Vega, Vega-Lite and vega-embed (about 1 MB) so that it opens offline and from
    ``file://``; it uses the browser's fonts.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"cannot tell the format of {target.name!r} from its suffix {target.suffix!r}; "
            f"use one of {', '.join(FORMATS)}"
        )
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
            raise ValueError(f"`scale` must be a positive number, not {scale!r}")
        dpi = POINTS_PER_INCH * float(scale)
    if isinstance(dpi, bool) or not isinstance(dpi, int | float) or not dpi > 0:
        raise ValueError(f"`dpi` must be a positive number of pixels per inch, not {dpi!r}")
    spec = _spec(chart, preset, width, height, font)
    version = vegalite_version()
    payload: str | bytes
    if suffix == ".html":
        payload = vlc.vegalite_to_html(spec, vl_version=version, bundle=True)
    else:
        svg = vlc.vegalite_to_svg(spec, vl_version=version)
        if suffix == ".svg":
            payload = svg
        else:
            _warn_missing(svg, target.name)
            if suffix == ".png":
                # vl-convert multiplies the size by ppi / 72 and records ppi in the PNG.
                payload = vlc.svg_to_png(svg, scale=1.0, ppi=float(dpi))
            else:
                payload = vlc.svg_to_pdf(svg)
    write_atomic(target, payload)
    return target
