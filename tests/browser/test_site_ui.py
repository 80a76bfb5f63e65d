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
import os
import re
import subprocess
import sys
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
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled examples' site, built by the CLI (notebooks converted, not executed)."""
    out = tmp_path_factory.mktemp("site-ui") / "site"
    env = dict(os.environ)
    src = str(REPO / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    command = [sys.executable, "-m", "kagreport", "site", "build", "-q", "-o", str(out)]
    done = subprocess.run(
        [*command, "--with-notebooks", "--no-execute"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:  # no notebook front end installed: the site without them
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert (out / "index.html").is_file()
    return out


def _page_types(site: Path) -> dict[str, Path]:
    """One page of each type the site has, by a short name."""
    found: dict[str, Path] = {"index": site / "index.html"}
    setups = sorted((site / "setups").glob("*.html"))
    comparisons = sorted((site / "comparisons").glob("*.html"))
    evaluations = sorted((site / "evaluations").glob("*.html"))
    sources = sorted(p for p in (site / "sources").glob("*.html") if "--" not in p.stem)
    systems = sorted(p for p in (site / "sources").glob("*.html") if "--" in p.stem)
    notebooks = sorted((site / "notebooks").glob("*.html"))
    for name, pages in (
        ("setup", setups),
        ("comparison", comparisons),
        ("source", sources),
        ("source-system", systems),
        ("notebook", notebooks),
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
    "source",
    "source-system",
    "notebook",
)


@contextmanager
def _open(browser: Browser, path: Path, width: int) -> Iterator[tuple[Any, PageLog]]:
    """``path`` at a viewport ``width`` px wide, loaded, its charts drawn."""
    page, log = browser.new_page(path.as_uri())
    try:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path.as_uri(), wait_until="load", timeout=LOAD_TIMEOUT_MS)
        wait_for_charts(page)
        # site.js has run: sortable tables carry a button in each header.
        page.wait_for_function(
            "() => !document.querySelector('table.data thead th')"
            " || document.querySelector('table.data thead th button.sort') !== null",
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
        assert kind == "notebook", f"the bundled site has no {kind} page"
        pytest.skip("the site was built without notebooks (no nbconvert)")
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


def test_no_console_errors_on_any_page(browser: Browser, site: Path) -> None:
    """Every page of the site loads with no console error, page error or request out."""
    problems: dict[str, list[str]] = {}
    for path in sorted(site.rglob("*.html")):
        with _open(browser, path, DESKTOP) as (_page, log):
            if log.problems():
                problems[str(path.relative_to(site))] = log.problems()
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


def test_leaderboard_sorts_by_a_numeric_header(browser: Browser, site: Path) -> None:
    """The leaderboard's Correct column: ascending, then descending, as report.json says."""
    report = json.loads((site / "data" / "report.json").read_text(encoding="utf-8"))
    correct = {s["setup"]: s["overall"]["correct"] for s in report["setups"]}
    ranked = [s["setup"] for s in report["setups"]]  # the page's first order (kag's rank)
    assert len(set(correct.values())) > 2, "the example's setups tie: nothing to sort"
    with _open(browser, site / "index.html", DESKTOP) as (page, log):
        table = "table.leaderboard"
        assert _order(page, table, "data-setup") == ranked
        _click_header(page, table, "Correct")
        assert _aria_sort(page, table, "Correct") == "ascending"
        assert _order(page, table, "data-setup") == _stable_sorted(ranked, correct, False)
        _click_header(page, table, "Correct")
        assert _aria_sort(page, table, "Correct") == "descending"
        assert _order(page, table, "data-setup") == _stable_sorted(ranked, correct, True)
        # Keyboard: the header is a button; Enter on it sorts again (ascending).
        page.locator(f"{table} thead th button.sort", has_text="Correct").first.focus()
        page.keyboard.press("Enter")
        assert _aria_sort(page, table, "Correct") == "ascending"
        assert not log.problems(), log.problems()


def test_static_table_sort_matches_data_values(browser: Browser, site: Path) -> None:
    """The index's comparisons sorted by p (Holm): the order of their data-value numbers,
    read from the HTML before the click and sorted here (ties keep their order)."""
    with _open(browser, site / "index.html", DESKTOP) as (page, log):
        table = "table.comparisons"
        cells = page.evaluate(
            "() => Array.from(document.querySelectorAll('table.comparisons tbody tr'))"
            ".map((tr, i) => { tr.setAttribute('data-test-row', String(i));"
            " const td = tr.querySelector('td[data-key=\"p_value_holm_across_run\"]');"
            " return td.getAttribute('data-value'); })"
        )
        assert len(cells) >= 3, cells
        names = [str(i) for i in range(len(cells))]
        values = {n: (None if v == "null" else float(v)) for n, v in zip(names, cells, strict=True)}
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
    where the ids are numbers, then by generation time with missing values last."""
    path = _page_types(site)["setup"]
    with _open(browser, path, DESKTOP) as (page, log):
        data = _items(page)
        col = {c: i for i, c in enumerate(data["columns"])}
        rows = data["rows"]
        ids = [r[col["question"]] for r in rows]
        assert all(i.isdigit() for i in ids), ids[:5]
        first = _shown_ids(page)
        _click_header(page, "#items", "Question")
        ascending = sorted(ids, key=int)
        assert _shown_ids(page) == ascending[: len(first)]
        _click_header(page, "#items", "Question")
        assert _shown_ids(page) == sorted(ids, key=int, reverse=True)[: len(first)]
        assert _aria_sort(page, "#items", "Question") == "descending"
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
    report = json.loads((site / "data" / "report.json").read_text(encoding="utf-8"))
    pages = sorted((site / "setups").glob("*.html"))
    assert len(pages) == len(report["setups"])
    by_title: dict[str, dict[str, int]] = {}
    for s in report["setups"]:
        o = s["overall"]
        by_title[s["setup"]] = {
            "": o["total"],
            "correct": o["correct"],
            "incorrect": o["incorrect"],
            "error": o["errors"],
        }
    for path in pages:
        with _open(browser, path, DESKTOP) as (page, log):
            setup = page.evaluate(
                "() => document.querySelector('h1').firstChild.textContent.trim()"
            )
            expected = {k: v for k, v in by_title[setup].items() if v or k == ""}
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


def _row_text(row: list[Any]) -> str:
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
        texts = [_row_text(r) for r in data["rows"]]
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
