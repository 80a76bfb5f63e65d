"""The static report site in a real browser (issue 5, points 5 and 6; PITFALLS.md B13).

Sites are built once per session in a temporary folder and opened from ``file://`` in headless
Chromium with every request that is not ``file://`` aborted (see ``conftest.py``):

- ``examples_site`` (``tests/conftest.py``): the bundled examples (the SIMULATED kag run,
  the MMLU-Pro philosophy run, the Inspect logs, LLMBar judges, fast-graphrag retrievals),
  the analyst notebooks converted; every page is visited once (``examples_visits``, shared
  with ``test_site_ui.py``) and the tests assert on what was recorded.
- ``hostile_site``: a simulated run whose questions, options, responses, error messages,
  prompts, run name and attribution carry script and event-handler payloads.
- ``notebook_site`` (``tests/conftest.py``): a simulated run plus one small notebook (B13),
  executed.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from conftest import NOTEBOOK_OUTPUT_TEXT

from .conftest import Browser, PageLog, chart_states, import_site, wait_for_charts
from .visits import (
    CSP_META_JS,
    INJECTED_JS,
    ITEMS_JSON_JS,
    Visit,
    html_pages,
    open_recording,
    visit_all,
)

pytestmark = pytest.mark.browser

# --------------------------------------------------------------------------- builds


def _sim_run(root: Path) -> Any:
    from kagreport.kag import simulate_run

    return simulate_run(root, questions=30, datasets=2)


@pytest.fixture(scope="session")
def site_module() -> Any:
    """:mod:`kagreport.site` (a failure, never a skip, when it is missing)."""
    return import_site()


def _build(site_module: Any, config: Any, out: Path, *, execute_notebooks: bool) -> Path:
    """Build into ``out``; return the site folder (build_site returns its index.html)."""
    index = Path(site_module.build_site(config, out, execute_notebooks=execute_notebooks))
    assert index == out / "index.html"
    return out


@pytest.fixture(scope="session")
def main_site(examples_site: Path) -> Path:
    """The bundled examples' site (``examples_site``): the SIMULATED kag run, MMLU-Pro (its
    first run: ``data/report.json``), the Inspect logs, the evaluations, the notebooks."""
    return examples_site


# The payloads of issue 5 point 5. Each sets window.__xss or opens a dialog if it runs.
PAYLOADS = (
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "</script><script>window.__xss=1</script>",
    "<!--",
    '<a href="javascript:window.__xss=1;alert(1)">click me</a>',
    "javascript:alert(1)",
    "<svg onload=alert(1)>",
    "[click](javascript:window.__xss=1)",
    "{{ 7*7 }} ${alert(1)} `alert(1)`",
)


def _poison(value: str, index: int) -> str:
    return f"{PAYLOADS[index % len(PAYLOADS)]} #{index}"


def _poison_run(root: Path) -> Any:
    """A simulated run rewritten so that every text from the files carries a payload."""
    sim = _sim_run(root)
    datasets_path = Path(sim.datasets_path)
    truth = json.loads(datasets_path.read_text(encoding="utf-8"))
    counter = 0
    for questions in truth.values():
        for entry in questions.values():
            entry["input"] = _poison(entry["input"], counter)
            output = entry.get("output")
            if output and output.get("options"):
                for key in output["options"]:
                    counter += 1
                    output["options"][key] = _poison("", counter)
            counter += 1
    datasets_path.write_text(json.dumps(truth, indent=2), encoding="utf-8")
    counter = 0
    for path in sorted(Path(sim.results_path).rglob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue  # the simulated unparsable files
        counter += 1
        if "ok" in record and counter % 6 == 0:
            record = {"error": f"Generation failed: {_poison('', counter)}"}
        if "ok" in record:
            record["ok"]["result"] = _poison("", counter)
            record["ok"]["stats"]["prompt"] = f"Prompt: {_poison('', counter + 1)}"
        else:
            record["error"] = f"Generation failed: {_poison('', counter)}"
        path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    return sim


HOSTILE_RUN_NAME = "Run <script>window.__xss=1</script><img src=x onerror=alert(1)>"


@pytest.fixture(scope="session")
def hostile_site(site_module: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site-hostile")
    sim = _poison_run(root / "run")
    config = site_module.SiteConfig(
        title="Hostile </title><script>window.__xss=1</script>",
        runs=(
            site_module.RunConfig(
                name=HOSTILE_RUN_NAME,
                datasets=Path(sim.datasets_path),
                results=Path(sim.results_path),
                attribution='<a href="javascript:alert(1)">source</a> <!-- <script>alert(1)</script>',
            ),
        ),
    )
    return _build(site_module, config, root / "out", execute_notebooks=False)


# --------------------------------------------------------------------------- visiting


@pytest.fixture(scope="package")  # as the browser it visits with
def main_visits(examples_visits: dict[Path, Visit]) -> dict[Path, Visit]:
    """Every page of ``main_site``, visited once in the session (``visits.visit_all``)."""
    return examples_visits


def file_of(url: str) -> Path:
    """The local path of a ``file://`` URL (query and fragment dropped)."""
    parts = urlsplit(url)
    assert parts.scheme == "file", url
    return Path(unquote(parts.path))


