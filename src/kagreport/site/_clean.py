"""Notebooks' HTML, cleaned for the site by an allow-list sanitizer that parses as browsers do.

A notebook's HTML (cell outputs, Markdown cells, raw HTML cells) goes into its page. It is
parsed by ammonia over html5ever (through ``nh3``), the HTML5 parsing algorithm browsers
implement, so markup that one parser reads as a comment or as text and a browser as a tag
(``<!--><meta ...>-->``, ``<svg><style><meta ...>``, ``</script/>``) is read as the browser
reads it, then written out again from the tree with only what the allow-list keeps:

- text structure: headings, paragraphs, lists, tables (pandas' included), code, quotes,
  ``<details>``, ``<bdi>``, figures;
- images whose source is a relative path or a ``data:`` URL of PNG, JPEG, GIF, WebP or SVG
  (an ``<img>`` runs no script and loads nothing an SVG refers to); an inline ``<svg>``
  (a chart in a widget's static snapshot) becomes such an image;
- links to http(s), mailto, a fragment or a relative path, given
  ``rel="noopener noreferrer"``: they go somewhere only when the reader clicks;
- ``class``, ``id``, ``title``, ``lang``, ``dir`` and ``style`` attributes.

Everything else goes: ``<script>``, ``<style>`` (kept apart below), ``<meta>``, ``<link>``,
``<base>``, forms, frames, ``<object>``, ``<embed>``, MathML, event handlers,
``data-*`` and ``name`` attributes (``name`` clobbers ``document`` properties), comments.

Style sheets: a ``<style>`` element's text is kept (in a ``<style>`` of the site's own
making, before the cleaned markup) when it holds no ``<``, no backslash escape, and nothing
that loads a resource (``url(``, ``@import``, ``image-set``, ...): pandas' table styles and
``Styler`` colours stay, and the text cannot end its element or reach a file or a host.
The same rule decides ``style`` attributes. Styles run no code; the pages' policy forbids
the network besides.
"""

from __future__ import annotations

import base64
import html as markup
import re
from typing import Any

from kagreport._optional import optional

with optional("nh3"):
    import nh3

__all__ = ["clean_html"]

_TAGS = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite", "code", "col",
    "colgroup", "data", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption",
    "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark",
    "ol", "p", "pre", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "u", "ul",
    "var", "wbr",
})  # fmt: skip
_CELL = {"colspan", "rowspan", "headers", "scope", "align", "valign"}
_ATTRIBUTES = {
    "*": {"class", "id", "title", "lang", "dir", "style"},
    "a": {"href", "hreflang"},
    "img": {"src", "alt", "width", "height"},
    "td": _CELL,
    "th": _CELL,
    "tr": {"align", "valign"},
    "table": {"border"},
    "col": {"span", "align"},
    "colgroup": {"span", "align"},
    "ol": {"start", "reversed", "type"},
    "li": {"value"},
    "details": {"open"},
    "time": {"datetime"},
    "data": {"value"},
    "del": {"datetime"},
    "ins": {"datetime"},
    # nbconvert's output wrappers say what was shown (JupyterLab's styles select on it).
    "div": {"data-mime-type"},
}
_SCHEMES = {"http", "https", "mailto", "data"}

# Images a data: URL may hold: raster formats and SVG, which an <img> shows as a picture
# (no script, no external reference followed).
_DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.IGNORECASE)
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
# What may load a resource or hide a word from these checks in CSS.
_CSS_BANNED = re.compile(
    r"[<\\]|@import|url\s*\(|image-set|image\s*\(|src\s*\(|element\s*\(|cross-fade"
    r"|expression\s*\(|binding|behavior",
    re.IGNORECASE,
)
# A <style> element's text, for the style sheets kept apart (its markup is cleaned anyway).
_STYLE = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.IGNORECASE | re.DOTALL)
# An inline <svg> element, shown as an image. Whatever this finds (rightly or not) becomes
# an image's data, which is inert; whatever it leaves is cleaned like the rest.
_SVG = re.compile(r"<svg\b([^>]*)>.*?</svg\s*>", re.IGNORECASE | re.DOTALL)
_LABEL = re.compile(r"""\baria-label\s*=\s*("[^"]*"|'[^']*')""", re.IGNORECASE)


def _svg_image(found: re.Match[str]) -> str:
    svg, opening = found.group(0), found.group(1)
    if "xmlns=" not in opening:  # an image of SVG is an XML document: it needs its namespace
        svg = '<svg xmlns="http://www.w3.org/2000/svg"' + svg[len("<svg") :]
    label = _LABEL.search(opening)
    alt = markup.unescape(label.group(1)[1:-1]) if label else "an SVG image"
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img alt="{markup.escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def _safe_url(tag: str, value: str) -> bool:
    # A browser drops tabs and newlines anywhere in a URL and trims C0 controls and spaces.
    url = re.sub(r"[\t\n\r]", "", value).strip("".join(map(chr, range(0x21))))
    if re.match(r"[/\\]{2}", url):  # scheme-relative (file://host/... from a file:// page)
        return False
    scheme = _SCHEME.match(url)
    if tag == "img":
        return scheme is None or _DATA_IMAGE.match(url) is not None
    return scheme is None or scheme.group(1).lower() in ("http", "https", "mailto")


def _safe_css(text: str) -> bool:
    """Whether CSS ``text`` can neither load a resource nor end the element holding it."""
    return _CSS_BANNED.search(text) is None


def _attribute(tag: str, name: str, value: str) -> str | None:
    if name in ("href", "src"):
        return value if _safe_url(tag, value) else None
    if name == "style":
        return value if _safe_css(value) else None
    return value


def clean_html(html: Any) -> str:
    """``html`` (a notebook's HTML) with only what the allow-list keeps (see the module).

    Parameters
    ----------
    html : str or bytes
        An HTML fragment (bytes as UTF-8).

    Returns
    -------
    str
        The fragment as the sanitizer writes it, its safe style sheets first.

    Raises
    ------
    MissingExtraError
        If nh3 is not installed (the ``site`` extra).
    """
    text = html.decode("utf-8", "replace") if isinstance(html, bytes) else str(html)
    text = _SVG.sub(_svg_image, text)
    sheets = [css for css in _STYLE.findall(text) if css.strip() and _safe_css(css)]
    cleaned = nh3.clean(
        text,
        tags=set(_TAGS),
        attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
        attribute_filter=_attribute,
        url_schemes=set(_SCHEMES),
        strip_comments=True,
        link_rel="noopener noreferrer",
    )
    return "".join(f"<style>{css}</style>" for css in sheets) + cleaned
