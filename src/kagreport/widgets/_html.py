"""HTML building blocks shared by the views: escaping, tables, truncation, inline SVG charts.

Everything a model or a user wrote (responses, errors, labels, patterns) passes
through :func:`esc` before it reaches HTML; nothing here emits a ``<script>``.
"""

from __future__ import annotations

import functools
import html
import itertools
import numbers
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kagreport import _format

__all__ = [
    "RESPONSE_LIMIT",
    "chart_svg",
    "esc",
    "fmt_number",
    "fmt_percent",
    "fmt_percent_interval",
    "fmt_points",
    "html_table",
    "message_html",
    "snapshot_html",
    "truncated_html",
]

#: Characters of a response shown in a view (PITFALLS.md B15); the full length is stated.
RESPONSE_LIMIT = 2000

_DASH = _format.MISSING
_TABLE_STYLE = "border-collapse:collapse;font-size:12px;font-family:sans-serif;margin:4px 0;"
_CELL_STYLE = "border:1px solid #ddd;padding:2px 6px;vertical-align:top;text-align:left"
# Numbers line up: right-aligned, digits of one width, a value and its interval on one line.
_NUMBER_STYLE = ";text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap"
_PRE_STYLE = (
    "white-space:pre-wrap;word-break:break-word;margin:0;max-height:16em;overflow:auto;"
    "font-size:11px"
)


def esc(value: object) -> str:
    """``html.escape`` of ``str(value)``, quotes included (safe in text and attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def fmt_number(value: object, digits: int = 3) -> str:
    """A number for a table cell: floats with ``digits`` decimals and integers in full (both
    with thousands commas), bools as yes/no, NaN/None as the missing mark."""
    return _format.number(value, digits, grouping=True)


def fmt_percent(value: object, digits: int = 1) -> str:
    """A proportion in percent (``0.619`` gives ``61.9%``); the missing mark where undefined."""
    return _format.percent(value, digits)


def fmt_percent_interval(value: object, low: object, high: object, digits: int = 1) -> str:
    """A proportion and its interval in percent: ``61.9% [57.6%, 66.0%]`` (the value alone
    when a bound is undefined)."""
    return _format.percent_interval(value, low, high, digits)


def fmt_points(value: object, digits: int = 1) -> str:
    """A difference of proportions in percentage points, signed, with a real minus:
    ``−5.0 pp``."""
    return _format.points(value, digits)


def _is_number(value: object) -> bool:
    # A bool is no number here (yes/no); NumPy's bool is not a numbers.Real at all.
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def truncated_html(
    text: str | None, limit: int = RESPONSE_LIMIT, *, length: int | None = None
) -> str:
    """A response as escaped ``<pre>`` text, cut to ``limit`` characters with the full length
    stated (PITFALLS.md B15); ``None`` gives an em dash.

    ``length`` is the full length when ``text`` was already cut by the caller.
    """
    if text is None:
        return _DASH
    shown = text[:limit]
    full = len(text) if length is None else max(length, len(text))
    note = ""
    if full > len(shown):
        note = (
            f'<div style="color:#a60;font-size:11px">[truncated: showing the first '
            f"{len(shown):,} of {full:,} characters]</div>"
        )
    elif not text:
        note = '<div style="color:#888;font-size:11px">(empty response)</div>'
    return f'<pre style="{_PRE_STYLE}">{esc(shown)}</pre>{note}'


def html_table(
    rows: Iterable[Mapping[Any, Any]],
    columns: Sequence[tuple[str, str]],
    *,
    raw: Iterable[str] = (),
    formatters: Mapping[str, Callable[[Mapping[Any, Any]], str]] | None = None,
    numeric: Iterable[str] = (),
) -> str:
    """An HTML table with every header and cell escaped.

    Parameters
    ----------
    rows : iterable of mapping
        One mapping per row.
    columns : sequence of (key, header)
        The columns shown, in order.
    raw : iterable of str
        Keys whose cell text is already HTML built by this module from escaped parts
        (never pass untrusted text through here unescaped).
    formatters : mapping, optional
        Key -> function of the row giving the cell text (escaped afterwards unless the key
        is in ``raw``). Other cells go through :func:`fmt_number` for numbers and
        :func:`esc` for everything.
    numeric : iterable of str
        Keys of columns of numbers that the rows do not hold as numbers (an interval built
        by a formatter). They, and every column whose rows hold a number, are
        right-aligned with tabular figures, so that digits line up.
    """
    rows = list(rows)
    raw = set(raw)
    formatters = formatters or {}
    numeric = set(numeric) | {
        key for key, _ in columns if any(_is_number(row.get(key)) for row in rows)
    }

    def style(key: str) -> str:
        return _CELL_STYLE + (_NUMBER_STYLE if key in numeric else "")

    head = "".join(
        f'<th style="{style(key)};background:#f4f4f4">{esc(h)}</th>' for key, h in columns
    )
    body = []
    for row in rows:
        cells = []
        for key, _ in columns:
            if key in formatters:
                text = formatters[key](row)
            else:
                value = row.get(key)
                text = value if isinstance(value, str) else fmt_number(value)
            cells.append(f'<td style="{style(key)}">{text if key in raw else esc(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table style="{_TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def message_html(text: str, *, kind: str = "info") -> str:
    """A one-line escaped notice; ``kind`` is ``"info"`` or ``"error"``."""
    colour = "#b00020" if kind == "error" else "#555"
    role = ' role="alert"' if kind == "error" else ""
    return f'<div{role} style="color:{colour};font-size:12px;margin:4px 0">{esc(text)}</div>'


# ------------------------------------------------------------------------------ charts

_SVG_COUNTER = itertools.count(1)
_ID = re.compile(r'(?<=\s)id="([^"]+)"')


def _unique_ids(svg: str) -> str:
    """Prefix the SVG's element ids (clip paths, gradients) so that several charts inlined in
    one page do not resolve each other's ``url(#...)`` references."""
    ids = set(_ID.findall(svg))
    if not ids:
        return svg
    prefix = f"kagreport-svg{next(_SVG_COUNTER)}-"
    for name in sorted(ids, key=len, reverse=True):
        quoted = re.escape(name)
        svg = re.sub(rf'(?<=\s)id="{quoted}"', f'id="{prefix}{name}"', svg)
        svg = re.sub(rf"url\(#{quoted}\)", f"url(#{prefix}{name})", svg)
        svg = re.sub(rf'href="#{quoted}"', f'href="#{prefix}{name}"', svg)
    return svg


