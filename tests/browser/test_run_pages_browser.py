"""A comparison's flipped items side by side, in a real Chromium: two columns on a wide
screen, one above the other at phone width, nothing wider than the screen, the marked
differences as the browser reads them, and no console error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Tree, mcq

from .conftest import Browser, import_site

pytestmark = pytest.mark.browser

# A long response with long words: it must wrap inside its column, not widen the page.
LONG = " ".join(["supercalifragilistic-" * 6] * 12)  # under RESPONSE_LIMIT


@pytest.fixture(scope="module")
def comparison_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = import_site()
    root = tmp_path_factory.mktemp("run-pages")
    (root / "run").mkdir()
    tree = Tree(root / "run")
    tree.question("d", "q1", mcq("A"))
    tree.question("d", "q2", mcq("B"))
    tree.ok("d", "q1", "base", "A")
    tree.ok("d", "q1", "cand", f"Not A: {LONG} <b>C</b>")
    tree.ok("d", "q2", "base", "B or D")
    tree.ok("d", "q2", "cand", "B")
    config = site.SiteConfig(
        runs=(site.RunConfig("r", tree.datasets_path, tree.results, baseline="base"),)
    )
    out = root / "site"
    site.build_site(config, out)
    (page,) = sorted(out.glob("comparisons/*.html"))
    return page


def _geometry(page: Any) -> dict[str, Any]:
    geometry: dict[str, Any] = page.evaluate(
        """() => {
          const box = (e) => { const r = e.getBoundingClientRect();
            return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
          const articles = Array.from(document.querySelectorAll('article.flip'));
          return {
            viewport: document.documentElement.clientWidth,
            section: box(document.getElementById('side-by-side')),
            sectionScroll: document.getElementById('side-by-side').scrollWidth,
            sectionClient: document.getElementById('side-by-side').clientWidth,
            sides: articles.map((a) => Array.from(a.querySelectorAll('.flip-side')).map(box)),
            deleted: Array.from(document.querySelectorAll('.flip-side del')).map((e) => e.textContent),
            inserted: Array.from(document.querySelectorAll('.flip-side ins')).map((e) => e.textContent),
          };
        }"""
    )
    return geometry


@pytest.mark.parametrize(("width", "stacked"), [(1280, False), (390, True)])
def test_side_by_side_layout(
    browser: Browser, comparison_page: Path, output_dir: Path, width: int, stacked: bool
) -> None:
    with browser.open(comparison_page) as (page, log):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(
            f"() => document.documentElement.clientWidth === {width}", timeout=20_000
        )
        geometry = _geometry(page)
        page.locator("#side-by-side").screenshot(
            path=str(output_dir / f"comparison-side-by-side-{width}.png")
        )
    assert log.problems() == []
    assert len(geometry["sides"]) == 2
    for baseline, candidate in geometry["sides"]:
        if stacked:
            assert candidate["top"] >= baseline["bottom"] - 1
        else:
            assert abs(candidate["top"] - baseline["top"]) < 1
            assert candidate["left"] >= baseline["right"] - 1
        for box in (baseline, candidate):
            assert box["right"] <= geometry["viewport"] + 1, (width, box)
    assert geometry["sectionScroll"] <= geometry["sectionClient"]
    # q1: "A" shares no word with "Not A: ..." ("A:" is another word); q2: from the
    # baseline's "B or D" to the candidate's "B".
    assert geometry["deleted"] == ["A", " or D"]
    assert geometry["inserted"] == [f"Not A: {LONG} <b>C</b>"]