def local_target(page: Path, raw: str) -> Path | None:
    """The file an ``href``/``src`` of ``page`` points to, or None for an external/in-page link."""
    if raw.startswith("#") or raw == "":
        return None
    scheme = urlsplit(raw).scheme.lower()
    if scheme in ("http", "https", "mailto", "data", "blob"):
        return None
    return file_of(urljoin(page.resolve().as_uri(), raw))


# --------------------------------------------------------------------------- the harness


def test_harness_blocks_network_and_records_errors(browser: Browser, tmp_path: Path) -> None:
    """A page that reaches for the network is caught: the tests below cannot pass vacuously."""
    (tmp_path / "local.js").write_text("window.__local = 1;", encoding="utf-8")
    (tmp_path / "data.json").write_text("{}", encoding="utf-8")
    page_path = tmp_path / "probe.html"
    page_path.write_text(
        "<!doctype html><html><head><script src='local.js'></script></head><body>"
        "<img src='https://example.invalid/x.png'>"
        "<script src='http://cdn.example.invalid/vega.js'></script>"
        "<div class='chart'><svg><g class='mark-rect role-mark'><path d='M0,0h1v1z'/></g></svg></div>"
        "<script>fetch('data.json').catch(() => {}); console.error('boom');"
        " setTimeout(() => { throw new Error('late'); }, 0);</script>"
        "</body></html>",
        encoding="utf-8",
    )
    with browser.open(page_path) as (page, log):
        page.wait_for_timeout(200)
        assert page.evaluate("() => window.__local") == 1
        charts = chart_states(page)
    assert any("example.invalid/x.png" in u for u in log.blocked), log
    assert any("cdn.example.invalid" in u for u in log.blocked), log
    assert any(u.endswith("data.json") for u in log.fetches), log
    assert "boom" in log.console_errors, log
    assert any("late" in e for e in log.page_errors), log
    assert charts == [
        {
            "index": 0,
            "id": "",
            "svg": True,
            "drawn": 1,
            "rects": 1,
            "symbols": 0,
            "lines": 0,
            "classes": ["mark-rect role-mark"],
            "text": "",
        }
    ]


