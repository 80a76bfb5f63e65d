"""The site's layout and tables in a real Chromium (issue 14, items 4 and 7).

The site of the bundled examples is built once for this module with ``kagreport site build``
(notebooks converted as saved, not run) and every page type is opened from ``file://`` with
the network blocked (``conftest.py``):

- at a phone's width (375 px) no page scrolls sideways, tables scroll in their own box,
  header cells do not overlap and response cells keep a readable width;
- clicking a header sorts rows (checked against numbers read from ``data/report.json`` or
  from the inline item JSON, sorted here in Python), again reverses them;
- the outcome filter's counts are those of ``data/report.json``; the search matches whole
  words ("correct" does not find "incorrect");
- no page logs a console error.

A full-page screenshot of each page type, at desktop and phone width, is saved to
``build/test-screenshots/<page>-<width>.png`` and the paths are listed in pytest's terminal
summary ("screenshots: ...").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .conftest import LOAD_TIMEOUT_MS, Browser, PageLog, wait_for_charts

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "build" / "test-screenshots"
PHONE, DESKTOP = 375, 1280
WORD = r"[^\W]"  # a letter, digit or underscore (Unicode), as site.js's \p{L}\p{N}_


class _Summary:
    """A pytest plugin listing the screenshots in the terminal summary (with or without -s)."""

    def __init__(self) -> None:
        self.paths: list[Path] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.paths:
            terminalreporter.section("site screenshots")
            for path in self.paths:
                shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
                terminalreporter.write_line(f"screenshots: {shown}")


@pytest.fixture(scope="module")
def screenshots(request: pytest.FixtureRequest) -> _Summary:
    plugin = request.config.pluginmanager.get_plugin("site-ui-screenshots")
    if plugin is None:
        plugin = _Summary()
        request.config.pluginmanager.register(plugin, "site-ui-screenshots")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return plugin  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def site(examples_site: Path) -> Path:
    """The bundled examples' site (``examples_site``, shared by the browser tests)."""
    return examples_site


def _page_types(site: Path) -> dict[str, Path]:
    """One page of each type the site has, by a short name."""
    found: dict[str, Path] = {"index": site / "index.html"}
    setups = sorted((site / "setups").glob("*.html"))
    comparisons = sorted((site / "comparisons").glob("*.html"))
    evaluations = sorted((site / "evaluations").glob("*.html"))
    # Another tool's run (the bundled Inspect logs): the same page types, drawn alike.
    other = [p for p in setups if p.stem.startswith("inspect-")]
    other_comparisons = [p for p in comparisons if p.stem.startswith("inspect-")]
    notebooks = sorted((site / "notebooks").glob("*.html"))
    systems_pages = sorted((site / "systems").glob("*.html"))
    # MMLU-Pro's setup pages first: their questions have text and options.
    setups.sort(key=lambda p: (not p.stem.startswith("mmlu-pro"), p.name))
    for name, pages in (
        ("setup", setups),
        ("comparison", comparisons),
        ("inspect-setup", other),
        ("inspect-comparison", other_comparisons),
        ("notebook", notebooks),
        ("systems", systems_pages),
    ):
        if pages:
            found[name] = pages[0]
    # The largest answer evaluation (LLMBar's judges) and a retrieval evaluation.
    answers = [p for p in evaluations if "llmbar" in p.stem]
    if answers:
        found["evaluation"] = answers[0]
    retrieval = [p for p in evaluations if p not in answers]
    if retrieval:
        found["evaluation-retrieval"] = retrieval[0]
    return found


PAGE_TYPES = (
    "index",
    "setup",
    "comparison",
    "evaluation",
    "evaluation-retrieval",
    "inspect-setup",
    "inspect-comparison",
    "notebook",
    "systems",
)


@contextmanager
def _open(browser: Browser, path: Path, width: int) -> Iterator[tuple[Any, PageLog]]:
    """``path`` at a viewport ``width`` px wide, loaded, its charts drawn."""
    page, log = browser.new_page(path.as_uri())
    try:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path.as_uri(), wait_until="load", timeout=LOAD_TIMEOUT_MS)
        wait_for_charts(page)
        # site.js has run: it marks the document when every table is set up.
        page.wait_for_function(
            "() => document.documentElement.hasAttribute('data-site-ready')",
            timeout=LOAD_TIMEOUT_MS,
        )
        yield page, log
    finally:
        page.close()


