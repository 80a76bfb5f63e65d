"""Pages people read, at a phone's width and a desktop's (issue 26, items 7 and 8).

The bundled examples' site, built once per session with ``kagreport site build`` (the
notebooks converted, not run: ``examples_site`` in ``conftest.py``), is opened from ``file://``
with the network blocked (``conftest.py``), at 375 x 812 px (a phone) and 1280 x 800 px:

- item 7: the first screen of the index, of a setup page and of a comparison page shows
  each system's headline number with its interval and its verdict (significance after
  Holm's adjustment across the run's comparisons) with no sideways scrolling, neither of the
  page nor of a box; the numbers are those of ``kag stats`` (``data/runs/*/report.json``),
  the intervals Wilson's, computed here, and the verdicts those of the comparisons' JSON;
- item 8: the Llama-2-7b vs gemini-1.5-pro comparison of the MMLU-Pro example (288 flipped
  items; 95,706 px tall before) shows 20 flipped items side by side, pages through the
  others, filters them by outcome and links each from its row of the flipped-items table;
  without scripts every flipped item is still in the page, the ones after the 20th folded.

A test that fails keeps a screenshot of the page in ``tests/browser/_output/`` and names it.
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

from .conftest import LOAD_TIMEOUT_MS, OUTPUT, Browser

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
# A phone (375 px wide, as an iPhone X-class screen) and a laptop.
SCREENS = {"phone": (375, 812), "desktop": (1280, 800)}
LLAMA = "mmlu-pro-philosophy--llama-2-7b-hf--vs--gemini-1-5-pro-002"
FIRST_FLIPS = 20
ALPHA = 0.05  # the level of the forest plot's filled points (kagreport.charts.forest_plot)
Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal


@pytest.fixture(scope="module")
def site(examples_site: Path) -> Path:
    """The bundled examples' site (``examples_site``, shared by the browser tests)."""
    return examples_site