def test_harness_detects_injection(browser: Browser, tmp_path: Path) -> None:
    """The point-5 checks see a page that lets a payload through."""
    page_path = tmp_path / "vulnerable.html"
    page_path.write_text(
        "<!doctype html><html><body><p>ok</p>"
        '<td><img src=x onerror="window.__xss=1"></td>'
        "<a href='javascript:alert(1)'>x</a>"
        "<script>document.body.insertAdjacentHTML('beforeend', '<i>' + 'x' + '</i>');"
        " alert(1);</script></body></html>",
        encoding="utf-8",
    )
    with browser.open(page_path, charts=False) as (page, log):
        page.wait_for_timeout(200)
        injected = page.evaluate(INJECTED_JS)
        xss = page.evaluate("() => typeof window.__xss")
    assert xss == "number"
    assert any("onerror" in i for i in injected), injected
    assert any("javascript:" in i for i in injected), injected
    assert any("alert(1)" in i for i in injected), injected
    assert log.dialogs == ["alert: 1"]


# --------------------------------------------------------------------------- point 6


def test_site_layout(main_site: Path) -> None:
    assert (main_site / "index.html").is_file()
    assert (main_site / "data" / "report.json").is_file()
    assert (main_site / "assets" / "vega.js").is_file()
    assert (main_site / "assets" / "site.js").is_file()
    assert sorted((main_site / "setups").glob("*--*.html")), "no setup pages"
    assert sorted((main_site / "comparisons").glob("*.html")), "no comparison pages"
    assert sorted((main_site / "evaluations").glob("*.html")), "no evaluation pages"
    assert sorted((main_site / "figures").glob("*.svg")), "no SVG figures"


def test_no_errors_and_no_network_on_any_page(main_visits: dict[Path, Visit]) -> None:
    problems = [f"{path}: {line}" for path, v in main_visits.items() for line in v.log.problems()]
    assert not problems, "\n".join(problems)


def test_every_chart_is_drawn(main_visits: dict[Path, Visit]) -> None:
    index = main_visits[Path("index.html")]
    assert index.charts, "the index has no div.chart"
    missing = [
        f"{path} chart #{c['index']} id={c['id']!r}: svg={c['svg']} marks={c['drawn']} "
        f"text={c['text']!r}"
        for path, v in main_visits.items()
        for c in v.charts
        if not (c["svg"] and c["drawn"] > 0)
    ]
    total = sum(len(v.charts) for v in main_visits.values())
    assert not missing, f"{len(missing)} of {total} charts not drawn:\n" + "\n".join(missing)


def test_asset_and_link_urls_are_relative(main_visits: dict[Path, Visit]) -> None:
    """Uploaded anywhere or opened from disk: no absolute paths, no file:// URLs (B13)."""
    bad = [
        f"{path}: <{r['tag']} {r['attr']}={r['raw']!r}>"
        for path, v in main_visits.items()
        for r in v.refs
        if r["raw"].startswith(("/", "file:"))
        or (r["tag"] != "a" and urlsplit(r["raw"]).scheme in ("http", "https"))
    ]
    assert not bad, "\n".join(bad)


def test_every_internal_link_resolves(main_site: Path, main_visits: dict[Path, Visit]) -> None:
    broken = []
    checked = 0
    for path, v in main_visits.items():
        for r in v.refs:
            target = local_target(main_site / path, r["raw"])
            if target is None:
                continue
            checked += 1
            inside = target.resolve().is_relative_to(main_site.resolve())
            if not target.is_file() or not inside:
                broken.append(f"{path}: <{r['tag']} {r['attr']}={r['raw']!r}> -> {target}")
    assert checked > 0
    assert not broken, f"{len(broken)} of {checked} broken:\n" + "\n".join(broken)