LAYOUT_JS = """
() => {
  const out = {scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth,
               overlaps: [], narrow: [], unboxed: [], wide: []};
  for (const table of document.querySelectorAll('table.data')) {
    const box = table.parentElement;
    if (!box.classList.contains('table-scroll')) out.unboxed.push(table.id || table.className);
    const rows = table.tHead ? Array.from(table.tHead.rows) : [];
    for (const row of rows) {
      const cells = Array.from(row.cells).map((th) => th.getBoundingClientRect());
      for (let i = 1; i < cells.length; i++) {
        if (cells[i].left < cells[i - 1].right - 0.5)
          out.overlaps.push(`${table.id}: header ${i - 1} and ${i}`);
      }
      for (const th of row.cells) {
        if (th.scrollWidth > th.clientWidth + 1) out.overlaps.push(`${table.id}: ${th.innerText} overflows`);
      }
    }
    for (const td of table.querySelectorAll('td.response')) {
      if (td.getBoundingClientRect().width < 180) out.narrow.push(td.getBoundingClientRect().width);
    }
  }
  // Anything but a scrolling box wider than the viewport.
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.right > window.innerWidth + 1 && !el.closest('.table-scroll, .figure, .jp-OutputArea-output, pre, .highlight')) {
      out.wide.push(`${el.tagName.toLowerCase()}.${el.className} right=${Math.round(r.right)}`);
    }
  }
  out.wide = out.wide.slice(0, 10);
  return out;
}
"""


@pytest.mark.parametrize("kind", PAGE_TYPES)
def test_page_types_fit_a_phone_and_screenshots(
    browser: Browser, site: Path, screenshots: _Summary, kind: str
) -> None:
    """At 375 px no page scrolls sideways; tables are boxed, headers apart, responses
    readable; no console error at either width; a full-page screenshot of each."""
    pages = _page_types(site)
    if kind not in pages:
        assert kind in ("notebook", "systems"), f"the bundled site has no {kind} page"
        pytest.skip(f"the site was built without {kind} pages")
    path = pages[kind]
    for width in (DESKTOP, PHONE):
        with _open(browser, path, width) as (page, log):
            target = SCREENSHOTS / f"{kind}-{width}.png"
            page.screenshot(path=str(target), full_page=True)
            screenshots.paths.append(target)
            assert target.stat().st_size > 5_000
            layout = page.evaluate(LAYOUT_JS)
            assert not log.problems(), (path.name, width, log.problems())
            if width == PHONE:
                assert layout["scroll"] <= layout["inner"], (path.name, layout)
                assert not layout["unboxed"], (path.name, layout["unboxed"])
                assert not layout["overlaps"], (path.name, layout["overlaps"])
                assert not layout["narrow"], (path.name, layout["narrow"])


def test_no_console_errors_on_any_page(site: Path, examples_visits: dict[Path, Any]) -> None:
    """Every page of the site loads, site.js sets it up, with no console error, page error
    or request out (each page as ``examples_visits`` recorded it, at 1280 px: every page
    of the site is opened once in the session, for test_site_browser.py's checks too)."""
    assert sorted(examples_visits) == sorted(p.relative_to(site) for p in site.rglob("*.html"))
    problems: dict[str, list[str]] = {}
    for name, visit in examples_visits.items():
        if not visit.ready:
            problems.setdefault(str(name), []).append("site.js did not mark it ready")
        if visit.log.problems():
            problems.setdefault(str(name), []).extend(visit.log.problems())
    assert not problems, problems


# --------------------------------------------------------------------------- sorting


def _order(page: Any, table: str, attribute: str) -> list[str]:
    return page.evaluate(
        "(a) => Array.from(document.querySelectorAll(a.table + ' tbody tr'))"
        ".map((tr) => tr.getAttribute(a.attribute))",
        {"table": table, "attribute": attribute},
    )


def _click_header(page: Any, table: str, label: str) -> None:
    button = page.locator(f"{table} thead th button.sort", has_text=label).first
    button.click()


def _aria_sort(page: Any, table: str, label: str) -> str | None:
    th = page.locator(f"{table} thead th", has_text=label).first
    value: str | None = th.get_attribute("aria-sort")
    return value


def _stable_sorted(
    names: list[str], values: dict[str, float | None], descending: bool
) -> list[str]:
    """``names`` by value (a stable sort), missing values last either way."""
    present = [n for n in names if values[n] is not None]
    missing = [n for n in names if values[n] is None]
    # reverse=True keeps ties in their first order (a stable sort), as site.js does.
    ordered = sorted(present, key=lambda n: float(values[n] or 0.0), reverse=descending)
    return ordered + missing


def _run_reports(site: Path) -> dict[str, dict[str, Any]]:
    """Each kag run's kag stats JSON, by the run's slug (``data/runs/<slug>/report.json``,
    or ``data/report.json`` for a site of one run)."""
    found = {
        p.parent.name: json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((site / "data" / "runs").glob("*/report.json"))
    }
    if not found:
        index = (site / "index.html").read_text(encoding="utf-8")
        slug = re.search(r'id="leaderboard-([^"]+)"', index)
        assert slug is not None
        found[slug.group(1)] = json.loads((site / "data" / "report.json").read_text("utf-8"))
    return found


SORT_MIN_ROWS = 10  # site.js: a table of fewer rows is read at a glance and has no sort