@contextmanager
def _page(
    browser: Browser, path: Path, screen: str, name: str, fragment: str = ""
) -> Iterator[Any]:
    """``path`` open at ``screen``'s size, scripts run; on a failed assertion inside, a
    screenshot of what was on the screen is kept as ``_output/<name>-<screen>.png``."""
    width, height = SCREENS[screen]
    page, log = browser.new_page(path.as_uri())
    try:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(path.as_uri() + fragment, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        try:
            yield page
            assert not log.problems(), log.problems()
        except AssertionError as error:
            OUTPUT.mkdir(parents=True, exist_ok=True)
            shot = OUTPUT / f"{name}-{screen}.png"
            page.screenshot(path=str(shot), full_page=False)
            raise AssertionError(f"{error}\nscreenshot: {shot}") from error
    finally:
        page.close()


def _wilson(correct: int, total: int) -> tuple[float, float]:
    """Wilson's (1927) score interval at 95%, computed here from its formula."""
    p = correct / total
    denominator = 1 + Z95**2 / total
    centre = (p + Z95**2 / (2 * total)) / denominator
    half = Z95 * math.sqrt(p * (1 - p) / total + Z95**2 / (4 * total**2)) / denominator
    return centre - half, centre + half


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _headline(overall: dict[str, Any]) -> str:
    """A kag setup's accuracy and its interval as the pages write them: 72.3% [68.3%, 76.1%]."""
    low, high = _wilson(overall["correct"], overall["total"])
    return f"{_pct(overall['accuracy'])} [{_pct(low)}, {_pct(high)}]"


def _comparisons(site: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Every comparison's JSON, by (candidate, baseline)."""
    found = {}
    for path in (site / "data" / "comparisons").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        found[data["candidate"], data["baseline"]] = data
    return found


def _word(comparison: dict[str, Any], system: str) -> str:
    """What a comparison says of ``system``: higher, lower, or not significant."""
    p = comparison["metadata"]["p_value_holm_across_run"]
    difference = comparison["metrics"][0]["mean_difference"]
    if system == comparison["baseline"]:
        difference = -difference
    if p is None or p >= ALPHA or difference == 0:
        return "not significant"
    return "higher" if difference > 0 else "lower"


def _decisions(comparison: dict[str, Any], system: str) -> tuple[str, ...]:
    """The verdicts a leaderboard may show for ``system`` (issue 28): better or worse where
    the Holm-adjusted test rejects, else equivalent (interval within the margin) or
    inconclusive."""
    word = _word(comparison, system)
    if word == "not significant":
        return ("equivalent", "inconclusive")
    return ("better",) if word == "higher" else ("worse",)


# The part of an element the reader sees without scrolling anything: its box clipped by
# every ancestor that clips (a scrolling table box) and by the viewport.
SEEN_JS = """
(el) => {
  const r = el.getBoundingClientRect();
  let left = r.left, right = r.right, top = r.top, bottom = r.bottom;
  for (let a = el.parentElement; a; a = a.parentElement) {
    const style = getComputedStyle(a);
    if (style.overflowX !== 'visible' || style.overflowY !== 'visible') {
      const b = a.getBoundingClientRect();
      left = Math.max(left, b.left); right = Math.min(right, b.right);
      top = Math.max(top, b.top); bottom = Math.min(bottom, b.bottom);
    }
  }
  left = Math.max(left, 0); top = Math.max(top, 0);
  right = Math.min(right, window.innerWidth); bottom = Math.min(bottom, window.innerHeight);
  const shown = el.offsetParent !== null || getComputedStyle(el).position === 'fixed';
  // Nor does its content spill out of it (a line too long for its card).
  const spills = getComputedStyle(el).display !== 'inline' && el.scrollWidth > el.clientWidth + 1;
  return {whole: shown && !spills && r.width > 0 && Math.abs(right - left - r.width) < 1.5
                 && Math.abs(bottom - top - r.height) < 1.5,
          text: el.innerText.replace(/\\s+/g, ' ').trim(), rect: [r.left, r.top, r.right, r.bottom]};
}
"""


def _seen(page: Any, selector: str) -> dict[str, Any]:
    """Whether the one element ``selector`` finds is whole on the screen, and its text."""
    handle = page.query_selector(selector)
    assert handle is not None, f"no {selector}"
    seen: dict[str, Any] = handle.evaluate(SEEN_JS)
    return seen


def _no_sideways_scroll(page: Any) -> None:
    scroll, inner = page.evaluate(
        "() => [document.scrollingElement.scrollWidth, window.innerWidth]"
    )
    assert scroll <= inner, f"the page scrolls sideways: {scroll} > {inner} px"


def _css(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


# ------------------------------------------------------------------------ item 7


@pytest.mark.parametrize("screen", SCREENS)
def test_index_first_screen_shows_every_headline_and_verdict(
    browser: Browser, site: Path, screen: str
) -> None:
    """Each run's leaderboard, from its heading (the first run's at the top of the page),
    shows on one screen every system's accuracy, interval and verdict; at 375 px the
    accuracy column was below the fold and its interval cut ("72.3% [68.3%, 7")."""
    reports = {
        p.parent.name: json.loads(p.read_text(encoding="utf-8"))
        for p in (site / "data" / "runs").glob("*/report.json")
    }
    comparisons = _comparisons(site)
    slugs = [
        s.removeprefix("leaderboard-")
        for s in re.findall(r'id="(leaderboard-[^"]+)"', (site / "index.html").read_text())
    ]
    assert slugs[0] == "mmlu-pro-philosophy"
    assert len(slugs) >= 3
    with _page(browser, site / "index.html", screen, "index") as page:
        _no_sideways_scroll(page)
        for slug in slugs:
            if slug != slugs[0]:
                page.evaluate(f"() => document.getElementById('run-{slug}').scrollIntoView()")
            table = f"#leaderboard-{slug}"
            systems = page.eval_on_selector_all(
                f"{table} tbody tr", "(rows) => rows.map((tr) => tr.dataset.system)"
            )
            assert len(systems) >= 2
            for system in systems:
                row = f'{table} tr[data-system="{_css(system)}"]'
                lead = _seen(page, f"{row} td.lead")
                verdict = _seen(page, f"{row} td[data-verdict]")
                assert lead["whole"], (slug, system, "headline", lead)
                assert verdict["whole"], (slug, system, "verdict", verdict)
                if slug in reports:  # a kag run: kag stats' numbers
                    setup = next(s for s in reports[slug]["setups"] if s["setup"] == system)
                    assert lead["text"] == _headline(setup["overall"]), (system, lead)
                against = [c for pair, c in comparisons.items() if pair[0] == system]
                if not against:  # the baseline
                    assert verdict["text"] == "the baseline", (system, verdict)
                for c in against:
                    assert verdict["text"].startswith(_decisions(c, system)), (system, verdict)


def _setup_pages(site: Path) -> list[Path]:
    return [
        site / "setups" / "mmlu-pro-philosophy--llama-2-7b-hf.html",
        site / "setups" / "mmlu-pro-philosophy--gemini-1-5-pro-002.html",
        *sorted((site / "setups").glob("inspect-*.html"))[:1],
    ]


@pytest.mark.parametrize("screen", SCREENS)
def test_setup_page_first_screen_shows_headline_and_verdict(
    browser: Browser, site: Path, screen: str
) -> None:
    """A setup page opens with its accuracy, interval and what the run's comparisons say
    of it (before, a kag setup's accuracy was in the per-dataset table only, without
    the comparisons until far below)."""
    report = json.loads((site / "data/runs/mmlu-pro-philosophy/report.json").read_text())
    comparisons = _comparisons(site)
    for path in _setup_pages(site):
        with _page(browser, path, screen, path.stem) as page:
            _no_sideways_scroll(page)
            setup = page.evaluate("() => document.querySelector('h1').firstChild.textContent")
            setup = setup.strip()
            headline = _seen(page, f'[data-headline="{_css(setup)}"] .value')
            verdict = _seen(page, f'[data-verdict="{_css(setup)}"]')
            assert headline["whole"], (path.name, headline)
            assert verdict["whole"], (path.name, verdict)
            if path.stem.startswith("mmlu-pro"):
                overall = next(s for s in report["setups"] if s["setup"] == setup)["overall"]
                assert headline["text"] == _headline(overall), headline
                mine = [c for pair, c in comparisons.items() if pair[0] == setup]
                if mine:
                    (c,) = mine
                    joins = {"better": "than", "worse": "than", "equivalent": "to"}
                    words = tuple(f"{w} {joins.get(w, 'against')} " for w in _decisions(c, setup))
                    assert verdict["text"].startswith(words), verdict
                else:
                    assert verdict["text"] == "the baseline", verdict


@pytest.mark.parametrize("screen", SCREENS)
def test_comparison_first_screen_shows_headlines_verdict_and_whole_test(
    browser: Browser, site: Path, screen: str
) -> None:
    """A comparison page opens with both systems' accuracies and intervals and the
    verdict; its paired test shows the difference, interval, p and Holm p with no
    sideways scrolling (at 375 px they were off-screen in a box that scrolled)."""
    report = json.loads((site / "data/runs/mmlu-pro-philosophy/report.json").read_text())
    comparisons = _comparisons(site)
    paths = [site / "comparisons" / f"{LLAMA}.html", *(site / "comparisons").glob("inspect-*")]
    for path in paths:
        data = json.loads((site / "data" / "comparisons" / f"{path.stem}.json").read_text())
        candidate, baseline = data["candidate"], data["baseline"]
        with _page(browser, path, screen, path.stem) as page:
            _no_sideways_scroll(page)
            for system in (candidate, baseline):
                seen = _seen(page, f'li[data-headline="{_css(system)}"]')
                assert seen["whole"], (system, seen)
                if path.stem.startswith("mmlu-pro"):
                    overall = next(s for s in report["setups"] if s["setup"] == system)
                    assert seen["text"].endswith(_headline(overall["overall"])), seen
            verdict = _seen(page, f'[data-verdict="{_css(candidate)}"]')
            assert verdict["whole"], verdict
            word = _word(comparisons[candidate, baseline], candidate)
            expected = "No significant difference" if word == "not significant" else word
            assert expected in verdict["text"], (word, verdict)
            page.evaluate("() => document.getElementById('paired-test').scrollIntoView()")
            cells = page.eval_on_selector_all(
                "#paired-test-table tbody td", "(cells) => cells.length"
            )
            assert cells == 8
            for k in range(1, cells + 1):
                seen = _seen(page, f"#paired-test-table tbody td:nth-child({k})")
                assert seen["whole"], (k, seen)


# ------------------------------------------------------------------------ item 8


def _flips(site: Path) -> list[list[Any]]:
    html = (site / "comparisons" / f"{LLAMA}.html").read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="flips-data">(.*?)</script>', html, re.S)
    assert found
    rows: list[list[Any]] = json.loads(found.group(1))["rows"]
    return rows


SHOWN_JS = """
() => Array.from(document.querySelectorAll('article.flip'))
  .filter((a) => a.checkVisibility()).map((a) => [a.id, a.dataset.item, a.className])
"""


@pytest.mark.parametrize("screen", SCREENS)
def test_flipped_items_paged_filtered_and_linked(browser: Browser, site: Path, screen: str) -> None:
    """The 288 flipped items of Llama-2-7b vs gemini-1.5-pro: 20 side by side at a time
    (the page was 95,706 px tall), paged, filtered by outcome, each linked from the
    flipped-items table and from the page's contents."""
    rows = _flips(site)
    assert len(rows) == 288
    gained = [r[0] for r in rows if r[1] == "correct"]
    assert 0 < len(gained) < len(rows)
    path = site / "comparisons" / f"{LLAMA}.html"
    with _page(browser, path, screen, "flips") as page:
        _no_sideways_scroll(page)
        height = page.evaluate("() => document.scrollingElement.scrollHeight")
        assert height < 20_000, height
        toc = page.eval_on_selector_all("nav.toc a", "(links) => links.map((a) => a.hash)")
        assert toc == ["#paired-test", "#forest", "#flips", "#side-by-side"]
        assert page.eval_on_selector_all("article.flip", "(a) => a.length") == len(rows)
        shown = page.evaluate(SHOWN_JS)
        assert [s[1] for s in shown] == [r[0] for r in rows[:FIRST_FLIPS]]
        page.click("#side-by-side .flip-next")
        shown = page.evaluate(SHOWN_JS)
        assert [s[1] for s in shown] == [r[0] for r in rows[FIRST_FLIPS : 2 * FIRST_FLIPS]]
        page.select_option("#flip-outcome", "gained")
        shown = page.evaluate(SHOWN_JS)
        assert [s[1] for s in shown] == gained[:FIRST_FLIPS]
        status = page.inner_text("#side-by-side .flip-status")
        assert status == f"{len(gained)} of {len(rows)} items", status
        # The last flip the candidate lost (filtered out, on the last page) from its row.
        target = next(r for r in reversed(rows) if r[1] != "correct")
        assert rows.index(target) >= 2 * FIRST_FLIPS
        page.evaluate(
            "(item) => { const pager = document.querySelector('#flips .paged-search');"
            " pager.value = item; pager.dispatchEvent(new Event('input')); }",
            target[0],
        )
        page.click(f'#flipped tbody a[href="#{target[3]}"]')
        page.wait_for_function(
            "(id) => document.getElementById(id).offsetParent !== null", arg=target[3]
        )
        seen = _seen(page, f"#{target[3]} h3")
        assert seen["whole"], seen
        assert seen["text"] == target[0], seen
        assert page.input_value("#flip-outcome") == ""


def test_flipped_items_without_scripts(browser: Browser, site: Path) -> None:
    """With scripts off the page holds every flipped item: the first 20 shown, the
    others in a fold that opens (no data lost), and the page is short until it does."""
    rows = _flips(site)
    context = browser.browser.new_context(
        viewport={"width": SCREENS["phone"][0], "height": SCREENS["phone"][1]},
        java_script_enabled=False,
    )
    context.route(
        "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
    )
    page = context.new_page()
    try:
        page.goto((site / "comparisons" / f"{LLAMA}.html").as_uri(), wait_until="load")
        try:
            shown = page.evaluate(SHOWN_JS)
            assert [s[1] for s in shown] == [r[0] for r in rows[:FIRST_FLIPS]]
            height = page.evaluate("() => document.scrollingElement.scrollHeight")
            assert height < 25_000, height
            page.click("details.more-flips > summary")
            shown = page.evaluate(SHOWN_JS)
            assert [s[1] for s in shown] == [r[0] for r in rows]
        except AssertionError as error:
            OUTPUT.mkdir(parents=True, exist_ok=True)
            shot = OUTPUT / "flips-no-script-phone.png"
            page.screenshot(path=str(shot))
            raise AssertionError(f"{error}\nscreenshot: {shot}") from error
    finally:
        context.close()


# Green and red as the site's CSS variables --good and --bad resolve (site.css).
_COLOURS_JS = """() => {
  const root = getComputedStyle(document.documentElement);
  const probe = (name) => { const e = document.createElement('span');
    e.style.color = root.getPropertyValue(name); document.body.appendChild(e);
    const c = getComputedStyle(e).color; e.remove(); return c; };
  const good = probe('--good'), bad = probe('--bad');
  return [...document.querySelectorAll('.flip-side')].flatMap((side) =>
    [...side.querySelectorAll('del, ins')].map((mark) => {
      const style = getComputedStyle(mark);
      return {outcome: side.dataset.outcome, line: style.textDecorationLine,
              colour: style.color, good, bad};
    }));
}"""


@pytest.mark.parametrize("screen", ["desktop"])
def test_a_right_answer_is_never_struck_through_and_colour_follows_correctness(
    browser: Browser, site: Path, screen: str
) -> None:
    """Issue 26, item 4: the baseline's correct "b" was struck through in red and the
    candidate's wrong answer underlined in green, whatever their correctness."""
    with _page(browser, site / "comparisons" / f"{LLAMA}.html", screen, "flip-colours") as page:
        marks = page.evaluate(_COLOURS_JS)
        assert {m["outcome"] for m in marks} >= {"correct", "incorrect"}
        for mark in marks:
            assert "line-through" not in mark["line"], mark
            if mark["outcome"] == "correct":
                assert mark["colour"] == mark["good"], mark
            elif mark["outcome"] == "incorrect":
                assert mark["colour"] == mark["bad"], mark


# ------------------------------------------------------ item 7: evaluation pages


def _evaluation(site: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((site / "data/evaluations" / f"{name}.json").read_text())
    return data


def _share(hits: int, n: int) -> str:
    low, high = _wilson(hits, n)
    return f"{_pct(hits / n)} [{_pct(low)}, {_pct(high)}]"


def _llmbar_headline(site: Path) -> dict[str, str]:
    """LLMBar's headline as the page must write it: the metric right on most items (counted
    here from the items' 0/1 scores) with Wilson's interval, each criterion's alpha with its
    bootstrap interval (3 decimals)."""
    data = _evaluation(site, "llmbar-natural")
    right: dict[str, int] = {}
    defined: dict[str, int] = {}
    for item in data["items"]:
        for name, value in item["scores"].items():
            if value is not None:
                right[name] = right.get(name, 0) + int(value == 1)
                defined[name] = defined.get(name, 0) + 1
    best = max(right, key=lambda n: (right[n] / defined[n], [-ord(c) for c in n]))
    expected = {"Best metric": f"{best}: {_share(right[best], defined[best])}"}
    for criterion, alpha in data["agreement"].items():
        low, high = data["agreement_intervals"][criterion]
        expected[f"Krippendorff's alpha, {criterion} [95%]"] = (
            f"{alpha:.3f} [{low:.3f}, {high:.3f}]"
        )
    return expected


def _retrieval_headline(site: Path, name: str) -> dict[str, str]:
    """hit@5 (a relevant passage among the first 5 retrieved) and complete@5 (every relevant
    one among them), counted here from the retrieved and relevant lists, with Wilson's
    interval."""
    items = _evaluation(site, name)["items"]
    hit = sum(any(p in item["relevant"] for p in item["retrieved"][:5]) for item in items)
    complete = sum(set(item["relevant"]) <= set(item["retrieved"][:5]) for item in items)
    return {
        "Items": str(len(items)),
        "hit@5": _share(hit, len(items)),
        "complete@5": _share(complete, len(items)),
    }


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("name", ["llmbar-natural", "simulated-rag-large-retrieval"])
def test_evaluation_first_screen_shows_its_headline(
    browser: Browser, site: Path, screen: str, name: str
) -> None:
    """An evaluation page opens with its headline numbers whole on the first screen: the
    best metric (named) with its interval, the agreement alphas with theirs. At 375 px
    LLMBar's showed "Items 100, Judges 65" and a cut judge name, the rest off to the right
    in a box that scrolled sideways with no hint."""
    if name == "llmbar-natural":
        expected = _llmbar_headline(site)
        assert len(expected) == 5  # the best metric and four criteria
    else:
        expected = _retrieval_headline(site, name)
    path = site / "evaluations" / f"{name}.html"
    with _page(browser, path, screen, name) as page:
        _no_sideways_scroll(page)
        labels = page.eval_on_selector_all(
            "#headline-summary dt", "(dts) => dts.map((dt) => dt.innerText.trim())"
        )
        assert set(expected) <= set(labels), labels
        for k, label in enumerate(labels, 1):
            seen = _seen(page, f"#headline-summary .summary-item:nth-child({k})")
            assert seen["whole"], (label, seen)
            if label in expected:
                value = _seen(page, f"#headline-summary .summary-item:nth-child({k}) dd")
                assert value["text"] == expected[label], (label, value)


# ------------------------------------------------------ a box that scrolls says so


HINTS_JS = """
() => Array.from(document.querySelectorAll('.table-scroll')).map((box) => {
  const hint = box.previousElementSibling;
  const seen = hint && hint.classList.contains('scroll-hint') && hint.checkVisibility()
    && hint.getBoundingClientRect().height > 0;
  return {table: box.firstElementChild.id, overflows: box.scrollWidth > box.clientWidth + 1,
          hint: Boolean(seen), text: seen ? hint.innerText : '',
          fades: getComputedStyle(box).maskImage !== 'none'};
})
"""


@pytest.mark.parametrize("screen", SCREENS)
def test_a_table_box_that_scrolls_says_so(browser: Browser, site: Path, screen: str) -> None:
    """At 1280 px the simulated run's leaderboard (cost and graph columns) is wider than its
    box and was cut mid-column ("ver" of vertices) with nothing saying it scrolls: every box
    wider inside than on the screen has a visible "scroll sideways" line and a faded edge,
    and a box that fits has neither."""
    with _page(browser, site / "index.html", screen, "scroll-hint") as page:
        boxes = page.evaluate(HINTS_JS)
        if screen == "desktop":
            wide = [b["table"] for b in boxes if b["overflows"]]
            assert "leaderboard-simulated-kag-run" in wide, boxes
        for box in boxes:
            assert box["hint"] == box["overflows"], box
            assert box["fades"] == box["overflows"], box
            if box["hint"]:
                assert box["text"] == "Scroll sideways for more columns \u2192", box
        # Scrolled to its end, the leaderboard's right edge no longer fades.
        if screen == "desktop":
            page.evaluate(
                "() => { const t = document.getElementById('leaderboard-simulated-kag-run');"
                " const box = t.parentElement; box.scrollLeft = box.scrollWidth; }"
            )
            page.wait_for_function(
                "() => !document.getElementById('leaderboard-simulated-kag-run')"
                ".parentElement.classList.contains('more-right')",
                timeout=LOAD_TIMEOUT_MS,
            )


# ------------------------------------------------------ hints and counts site.js writes


def test_the_sort_hint_is_where_the_sort_controls_are(browser: Browser, site: Path) -> None:
    """The Inspect logs' setups: Llama's 2 items get no sort controls (site.js sorts tables
    of 10 rows on) and so no "click a header to sort"; gpt-4o-mini's 10 get both. Before,
    the 2-row table said "Click a header to sort" with no header to click."""
    found = {}
    for path in sorted((site / "setups").glob("inspect-*.html")):
        with _page(browser, path, "desktop", path.stem) as page:
            buttons = page.eval_on_selector_all("#items-section button.sort", "(b) => b.length")
            hinted = "Click a header to sort" in page.inner_text("#items-section")
            rows = page.eval_on_selector("#items-section .paged-total", "(e) => e.innerText")
            found[path.stem.split("--")[1]] = (rows, buttons > 0, hinted)
    assert found == {
        "azureai-meta-llama-3-1-405b-instruct-jqf": ("2", False, False),
        "openai-gpt-4o-mini": ("10", True, True),
    }


def test_the_pager_counts_one_item_as_one(browser: Browser, site: Path) -> None:
    """The Inspect comparison's one flipped item: the pagers site.js writes say "1 of 1
    item" (they said "1 of 1 items")."""
    (path,) = (site / "comparisons").glob("inspect-*.html")
    with _page(browser, path, "desktop", "pager") as page:
        assert page.inner_text("#flips .paged-status") == "1 of 1 item"
        assert page.inner_text("#side-by-side .flip-status") == "1 of 1 item"
