"""Headless Chromium for the site's browser tests, with every non-``file://`` request blocked.

One Chromium is launched per session (:func:`browser`). Each page is opened through
:meth:`Browser.open` (or :meth:`Browser.new_page`), which routes every request through a
handler that lets ``file://`` through and aborts everything else, and records on a
:class:`PageLog`:

- every request that is not ``file://`` (blocked),
- every ``fetch``/XHR request, even of a local file (the site must inline its data),
- console messages of type ``error`` and uncaught page errors,
- dialogs (``alert``, ``confirm``, ``prompt``), which are dismissed.

A closed page goes back to the browser, emptied, for the next one (:class:`Page`: a tab
costs about as much as the page it opens). Every page of the bundled examples' site is
opened once in the session (``examples_visits``, :mod:`visits`).

The Chromium binary is Debian's (``/usr/bin/chromium``), or ``$KAGREPORT_CHROMIUM``; Playwright's
own browser download is never used. Screenshots and other artefacts go to
``tests/browser/_output/`` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

OUTPUT = Path(__file__).resolve().parent / "_output"
CHROMIUM = os.environ.get("KAGREPORT_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# How long a page may take to load and draw its charts before a test gives up.
LOAD_TIMEOUT_MS = 20_000

# Every chart container has drawn marks: an <svg> with at least one graphical element
# inside a Vega mark group (``g.mark-*``; axis, legend and title groups are excluded).
CHART_STATE_JS = """
() => Array.from(document.querySelectorAll('div.chart')).map((chart, index) => {
  const svg = chart.querySelector('svg');
  const marks = svg ? Array.from(svg.querySelectorAll('g[class*="mark-"]')) : [];
  const data = marks.filter((g) => !/role-(axis|legend|title|frame|scope)/.test(g.getAttribute('class') || ''));
  const count = (cls) => data.filter((g) => g.classList.contains(cls))
      .reduce((n, g) => n + g.querySelectorAll(':scope > path, :scope > line, :scope > rect, :scope > text, :scope > circle, :scope > g').length, 0);
  const drawn = data.reduce((n, g) => n + g.querySelectorAll(':scope > *').length, 0);
  return {
    index,
    id: chart.id || '',
    svg: !!svg,
    drawn,
    rects: count('mark-rect'),
    symbols: count('mark-symbol'),
    lines: count('mark-line') + count('mark-rule'),
    classes: Array.from(new Set(data.map((g) => g.getAttribute('class')))).slice(0, 12),
    text: (chart.innerText || '').slice(0, 200),
  };
})
"""

ALL_CHARTS_DRAWN_JS = (
    "() => { const s = (" + CHART_STATE_JS + ")(); return s.every((c) => c.svg && c.drawn > 0); }"
)


@dataclass
class PageLog:
    """What happened while one page was open."""

    url: str
    blocked: list[str] = field(default_factory=list)
    fetches: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    console_warnings: list[str] = field(default_factory=list)  # Vega-Lite's, e.g.; not problems
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Everything that must not happen on a page of the site, one line each."""
        offsite = [u for u in self.requests if not u.startswith(("file:", "data:", "blob:"))]
        lines = [f"request outside file://: {u}" for u in dict.fromkeys(self.blocked + offsite)]
        lines += [f"fetch/XHR at view time: {u}" for u in self.fetches]
        lines += [f"console error: {t}" for t in self.console_errors]
        lines += [f"page error: {t}" for t in self.page_errors]
        lines += [f"dialog opened: {t}" for t in self.dialogs]
        return lines


VIEWPORT = {"width": 1280, "height": 900}


class Page:
    """A page of the session's Chromium, as Playwright's, but :meth:`close` gives it back to
    the :class:`Browser` for the next test: a new tab costs more than the page it opens
    (about half of an open of the site's pages). It is emptied first (``about:blank``, the
    viewport as new); what it records goes to the :class:`PageLog` of its current user."""

    def __init__(self, browser: Browser, page: Any) -> None:
        self._browser = browser
        self._page = page
        self._scripts: set[str] = set()
        self.log = PageLog("")
        self.idle = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._page, name)

    def add_init_script(self, script: str) -> None:
        """Run ``script`` first in every document from now on (once, however often asked)."""
        if script not in self._scripts:
            self._scripts.add(script)
            self._page.add_init_script(script)

    def close(self) -> None:
        self._browser.release(self)