def _repeated(site: Path, table_id: str, tmp_path: Path) -> Path:
    """A page of the site's own table ``table_id`` (its HTML as built, read from index.html)
    with its rows repeated up to SORT_MIN_ROWS or more, so site.js makes it sortable; each row
    gets data-test-row (its place) and data-repeat (which copy)."""
    index = (site / "index.html").read_text(encoding="utf-8")
    found = re.search(rf'<table[^>]*id="{re.escape(table_id)}".*?</table>', index, re.S)
    assert found is not None, table_id
    head, body, tail = re.match(r"(.*?<tbody>)(.*?)(</tbody>.*)", found.group(0), re.S).groups()
    rows = re.findall(r"<tr\b.*?</tr>", body, re.S)
    copies = -(-SORT_MIN_ROWS // len(rows))
    repeated = [
        row.replace("<tr", f'<tr data-test-row="{c * len(rows) + i}" data-repeat="{c}"', 1)
        for c in range(copies)
        for i, row in enumerate(rows)
    ]
    (tmp_path / "assets").mkdir(exist_ok=True)
    for name in ("site.js", "site.css"):
        (tmp_path / "assets" / name).write_bytes((site / "assets" / name).read_bytes())
    page = tmp_path / f"{table_id}.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<link rel="stylesheet" href="assets/site.css"></head><body>'
        + head
        + "".join(repeated)
        + tail
        + '<script src="assets/site.js"></script></body></html>',
        encoding="utf-8",
    )
    return page


def test_small_tables_have_no_sort_controls(browser: Browser, site: Path) -> None:
    """Issue 26 item 11: the index's tables (6 rows or fewer) are read at a glance: no sort
    buttons, no sort marks; numeric headers are still right-aligned."""
    with _open(browser, site / "index.html", DESKTOP) as (page, log):
        tables = page.evaluate(
            "() => Array.from(document.querySelectorAll('table.data')).map((t) => ({"
            " id: t.id, rows: t.tBodies[0] ? t.tBodies[0].rows.length : 0,"
            " buttons: t.querySelectorAll('thead button.sort, .sort-mark').length,"
            " numeric: t.querySelectorAll('thead th.num').length}))"
        )
        small = [t for t in tables if t["rows"] < SORT_MIN_ROWS]
        assert small, tables
        assert all(t["buttons"] == 0 for t in small), small
        assert any(t["numeric"] for t in small), small
        assert not log.problems(), log.problems()


def test_leaderboard_sorts_by_a_numeric_header(
    browser: Browser, site: Path, tmp_path: Path
) -> None:
    """Each run's leaderboard (its rows repeated to a sortable length) by its Correct column:
    ascending, then descending, as the run's report.json says (ties in page order), and from
    the keyboard."""
    reports = _run_reports(site)
    assert reports
    for slug, report in reports.items():
        correct = {s["setup"]: s["overall"]["correct"] for s in report["setups"]}
        assert len(set(correct.values())) > 2, "the setups tie: nothing to sort"
        path = _repeated(site, f"leaderboard-{slug}", tmp_path)
        with _open(browser, path, DESKTOP) as (page, log):
            table = f"#leaderboard-{slug}"
            rows = _order(page, table, "data-test-row")
            setups = dict(zip(rows, _order(page, table, "data-setup"), strict=True))
            # The page's first order is the rank order, repeated.
            ranked = [s["setup"] for s in report["setups"]]
            assert [setups[r] for r in rows] == ranked * (len(rows) // len(ranked))
            values = {r: float(correct[setups[r]]) for r in rows}
            _click_header(page, table, "Correct")
            assert _aria_sort(page, table, "Correct") == "ascending"
            assert _order(page, table, "data-test-row") == _stable_sorted(rows, values, False)
            _click_header(page, table, "Correct")
            assert _aria_sort(page, table, "Correct") == "descending"
            assert _order(page, table, "data-test-row") == _stable_sorted(rows, values, True)
            # Keyboard: the header is a button; Enter on it sorts again (ascending).
            page.locator(f"{table} thead th button.sort", has_text="Correct").first.focus()
            page.keyboard.press("Enter")
            assert _aria_sort(page, table, "Correct") == "ascending"
            assert not log.problems(), log.problems()


def test_static_table_sort_matches_data_values(
    browser: Browser, site: Path, tmp_path: Path
) -> None:
    """The index's comparisons (rows repeated to a sortable length) sorted by p (Holm): the
    order of their data-value numbers, read from the HTML before the click and sorted here
    (ties keep their order)."""
    table = "#comparisons-mmlu-pro-philosophy"
    path = _repeated(site, table[1:], tmp_path)
    with _open(browser, path, DESKTOP) as (page, log):
        cells = page.evaluate(
            "(t) => Array.from(document.querySelectorAll(t + ' tbody tr')).map((tr) =>"
            " [tr.getAttribute('data-test-row'),"
            "  tr.querySelector('td[data-key=\"p_value_holm_across_run\"]')"
            "    .getAttribute('data-value')])",
            table,
        )
        assert len(cells) >= SORT_MIN_ROWS, cells
        names = [n for n, _ in cells]
        values = {n: (None if v == "null" else float(v)) for n, v in cells}
        assert len({v for v in values.values()}) >= 3, values
        assert _order(page, table, "data-test-row") == names
        _click_header(page, table, "p (Holm)")
        assert _order(page, table, "data-test-row") == _stable_sorted(names, values, False)
        _click_header(page, table, "p (Holm)")
        assert _order(page, table, "data-test-row") == _stable_sorted(names, values, True)
        assert not log.problems(), log.problems()


def _items(page: Any) -> dict[str, Any]:
    data: dict[str, Any] = page.evaluate(
        "() => JSON.parse(document.getElementById('items-data').textContent)"
    )
    return data


def _shown_ids(page: Any) -> list[str]:
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('#items tbody td.question .qid'))"
        ".map((e) => e.textContent)"
    )


