"""The history pages in headless Chromium from ``file://``: charts drawn, no error, links."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import Browser, chart_states, import_site

pytestmark = pytest.mark.browser

HOSTILE = '<img src=x onerror="alert(1)">\u202e'


@pytest.fixture(scope="module")
def history_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    try:
        from history_scale import write_runs
    finally:
        sys.path.pop(0)
    base = tmp_path_factory.mktemp("history-browser")
    folder = base / "runs"
    folder.mkdir()
    write_runs(folder, 4, 2, 300, seed=3)
    (folder / "run-003.json").rename(folder / f"{HOSTILE}.json")
    (folder / "README.md").write_text("not a run")
    site: Any = import_site()
    out = base / "site"
    site.build_site(site.SiteConfig(history=folder), out)
    return out


def test_history_page_draws_every_chart_with_links(browser: Browser, history_site: Path) -> None:
    with browser.open(history_site / "history" / "index.html") as (page, log):
        states = chart_states(page)
        assert len(states) == 2, states  # one per system of the one metric
        assert all(s["svg"] and s["drawn"] > 0 for s in states), states
        # Vega follows a point's link (href) on a click: the first run's page.
        pointers = page.locator("div.chart svg g.mark-symbol.role-mark path")
        assert pointers.count() == 8, pointers.count()  # 4 runs x 2 systems
        assert not log.problems(), log.problems()
        # Vega-Lite compiles each chart without a warning (it logs them on the console).
        assert not log.console_warnings, log.console_warnings
        with page.expect_navigation(timeout=10_000):
            pointers.first.click(force=True)
        assert page.url.endswith("/history/run-000.html"), page.url


def test_history_run_page_opens(browser: Browser, history_site: Path) -> None:
    for path in sorted((history_site / "history").glob("*.html")):
        with browser.open(path, charts=False) as (page, log):
            assert page.locator("h1").count() == 1
            assert not log.problems(), (path, log.problems())