def test_sample_of_links_navigates(browser: Browser, main_site: Path) -> None:
    """Click-through in the browser: a sample of the index's and a setup page's links."""
    starts = [main_site / "index.html", *sorted((main_site / "setups").glob("*.html"))[:1]]
    rng = random.Random(5)
    seen: set[str] = set()
    for start in starts:
        with browser.open(start, charts=False) as (page, _log):
            hrefs = page.evaluate(
                "() => Array.from(document.querySelectorAll('a[href]'))"
                ".filter((a) => !a.getAttribute('href').startsWith('#') && a.protocol === 'file:')"
                ".map((a) => a.href)"
            )
        unique = sorted(set(hrefs) - seen)
        seen.update(unique)
        for href in rng.sample(unique, min(8, len(unique))):
            with browser.open(href, charts=False) as (page, log):
                assert page.url.split("#")[0] == href.split("#")[0]
                kind = urlsplit(href).path.rsplit(".", 1)[-1]
                if kind == "html":
                    assert page.title()
                    assert page.evaluate("() => document.body.innerText.length") > 0
                elif kind == "svg":
                    assert page.evaluate("() => document.documentElement.tagName") == "svg"
                elif kind == "json":
                    page.evaluate("() => JSON.parse(document.body.innerText)")
                else:
                    assert page.evaluate("() => document.documentElement.textContent.length")
                fragment = urlsplit(href).fragment
                if fragment:
                    assert page.evaluate(
                        "(id) => !!document.getElementById(id)", unquote(fragment)
                    ), f"{href}: no element with id {fragment!r}"
            assert not log.problems(), (href, log.problems())
    assert seen


def _pct(value: float | None, digits: int = 1) -> str:
    """As the site's ``pct`` filter shows a proportion (``72.3%``; a dash when undefined)."""
    return "—" if value is None else f"{100 * value:.{digits}f}%"


LEADERBOARDS_JS = """
() => Array.from(document.querySelectorAll('table.leaderboard')).map((table) => ({
  id: table.id,
  report: table.getAttribute('data-report'),
  rows: Array.from(table.querySelectorAll('tbody tr')).map((tr) => ({
    setup: tr.getAttribute('data-setup'),
    visible: tr.offsetParent !== null,
    cells: Object.fromEntries(Array.from(tr.querySelectorAll('td[data-key]')).map(
      (td) => [td.getAttribute('data-key'), {value: td.getAttribute('data-value'), text: td.innerText.trim()}])),
    text: tr.innerText,
  })),
}))
"""


def test_leaderboard_shows_report_numbers(browser: Browser, main_site: Path) -> None:
    """Every leaderboard lists the setups of its JSON report, in its order, with its numbers:
    accuracy as a percentage with one decimal (the ``pct`` filter), counts in full."""
    with browser.open(main_site / "index.html", charts=False) as (page, log):
        boards = page.evaluate(LEADERBOARDS_JS)
    assert not log.problems(), log.problems()
    # The kag runs' boards (MMLU-Pro, the simulated run) name their kag stats report; the
    # Inspect logs' board has none (its numbers are checked in tests/site/test_one_format.py).
    kag = [b for b in boards if b["report"]]
    assert len(kag) == 2, [b["id"] for b in boards]
    assert [b["id"] for b in boards if not b["report"]] == ["leaderboard-inspect-popularity"]
    first = json.loads((main_site / kag[0]["report"]).read_text(encoding="utf-8"))
    assert first == json.loads((main_site / "data" / "report.json").read_text(encoding="utf-8"))
    problems = []
    for board in kag:
        report = json.loads((main_site / board["report"]).read_text(encoding="utf-8"))
        setups = report["setups"]
        assert [r["setup"] for r in board["rows"]] == [s["setup"] for s in setups], board["id"]
        for row, entry in zip(board["rows"], setups, strict=True):
            overall = entry["overall"]
            where = f"{board['id']} {entry['setup']}"
            if not row["visible"]:
                problems.append(f"{where}: row not visible")
            accuracy = row["cells"]["accuracy"]
            if accuracy["value"] == "null":
                shown_value = None
            else:
                shown_value = float(accuracy["value"])
            if shown_value != overall["accuracy"]:
                problems.append(f"{where}: data-value {accuracy['value']} != {overall['accuracy']}")
            expected = _pct(overall["accuracy"])
            if accuracy["text"].split(" ")[0] != expected:
                problems.append(
                    f"{where}: accuracy shown {accuracy['text']!r}, expected {expected}"
                )
            if expected not in row["text"]:
                problems.append(f"{where}: {expected} not in the row's visible text")
            for key in ("correct", "total", "errors"):
                if row["cells"][key]["text"] != str(overall[key]):
                    problems.append(
                        f"{where}: {key} shown {row['cells'][key]['text']!r}, report {overall[key]}"
                    )
            for key in ("precision", "coverage"):
                if row["cells"][key]["text"] != _pct(overall[key]):
                    problems.append(
                        f"{where}: {key} shown {row['cells'][key]['text']!r}, "
                        f"report {_pct(overall[key])}"
                    )
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- item table