def test_item_table_sorts_by_question_and_time(browser: Browser, site: Path) -> None:
    """The paged item table sorts all its rows (not one page): by question id, as numbers
    where the ids are numbers (MMLU-Pro's page), then by generation time with missing values
    last (the simulated run's page: MMLU-Pro's files record no time, so no such column)."""
    with _open(browser, _page_types(site)["setup"], DESKTOP) as (page, log):
        data = _items(page)
        col = {c: i for i, c in enumerate(data["columns"])}
        ids = [r[col["question"]] for r in data["rows"]]
        assert all(i.isdigit() for i in ids), ids[:5]
        # Not recorded: unknown, never a column of zeros.
        assert {r[col["generation_secs"]] for r in data["rows"]} == {None}
        first = _shown_ids(page)
        _click_header(page, "#items", "Question")
        ascending = sorted(ids, key=int)
        assert _shown_ids(page) == ascending[: len(first)]
        _click_header(page, "#items", "Question")
        assert _shown_ids(page) == sorted(ids, key=int, reverse=True)[: len(first)]
        assert _aria_sort(page, "#items", "Question") == "descending"
        assert not log.problems(), log.problems()
    simulated = next(iter(sorted((site / "setups").glob("simulated-*.html"))))
    with _open(browser, simulated, DESKTOP) as (page, log):
        data = _items(page)
        col = {c: i for i, c in enumerate(data["columns"])}
        rows = data["rows"]
        ids = [r[col["question"]] for r in rows]
        first = _shown_ids(page)
        # Generation seconds: numbers ascending, ties in the document's order.
        _click_header(page, "#items", "Generation")
        secs = [(r[col["generation_secs"]], i) for i, r in enumerate(rows)]
        order = [i for _, i in sorted(s for s in secs if s[0] is not None)]
        order += [i for s, i in secs if s is None]
        assert _shown_ids(page) == [ids[i] for i in order][: len(first)]
        assert not log.problems(), log.problems()


# --------------------------------------------------------------------------- filters


def _count(page: Any) -> int:
    return int(page.evaluate("() => document.getElementById('items-count').textContent"))


def _facet_counts(page: Any, facet: str) -> dict[str, int]:
    counts: dict[str, int] = page.evaluate(
        "(f) => Object.fromEntries(Array.from(document.querySelectorAll("
        "`select[data-facet=\"${f}\"] option`)).map((o) => [o.value || '', Number(o.getAttribute('data-count'))]))",
        facet,
    )
    return counts


def test_outcome_filter_counts_match_report(browser: Browser, site: Path) -> None:
    """Every setup page's outcome filter counts what report.json counts; choosing an
    outcome shows that many rows, all of that outcome, and "n of N items"."""
    by_title: dict[tuple[str, str], dict[str, int]] = {}
    pages: list[tuple[str, Path]] = []
    for slug, report in _run_reports(site).items():
        mine = sorted((site / "setups").glob(f"{slug}--*.html"))
        assert len(mine) == len(report["setups"])
        pages += [(slug, p) for p in mine]
        for s in report["setups"]:
            o = s["overall"]
            by_title[slug, s["setup"]] = {
                "": o["total"],
                "correct": o["correct"],
                "incorrect": o["incorrect"],
                "error": o["errors"],
            }
    for slug, path in pages:
        with _open(browser, path, DESKTOP) as (page, log):
            setup = page.evaluate(
                "() => document.querySelector('h1').firstChild.textContent.trim()"
            )
            expected = {k: v for k, v in by_title[slug, setup].items() if v or k == ""}
            assert _facet_counts(page, "outcome") == expected, (path.name, setup)
            status = page.evaluate("() => document.querySelector('.paged-status').textContent")
            total = expected[""]
            assert re.sub(r"\s+", " ", status).strip() == f"{total} of {total} items"
            page.select_option("#item-outcome", "incorrect")
            page.wait_for_function(
                "(n) => document.getElementById('items-count').textContent === String(n)",
                arg=expected["incorrect"],
            )
            outcomes = page.evaluate(
                "() => Array.from(document.querySelectorAll('#items tbody td.outcome')).map((e) => e.textContent)"
            )
            assert outcomes
            assert set(outcomes) == {"incorrect"}
            assert len(outcomes) == min(50, expected["incorrect"])
            assert not log.problems(), log.problems()


def _word_match(text: str, term: str) -> bool:
    return re.search(rf"(?<!{WORD}){re.escape(term)}(?!{WORD})", text) is not None


def _shown(page: Any) -> list[str]:
    """The columns the item table shows (its headers' data-sort)."""
    found: list[str] = page.evaluate(
        "() => Array.from(document.querySelectorAll('#items thead th'))"
        ".map((th) => th.getAttribute('data-sort'))"
    )
    return found


