"""The run pages of the site: the SIMULATED label on every page of a simulated run, a
comparison's flipped items side by side with their word differences, the result files that
did not parse (with the reason) and the leaderboard's context and graph-element columns.

The expected numbers and markup are worked out by hand from the trees written here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Tree, mcq
from kagreport import grade
from kagreport.kag import simulate_run
from kagreport.site import RunConfig, SiteConfig, build_site
from kagreport.site._diff import word_diff

BROKEN_SYNTAX = '{\n  "ok": x}'  # byte 10 is the x: line 2, column 9
BROKEN_KEY = '{"ok": {"result": "D"}}'  # no stats


def _known_tree(tree: Tree) -> Tree:
    """Two setups, four MCQ questions, known responses and costs, two broken files.

    ========  ===================================  ==========================
    question  kag-base (baseline)                   plain-cand (candidate)
    ========  ===================================  ==========================
    q1 (B)    "Not B but <C> & D": incorrect        "B": correct
    q2 (A)    "A": correct                          "A\\nor C": incorrect
    q3 (C)    "C": correct                          "C": correct
    q4 (D)    error                                 broken JSON (syntax)
    q5 (A)    broken JSON (no stats)                "A": correct
    ========  ===================================  ==========================
    """
    for name, key in (("q1", "B"), ("q2", "A"), ("q3", "C"), ("q4", "D"), ("q5", "A")):
        tree.question("d1", name, mcq(key))
    tree.ok(
        "d1", "q1", "kag-base", "Not B but <C> & D",
        prompt="p" * 100, secs=2, nanos=500_000_000, retrieval=(0, 500_000_000, 10, 20, 30),
    )  # fmt: skip
    tree.ok(
        "d1", "q2", "kag-base", "A",
        prompt="p" * 300, secs=3, retrieval=(1, 0, 4, 6, 8),
    )  # fmt: skip
    tree.ok("d1", "q3", "kag-base", "C", prompt="p" * 200, secs=1, retrieval=(0, 0, 1, 1, 1))
    tree.error("d1", "q4", "kag-base", "boom")
    tree.raw("d1", "q5", "kag-base.json", BROKEN_KEY)
    tree.ok("d1", "q1", "plain-cand", "B", prompt="q" * 50, secs=1, nanos=250_000_000)
    tree.ok("d1", "q2", "plain-cand", "A\nor C", prompt="q" * 70, secs=1)
    tree.ok("d1", "q3", "plain-cand", "C", prompt="q" * 60, secs=1)
    tree.raw("d1", "q4", "plain-cand.json", BROKEN_SYNTAX)
    tree.ok("d1", "q5", "plain-cand", "A", prompt="q" * 20, secs=1)
    return tree


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A site of a small simulated run and the known run; built once for the module."""
    root = tmp_path_factory.mktemp("pages")
    sim = simulate_run(
        root / "sim",
        questions=6,
        datasets=1,
        vector_dim=4,
        unlabelled_questions=1,
        free_form_questions=1,
        unparsable_files=0,
        temporary_files=0,
    )
    (root / "known").mkdir()
    known = _known_tree(Tree(root / "known"))
    config = SiteConfig(
        title="Run pages",
        runs=(
            RunConfig("tiny sim", Path(sim.datasets_path), Path(sim.results_path)),
            RunConfig("known", known.datasets_path, known.results, baseline="kag-base"),
        ),
    )
    out = root / "site"
    build_site(config, out)
    return {"site": out, "known": known}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _specs(html: str) -> list[dict[str, Any]]:
    found = re.findall(
        r'<script type="application/json" class="vega-spec"[^>]*>(.*?)</script>', html, re.S
    )
    return [json.loads(s) for s in found]


def _title_text(spec: dict[str, Any]) -> str:
    title = spec.get("title")
    if isinstance(title, dict):
        text = title.get("text")
        return text[0] if isinstance(text, list) else str(text)
    return str(title)


def test_every_page_of_a_simulated_run_says_simulated(pages: dict[str, Any]) -> None:
    site: Path = pages["site"]
    run_pages = sorted(site.glob("setups/tiny-sim--*.html")) + sorted(
        site.glob("comparisons/tiny-sim--*.html")
    )
    assert len(run_pages) >= 4 + 3  # 4 setups, 3 comparisons against the baseline
    for page in run_pages:
        html = _text(page)
        title = re.search(r"<title>(.*?)</title>", html, re.S)
        assert title is not None, page
        assert "tiny sim (SIMULATED)" in title.group(1), page
        assert '<p class="simulated" role="note"><strong>SIMULATED</strong>' in html, page
        specs = _specs(html)
        assert specs, page  # each page draws at least one chart
        for spec in specs:
            assert _title_text(spec).startswith("SIMULATED"), (page, spec.get("title"))
    # The run's figures (exported charts) say it too, and are named after the run.
    figures = sorted(site.glob("figures/tiny-sim--*.svg"))
    assert figures
    for figure in figures:
        assert "SIMULATED" in _text(figure), figure
    index = _text(site / "index.html")
    section = index[index.index('id="run-tiny-sim"') : index.index('id="run-known"')]
    assert "<h2>tiny sim (SIMULATED): leaderboard</h2>" in section
    assert 'class="simulated"' in section
    for spec in _specs(section):
        assert _title_text(spec).startswith("SIMULATED")
    # The headline chart is there: the simulated run recorded retrieval costs.
    assert (site / "figures/tiny-sim--accuracy-cost.svg").is_file()


