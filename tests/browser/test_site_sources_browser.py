"""The pages of a run of another tool (``site build --run``) in headless Chromium, from
``file://`` with every other request aborted (see ``conftest.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import Browser, chart_states, import_site

pytestmark = pytest.mark.browser

PROMPTFOO = Path(__file__).resolve().parents[1] / "data" / "sources" / "promptfoo" / "results.json"


@pytest.fixture(scope="module")
def source_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site: Any = import_site()
    out = tmp_path_factory.mktemp("site-sources") / "out"
    site.build_site(site.SiteConfig(sources=(site.SourceConfig(PROMPTFOO),)), out)
    return out


def test_foreign_run_page_draws_its_charts_and_leaderboard(
    browser: Browser, source_site: Path
) -> None:
    with browser.open(source_site / "index.html") as (page, log):
        states = chart_states(page)
        # Accuracy against latency (promptfoo's latencyMs), tokens and money (one chart
        # per recorded cost, "latency" and "generation" being one column), the heatmap and
        # the outcomes (every row has an outcome: kag's metrics), and the forest.
        assert len(states) == 6, states
        assert all(s["svg"] and s["drawn"] > 0 for s in states), states
        rows = page.locator("table.leaderboard tbody tr")
        assert rows.count() == 2
        systems = sorted(rows.nth(i).get_attribute("data-system") for i in range(2))
        assert systems == ["openai:gpt-5", "openai:gpt-5-mini"]
        assert not log.problems(), log.problems()


def test_system_page_items_are_drawn_by_the_shared_script(
    browser: Browser, source_site: Path
) -> None:
    pages = sorted((source_site / "setups").glob("results--*.html"))
    assert len(pages) == 2
    with browser.open(pages[0], charts=False) as (page, log):
        page.fill("#item-search", "test 1")
        page.wait_for_function(
            "() => document.querySelectorAll('#items tbody tr').length === 1", timeout=5_000
        )
        cells = page.locator("#items tbody tr td").all_inner_texts()
        assert cells[0].splitlines()[0] == "test 1"  # the question cell: its id, then its text
        assert cells[1] == "incorrect"
        assert not log.problems(), log.problems()