def _row_text(row: list[Any], col: dict[str, int] | None = None, shown: Any = ()) -> str:
    """What the search looks in: the shown columns (the question cell shows the
    question's text and options too), else the whole row."""
    if col is not None and shown:
        names = [n for s in shown for n in (s, *(("question_text", "options") * (s == "question")))]
        row = [row[col[n]] for n in names if n in col]
    parts: list[str] = []

    def add(v: Any) -> None:
        if isinstance(v, str):
            parts.append(v)
        elif isinstance(v, list):
            for x in v:
                add(x)

    for v in row:
        add(v)
    return "\n".join(parts).lower()


def test_whole_word_search_and_filter_combined(browser: Browser, site: Path) -> None:
    """ "correct" finds rows holding the word correct, never those holding only
    "incorrect"; with the outcome filter the two combine, and the outcome counts follow."""
    path = _page_types(site)["setup"]
    with _open(browser, path, DESKTOP) as (page, log):
        data = _items(page)
        col = {c: i for i, c in enumerate(data["columns"])}
        shown = _shown(page)
        texts = [_row_text(r, col, shown) for r in data["rows"]]
        words = sum(_word_match(t, "correct") for t in texts)
        substrings = sum("correct" in t for t in texts)
        assert 0 < words < substrings, (words, substrings)
        page.fill("#item-search", "correct")
        page.wait_for_function(
            "(n) => document.getElementById('items-count').textContent === String(n)", arg=words
        )
        assert _count(page) == words
        # Case and several words: every word must occur.
        page.fill("#item-search", "CORRECT Philosophy")
        both = sum(_word_match(t, "correct") and _word_match(t, "philosophy") for t in texts)
        page.wait_for_function(
            "(n) => document.getElementById('items-count').textContent === String(n)", arg=both
        )
        # Combined with the outcome filter; the filter's counts are within the search.
        page.fill("#item-search", "correct")
        page.select_option("#item-outcome", "incorrect")
        outcome = [r[col["outcome"]] for r in data["rows"]]
        within = {
            o: sum(
                _word_match(t, "correct") and out == o
                for t, out in zip(texts, outcome, strict=True)
            )
            for o in ("correct", "incorrect")
        }
        page.wait_for_function(
            "(n) => document.getElementById('items-count').textContent === String(n)",
            arg=within["incorrect"],
        )
        counts = _facet_counts(page, "outcome")
        assert counts["correct"] == within["correct"]
        assert counts["incorrect"] == within["incorrect"]
        assert counts[""] == words
        # A quoted phrase.
        page.select_option("#item-outcome", "")
        phrase = "which of the following"
        expected = sum(phrase in re.sub(r"\s+", " ", t) for t in texts)
        page.fill("#item-search", f'"{phrase}"')
        page.wait_for_function(
            "(n) => document.getElementById('items-count').textContent === String(n)", arg=expected
        )
        assert not log.problems(), log.problems()


def test_items_show_question_text_and_options(browser: Browser, site: Path) -> None:
    """Each item row shows its question's text and, for MMLU-Pro, its options (as text)."""
    path = _page_types(site)["setup"]
    with _open(browser, path, DESKTOP) as (page, log):
        data = _items(page)
        col = {c: i for i, c in enumerate(data["columns"])}
        first = data["rows"][0]
        assert first[col["question_text"]]
        assert len(first[col["options"]]) >= 4
        shown = page.evaluate(
            "() => { const td = document.querySelector('#items tbody td.question');"
            " return {text: td.querySelector('.qtext').textContent,"
            " options: td.querySelectorAll('details.options li').length}; }"
        )
        assert shown["text"] == first[col["question_text"]]
        assert shown["options"] == len(first[col["options"]])
        assert not log.problems(), log.problems()