def _items_of(scripts: list[dict[str, Any]]) -> list[Any]:
    """The largest list of rows found in the page's inline JSON."""
    best: list[Any] = []

    def walk(value: Any) -> None:
        nonlocal best
        if isinstance(value, list):
            if len(value) > len(best) and all(isinstance(v, dict | list) for v in value):
                best = value
            for v in value[:1]:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    for script in scripts:
        value = script["value"]
        if isinstance(value, dict) and isinstance(value.get("rows"), list) and "columns" in value:
            return list(value["rows"])
    for script in scripts:
        walk(script["value"])
    return best


def _row_text(row: Any) -> str:
    if isinstance(row, dict):
        return " ".join(_row_text(v) for v in row.values())
    if isinstance(row, list):
        return " ".join(_row_text(v) for v in row)
    return "" if row is None else str(row)


def _visible_rows(page: Any) -> list[str]:
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('#items tbody tr'))"
        ".filter((tr) => tr.offsetParent !== null).map((tr) => tr.innerText)"
    )


def _count_text(page: Any) -> str:
    return page.evaluate("() => document.getElementById('items-count').innerText")


def _numbers(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)]


@pytest.fixture
def setup_page(browser: Browser, main_site: Path) -> Iterator[tuple[Any, PageLog, list[Any]]]:
    """The simulated run's first setup page, opened, with its inline item rows."""
    pages = sorted((main_site / "setups").glob("simulated-kag-run--*.html"))
    with browser.open(pages[0]) as (page, log):
        rows = _items_of(page.evaluate(ITEMS_JSON_JS))
        assert rows, f"{pages[0]}: no inline item rows found"
        yield page, log, rows


def test_item_search_filters_rows(setup_page: tuple[Any, PageLog, list[Any]]) -> None:
    page, log, rows = setup_page
    texts = [_row_text(r).lower() for r in rows]
    # A question name present in every dataset: its rows are exactly those whose text holds it.
    term = "q00007"
    expected = sum(term in t for t in texts)
    assert 1 <= expected < len(rows)
    before = _count_text(page)
    assert str(len(rows)) in before.replace(",", ""), (before, len(rows))
    page.fill("#item-search", term)
    page.wait_for_function(
        "(a) => document.querySelectorAll('#items tbody tr').length <= a.n"
        " && document.getElementById('items-count').innerText !== a.before",
        arg={"n": expected, "before": before},
        timeout=5_000,
    )
    shown = _visible_rows(page)
    assert len(shown) == expected, (term, shown)
    assert all(term in s.lower() for s in shown), shown
    assert expected in _numbers(_count_text(page)), _count_text(page)
    page.fill("#item-search", "no-such-text-anywhere-zzz")
    page.wait_for_function("() => document.querySelectorAll('#items tbody tr').length <= 1")
    assert not [s for s in _visible_rows(page) if "zzz" in s]
    assert 0 in _numbers(_count_text(page)), _count_text(page)
    page.fill("#item-search", "")
    page.wait_for_function(
        "(n) => document.getElementById('items-count').innerText.replace(/,/g, '').includes(String(n))",
        arg=len(rows),
    )
    assert not log.problems(), log.problems()


