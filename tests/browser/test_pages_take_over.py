"""Pages that a notebook or a name cannot take over (issue 27, items 4, 5 and 8), in Chromium.

One site is built for the module: a small kag run whose run name, setup names and question
ids carry a right-to-left override (U+202E), and a notebook (converted, not executed) whose
outputs, Markdown and raw cells carry the markup that Python's ``html.parser`` reads apart
from a browser, each with a ``<meta http-equiv="refresh">`` to a logging HTTP server on
127.0.0.1 or to a ``file://`` page outside the site, and a ``<script src>`` outside the site.

These pages are opened from ``file://`` WITHOUT the conftest's blocking route: what the
browser would fetch really reaches the logging server, which must receive nothing.
"""

from __future__ import annotations

import itertools
import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from .conftest import LOAD_TIMEOUT_MS, Browser, wait_for_charts

pytestmark = pytest.mark.browser

RLO = "\u202e"
RUN_NAME = "myrun" + RLO
SETUPS = ("alpha" + RLO, "beta")
QUESTIONS = [f"q{RLO}{n}" for n in range(1, 5)]


@dataclass
class Server:
    """An HTTP server on 127.0.0.1 that records every request and answers with a script."""

    port: int
    requests: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    record = Server(0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            record.requests.append(self.path)
            body = b"window.__evil = 'http';"
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    record.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _vectors(server: Server, outside: Path) -> list[str]:
    """HTML outputs that keep a refresh (or a script) when cleaned with ``html.parser``."""

    def refresh(target: str) -> str:
        return f'<meta http-equiv="refresh" content="0;url={target}">'

    return [
        f"<!-->{refresh(server.url('comment-gt'))}-->",
        f"<!-- a --!>{refresh(server.url('comment-bang'))}-->",
        f"<script></script/>{refresh((outside / 'landed.html').as_uri())}",
        f"<svg><style>{refresh(server.url('svg-style'))}</style></svg>",
        f"<math><style>{refresh(server.url('math-style'))}",
        f'<script src="{(outside / "evil.js").as_uri()}"></script>',
        f'<script src="{server.url("evil.js")}"></script>',
        '<img src="x.png" onerror="window.__evil = \'handler\'">',
    ]


# pandas' DataFrame HTML as it comes (its style block and its table).
DATAFRAME = (
    "<style scoped>\n    .dataframe tbody tr th {\n        vertical-align: top;\n    }\n</style>\n"
    '<table border="1" class="dataframe"><thead><tr style="text-align: right;"><th></th>'
    "<th>accuracy</th></tr></thead><tbody><tr><th>0</th><td>0.5</td></tr></tbody></table>"
)
# The id and classes of the site's own flipped-items pager (site.js's setupFlips), which
# the sanitizer keeps; its controls (a <select>, <button>s) it does not.
LOOKALIKE = (
    '<div id="side-by-side"><div class="flip-pager"></div><div class="flip-list"></div></div>'
)
BAR = {
    "data": {"values": [{"setup": "a", "accuracy": 0.5}, {"setup": "b", "accuracy": 0.7}]},
    "mark": "bar",
    "encoding": {"x": {"field": "setup", "type": "nominal"},
                 "y": {"field": "accuracy", "type": "quantitative"}},
}  # fmt: skip


def _notebook(path: Path, server: Server, outside: Path) -> Path:
    vectors = _vectors(server, outside)
    outputs: list[dict[str, Any]] = [
        {"output_type": "display_data", "metadata": {}, "data": {"text/html": html}}
        for html in [*vectors, DATAFRAME]
    ]
    outputs.append({"output_type": "display_data", "metadata": {},
                    "data": {"application/vnd.vegalite.v5+json": BAR, "text/plain": "chart"}})  # fmt: skip
    outputs.append({"output_type": "display_data", "metadata": {},
                    "data": {"text/html": LOOKALIKE, "text/plain": "lookalike"}})  # fmt: skip
    outputs.append({"output_type": "display_data", "metadata": {},
                    "data": {"text/markdown": vectors[0], "text/plain": "md"}})  # fmt: skip
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "# Hostile\n\n" + vectors[1]},
            {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "x",
             "outputs": outputs},
            {"cell_type": "raw", "metadata": {"raw_mimetype": "text/html"}, "source": vectors[4]},
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def _run(root: Path) -> Path:
    """A run of two systems over four questions whose names carry U+202E, as a
    ``kagreport.run`` document (kag's own names allow only a-z, 0-9 and '-')."""
    import dataclasses

    from kagreport import read_run

    names = [f"q{n}" for n in range(1, len(QUESTIONS) + 1)]
    truth = {"d": {q: {"input": f"Question {q}?", "output": {"type": "MCQ",
             "options": {"A": "a", "B": "b"}, "answer": "A"}} for q in names}}  # fmt: skip
    root.mkdir(parents=True)
    datasets = root / "datasets.json"
    datasets.write_text(json.dumps(truth), encoding="utf-8")
    stats = {"prompt": "p", "retrieval": None, "time": {"secs": 1, "nanos": 0},
             "config": {"augmented_generation": None, "provider": "stub", "model": "m",
                        "temperature": 0.0, "tokens": None}}  # fmt: skip
    for n, question in enumerate(names):
        for s, setup in enumerate(("alpha", "beta")):
            folder = root / "results" / "d" / question
            folder.mkdir(parents=True, exist_ok=True)
            answer = "A" if (n + s) % 2 == 0 else "B"
            record = {"ok": {"result": f"The answer is {answer}.", "stats": stats}}
            (folder / f"{setup}.json").write_text(json.dumps(record), encoding="utf-8")
    run = read_run(root / "results", format="kag", datasets=datasets)
    assert run.systems == ("alpha", "beta")
    assert run.question_names == tuple(names)
    run = dataclasses.replace(run, systems=SETUPS, question_names=tuple(QUESTIONS))
    document = root / "run.json"
    run.write(document)
    return document


