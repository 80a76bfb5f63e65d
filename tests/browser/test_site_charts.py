"""The site's charts in a real Chromium: SVG fallback without scripts, container width on
screen (1,400 px and phone width), and paper-size export (issue #14 item 2)."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from .conftest import LOAD_TIMEOUT_MS, Browser, import_site, wait_for_charts

pytestmark = pytest.mark.browser

# The headline chart of a run with several datasets: small multiples.
HEADLINE = "#chart-simulated-run--accuracy-cost"
SINGLE = "#chart-simulated-run--outcomes"


@pytest.fixture(scope="module")
def chart_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kagreport.kag import simulate_run

    site = import_site()
    root = tmp_path_factory.mktemp("site-charts")
    sim = simulate_run(root / "run", questions=30, datasets=3)
    config = site.SiteConfig(
        title="Charts",
        runs=(
            site.RunConfig(
                name="Simulated run",
                datasets=Path(sim.datasets_path),
                results=Path(sim.results_path),
                attribution="SIMULATED data: no model was run.",
            ),
        ),
    )
    site.build_site(config, root / "out", execute_notebooks=False)
    return root / "out"


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_without_javascript_charts_show_the_exported_svg(
    browser: Browser, chart_site: Path
) -> None:
    context = browser.browser.new_context(
        viewport={"width": 1400, "height": 900}, java_script_enabled=False
    )
    try:
        page = context.new_page()
        page.route(
            "**/*",
            lambda route: (
                route.continue_() if route.request.url.startswith("file:") else route.abort()
            ),
        )
        page.goto((chart_site / "index.html").as_uri(), wait_until="load")
        images = page.evaluate(
            """() => Array.from(document.querySelectorAll('div.chart')).map((div) => {
                const img = div.querySelector('img');
                return {id: div.id, src: img ? img.getAttribute('src') : null,
                        width: img ? img.naturalWidth : 0, shown: img ? img.clientWidth : 0,
                        height: img ? img.clientHeight : 0, complete: img ? img.complete : false};
            })"""
        )
    finally:
        context.close()
    assert images, "no div.chart on the index"
    for image in images:
        assert str(image["src"]).startswith("figures/"), image
        assert image["complete"], image
        assert image["width"] > 0, image  # the SVG loaded under the CSP (img-src 'self')
        assert image["shown"] > 0, image
        assert image["height"] > 0, image


def _widths(page: Any, selector: str) -> dict[str, float]:
    value: dict[str, float] = page.evaluate(
        """(selector) => {
            const div = document.querySelector(selector);
            const svg = div.querySelector('svg');
            return {container: div.clientWidth,
                    chart: svg ? svg.getBoundingClientRect().width : 0};
        }""",
        selector,
    )
    return value


@pytest.mark.parametrize("viewport", [1400, 375])
def test_live_charts_fill_their_container(
    browser: Browser, chart_site: Path, viewport: int
) -> None:
    context = browser.browser.new_context(viewport={"width": viewport, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((chart_site / "index.html").as_uri(), wait_until="load")
        assert wait_for_charts(page, LOAD_TIMEOUT_MS)
        assert page.locator("div.chart img.chart-fallback").count() == 0  # replaced
        for selector in (SINGLE, HEADLINE):
            # The facet is drawn twice (measure, then fit): wait until it fits.
            page.wait_for_function(
                """(selector) => {
                    const div = document.querySelector(selector);
                    const svg = div && div.querySelector('svg');
                    if (!svg) return false;
                    const w = svg.getBoundingClientRect().width;
                    return Math.abs(w - div.clientWidth) <= 0.06 * div.clientWidth;
                }""",
                arg=selector,
                timeout=LOAD_TIMEOUT_MS,
            )
            widths = _widths(page, selector)
            assert widths["container"] > 0.5 * min(viewport, 1200) - 60, (selector, widths)
            assert abs(widths["chart"] - widths["container"]) <= 0.06 * widths["container"], (
                selector,
                widths,
            )
        # The frontier labels of the live small multiples do not overlap one another.
        overlaps = page.evaluate(
            """(selector) => {
                const texts = Array.from(document.querySelectorAll(
                    selector + ' g.mark-text.role-mark text'));
                const boxes = texts.map((t) => [t.getBoundingClientRect(), t.textContent]);
                const found = [];
                boxes.forEach(([a, ta], i) => boxes.slice(i + 1).forEach(([b, tb]) => {
                    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
                    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
                    if (w > 0.5 && h > 0.5) found.push([ta, tb]);
                }));
                return {count: texts.length, found};
            }""",
            HEADLINE,
        )
        assert overlaps["count"] >= 3, overlaps  # a frontier in each of three panels
        assert overlaps["found"] == [], overlaps
        # No chart is wider than its container (none makes the page scroll sideways).
        wider = page.evaluate(
            """() => Array.from(document.querySelectorAll('div.chart')).filter((div) => {
                const svg = div.querySelector('svg');
                return svg && svg.getBoundingClientRect().width > div.clientWidth + 1;
            }).map((div) => div.id)"""
        )
        assert wider == []
        assert not errors, errors
    finally:
        context.close()


def test_export_gives_the_paper_size(browser: Browser, chart_site: Path) -> None:
    with browser.open(chart_site / "index.html") as (page, log):
        buttons = page.locator(f"{SINGLE} ~ figcaption button.chart-export-png")
        assert buttons.count() == 1
        assert "3.3 in" in buttons.first.inner_text()
        # The button's download, and the same export through the page's function.
        with page.expect_download(timeout=LOAD_TIMEOUT_MS) as download:
            buttons.first.click()
        path = download.value.path()
        assert path is not None
        width, height = _png_size(Path(path).read_bytes())
        assert width == round(3.3 * 300), (width, height)  # one column at 300 dpi: 990 px
        svg_button = page.locator(f"{SINGLE} ~ figcaption button.chart-export-svg")
        with page.expect_download(timeout=LOAD_TIMEOUT_MS) as svg_download:
            svg_button.first.click()
        assert svg_download.value.suggested_filename.endswith(".svg")
        svg_path = svg_download.value.path()
        assert svg_path is not None
        svg = Path(svg_path).read_text(encoding="utf-8")
        assert re.search(r'<svg[^>]* width="237\.6"', svg), svg[:300]  # 3.3 in
        url = page.evaluate(
            "(id) => window.kagreportCharts.exportFigure(id, 'png')", HEADLINE.lstrip("#")
        )
        assert url.startswith("data:image/png;base64,")
        wide, _ = _png_size(base64.b64decode(url.split(",", 1)[1]))
        assert abs(wide - 7 * 300) <= 8, wide  # small multiples: two columns, 7 in
        assert not log.problems(), log.problems()