def test_item_paging_changes_rows(setup_page: tuple[Any, PageLog, list[Any]]) -> None:
    page, log, rows = setup_page
    first = _visible_rows(page)
    assert 0 < len(first) < len(rows), "the item table is not paginated"
    page.click("#items-next")
    page.wait_for_function(
        "(first) => document.querySelector('#items tbody tr').innerText !== first", arg=first[0]
    )
    second = _visible_rows(page)
    assert second
    assert not set(second) & set(first), "the next page repeats rows of the first"
    assert len(first) + len(second) <= len(rows)
    page.click("#items-prev")
    page.wait_for_function(
        "(first) => document.querySelector('#items tbody tr').innerText === first", arg=first[0]
    )
    assert _visible_rows(page) == first
    # Paging within a search: the count and the rows follow the filter.
    page.fill("#item-search", "incorrect")
    page.wait_for_function(
        "(n) => document.getElementById('items-count').innerText.replace(/,/g, '') !== String(n)",
        arg=len(rows),
    )
    expected = sum("incorrect" in _row_text(r).lower() for r in rows)
    assert _numbers(_count_text(page)) == [expected], _count_text(page)
    assert not log.problems(), log.problems()


def test_flipped_items_page_and_search(browser: Browser, main_site: Path) -> None:
    """The flipped-items table of a comparison pages through and filters all its rows."""
    pages = sorted((main_site / "comparisons").glob("*.html"))
    best: tuple[int, Path, list[Any]] | None = None
    for path in pages:
        text = path.read_text(encoding="utf-8")
        found = re.search(r'<script type="application/json" id="flips-data">(.*?)</script>', text)
        if found:
            rows = json.loads(found.group(1))["rows"]
            if best is None or len(rows) > best[0]:
                best = (len(rows), path, rows)
    assert best is not None
    assert best[0] > 50, "no comparison with more than one page of flips"
    _, path, rows = best
    visible = (
        "() => Array.from(document.querySelectorAll('#flipped tbody tr')).map((tr) => tr.innerText)"
    )
    count = "() => document.getElementById('flips-count').innerText.replace(/,/g, '')"
    with browser.open(path) as (page, log):
        # site.js has run once the page label reads "page 1 of N".
        page.wait_for_function(
            "() => document.getElementById('flips-page').innerText.includes('of')"
        )
        first = page.evaluate(visible)
        assert len(first) == 50
        assert page.evaluate(count) == str(len(rows))
        page.click("#flips-next")
        page.wait_for_function(
            "(f) => document.querySelector('#flipped tbody tr').innerText !== f", arg=first[0]
        )
        assert not set(page.evaluate(visible)) & set(first)
        gained = sum(row[1] == "correct" for row in rows)
        term = rows[-1][0].lower()  # an item identifier
        expected = sum(term in " ".join(row).lower() for row in rows)
        assert 1 <= expected < len(rows)
        page.fill("#flip-search", term)
        page.wait_for_function(f"() => ({count})() !== '{len(rows)}'")
        assert page.evaluate(count) == str(expected)
        assert any(term in text.lower() for text in page.evaluate(visible))
        assert 0 < gained < len(rows)
        assert not log.problems(), log.problems()


def test_index_screenshot(browser: Browser, main_site: Path, output_dir: Path) -> None:
    target = output_dir / "index.png"
    with browser.open(main_site / "index.html") as (page, log):
        page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000
    assert not log.problems(), log.problems()


# --------------------------------------------------------------------------- point 5


@pytest.fixture(scope="package")  # as the browser it visits with
def hostile_visits(browser: Browser, hostile_site: Path) -> dict[Path, Visit]:
    return visit_all(browser, hostile_site)


def test_hostile_site_runs_nothing(hostile_visits: dict[Path, Visit]) -> None:
    """On every page: window.__xss stays undefined, no dialog opens, no element was injected,
    and the inline JSON still parses (so ``</script>`` and ``<!--`` did not break out)."""
    assert len(hostile_visits) >= 3, sorted(hostile_visits)
    assert any(p.parts[0] == "setups" for p in hostile_visits)
    assert any(p.parts[0] == "comparisons" for p in hostile_visits)
    failures = []
    for name, visit in hostile_visits.items():
        if visit.xss != "undefined":
            failures.append(f"{name}: window.__xss was set ({visit.xss})")
        failures += [f"{name}: injected {i}" for i in visit.injected]
        if visit.json_error:
            failures.append(f"{name}: inline JSON does not parse: {visit.json_error}")
        failures += [f"{name}: {p}" for p in visit.log.problems()]
    assert not failures, "\n".join(failures)


