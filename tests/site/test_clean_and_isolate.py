"""The notebook sanitizer and the isolation of right-to-left names (issue 27, items 4 and 8).

What a browser makes of the results is checked in Chromium by
tests/browser/test_pages_take_over.py; these check the markup written.
"""

from __future__ import annotations

import base64
import re

import pytest

from kagreport._format import isolated
from kagreport.site._bidi import isolate, mark
from kagreport.site._clean import clean_html
from kagreport.site._templates import Templates

REFRESH = '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/x">'


@pytest.mark.parametrize(
    "html",
    [
        f"<!-->{REFRESH}-->",
        f"<!-- a --!>{REFRESH}-->",
        f"<script></script/>{REFRESH}",
        f"<svg><style>{REFRESH}</style></svg>",
        f"<math><style>{REFRESH}",
        f"<noscript><p title='</noscript>{REFRESH}'></p></noscript>",
        f"<template>{REFRESH}</template>",
        f'<div data-x="1"><base href="http://127.0.0.1:9/">{REFRESH}<link rel="prefetch" '
        'href="http://127.0.0.1:9/"><iframe srcdoc="x"></iframe><form action="/"></form></div>',
    ],
)
def test_no_refresh_base_link_or_frame_survives(html: str) -> None:
    cleaned = clean_html(html)
    for tag in ("meta", "base", "link", "iframe", "form", "script", "svg", "math"):
        assert f"<{tag}" not in cleaned.lower(), cleaned
    assert "127.0.0.1" not in cleaned


def test_tables_images_links_and_styles_that_load_nothing_are_kept() -> None:
    frame = (
        "<style scoped>\n.dataframe tbody tr th { vertical-align: top; }\n</style>"
        '<table border="1" class="dataframe"><thead><tr style="text-align: right;">'
        "<th></th><th>a</th></tr></thead><tbody><tr><th>0</th><td>1</td></tr></tbody></table>"
    )
    cleaned = clean_html(frame)
    assert cleaned.startswith("<style>\n.dataframe tbody tr th { vertical-align: top; }\n</style>")
    assert '<table border="1" class="dataframe">' in cleaned
    assert '<tr style="text-align: right;">' in cleaned

    png = '<img src="data:image/png;base64,iVBORw0KGgo=" width="3" alt="p">'
    assert clean_html(png) == png
    assert clean_html('<img src="figures/a.png">') == '<img src="figures/a.png">'
    link = '<a href="https://example.org/a">a</a>'
    assert clean_html(link) == '<a href="https://example.org/a" rel="noopener noreferrer">a</a>'


@pytest.mark.parametrize(
    ("html", "gone"),
    [
        ("<style>body { background: url(http://127.0.0.1:9/) }</style><p>t</p>", "<style"),
        ("<style>@import 'http://127.0.0.1:9/x.css';</style>", "<style"),
        ("<style>p { color: red } </style><script>x</script></style>", "</script"),
        ("<style>p::after { content: '\\75 rl(' }</style>", "<style"),  # an escape hides url(
        ('<p style="background-image: url(http://127.0.0.1:9/)">t</p>', "style="),
        ('<img src="http://127.0.0.1:9/x.png">', "127.0.0.1"),
        ('<img src="//127.0.0.1:9/x.png">', "127.0.0.1"),
        ('<img src="\\\\127.0.0.1\\share\\x.png">', "127.0.0.1"),
        ('<img src="data:text/html;base64,PHA+">', "data:"),
        ('<a href="data:text/html,x">d</a>', "data:"),
        ('<a href=" java\tscript:alert(1)">j</a>', "script"),
        ('<p onclick="x()" name="body" data-x="1">t</p>', "="),
    ],
)
def test_what_could_load_navigate_or_run_is_dropped(html: str, gone: str) -> None:
    assert gone not in clean_html(html)


def test_an_inline_svg_becomes_an_image() -> None:
    svg = '<svg width="10" height="10" aria-label="A &amp; B"><rect width="5"/></svg>'
    cleaned = clean_html(f"<p>chart</p>{svg}")
    found = re.fullmatch(r'<p>chart</p><img alt="A &amp; B" src="data:image/svg\+xml;base64,'
                         r'([A-Za-z0-9+/=]+)">', cleaned)  # fmt: skip
    assert found is not None, cleaned
    image = base64.b64decode(found.group(1)).decode("utf-8")
    assert image == '<svg xmlns="http://www.w3.org/2000/svg"' + svg[len("<svg") :]


RLO = "\u202e"


def test_text_that_reorders_is_isolated_in_text_title_and_not_in_attributes() -> None:
    assert mark("plain name") == "plain name"
    assert mark("café, naïve") == "café, naïve"  # left to right: nothing to isolate
    assert mark("a\ufdd0b") == "a\ufffdb"  # a value cannot forge the brackets
    for name in ("my" + RLO, "\u05e9\u05dc\u05d5\u05dd", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\u2067x"):  # fmt: skip
        # An isolate the name opens and leaves open is closed inside ours (UAX #9, BD16).
        closing = "\u2069" if name.startswith("\u2067") else ""
        assert isolated(name) == f"\u2068{name}{closing}\u2069"
        page = (
            f'<title>{mark(name)} · t</title><h1 data-x="{mark(name)}">{mark(name)}, rank 2'
            f'</h1><script type="application/json">"{name}"</script>'
        )
        assert isolate(page) == (
            f'<title>\u2068{name}\u2069 · t</title><h1 data-x="{name}"><bdi>{name}</bdi>, '
            f'rank 2</h1><script type="application/json">"{name}"</script>'
        )


def test_templates_isolate_names_and_leave_other_pages_as_they_were() -> None:
    templates = Templates()
    html = templates.render("_header.html.j2", site_title="my" + RLO, nav=[("x", "y")], root="")
    assert f'<a class="site-title" href="index.html"><bdi>my{RLO}</bdi></a>' in html
    plain = templates.render("_header.html.j2", site_title="mine", nav=[("x", "y")], root="")
    assert "<bdi>" not in plain
    assert plain == html.replace(f"<bdi>my{RLO}</bdi>", "mine")