def test_a_real_run_is_not_labelled(pages: dict[str, Any]) -> None:
    site: Path = pages["site"]
    for page in sorted(site.glob("setups/known--*.html")) + sorted(
        site.glob("comparisons/known--*.html")
    ):
        html = _text(page)
        assert 'class="simulated"' not in html, page
        for spec in _specs(html):
            assert not _title_text(spec).startswith("SIMULATED"), page


def _article(html: str, item: str) -> str:
    start = html.index(f'data-item="{item}"')
    return html[start : html.index("</article>", start)]


def test_flipped_items_side_by_side(pages: dict[str, Any]) -> None:
    site: Path = pages["site"]
    html = _text(site / "comparisons/known--plain-cand--vs--kag-base.html")
    assert '<section id="side-by-side">' in html
    # q1 and q2 flipped (q3 agrees; q4 and q5 are not graded for both setups).
    assert re.findall(r'<article class="flip (\w+)" id="flip-\d+" data-item="([^"]+)"', html) == [
        ("gained", "d1/q1"),
        ("lost", "d1/q2"),
    ]
    q1 = _article(html, "d1/q1")
    # Baseline first: from "Not B but <C> & D" to "B", the words around B are struck out,
    # escaped; the candidate's "B" is the shared word.
    baseline = q1[q1.index('data-role="baseline"') : q1.index('data-role="candidate"')]
    candidate = q1[q1.index('data-role="candidate"') :]
    assert (
        '<pre class="response"><del>Not </del>B<del> but &lt;C&gt; &amp; D</del></pre>' in baseline
    )
    assert '<span class="o-incorrect">incorrect</span>' in baseline
    assert '<pre class="response">B</pre>' in candidate
    assert '<span class="o-correct">correct</span>' in candidate
    assert '<span class="label">Question</span> Q?' in q1
    assert '<span class="label">Expected</span> B: b' in q1
    # Per-item costs, baseline then candidate: 2.5 s and 1.25 s of generation, 0.5 s of
    # retrieval (none for the candidate), 100 and 50 bytes of prompt, 10/20/30 elements.
    rows = re.findall(
        r"<tr><td>([^<]+)</td><td class=\"num\"[^>]*>([^<]+)</td><td class=\"num\"[^>]*>([^<]+)</td></tr>",
        q1,
    )
    assert rows == [
        ("Generation (s)", "2.50", "1.25"),  # three significant digits
        ("Retrieval (s)", "0.500", "—"),
        ("Context length (bytes)", "100", "50"),
        ("Vertices", "10", "—"),
        ("Relationships", "20", "—"),
        ("Properties", "30", "—"),
    ]
    q2 = _article(html, "d1/q2")
    assert '<pre class="response">A</pre>' in q2[: q2.index('data-role="candidate"')]
    assert '<pre class="response">A<ins>\nor C</ins></pre>' in q2