def test_sort_rules_on_a_fixture_table(browser: Browser, site: Path, tmp_path: Path) -> None:
    """site.js's sort on a table made here: numbers by data-value (not their text), missing
    values last in both directions, ties in document order, text with numbers naturally,
    a total row kept last; the header's button works from the keyboard."""
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "site.js").write_bytes((site / "assets" / "site.js").read_bytes())
    (tmp_path / "assets" / "site.css").write_bytes((site / "assets" / "site.css").read_bytes())
    # (name, data-value, shown text): the texts would sort differently from the values.
    rows = [
        ("a", "0.5", "50%"),
        ("b", "null", "—"),
        ("c", "10", "9 (ten)"),
        ("d", "0.5", "50.0%"),
        ("e", "-2", "minus two"),
        ("f", "null", "—"),
        ("g", "2", "2"),
        ("h", "1", "one"),
        ("i", "0.25", "25%"),
        ("j", "null", "—"),
    ]
    assert len(rows) >= SORT_MIN_ROWS  # fewer would get no sort controls
    body = "".join(
        f'<tr data-name="{n}"><td>item{10 - i}</td><td class="num" data-value="{v}">{t}</td></tr>'
        for i, (n, v, t) in enumerate(rows)
    )
    html = (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'self'; style-src 'self'\">"
        '<link rel="stylesheet" href="assets/site.css"></head><body>'
        '<table class="data" id="t"><thead><tr><th>Name</th><th>Value</th></tr></thead>'
        f'<tbody>{body}<tr class="total" data-name="total"><td>All</td><td class="num" '
        'data-value="99">99</td></tr></tbody></table>'
        '<script src="assets/site.js"></script></body></html>'
    )
    path = tmp_path / "fixture.html"
    path.write_text(html, encoding="utf-8")
    with _open(browser, path, DESKTOP) as (page, log):
        order = lambda: _order(page, "#t", "data-name")  # noqa: E731
        _click_header(page, "#t", "Value")
        assert order() == ["e", "i", "a", "d", "h", "g", "c", "b", "f", "j", "total"]
        _click_header(page, "#t", "Value")
        assert order() == ["c", "g", "h", "a", "d", "i", "e", "b", "f", "j", "total"]
        assert _aria_sort(page, "#t", "Value") == "descending"
        assert _aria_sort(page, "#t", "Name") is None
        # Names item10 .. item1: natural order puts item1 first, item10 last.
        page.locator("#t thead th button.sort", has_text="Name").focus()
        page.keyboard.press("Enter")
        assert order() == ["j", "i", "h", "g", "f", "e", "d", "c", "b", "a", "total"]
        page.keyboard.press("Space")
        assert order() == ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "total"]
        assert _aria_sort(page, "#t", "Name") == "descending"
        assert _aria_sort(page, "#t", "Value") is None
        assert not log.problems(), log.problems()


def test_setup_and_outcome_filters_with_search(
    browser: Browser, site: Path, tmp_path: Path
) -> None:
    """A paged table of several setups gets a setup filter beside the outcome filter; the
    two and the search combine, each filter counting the rows the others let through."""
    (tmp_path / "assets").mkdir()
    for name in ("site.js", "site.css"):
        (tmp_path / "assets" / name).write_bytes((site / "assets" / name).read_bytes())
    columns = ["dataset", "setup", "question", "outcome", "metrics", "response"]
    columns += ["response_length", "reference", "error"]
    outcomes = ("correct", "incorrect", "error")
    rows = [
        [
            "d",
            f"setup-{s}",
            f"q{i}",
            outcomes[(i * (s + 1)) % 3],
            "",
            "the answer is correct" if i % 4 == 0 else "incorrectly so",
            None,
            None,
            None,
        ]
        for s in range(3)
        for i in range(40)
    ]
    document = json.dumps({"columns": columns, "rows": rows}).replace("<", "\\u003c")
    html = (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'self'; style-src 'self'\">"
        '<link rel="stylesheet" href="assets/site.css"></head><body>'
        '<div class="paged" data-source="rows"><div class="items-controls">'
        '<span class="paged-facets"></span><input id="item-search" class="paged-search">'
        '<button class="paged-prev">p</button><span class="paged-page"></span>'
        '<button class="paged-next">n</button><span class="paged-status">'
        '<span id="items-count" class="paged-count"></span> of '
        '<span class="paged-total"></span> items</span></div>'
        '<table class="data items" id="items" data-kind="items" data-page-size="25">'
        '<thead><tr><th data-sort="dataset">Dataset</th><th data-sort="question">Question</th>'
        '<th data-sort="outcome">Outcome</th><th data-sort="metrics">Metrics</th>'
        '<th data-sort="response">Response</th><th data-sort="reference">Reference</th>'
        '<th data-sort="error">Error</th></tr></thead><tbody></tbody>'
        f'</table></div><script type="application/json" id="rows">{document}</script>'
        '<script src="assets/site.js"></script></body></html>'
    )
    path = tmp_path / "paged.html"
    path.write_text(html, encoding="utf-8")

    def expected(setup: str, outcome: str, word: bool) -> int:
        return sum(
            (not setup or r[1] == setup)
            and (not outcome or r[3] == outcome)
            and (not word or _word_match(str(r[5]), "correct"))
            for r in rows
        )

    def wait(n: int) -> None:
        page.wait_for_function(
            "(n) => document.getElementById('items-count').textContent === String(n)", arg=n
        )

    with _open(browser, path, DESKTOP) as (page, log):
        assert page.locator("select[data-facet='dataset']").count() == 0  # one dataset only
        setups = _facet_counts(page, "setup")
        assert setups == {"": 120, "setup-0": 40, "setup-1": 40, "setup-2": 40}
        assert _facet_counts(page, "outcome") == {
            "": 120,
            **{o: expected("", o, False) for o in outcomes},
        }
        page.select_option("#item-setup", "setup-1")
        wait(expected("setup-1", "", False))
        assert _facet_counts(page, "outcome") == {
            "": 40,
            **{o: expected("setup-1", o, False) for o in outcomes},
        }
        page.select_option("#item-outcome", "incorrect")
        wait(expected("setup-1", "incorrect", False))
        assert _facet_counts(page, "setup")["setup-2"] == expected("setup-2", "incorrect", False)
        page.fill("#item-search", "correct")
        n = expected("setup-1", "incorrect", True)
        wait(n)
        assert 0 < n < expected("setup-1", "incorrect", False)
        status = page.evaluate("() => document.querySelector('.paged-status').textContent")
        assert re.sub(r"\s+", " ", status).strip() == f"{n} of 120 items"
        shown = page.evaluate(
            "() => Array.from(document.querySelectorAll('#items tbody tr')).map("
            "(tr) => [tr.querySelector('td.outcome').textContent,"
            " tr.querySelector('td.response').textContent])"
        )
        assert len(shown) == n
        assert all(o == "incorrect" and "the answer is correct" in r for o, r in shown)
        assert not log.problems(), log.problems()