def test_hostile_text_is_shown_as_text(
    hostile_site: Path, hostile_visits: dict[Path, Visit], browser: Browser
) -> None:
    """Each payload is visible, escaped, somewhere (the index, a setup page or a search)."""
    index = hostile_visits[Path("index.html")]
    assert HOSTILE_RUN_NAME in index.text, "the run name is not shown as text on the index"
    all_text = "\n".join(v.text for v in hostile_visits.values())
    missing = [p for p in PAYLOADS if p not in all_text]
    # Payloads not on a first page of items may be found through the search box.
    setup = sorted((hostile_site / "setups").glob("*.html"))[0]
    with browser.open(setup) as (page, log):
        rows = _items_of(page.evaluate(ITEMS_JSON_JS))
        # The inline JSON holds the payloads intact (escaped in the source, not altered).
        assert any(PAYLOADS[2] in _row_text(r) for r in rows), "payload lost from the items"
        # Error messages are shown as text in the item table.
        page.fill("#item-search", "Generation failed")
        page.wait_for_timeout(150)
        errors = [r for r in _visible_rows(page) if "Generation failed: " in r]
        assert errors, "no error message row found through the search"
        assert any(p in row for row in errors for p in PAYLOADS), errors[:3]
        for payload in list(missing):
            page.fill("#item-search", payload)
            page.wait_for_timeout(150)
            if any(payload in row for row in _visible_rows(page)):
                missing.remove(payload)
            assert page.evaluate("() => typeof window.__xss") == "undefined", payload
        assert not log.problems(), log.problems()
    assert not missing, f"payloads never shown as text: {missing}"


# --------------------------------------------------------------------------- B13


def test_notebook_page_offline(browser: Browser, notebook_site: Path, output_dir: Path) -> None:
    pages = sorted((notebook_site / "notebooks").glob("*.html"))
    assert [p.name for p in pages] == ["offline-check.html"], pages
    with browser.open(pages[0], charts=False) as (page, log):
        page.wait_for_function(
            "() => document.querySelectorAll('svg g.mark-rect path').length >= 2", timeout=20_000
        )
        page.wait_for_timeout(200)
        bars = page.evaluate("() => document.querySelectorAll('svg g.mark-rect path').length")
        text = page.evaluate("() => document.body.innerText")
        slider = page.evaluate(
            "() => Array.from(document.querySelectorAll('input[type=range], input[type=number]'))"
            ".map((i) => i.value).concat(Array.from(document.querySelectorAll("
            "'.widget-readout, .widget-slider, [class*=slider]')).map((e) => e.innerText.trim()))"
        )
        page.screenshot(path=str(output_dir / "notebook.png"), full_page=True)
    assert not log.problems(), log.problems()
    assert bars == 2, f"{bars} bar marks"
    # A live slider at 3, or a static fallback that names the widget and its value.
    assert "3" in slider or re.search(r"IntSlider\(value=3\b", text), (slider, text[:2000])
    assert NOTEBOOK_OUTPUT_TEXT in text
    assert "application/vnd.jupyter.widget-view+json" not in text
    assert "α = 0.81" in text.replace("\u2061", "") or "\\alpha = 0.81" in text, text[:2000]
    with browser.open(notebook_site / "index.html") as (_page, index_log):
        pass
    assert not index_log.problems(), index_log.problems()


# --------------------------------------------------------------------------- issue 10, item 17