@functools.lru_cache(maxsize=64)
def _svg_of_spec(spec: str) -> str:
    import vl_convert

    from kagreport.charts._export import vegalite_version

    return str(vl_convert.vegalite_to_svg(spec, vl_version=vegalite_version()))


def chart_svg(chart: Any) -> str:
    """Render an Altair chart to inline SVG with vl-convert: no JavaScript, no network.

    The data is inline in the spec (the charts aggregate, so it is small), fonts are
    vl-convert's own, and the result can be embedded in HTML that is opened offline
    or from ``file://`` (PITFALLS.md B13). Specs already rendered are cached.
    """
    svg = _svg_of_spec(chart.to_json(indent=None))
    # The SVG text is Vega's: it escapes the labels it draws. Strip any script all the same.
    svg = re.sub(r"<script\b.*?</script\s*>", "", svg, flags=re.IGNORECASE | re.DOTALL)
    return _unique_ids(svg)


def snapshot_html(title: str, controls: Mapping[str, str], sections: Sequence[str]) -> str:
    """The static fallback document of a view: a labelled box with the control values and
    the given sections (already-built HTML)."""
    state = "; ".join(f"{esc(k)}: {esc(v)}" for k, v in controls.items())
    header = (
        f'<div style="font-size:11px;color:#666;margin-bottom:4px">'
        f"<b>{esc(title)}</b> &mdash; static snapshot (the controls need a live Jupyter "
        f"kernel)" + (f"<br>{state}" if state else "") + "</div>"
    )
    return (
        # A long option or response wraps anywhere rather than widen the page it is put in.
        '<div class="kagreport-widget-snapshot" style="border:1px solid #ccc;padding:6px;'
        'font-family:sans-serif;overflow-wrap:anywhere;max-width:100%;overflow-x:auto">'
        + header
        + "".join(sections)
        + "</div>"
    )
