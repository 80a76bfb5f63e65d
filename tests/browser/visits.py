"""Every page of a site opened once, and what each showed and did (:class:`Visit`).

:func:`visit_all` opens each page of a site in the session's Chromium (``conftest.py``: the
network blocked, errors recorded), with the page's Content-Security-Policy violations
recorded from before it loads, waits for its charts and for ``site.js`` (``data-site-ready``),
and keeps what the tests assert on: the requests, errors and dialogs (:class:`PageLog`), the
charts' marks, the links and sources, the text, whether a payload ran, the policy. The
visits are plain data: :func:`write_visits` and :func:`read_visits` keep them as JSON, so
that one visit of a site serves every worker process of the session (``examples_visits``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .conftest import LOAD_TIMEOUT_MS, Browser, PageLog, chart_states, wait_for_charts

REFS_JS = """
() => {
  const refs = [];
  const take = (selector, attr) => document.querySelectorAll(selector).forEach((el) => {
    refs.push({tag: el.tagName.toLowerCase(), attr, raw: el.getAttribute(attr), text: (el.innerText || '').trim().slice(0, 80)});
  });
  take('a[href]', 'href');
  take('link[href]', 'href');
  take('script[src]', 'src');
  take('img[src]', 'src');
  take('iframe[src]', 'src');
  take('source[src]', 'src');
  take('object[data]', 'data');
  return refs;
}
"""

# Point 5 of issue 5: what a payload that got through would leave in the page.
INJECTED_JS = """
() => {
  const found = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase(), value = attr.value;
      if (name.startsWith('on')) found.push(`${el.tagName} ${name}=${value}`);
      if (/^\\s*javascript:/i.test(value) && (name === 'href' || name === 'src' || name === 'action'))
        found.push(`${el.tagName} ${name}=${value}`);
    }
  }
  for (const s of document.querySelectorAll('script')) {
    const type = (s.getAttribute('type') || 'text/javascript').toLowerCase();
    const inert = type === 'application/json' || type.endsWith('+json');
    if (!inert && /__xss|alert\\(1\\)/.test(s.textContent)) found.push('script: ' + s.textContent.slice(0, 120));
  }
  for (const img of document.querySelectorAll('img[src="x"], svg[onload]')) found.push(img.outerHTML.slice(0, 120));
  return found;
}
"""

ITEMS_JSON_JS = """
() => Array.from(document.querySelectorAll('script[type="application/json"]'))
  .map((s) => ({id: s.id, size: s.textContent.length, value: JSON.parse(s.textContent)}))
"""

# Records every Content-Security-Policy violation of the page (installed before it loads).
CSP_RECORDER_JS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(e.effectiveDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || ''));
});
"""

# The policy of the page and what comes before it in <head>.
CSP_META_JS = """
() => {
  const metas = document.head.querySelectorAll('meta[http-equiv="Content-Security-Policy"]');
  const first = metas[0];
  const before = [];
  for (let el = document.head.firstElementChild; el && el !== first; el = el.nextElementSibling) {
    before.push(el.tagName.toLowerCase());
  }
  return {count: metas.length, content: first ? first.content : null, before};
}
"""

# Every inline JSON document parses (JSON.parse throws if one does not); how many there are.
JSON_PARSES_JS = """
() => Array.from(document.querySelectorAll('script[type="application/json"]'))
  .map((s) => JSON.parse(s.textContent)).length
"""

READY_JS = "() => document.documentElement.hasAttribute('data-site-ready')"


@dataclass
class Visit:
    """What one page showed and did."""

    path: Path
    log: PageLog
    charts: list[dict[str, Any]] = field(default_factory=list)
    refs: list[dict[str, str]] = field(default_factory=list)
    text: str = ""
    xss: Any = None
    injected: list[str] = field(default_factory=list)
    json_error: str = ""
    drawn: bool = False  # every div.chart drew marks before the load timeout
    ready: bool = False  # site.js marked the document ready (data-site-ready) in time
    csp_meta: dict[str, Any] = field(default_factory=dict)  # CSP_META_JS
    csp_violations: list[str] = field(default_factory=list)  # CSP_RECORDER_JS


def html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def open_recording(browser: Browser, path: Path) -> tuple[Any, PageLog]:
    """``path`` opened with its CSP violations recorded in ``window.__csp``."""
    page, log = browser.new_page(path.resolve().as_uri())
    page.add_init_script(CSP_RECORDER_JS)
    page.goto(path.resolve().as_uri(), wait_until="load", timeout=LOAD_TIMEOUT_MS)
    return page, log


def visit_all(browser: Browser, site: Path) -> dict[Path, Visit]:
    """Open every page of ``site`` once (with the CSP violations recorded) and keep what it
    did, by the page's path in the site."""
    visits: dict[Path, Visit] = {}
    for path in html_pages(site):
        page, log = open_recording(browser, path)
        try:
            visit = Visit(path, log)
            visit.drawn = wait_for_charts(page)
            with contextlib.suppress(Exception):  # Playwright's TimeoutError: ready is False
                page.wait_for_function(READY_JS, timeout=LOAD_TIMEOUT_MS)
            visit.ready = page.evaluate(READY_JS)
            visit.charts = chart_states(page)
            visit.refs = page.evaluate(REFS_JS)
            visit.text = page.evaluate("() => document.body ? document.body.innerText : ''")
            page.wait_for_timeout(50)  # late errors and violations
            visit.xss = page.evaluate("() => typeof window.__xss")
            visit.injected = page.evaluate(INJECTED_JS)
            visit.csp_meta = page.evaluate(CSP_META_JS)
            visit.csp_violations = page.evaluate("() => window.__csp")
            try:
                page.evaluate(JSON_PARSES_JS)  # parsed there, not copied here
            except Exception as error:  # JSON.parse threw: the inline data was broken
                visit.json_error = str(error)
            visits[path.relative_to(site)] = visit
        finally:
            page.close()
    return visits


def write_visits(visits: dict[Path, Visit], site: Path, target: Path) -> None:
    """``visits`` of the pages of ``site`` as JSON in ``target``."""
    rows = []
    for name, visit in visits.items():
        row = dataclasses.asdict(visit)
        row["path"] = name.as_posix()
        rows.append(row)
    target.write_text(json.dumps(rows), encoding="utf-8")


def read_visits(source: Path, site: Path) -> dict[Path, Visit]:
    """The visits :func:`write_visits` kept, of the pages of ``site``."""
    visits: dict[Path, Visit] = {}
    for row in json.loads(source.read_text(encoding="utf-8")):
        name = Path(row.pop("path"))
        log = PageLog(**row.pop("log"))
        visits[name] = Visit(site / name, log, **row)
    return visits