@dataclass
class Built:
    site: Path
    outside: Path


@pytest.fixture(scope="module")
def built(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Built:
    from kagreport.site import SiteConfig, SourceConfig, build_site

    root = tmp_path_factory.mktemp("take-over")
    outside = root / "outside"
    outside.mkdir()
    (outside / "evil.js").write_text("window.__evil = 'file';\n", encoding="utf-8")
    (outside / "landed.html").write_text("<title>landed</title>", encoding="utf-8")
    config = SiteConfig(
        title="Take-over",
        sources=(SourceConfig(_run(root / "run"), name=RUN_NAME),),
        notebooks=(_notebook(root / "hostile.ipynb", server, outside),),
    )
    build_site(config, root / "site", execute_notebooks=False)
    return Built(root / "site", outside)


@dataclass
class Opened:
    page: Any
    navigations: list[str]
    drawn: bool


def _open(browser: Browser, path: Path) -> Opened:
    """``path`` in a page with no route: requests are made for real (file:// or 127.0.0.1)."""
    page = browser.context.new_page()
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    page.goto(path.as_uri(), wait_until="load", timeout=LOAD_TIMEOUT_MS)
    drawn = wait_for_charts(page)
    page.wait_for_timeout(500)  # a refresh of 0 s, a late script
    return Opened(page, navigations, drawn)


def _notebook_page(built: Built) -> Path:
    return built.site / "notebooks" / "hostile.html"


def test_notebook_outputs_neither_navigate_nor_run_anything(
    browser: Browser, built: Built, server: Server
) -> None:
    """Item 4: every vector's refresh is gone (the page stays, the server hears nothing, no
    file outside the site is opened), no script of the outputs runs, while the site's own
    scripts draw the notebook's chart and the DataFrame keeps its table and styles."""
    before = len(server.requests)
    opened = _open(browser, _notebook_page(built))
    page = opened.page
    try:
        assert server.requests[before:] == []
        assert page.url == _notebook_page(built).as_uri()
        assert opened.navigations == [page.url], opened.navigations
        assert page.evaluate("() => window.__evil") is None
        assert opened.drawn, "the site's own scripts did not draw the notebook's chart"
        th_align = page.evaluate(
            "() => getComputedStyle(document.querySelector('table.dataframe tbody th'))"
            ".verticalAlign"
        )
        assert th_align == "top"  # pandas' style block, kept
        text = page.evaluate("() => document.body.innerText")
        assert "accuracy" in text
        assert "Hostile" in text
    finally:
        page.close()


def test_markup_that_looks_like_the_sites_own_breaks_none_of_its_scripts(
    browser: Browser, built: Built
) -> None:
    """An output with the id and classes of the flipped-items pager (and none of its
    controls) stopped site.js on the notebook's page with "Cannot read properties of null"
    before its tables were set up; it is left alone."""
    with browser.open(_notebook_page(built)) as (page, log):
        ready = page.evaluate("() => document.documentElement.hasAttribute('data-site-ready')")
        errors = list(log.page_errors)
    assert errors == []
    assert ready


def test_a_script_outside_the_site_does_not_run(
    browser: Browser, built: Built, server: Server, tmp_path: Path
) -> None:
    """Item 5: markup that reached a page unescaped (a copy of the index with script
    elements put in by hand) runs neither a local file outside the site nor a script from a
    host, nor an inline script; the site's own scripts still run (the charts are drawn)."""
    site = tmp_path / "site"
    shutil.copytree(built.site, site)
    index = site / "index.html"
    slip = (
        f'<script src="{(built.outside / "evil.js").as_uri()}"></script>'
        f'<script src="{server.url("slip.js")}"></script>'
        '<script src="assets/site.js"></script>'
        "<script>window.__evil = 'inline'</script>"
    )
    html = index.read_text(encoding="utf-8")
    injected = html.replace('<main class="site-main">', '<main class="site-main">' + slip, 1)
    assert injected != html
    index.write_text(injected, encoding="utf-8")
    before = len(server.requests)
    opened = _open(browser, index)
    try:
        evil = opened.page.evaluate("() => window.__evil")
    finally:
        opened.page.close()
    assert evil is None
    assert server.requests[before:] == []
    assert opened.drawn, "the site's own scripts did not run"


# The text node after the isolated name: the x of each of its characters, and whether the
# element holding the name isolates it.
ORDER_JS = """
([selector, tail]) => {
  const holder = document.querySelector(selector);
  const walker = document.createTreeWalker(holder, NodeFilter.SHOW_TEXT);
  let after = null, name = null;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.data.includes('\\u202e')) name = node;
    if (node.data.includes(tail)) after = node;
  }
  const xs = [];
  const start = after ? after.data.indexOf(tail) : 0;
  for (let i = start; after && i < after.data.length; i++) {
    const range = document.createRange();
    range.setStart(after, i);
    range.setEnd(after, i + 1);
    if (after.data[i] !== ' ') xs.push(range.getBoundingClientRect().left);
  }
  const isolating = name ? name.parentElement : null;
  return {
    xs,
    tail: after ? after.data.slice(start) : null,
    tag: isolating ? isolating.tagName : null,
    bidi: isolating ? getComputedStyle(isolating).unicodeBidi : null,
  };
}
"""


def _assert_isolated_and_in_order(found: dict[str, Any], tail: str) -> None:
    """The name is in an isolating element, and the text after it (``tail``) reads left to
    right: each character right of the one before (a leaking override reverses them)."""
    assert found["tail"] is not None, found
    assert found["tail"].startswith(tail), found
    assert found["tag"] == "BDI", found
    assert found["bidi"] == "isolate", found
    xs = found["xs"]
    assert all(a < b for a, b in itertools.pairwise(xs)), found


def _setup_page(built: Built, setup: str) -> Path:
    pages = [p for p in (built.site / "setups").glob("*.html")
             if f'data-headline="{setup}"' in p.read_text(encoding="utf-8")]  # fmt: skip
    assert len(pages) == 1, pages
    return pages[0]


def test_a_right_to_left_override_in_a_name_reorders_nothing_around_it(
    browser: Browser, built: Built, server: Server
) -> None:
    """Item 8: on the page of a setup whose run is "myrun" + U+202E, the heading's
    ", rank 1" reads left to right after the name, which is in an isolating element; on
    the index, the run's name does not reverse ": leaderboard" after it. The item
    table that site.js draws puts question ids in isolates too."""
    opened = _open(browser, _setup_page(built, SETUPS[0]))
    page = opened.page
    try:
        heading = page.evaluate(ORDER_JS, ["h1 .sub", ", rank "])
        page.fill(".paged-search", "answer")  # site.js draws the table again
        page.wait_for_timeout(200)
        drawn_ids = page.evaluate(
            "() => Array.from(document.querySelectorAll('#items span.qid')).map((s) => "
            "[s.textContent, s.firstElementChild ? s.firstElementChild.tagName : null, "
            "s.firstElementChild ? getComputedStyle(s.firstElementChild).unicodeBidi : null])"
        )
        title = page.title()
    finally:
        page.close()
    _assert_isolated_and_in_order(heading, ", rank 1")
    assert sorted(d[0] for d in drawn_ids) == sorted(QUESTIONS), drawn_ids
    assert all(tag == "BDI" and bidi == "isolate" for _, tag, bidi in drawn_ids), drawn_ids
    # No element in a title: each name between U+2068 and U+2069.
    assert f"\u2068{SETUPS[0]}\u2069 (\u2068{RUN_NAME}\u2069)" in title

    opened = _open(browser, built.site / "index.html")
    try:
        index = opened.page.evaluate(ORDER_JS, ["section.run h2", ": leaderboard"])
        leaderboard = opened.page.evaluate(
            "() => Array.from(document.querySelectorAll('td.name a bdi')).map((b) => "
            "[b.textContent, getComputedStyle(b).unicodeBidi])"
        )
    finally:
        opened.page.close()
    _assert_isolated_and_in_order(index, ": leaderboard")
    assert [SETUPS[0], "isolate"] in leaderboard, leaderboard
    assert server.requests == []