NUMBERS_JS = """
() => Array.from(document.querySelectorAll('#metrics-table tbody tr')).map((tr) => {
  const td = tr.cells[1], style = getComputedStyle(td);
  return {name: tr.cells[0].textContent, text: td.textContent.trim(),
          align: style.textAlign, numeric: style.fontVariantNumeric};
})
"""


def test_numbers_are_aligned_fixed_and_percent(browser: Browser, site: Path) -> None:
    """LLMBar's judge accuracies (0/1 verdicts) show as percentages with one decimal, its
    ratings as scores with 3 decimals, right aligned in tabular figures (values and verdicts read
    from the evaluation's JSON file)."""
    pages = _page_types(site)
    data = json.loads(
        (site / "data" / "evaluations" / "llmbar-natural.json").read_text(encoding="utf-8")
    )
    with _open(browser, pages["evaluation"], DESKTOP) as (page, log):
        cells = page.evaluate(NUMBERS_JS)
        for cell in cells:  # the mean, without its interval
            cell["text"] = cell["text"].split(" [")[0]
        assert len(cells) == len(data["metrics"])
        percent = 0
        for cell in cells:
            name = cell["name"]
            value = data["metrics"][name]
            scores = [i["scores"][name] for i in data["items"] if name in (i["scores"] or {})]
            if scores and all(v in (0, 1) for v in scores):  # verdicts: a proportion
                percent += 1
                assert cell["text"] == f"{100 * value:.1f}%", cell
            else:  # a rating: a score, 3 decimals
                assert cell["text"] == f"{value:.3f}", cell
            assert cell["align"] == "right"
            assert "tabular-nums" in cell["numeric"]
        assert percent > 10, "LLMBar's judges give 0/1 verdicts"
        assert not log.problems(), log.problems()
    # A setup page's per-dataset seconds: three significant digits (kagreport._format's
    # quantity; no mean here rounds up to a power of ten).
    html = pages["setup"].read_text(encoding="utf-8")
    found = re.findall(r'data-key="avg_generation_secs" data-value="([^"]*)">([^<]*)<', html)
    assert found
    for raw, shown in found:
        x = float(raw) if raw != "null" else math.nan
        digits = max(0, 2 - math.floor(math.log10(x))) if x > 0 else 0
        expected = "—" if raw == "null" else "0" if x == 0 else f"{x:,.{digits}f}"
        assert shown == expected, (raw, shown)


def test_phone_width_without_javascript(browser: Browser, site: Path) -> None:
    """With scripts off (no table wrapper from site.js) no page type scrolls sideways at
    375 px either: site.css lets each table scroll as a block of its own."""
    context = browser.browser.new_context(
        viewport={"width": PHONE, "height": 900}, java_script_enabled=False
    )
    blocked: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    wide: dict[str, tuple[int, int]] = {}
    try:
        for kind, path in _page_types(site).items():
            page = context.new_page()
            page.goto(path.as_uri(), wait_until="load", timeout=LOAD_TIMEOUT_MS)
            scroll, inner = page.evaluate(
                "() => [document.scrollingElement.scrollWidth, window.innerWidth]"
            )
            if scroll > inner:
                wide[kind] = (scroll, inner)
            page.close()
    finally:
        context.close()
    assert not wide, wide
    assert not blocked, blocked


ROW_KEYS_JS = """
() => Array.from(document.querySelectorAll('#items tbody tr')).map((tr) =>
  tr.cells[0].textContent + '/' + tr.querySelector('td.question .qid').textContent)
"""


