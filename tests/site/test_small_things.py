"""Small things that looked careless on the bundled site (issue 26, item 11): the simulated
run's notice said twice, a setup that never retrieves failing with a retrieval error, flipped
items that did not say how they were graded, and a heading with nothing under it. (Sort
controls on small tables: tests/browser/test_site_ui.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kagreport.examples import simulated_kag_run
from kagreport.site import SiteConfig, build_site


@pytest.fixture(scope="module")
def site(examples_site: Path) -> Path:
    """The bundled site (``examples_site``): its SIMULATED kag run is
    :func:`kagreport.examples.simulated_kag_run`, with its attribution. Read, never changed."""
    return examples_site


def test_the_simulated_notice_is_said_once(site: Path) -> None:
    html = (site / "index.html").read_text("utf-8")
    start = html.index('id="run-simulated-kag-run"')
    section = html[start : html.index("</section>", start)]
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<script.*?</script>", "", section, flags=re.S))
    assert text.count("no model was run") == 1


def test_a_setup_that_never_retrieves_never_fails_to_retrieve() -> None:
    example = simulated_kag_run()
    for path in Path(example.results).rglob("native-*.json"):
        body = json.loads(path.read_text("utf-8"))
        assert not str(body.get("error", "")).startswith("Retrieval"), path


def test_flipped_items_say_how_they_were_graded(site: Path) -> None:
    """A kag run's flipped item read '"Answer: b" incorrect against expected "b"' with no
    word of kag's rule (the trimmed response must be the answer key)."""
    # The kag runs' comparisons: the simulated run's and MMLU-Pro's.
    pages = sorted((site / "comparisons").glob("simulated-kag-run--*.html"))
    pages += sorted((site / "comparisons").glob("mmlu-pro-philosophy--*.html"))
    assert len(pages) == 8
    for page in pages:
        html = page.read_text("utf-8")
        assert 'id="graded-how"' in html, page.name
        assert "trimmed of Unicode white space, it equals the question" in html


def _empty_sections(html: str) -> list[str]:
    """The headings of ``html``'s sections that introduce nothing: a heading followed only by
    white space, an empty list or a table with no body row before the section ends."""
    empty = []
    for section in re.findall(r"<section\b[^>]*>(.*?)</section>", html, re.S):
        heading = re.match(r"\s*<h([1-6])[^>]*>(.*?)</h\1>(.*)", section, re.S)
        if heading is None:
            continue
        rest = re.sub(r"<ul[^>]*>\s*</ul>|<tbody>\s*</tbody>", "", heading.group(3))
        if not re.sub(r"<[^>]+>", "", rest).strip():
            empty.append(re.sub(r"<[^>]+>", "", heading.group(2)))
    return empty


def test_no_heading_introduces_nothing(site: Path, tmp_path: Path) -> None:
    """Issue 26 item 11: an empty "Data" heading. Every section of every page says something
    under its heading, and a site with nothing to download says so."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 5
    for page in pages:
        assert _empty_sections(page.read_text("utf-8")) == [], page.relative_to(site)
    bare = tmp_path / "bare"
    build_site(SiteConfig(runs=()), bare, execute_notebooks=False)
    assert _empty_sections((bare / "index.html").read_text("utf-8")) == []


def test_the_empty_section_check_can_fail() -> None:
    assert _empty_sections("<section><h2>Data</h2>\n<ul class='pages'>\n</ul>\n</section>") == [
        "Data"
    ]
    assert _empty_sections("<section><h2>Data</h2><p>x</p></section>") == []