def test_a_response_cannot_break_out_of_the_diff(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.question("d", "q", mcq("A"))
    tree.ok("d", "q", "one", "A")
    tree.ok("d", "q", "two", "</pre><script>alert(1)</script> A")
    out = tmp_path / "site"
    build_site(SiteConfig(runs=(RunConfig("r", tree.datasets_path, tree.results),)), out)
    (page,) = sorted(out.glob("comparisons/*.html"))
    html = _text(page)
    assert "<script>alert(1)" not in html
    assert "<ins>&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt; </ins>A" in html


def test_word_diff_joins_back() -> None:
    left, right = word_diff("the cat sat on the mat", "the dog sat on a mat")
    assert left == [("same", "the "), ("del", "cat"), ("same", " sat on "), ("del", "the"),
                    ("same", " mat")]  # fmt: skip
    assert right == [("same", "the "), ("ins", "dog"), ("same", " sat on "), ("ins", "a"),
                     ("same", " mat")]  # fmt: skip
    assert word_diff("", "") == ([], [])
    assert word_diff("", "x y") == ([], [("ins", "x y")])


def test_unparsable_files_are_listed_with_the_reason(pages: dict[str, Any]) -> None:
    site: Path = pages["site"]
    index = _text(site / "index.html")
    section = index[index.index('id="unparsable-known"') :]
    section = section[: section.index("</details>")]
    assert "<summary>2 result files did not parse and were skipped</summary>" in section
    rows = re.findall(r"<tr><td><code>([^<]+)</code></td><td>([^<]+)</td></tr>", section)
    assert [path for path, _ in rows] == ["d1/q4/plain-cand.json", "d1/q5/kag-base.json"]
    assert rows[0][1] == "JSON is malformed: invalid character (byte 10, line 2, column 9)"
    assert "missing required field `stats`" in rows[1][1]
    # The simulated run had none: nothing listed.
    assert 'id="unparsable-tiny-sim"' not in index
    # Each setup's page lists its own.
    for setup, path in (
        ("plain-cand", "d1/q4/plain-cand.json"),
        ("kag-base", "d1/q5/kag-base.json"),
    ):
        page = _text(site / f"setups/known--{setup}.html")
        listed = re.findall(
            r"<tr><td><code>([^<]+)</code></td>", page[page.index('id="unparsable"') :]
        )
        assert listed == [path], setup
    assert 'id="unparsable"' not in _text(site / "setups/tiny-sim--kag-large.html")


def test_reasons_are_kept_but_kag_output_is_unchanged(pages: dict[str, Any]) -> None:
    known: Tree = pages["known"]
    report = grade(known.datasets_path, known.results)
    assert len(report.unparsable_reasons) == len(report.unparsable_files) == 2
    assert "reason" not in report.to_json()
    assert "line 2" not in report.to_text()
    assert set(report.to_dict()) == {"datasets", "scorable_questions", "skipped_files", "setups"}


def _cells(index: str, run: str, setup: str) -> dict[str, str]:
    table = index[index.index(f'id="leaderboard-{run}"') :]
    table = table[: table.index("</table>")]
    row = table[table.index(f'<tr data-setup="{setup}"') :]
    row = row[: row.index("</tr>")]
    return dict(re.findall(r'data-key="([^"]+)" data-value="[^"]*">([^<]*)<', row))


def test_leaderboard_context_and_graph_columns(pages: dict[str, Any]) -> None:
    index = _text(pages["site"] / "index.html")
    for heading in (
        "Mean context length (bytes)",
        "Mean vertices",
        "Mean relationships",
        "Mean properties",
    ):
        assert f">{heading}</th>" in index
    base = _cells(index, "known", "kag-base")
    # Means over the parsed records (q1-q3; q4 is an error, q5 did not parse):
    # prompts 100, 300, 200 bytes; vertices 10, 4, 1; relationships 20, 6, 1; properties
    # 30, 8, 1.
    assert base["avg_context_length"] == "200"
    assert base["retrieval.avg_vertices"] == "5.00"
    assert base["retrieval.avg_relationships"] == "9.00"
    assert base["retrieval.avg_properties"] == "13.0"  # three significant digits
    cand = _cells(index, "known", "plain-cand")
    assert cand["avg_context_length"] == "50.0"  # (50 + 70 + 60 + 20) / 4: q1, q2, q3, q5
    assert cand["retrieval.avg_vertices"] == "—"


def test_no_cost_columns_where_none_was_recorded(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    tree.question("d", "q", mcq("A"))
    tree.ok("d", "q", "one", "A", prompt="")
    out = tmp_path / "site"
    build_site(SiteConfig(runs=(RunConfig("r", tree.datasets_path, tree.results),)), out)
    index = _text(out / "index.html")
    assert "Mean context length" not in index
    assert "Mean vertices" not in index


@pytest.mark.slow
def test_default_site_has_the_simulated_run_and_is_reproducible(
    examples_site: Path, tmp_path: Path
) -> None:
    """Two builds of the bundled examples (each writes its simulated run afresh, into a new
    temporary folder) give the same bytes; the simulated run is there with its costs. The
    first is the session's ``examples_site`` (``kagreport site build`` in a process of its
    own, the notebooks converted where a notebook front end is installed), the second is
    built here by ``build_site`` with the same configuration."""
    out = tmp_path / "two"
    notebooks = (examples_site / "notebooks").is_dir()
    build_site(SiteConfig.default(notebooks=notebooks), out, execute_notebooks=False)
    builds = [examples_site, out]
    first = sorted(p.relative_to(builds[0]) for p in builds[0].rglob("*") if p.is_file())
    second = sorted(p.relative_to(builds[1]) for p in builds[1].rglob("*") if p.is_file())
    assert first == second
    for relative in first:
        assert (builds[0] / relative).read_bytes() == (builds[1] / relative).read_bytes(), relative
    index = _text(builds[0] / "index.html")
    assert "<h2>SIMULATED KAG run: leaderboard</h2>" in index
    assert (builds[0] / "figures/simulated-kag-run--accuracy-cost.svg").is_file()
    assert str(tmp_path) not in _text(out / "index.html")
    for page in builds[0].rglob("*.html"):
        assert "kagreport-simulated-" not in _text(page), page