class Browser:
    """One Chromium for the session; pages opened with the network blocked."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.context = browser.new_context(
            viewport=VIEWPORT,
            service_workers="block",
            java_script_enabled=True,
        )
        self.logs: list[PageLog] = []
        self._idle: list[Page] = []

    def new_page(self, url: str = "") -> tuple[Any, PageLog]:
        """A blank page with the blocking route and the recorders attached, recording on a
        new :class:`PageLog`. Its ``close()`` gives it back for the next."""
        page = self._idle.pop() if self._idle else self._page()
        page.idle = False
        page.log = log = PageLog(url)
        self.logs.append(log)
        return page, log

    def _page(self) -> Page:
        wrapper = Page(self, self.context.new_page())

        def route(route: Any) -> None:
            request_url = route.request.url
            if request_url.startswith("file:"):
                route.continue_()
            else:
                wrapper.log.blocked.append(request_url)
                route.abort()

        def on_request(request: Any) -> None:
            wrapper.log.requests.append(request.url)
            if request.resource_type in ("fetch", "xhr", "eventsource", "websocket"):
                wrapper.log.fetches.append(request.url)

        def on_console(message: Any) -> None:
            if message.type == "error":
                wrapper.log.console_errors.append(message.text)
            elif message.type == "warning":
                wrapper.log.console_warnings.append(message.text)

        def on_dialog(dialog: Any) -> None:
            wrapper.log.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page = wrapper._page
        page.route("**/*", route)
        page.on("request", on_request)
        page.on("console", on_console)
        page.on("pageerror", lambda error: wrapper.log.page_errors.append(str(error)))
        page.on("dialog", on_dialog)
        page.on("websocket", lambda ws: wrapper.log.blocked.append(ws.url))
        return wrapper

    def release(self, page: Page) -> None:
        """``page`` emptied and kept for the next :meth:`new_page`; closed if it cannot be."""
        if page.idle:
            return
        page.idle = True
        page.log = PageLog("")  # what the old document does as it goes is nobody's
        try:
            page._page.goto("about:blank", timeout=5_000)
            if page._page.viewport_size != VIEWPORT:
                page._page.set_viewport_size(VIEWPORT)
        except Exception:  # a page that cannot be emptied is not given out again
            page._page.close()
            return
        self._idle.append(page)

    @contextmanager
    def open(
        self, target: str | Path, *, charts: bool = True, timeout_ms: int = LOAD_TIMEOUT_MS
    ) -> Iterator[tuple[Any, PageLog]]:
        """Open ``target`` (a path or URL), wait for ``load`` and, with ``charts``, for every
        ``div.chart`` to hold drawn marks (a timeout there is not raised: the chart
        assertions report it)."""
        url = target if isinstance(target, str) else target.resolve().as_uri()
        page, log = self.new_page(url)
        try:
            page.goto(url, wait_until="load", timeout=timeout_ms)
            if charts:
                wait_for_charts(page, timeout_ms)
            yield page, log
        finally:
            page.close()


def wait_for_charts(page: Any, timeout_ms: int = LOAD_TIMEOUT_MS) -> bool:
    """Wait until every ``div.chart`` on ``page`` has drawn marks; return whether it happened."""
    try:
        page.wait_for_function(ALL_CHARTS_DRAWN_JS, timeout=timeout_ms, polling=50)
    except Exception:  # the Playwright TimeoutError; the caller asserts on chart_states()
        return False
    return True


def chart_states(page: Any) -> list[dict[str, Any]]:
    """One dict per ``div.chart``: whether it has an SVG and how many marks it drew."""
    states: list[dict[str, Any]] = page.evaluate(CHART_STATE_JS)
    return states


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, launched once for the browser tests.

    Package scope: Playwright's driver keeps a child-watcher thread alive while it runs, and
    with a second thread alive kagreport does not fork its worker pools (fork copies one
    thread), so the tests after these would never reach the parallel paths.
    """
    if not os.path.exists(CHROMIUM) and shutil.which(CHROMIUM) is None:
        # make test installs it where it can (and says so); elsewhere these tests skip.
        pytest.skip(
            f"no Chromium at {CHROMIUM}: to run the browser tests, install Debian's chromium "
            "(apt-get install chromium) or set KAGREPORT_CHROMIUM=/path/to/chromium"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True
        )
        wrapper = Browser(chromium)
        try:
            yield wrapper
        finally:
            wrapper.context.close()
            chromium.close()


@pytest.fixture(scope="package")  # as the browser it visits with
def examples_visits(
    browser: Browser, examples_site: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[Path, Any]:
    """Every page of ``examples_site`` opened once in the session (``visits.visit_all``), by
    whichever worker process asks first; the others read what it recorded."""
    from conftest import once_per_session

    from .visits import read_visits, visit_all, write_visits

    def make(folder: Path) -> None:
        write_visits(visit_all(browser, examples_site), examples_site, folder / "visits.json")

    folder = once_per_session(tmp_path_factory, "examples-visits", make)
    return read_visits(folder / "visits.json", examples_site)


@pytest.fixture(scope="session")
def output_dir() -> Path:
    """``tests/browser/_output/``: screenshots for review (git-ignored)."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT


def import_site(wait_secs: float | None = None) -> Any:
    """Import :mod:`kagreport.site`; fail (never skip) when it cannot be imported.

    ``$KAGREPORT_SITE_WAIT`` seconds (default 0) are spent polling first, for a session
    started while the site layer is still being written.
    """
    import importlib

    if wait_secs is None:
        wait_secs = float(os.environ.get("KAGREPORT_SITE_WAIT", "0"))
    deadline = time.monotonic() + wait_secs
    while True:
        try:
            importlib.invalidate_caches()
            return importlib.import_module("kagreport.site")
        except ImportError as error:
            if time.monotonic() >= deadline:
                pytest.fail(f"kagreport.site is not importable: {error!r}")
            time.sleep(5)