def test_simulated_run_sorts_by_seconds_and_filters_by_dataset(
    browser: Browser, site: Path
) -> None:
    """The SIMULATED kag run records generation seconds (some missing): sorted ascending
    and descending over all pages, missing values last both ways; its datasets get a
    filter whose counts are report.json's per-dataset totals."""
    reports = _run_reports(site)
    slug = next((s for s in reports if s.startswith("simulated")), None)
    if slug is None:
        pytest.skip("the default site has no simulated kag run")
    path = sorted((site / "setups").glob(f"{slug}--*.html"))[0]
    with _open(browser, path, DESKTOP) as (page, log):
        setup = page.evaluate("() => document.querySelector('h1').firstChild.textContent.trim()")
        data = _items(page)
        col = {c: i for i, c in enumerate(data["columns"])}
        rows = data["rows"]
        keys = [f"{r[col['dataset']]}/{r[col['question']]}" for r in rows]
        secs = [r[col["generation_secs"]] for r in rows]
        assert any(s is None for s in secs)
        assert len({s for s in secs if s is not None}) > 10

        def every_page() -> list[str]:
            page.evaluate(
                "() => { while (!document.querySelector('#items-prev').disabled)"
                " document.querySelector('#items-prev').click(); }"
            )
            shown = page.evaluate(ROW_KEYS_JS)
            while not page.evaluate("() => document.querySelector('#items-next').disabled"):
                page.click("#items-next")
                shown += page.evaluate(ROW_KEYS_JS)
            return shown

        present = [i for i, s in enumerate(secs) if s is not None]
        missing = [keys[i] for i, s in enumerate(secs) if s is None]
        for descending in (False, True):
            _click_header(page, "#items", "Generation")
            # Python's sort is stable, also with reverse=True: ties keep the page's order.
            order = sorted(present, key=lambda i: secs[i], reverse=descending)
            assert every_page() == [keys[i] for i in order] + missing, descending
        report = reports[slug]
        per = next(s for s in report["setups"] if s["setup"] == setup)["per_dataset"]
        assert len(per) >= 2
        counts = _facet_counts(page, "dataset")
        assert counts == {"": len(rows), **{d: m["total"] for d, m in per.items()}}
        assert not log.problems(), log.problems()


def test_flipped_items_filter_by_candidate_outcome(browser: Browser, site: Path) -> None:
    """A comparison's flipped items filter by the candidate's outcome: "correct" is the
    items the candidate gained, counted here from the page's inline JSON."""
    best: tuple[int, Path, list[Any]] | None = None
    for path in sorted((site / "comparisons").glob("*.html")):
        found = re.search(
            r'<script type="application/json" id="flips-data">(.*?)</script>',
            path.read_text(encoding="utf-8"),
            re.S,
        )
        if found:
            rows = json.loads(found.group(1))["rows"]
            if best is None or len(rows) > best[0]:
                best = (len(rows), path, rows)
    assert best is not None
    _, path, rows = best
    gained = sum(r[1] == "correct" for r in rows)
    assert 0 < gained < len(rows)
    with _open(browser, path, DESKTOP) as (page, log):
        counts = _facet_counts(page, "candidate")
        assert counts[""] == len(rows)
        assert counts["correct"] == gained
        assert sum(v for k, v in counts.items() if k) == len(rows)
        page.select_option("#flip-candidate", "correct")
        page.wait_for_function(
            "(n) => document.getElementById('flips-count').textContent === String(n)", arg=gained
        )
        shown = page.evaluate(
            "() => Array.from(document.querySelectorAll('#flipped tbody tr')).map("
            "(tr) => tr.cells[1].textContent)"
        )
        assert set(shown) == {"correct"}
        assert len(shown) == min(50, gained)
        assert not log.problems(), log.problems()


def test_long_unbroken_names_and_texts_wrap_at_phone_width(
    browser: Browser, tmp_path: Path
) -> None:
    """A valid 250-character setup name, a 3,000-character option and a 500-character error
    without a space wrap where they are shown (the adversarial trial of #14 found the
    comparison page 5,014 px wide and a setup page 2,904 px at 375 px)."""
    from kagreport.site import RunConfig, SiteConfig, build_site

    long_setup = "s" * 250
    truth = {
        "ds": {
            "q1": {
                "input": "Q" * 600,
                "output": {"type": "MCQ", "options": {"A": "o" * 3000, "B": "b"}, "answer": "A"},
            }
        }
    }
    results = tmp_path / "results" / "ds" / "q1"
    results.mkdir(parents=True)
    (tmp_path / "datasets.json").write_text(json.dumps(truth), encoding="utf-8")
    ok = {
        "ok": {
            "result": "A",
            "stats": {
                "prompt": "p",
                "retrieval": None,
                "config": {
                    "augmented_generation": None,
                    "provider": "x",
                    "model": "m",
                    "temperature": 0.0,
                    "tokens": None,
                },
                "time": {"secs": 1, "nanos": 0},
            },
        }
    }
    (results / f"{long_setup}.json").write_text(json.dumps(ok), encoding="utf-8")
    (results / "beta.json").write_text(json.dumps({"error": "boom " + "E" * 500}), encoding="utf-8")
    config = SiteConfig(
        title="T" * 300,
        runs=(
            RunConfig(
                "run " + "R" * 200,
                tmp_path / "datasets.json",
                tmp_path / "results",
                compare="all-pairs",
            ),
        ),
    )
    out = tmp_path / "site"
    build_site(config, out)
    pages = [
        out / "index.html",
        *sorted((out / "setups").glob("*.html")),
        *sorted((out / "comparisons").glob("*.html")),
    ]
    assert len(pages) >= 4
    wide = {}
    for path in pages:
        with _open(browser, path, PHONE) as (page, _log):
            scroll, inner = page.evaluate(
                "() => [document.scrollingElement.scrollWidth, window.innerWidth]"
            )
            if scroll > inner:
                wide[path.name] = scroll
    assert not wide, wide
