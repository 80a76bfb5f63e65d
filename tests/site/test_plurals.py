"""Plurals and hints that agree with what a page holds (issue 26, items 5 and 11).

The bundled evaluations and the two bundled Inspect logs (one comparison; 2 and 10 samples),
in the bundled examples' site built once per session (``examples_site``). On today's main the SIMULATED RAG answer pages said
"1 metrics, highest mean first", the Inspect comparison's pager "1 of 1 items", its pages
"Holm-adjusted across the 1 comparison", and the 2-item setup page "Click a header to sort"
where site.js gives a table of fewer than 10 rows no sort controls. The expected strings are
written out here by hand.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src" / "kagreport" / "site"
INSPECT = "inspect-popularity"
GPT, LLAMA = "openai-gpt-4o-mini", "azureai-meta-llama-3-1-405b-instruct-jqf"
# Nouns the pages count; "1 <noun>s" is never right.
NOUNS = "metric item comparison judge pair test option character system error file setup"


@pytest.fixture(scope="module")
def site(examples_site: Path) -> Path:
    """The bundled examples' site (``examples_site``): the evaluations, the Inspect logs, the
    kag runs and the notebooks as saved. Read, never changed."""
    return examples_site


def _text(path: Path) -> str:
    page = path.read_text(encoding="utf-8")
    page = re.sub(r"<script.*?</script>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_one_metric_is_one_metric(site: Path) -> None:
    for name in ("simulated-rag-large-answers", "simulated-rag-small-answers"):
        text = _text(site / "evaluations" / f"{name}.html")
        assert "1 metrics" not in text, name
        assert " 1 metric " in text, name


def test_no_page_counts_one_thing_in_the_plural(site: Path) -> None:
    wrong = re.compile(rf"(?<![\d.,−-])1 ({'|'.join(NOUNS.split())})s\b")
    found = []
    for path in sorted(site.rglob("*.html")):
        found += [f"{path.relative_to(site)}: {m.group(0)}" for m in wrong.finditer(_text(path))]
    assert found == []


def test_the_one_comparison_of_a_run_is_named_so(site: Path) -> None:
    (page,) = (site / "comparisons").glob(f"{INSPECT}--*.html")
    text = _text(page)
    assert "1 comparison" not in text
    assert "Holm-adjusted across the run's only comparison." in text
    assert "across the run's only comparison):" in text
    assert "p (Holm, across the run's only comparison)" in text
    index = _text(site / "index.html")
    assert "Holm-adjusted across the run's only comparison, the family" in index
    data = json.loads(next((site / "data" / "comparisons").glob(f"{INSPECT}--*.json")).read_text())
    assert data["settings"]["adjustment"] == (
        "holm across the run's only comparison (run 'inspect-popularity')"
    )


def test_the_pager_of_one_item_says_item(site: Path) -> None:
    (page,) = (site / "comparisons").glob(f"{INSPECT}--*.html")
    status = re.search(r'<span class="paged-status"[^>]*>(.*?)</span></span>', page.read_text())
    assert status is not None
    assert re.sub(r"<[^>]+>", "", status.group(1)) == "1 of 1 item"


def test_the_sort_hint_is_only_where_sorting_exists(site: Path) -> None:
    # Llama has 2 samples (fewer than SORT_MIN_ROWS: no sort controls), gpt-4o-mini 10.
    from kagreport.site._templates import SORT_MIN_ROWS

    assert SORT_MIN_ROWS == 10
    hint = "Click a header to sort by its column."
    assert hint not in _text(site / "setups" / f"{INSPECT}--{LLAMA}.html")
    assert hint in _text(site / "setups" / f"{INSPECT}--{GPT}.html")
    script = (site / "assets" / "site.js").read_text(encoding="utf-8")
    assert re.findall(r"var SORT_MIN_ROWS = (\d+);", script) == ["10"]


def test_the_written_script_takes_the_threshold_from_python() -> None:
    from kagreport.site._templates import SORT_MIN_ROWS
    from kagreport.site._write import site_script

    source = b"var A = 1;\n  var SORT_MIN_ROWS = 3;\n"
    assert site_script(source) == f"var A = 1;\n  var SORT_MIN_ROWS = {SORT_MIN_ROWS};\n".encode()


def test_the_page_script_builds_no_plural_by_appending_s() -> None:
    # A count joined to a plural literal ("+ ' items'") is wrong for 1; plural() decides.
    script = (SOURCE / "assets" / "site.js").read_text(encoding="utf-8")
    found = re.findall(r"""\+\s*["'][^"']*?\b[a-z]+s\b[^"']*["']""", script)
    found = [f for f in found if re.search(rf"\b({'|'.join(NOUNS.split())})s\b", f)]
    assert found == []


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run the page script")
def test_the_page_script_pluralises_as_python_does() -> None:
    script = (SOURCE / "assets" / "site.js").read_text(encoding="utf-8")
    found = re.search(
        r"\n  function grouped\(n\) \{.*?\n  function plural\(.*?\n  \}\n", script, re.S
    )
    assert found is not None
    program = found.group(0) + (
        'console.log(JSON.stringify([plural(0, "item"), plural(1, "item"), plural(2, "item"),'
        ' plural(1234, "item"), plural(1, "entry", "entries"), plural(3, "entry", "entries"),'
        " grouped(1234567)]));"
    )
    done = subprocess.run(
        ["node", "-e", program], capture_output=True, text=True, timeout=60, check=True
    )
    expected = ["0 items", "1 item", "2 items", "1,234 items", "1 entry", "3 entries"]
    assert json.loads(done.stdout) == [*expected, "1,234,567"]
    from kagreport._format import plural

    assert [plural(0, "item"), plural(1, "item"), plural(2, "item"), plural(1234, "item")] == (
        expected[:4]
    )