def test_every_page_carries_the_csp_and_breaks_nothing(
    browser: Browser, main_site: Path, main_visits: dict[Path, Visit], notebook_site: Path
) -> None:
    """Each page (index, setups, comparisons, evaluations, notebook) has the policy first in
    its head, draws its charts under it, and reports no violation and no console error.
    The main site's pages as ``main_visits`` recorded them (each page is opened once)."""
    from kagreport.site._templates import page_csp

    visits = [(main_site, v) for v in main_visits.values()]
    assert sorted(v.path for _, v in visits) == html_pages(main_site)
    # An executed notebook's page too (the main site's are converted as saved).
    for path in sorted((notebook_site / "notebooks").glob("*.html")):
        page, log = open_recording(browser, path)
        try:
            visit = Visit(path, log, drawn=wait_for_charts(page))
            page.wait_for_timeout(50)  # late violations
            visit.charts = chart_states(page)
            visit.csp_meta = page.evaluate(CSP_META_JS)
            visit.csp_violations = page.evaluate("() => window.__csp")
            visits.append((notebook_site, visit))
        finally:
            page.close()
    kinds = {v.path.parent.name for _, v in visits}
    assert {"setups", "comparisons", "evaluations", "notebooks"} <= kinds, kinds
    assert any(site == notebook_site for site, _ in visits)
    failures = []
    for site, visit in visits:
        name, meta = visit.path.name, visit.csp_meta
        root = "../" * len(visit.path.relative_to(site).parent.parts)
        policy = page_csp(root, inline_styles=visit.path.parent.name == "notebooks")
        if meta["count"] != 1 or meta["content"] != policy:
            failures.append(f"{name}: policy {meta}")
        if set(meta["before"]) - {"meta"}:  # only <meta charset> may come first
            failures.append(f"{name}: before the policy: {meta['before']}")
        if not visit.drawn:
            failures.append(f"{name}: charts not drawn: {visit.charts}")
        failures += [f"{name}: violation {v}" for v in visit.csp_violations]
        failures += [f"{name}: {p}" for p in visit.log.problems()]
    assert not failures, "\n".join(failures)
    assert "unsafe-eval" not in page_csp("")
    assert "unsafe-inline" not in page_csp("")


def test_csp_blocks_an_unescaped_script(browser: Browser, main_site: Path, tmp_path: Path) -> None:
    """An escaping slip that let markup through would still run nothing: copies of a setup
    page with an inline script, an event handler and a remote script put in unescaped. The
    same copies without the policy do run them (so the check can fail)."""
    import shutil

    site = tmp_path / "site"
    shutil.copytree(main_site, site)
    setup = sorted((site / "setups").glob("*.html"))[0]
    html = setup.read_text(encoding="utf-8")
    slip = (
        "<script>window.__xss = 1</script>"
        '<img src="data:," onerror="window.__xss = 2">'
        '<script src="https://example.invalid/x.js"></script>'
    )
    injected = html.replace('<main class="site-main">', '<main class="site-main">' + slip, 1)
    assert injected != html
    guarded = setup.with_name("injected.html")
    guarded.write_text(injected, encoding="utf-8")
    bare = setup.with_name("injected-no-csp.html")
    bare.write_text(
        re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", injected), "utf-8"
    )

    page, log = open_recording(browser, guarded)
    try:
        drawn = wait_for_charts(page)
        page.wait_for_timeout(100)
        xss = page.evaluate("() => typeof window.__xss")
        violations = page.evaluate("() => window.__csp")
    finally:
        page.close()
    assert xss == "undefined"
    assert any(v.startswith("script-src-elem inline") for v in violations), violations
    assert any(v.startswith("script-src-attr inline") for v in violations), violations
    assert not log.blocked, "the remote script was requested despite the policy"
    assert drawn, "the site's own scripts did not run"

    page, _ = open_recording(browser, bare)
    try:
        page.wait_for_timeout(100)
        assert page.evaluate("() => window.__xss") in (1, 2)
    finally:
        page.close()
