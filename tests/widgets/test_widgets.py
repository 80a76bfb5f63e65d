"""kagreport.widgets: the views driven from Python, their escaping, truncation and static fallback."""

from __future__ import annotations

import json
import os
import re
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import Tree, mcq
from kagreport import find, grade
from kagreport._format import MISSING
from kagreport._format import p_value as p_value_text
from kagreport.examples import llmbar_natural, mmlu_pro_philosophy
from kagreport.frames._tables import COST_AXES, OVERALL
from kagreport.grading import Metrics, Outcome, StatsReport
from kagreport.grading._items import ItemTable
from kagreport.grading._report import SetupReport
from kagreport.kag import simulate_run
from kagreport.runs import setup_metrics
from kagreport.widgets import AgreementView, ComparisonView, ItemBrowser, StatsView
from kagreport.widgets._html import RESPONSE_LIMIT, chart_svg

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
HUGE = 1_000_000


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> StatsReport:
    run = simulate_run(tmp_path_factory.mktemp("sim"), questions=30, datasets=3)
    return grade(run.datasets_path, run.results_path)


@pytest.fixture(scope="module")
def mmlu() -> StatsReport:
    example = mmlu_pro_philosophy()
    return grade(example.datasets, example.results)


@pytest.fixture(scope="module")
def llmbar() -> Any:
    return llmbar_natural(agreement_resamples=100)


@pytest.fixture
def hostile(tree: Tree) -> StatsReport:
    """Responses and errors that are HTML, and one response of a million characters."""
    for q in ("q1", "q2", "q3", "q4", "q5"):
        tree.question("ds", q, mcq("B"))
    tree.ok("ds", "q1", "base", SCRIPT)
    tree.ok("ds", "q2", "base", IMG)
    tree.ok("ds", "q3", "base", "B")
    tree.error("ds", "q4", "base", f"failed: {SCRIPT}")
    tree.ok("ds", "q5", "base", "<b>" + "x" * (HUGE - 3))
    for q in ("q1", "q2", "q3", "q4", "q5"):
        tree.ok("ds", q, "other", "b")
    return grade(tree.datasets_path, tree.results)


def _no_external_script(html: str) -> None:
    assert "<script" not in html.lower()
    assert not re.search(r"""<[a-z][^>]*\s(?:src|href)\s*=\s*["']?https?://""", html, re.I)


def _x_titles(spec: Any) -> Iterator[str]:
    """Every x-encoding title in a (layered) Vega-Lite spec."""
    if isinstance(spec, dict):
        x = spec.get("encoding", {}).get("x") if isinstance(spec.get("encoding"), dict) else None
        if isinstance(x, dict) and "title" in x:
            yield str(x["title"])
        for value in spec.values():
            yield from _x_titles(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _x_titles(value)


def _x_axis(chart: Any) -> set[str]:
    return set(_x_titles(chart.to_dict()))


def _row_count(report: StatsReport, **where: str) -> int:
    table = report.items
    mask = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        mask &= table.column(column) == value
    return int(mask.sum())


# ---------------------------------------------------------------------------- StatsView


def test_stats_view_lists_the_selected_setups(sim: StatsReport) -> None:
    view = StatsView(sim)
    names = list(sim.setup_names)
    assert list(view.frame["setup"]) == names
    for name in names:
        assert f">{name}<" in view.table_html
    dropped = names[-1]
    view.setups.value = tuple(names[:-1])
    assert dropped not in set(view.frame["setup"])
    assert f">{dropped}<" not in view.table_html
    assert f">{dropped}<" not in view.table_widget.value
    assert view.chart is not None
    assert dropped not in json.dumps(view.chart.to_dict()["datasets"])


def test_stats_view_cost_axis_changes_the_chart(sim: StatsReport) -> None:
    view = StatsView(sim)
    assert view.cost.value == "retrieval"  # the simulated run has KAG setups
    assert COST_AXES["retrieval"][1] in _x_axis(view.chart)
    before = view.chart_widget.value
    view.cost.value = "generation"
    assert COST_AXES["generation"][1] in _x_axis(view.chart)
    assert COST_AXES["retrieval"][1] not in _x_axis(view.chart)
    assert view.chart_widget.value != before
    assert "<svg" in view.chart_widget.value
    # The table's cost column follows the axis, and so do the chart's x values.
    assert COST_AXES["generation"][1] in view.table_html
    drawn = {
        row["setup"]: row["cost"] for row in next(iter(view.chart.to_dict()["datasets"].values()))
    }
    for setup in sim.setups:
        assert drawn[setup.setup] == pytest.approx(setup.overall.avg_generation_secs)


def test_stats_view_shows_native_setups_at_zero_retrieval_cost(sim: StatsReport) -> None:
    # Issue #10 item 7: as the chart draws them, native setups cost 0 on a retrieval axis.
    view = StatsView(sim)
    natives = [s.setup for s in sim.setups if s.overall.retrieval is None]
    assert natives == [s for s in sim.setup_names if s.startswith("native")]
    drawn = {r["setup"]: r for r in next(iter(view.chart.to_dict()["datasets"].values()))}
    for native in natives:
        assert drawn[native]["cost"] == 0.0
        assert drawn[native]["no_retrieval"]
    assert view.table_html.count("0 (no retrieval)") == len(natives)
    assert "Setups without retrieval cost 0 on this axis" in view.message.value
    view.cost.value = "graph"
    assert view.table_html.count("0 (no retrieval)") == len(natives)
    view.cost.value = "generation"  # not a retrieval cost: every setup has its own
    assert "0 (no retrieval)" not in view.table_html
    assert "without retrieval" not in view.message.value
    view.cost.value = "retrieval"
    view.setups.value = tuple(natives)  # only natives: all at 0, which is a value
    assert "No selected setup has a value" not in view.message.value
    assert "Setups without retrieval cost 0" in view.message.value


def test_stats_view_dataset_selection_recomputes_the_overall(sim: StatsReport) -> None:
    view = StatsView(sim)
    for setup in sim.setups:  # every dataset selected: kag's own overall
        row = view.frame[view.frame["setup"] == setup.setup].iloc[0]
        assert row["total"] == setup.overall.total
        assert row["accuracy"] == pytest.approx(setup.overall.accuracy)
    one = view.datasets.options[0]
    view.datasets.value = (one,)
    assert "the selected datasets" in view.message.value
    for setup in sim.setups:
        row = view.frame[view.frame["setup"] == setup.setup].iloc[0]
        assert row["dataset"] == OVERALL
        assert row["total"] == setup.per_dataset[one].total
        assert row["accuracy"] == pytest.approx(setup.per_dataset[one].accuracy)
    view.per_dataset.value = True
    assert set(view.frame["dataset"]) == {OVERALL, one}


def test_stats_view_empty_selection_does_not_raise(sim: StatsReport) -> None:
    view = StatsView(sim)
    view.setups.value = ()
    assert view.chart is None
    assert "Select at least one setup" in view.message.value
    assert view.frame.empty
    view.setups.value = (sim.setup_names[0],)
    assert list(view.frame["setup"]) == [sim.setup_names[0]]


def test_stats_view_without_retrieval_defaults_to_generation(mmlu: StatsReport) -> None:
    view = StatsView(mmlu)
    assert view.cost.value == "generation"
    assert len(view.frame) == len(mmlu.setups)


def test_views_of_an_empty_run(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "datasets.json").write_text("{}", encoding="utf-8")
    report = grade(tmp_path / "datasets.json", tmp_path / "results")
    assert "no graded result" in StatsView(report).message.value
    assert "nothing to compare" in ComparisonView(report).message.value
    browser = ItemBrowser(report)
    assert browser.rows == []
    assert browser.n_pages == 1
    browser.pattern.value = "x"
    assert browser.rows == []
    for view in (StatsView(report), ComparisonView(report), browser):
        assert "static snapshot" in view._repr_mimebundle_()["text/html"]
    from kagreport.runs import Run

    run = Run.from_stats(report)
    assert "no graded result" in StatsView(run).message.value
    assert "nothing to compare" in ComparisonView(run).message.value
    assert ItemBrowser(run).rows == []


# ---------------------------------------------------------------------------- ItemBrowser


def test_item_browser_filters_by_outcome_setup_and_dataset(sim: StatsReport) -> None:
    browser = ItemBrowser(sim, page_size=500)
    assert len(browser.matches) == len(sim.items)
    browser.outcome.value = "error"
    assert len(browser.matches) == _row_count(sim, outcome="error") > 0
    assert {row["outcome"] for row in browser.rows} == {"error"}
    assert all(row["error"] for row in browser.rows)
    setup = sim.setup_names[0]
    browser.setup.value = setup
    assert {row["setup"] for row in browser.rows} <= {setup}
    assert len(browser.matches) == _row_count(sim, outcome="error", setup=setup)
    browser.outcome.value = ""
    dataset = browser.dataset.options[1][1]
    browser.dataset.value = dataset
    assert len(browser.matches) == _row_count(sim, setup=setup, dataset=dataset)
    assert {(row["setup"], row["dataset"]) for row in browser.rows} == {(setup, dataset)}


def test_item_browser_shows_the_expected_answer(sim: StatsReport) -> None:
    browser = ItemBrowser(sim, page_size=5)
    assert sim.ground_truth is not None
    for row in browser.rows:
        key = sim.ground_truth.get(row["dataset"], row["question"])
        assert key is not None
        assert key.answer is not None
        assert row["expected"].split(":")[0] == key.answer


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["setup"], row["dataset"], row["question"]


def _path(report: StatsReport, row: dict[str, Any]) -> str:
    """The result file a browser row shows (``results/<dataset>/<question>/<setup>.json``)."""
    assert report.results is not None
    return os.path.join(report.results, row["dataset"], row["question"], f"{row['setup']}.json")


def test_item_browser_regex_matches_stats_find(sim: StatsReport) -> None:
    browser = ItemBrowser(sim, page_size=1000)
    browser.pattern.value = "^[ab]$"
    assert sim.items.results is not None
    found = {m.path for m in find("^[ab]$", sim.items.results)}
    shown = {_path(sim, row) for row in browser.rows}
    graded = {sim.items.path(row) for row in sim.items}
    assert shown == found & graded
    assert shown
    assert all(re.fullmatch("[ab]", row["response"].strip()) for row in browser.rows)
    # Another filter with the same pattern reuses the search.
    browser.outcome.value = "correct"
    assert {row["outcome"] for row in browser.rows} == {"correct"}


def test_item_browser_invalid_regex_shows_a_message(sim: StatsReport) -> None:
    browser = ItemBrowser(sim)
    browser.pattern.value = "(unclosed"
    assert browser.error is not None
    assert "invalid regular expression" in browser.message.value
    assert 'role="alert"' in browser.message.value
    assert browser.rows == []
    assert len(browser.matches) == 0
    browser.pattern.value = "(?<=look-behind)"  # valid in Python, not in Rust's regex
    assert "invalid regular expression" in browser.message.value
    browser.pattern.value = ""
    assert "invalid" not in browser.message.value
    assert len(browser.matches) == len(sim.items)


def test_item_browser_pages(sim: StatsReport) -> None:
    browser = ItemBrowser(sim, page_size=50)
    total = len(sim.items)
    assert browser.n_pages == -(-total // 50)
    assert browser.page == 0
    assert len(browser.rows) == 50
    assert browser.prev_button.disabled
    assert not browser.next_button.disabled
    first = [_key(row) for row in browser.rows]
    browser.next_button.click()
    assert browser.page == 1
    assert [_key(row) for row in browser.rows] != first
    assert "page 2 of" in browser.page_label.value
    browser.page = 10_000  # clamped to the last page
    assert browser.page == browser.n_pages - 1
    assert len(browser.rows) == total - 50 * (browser.n_pages - 1)
    assert browser.next_button.disabled
    browser.prev_page()
    assert browser.page == browser.n_pages - 2
    browser.outcome.value = "correct"  # a new filter goes back to the first page
    assert browser.page == 0
    rows = [row for page in range(browser.n_pages) for row in _page(browser, page)]
    assert len({_key(row) for row in rows}) == len(rows) == len(browser.matches)
    # Sorted by dataset and question, setups in rank order within a question.
    rank = {name: k for k, name in enumerate(sim.setup_names)}
    keys = [(row["dataset"], row["question"], rank[row["setup"]]) for row in rows]
    assert keys == sorted(keys)


def _page(browser: ItemBrowser, page: int) -> list[dict[str, Any]]:
    browser.page = page
    return browser.rows


def test_item_browser_reads_only_the_visible_page(
    sim: StatsReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kagreport.kag._tree import LocalTree

    calls: list[str] = []
    read = LocalTree.read

    def counting(self: LocalTree, path: str) -> bytes:
        calls.append(path)
        return read(self, path)

    monkeypatch.setattr(LocalTree, "read", counting)
    browser = ItemBrowser(sim, page_size=7)
    shown = {_path(sim, row) for row in browser.rows}
    assert len(calls) == 7
    assert set(calls) == shown
    browser.outcome.value = "incorrect"
    shown |= {_path(sim, row) for row in browser.rows}
    browser.next_page()
    shown |= {_path(sim, row) for row in browser.rows}
    # The files of the three pages shown, each read once (a row seen twice is not read again).
    assert set(calls) == shown
    assert len(calls) == len(shown) > 14


def test_item_browser_escapes_html_in_responses_and_errors(hostile: StatsReport) -> None:
    browser = ItemBrowser(hostile, page_size=50)
    views = [browser.table_html, browser.to_html(), browser._repr_mimebundle_()["text/html"]]
    for html in views:
        assert SCRIPT not in html
        assert IMG not in html
        assert "<script" not in html
        assert "<img" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html
        assert "failed: &lt;script&gt;" in html  # the error message
        assert "<b>x" not in html
        assert "&lt;b&gt;x" in html
    # A pattern typed by the user is escaped in the snapshot header too.
    browser.pattern.value = "<script>"
    assert "pattern: &lt;script&gt;" in browser.to_html()
    assert len(browser.rows) == 1


def test_item_browser_truncates_a_huge_response(hostile: StatsReport) -> None:
    browser = ItemBrowser(hostile)
    (row,) = [r for r in browser.rows if r["question"] == "q5" and r["setup"] == "base"]
    assert row["response_length"] == HUGE
    assert len(row["response"]) == RESPONSE_LIMIT
    html = browser.table_html
    assert f"showing the first {RESPONSE_LIMIT:,} of {HUGE:,} characters" in html
    assert "x" * RESPONSE_LIMIT not in html  # 3 characters went to the escaped "<b>"
    assert len(html) < 60_000
    bundle = browser._repr_mimebundle_()
    assert len(json.dumps(bundle)) < 80_000


def test_item_browser_stays_fast_at_100000_items(tmp_path: Path) -> None:
    n = 100_000
    rng = np.random.default_rng(0)
    columns = (
        array("I", rng.integers(0, 4, n).tolist()),
        array("I", [0] * n),
        array("I", range(n)),
        array("B", rng.integers(0, 3, n).tolist()),
        *(array("q", [-1] * n) for _ in range(6)),
    )
    table = ItemTable(
        ("s0", "s1", "s2", "s3"),
        ("ds",),
        tuple(f"q{i}" for i in range(n)),
        columns,
        results=str(tmp_path),  # no file there: every visible row says it cannot be read
    )
    setups = tuple(SetupReport(name, Metrics(), {}) for name in table.setup_names)
    report = StatsReport(1, n, 0, setups, table, results=str(tmp_path))
    start = time.perf_counter()
    browser = ItemBrowser(report)
    browser.setup.value = "s2"
    browser.outcome.value = "error"
    browser.next_page()
    elapsed = time.perf_counter() - start
    expected = int(((table.codes("setup") == 2) & (table.codes("outcome") == 2)).sum())
    assert len(browser.matches) == expected
    assert len(browser.rows) == 50
    assert "cannot read the result file" in browser.rows[0]["error"]
    assert elapsed < 5.0
    assert len(browser.to_html()) < 100_000  # one page, never the whole table


# ---------------------------------------------------------------------------- ComparisonView


def _accuracy_on(report: StatsReport, setup: str, keys: set[tuple[str, str]]) -> float:
    correct = [
        row.outcome is Outcome.CORRECT
        for row in report.items
        if row.setup == setup and (row.dataset, row.question) in keys
    ]
    return sum(correct) / len(correct)


def _keys(report: StatsReport, setup: str) -> set[tuple[str, str]]:
    return {(row.dataset, row.question) for row in report.items if row.setup == setup}


@pytest.mark.parametrize("which", ["sim", "mmlu"])
def test_comparison_mean_difference_is_the_accuracy_difference(
    which: str, request: pytest.FixtureRequest
) -> None:
    report: StatsReport = request.getfixturevalue(which)
    view = ComparisonView(report, n_resamples=500)
    names = report.setup_names
    for a, b in ((names[0], names[1]), (names[3], names[1]), (names[2], names[3])):
        view.candidate.value, view.baseline.value = a, b
        shared = _keys(report, a) & _keys(report, b)
        assert view.comparison is not None
        assert view.comparison.candidate == a
        assert view.comparison.baseline == b
        correct = view.comparison.metrics["correct"]
        assert correct.n_pairs == len(shared)
        expected = _accuracy_on(report, a, shared) - _accuracy_on(report, b, shared)
        assert correct.mean_difference == pytest.approx(expected, abs=1e-12)
        assert list(view.frame["candidate"]) == [a]
        assert "<svg" in view.chart_widget.value  # the forest plot
        # In percentage points, signed, with a real minus (correct is a proportion).
        assert f">{100 * expected:+.1f} pp [".replace("-", "\u2212") in view.table_html
        # The flipped items: right on exactly one side.
        outcomes = {
            (row.setup, f"{row.dataset}/{row.question}"): row.outcome is Outcome.CORRECT
            for row in report.items
        }
        flips = {
            f"{d}/{q}" for d, q in shared if outcomes[(a, f"{d}/{q}")] != outcomes[(b, f"{d}/{q}")]
        }
        assert set(view.flips["identifier"]) == flips
        for _, flip in view.flips.iterrows():
            winner = a if flip["flipped_to"] == "candidate" else b
            assert outcomes[(winner, flip["identifier"])]


def test_comparison_handles_setups_with_missing_items(mmlu: StatsReport) -> None:
    counts = {s: len(_keys(mmlu, s)) for s in mmlu.setup_names}
    short = min(counts, key=counts.__getitem__)
    full = max(counts, key=counts.__getitem__)
    assert counts[short] < counts[full]  # DeepSeek-Coder-V2 lacks some questions
    view = ComparisonView(mmlu, n_resamples=200)
    view.candidate.value, view.baseline.value = short, full
    assert view.comparison is not None
    assert view.comparison.n_items == counts[short]
    assert view.dropped == counts[full] - counts[short]
    assert "left out" in view.message.value


def test_comparison_same_setup_and_named_evaluations(sim: StatsReport) -> None:
    from kagreport.evaluation import evaluation_from_stats

    view = ComparisonView(sim, n_resamples=200)
    view.baseline.value = view.candidate.value
    assert view.comparison is None
    assert "two different" in view.message.value
    with pytest.raises(KeyError, match="no evaluation named"):
        view.evaluation(sim.setup_names[0])  # a run holds no evaluation
    first = evaluation_from_stats(sim, sim.setup_names[0])
    named = ComparisonView({"a": first, "b": first}, n_resamples=100)
    assert named.evaluation("a") is first


def test_comparison_accepts_named_evaluations(sim: StatsReport) -> None:
    from kagreport.evaluation import evaluation_from_stats

    names = sim.setup_names[:2]
    evaluations = {n: evaluation_from_stats(sim, n) for n in names}
    view = ComparisonView(evaluations, n_resamples=300)
    assert view.comparison is not None
    from_report = ComparisonView(sim, n_resamples=300)
    assert from_report.comparison is not None
    assert view.comparison.metrics["correct"].mean_difference == pytest.approx(
        from_report.comparison.metrics["correct"].mean_difference
    )
    assert set(view.flips["identifier"]) == set(from_report.flips["identifier"])


def test_comparison_escapes_flipped_responses(hostile: StatsReport) -> None:
    view = ComparisonView(hostile, n_resamples=100)
    view.candidate.value, view.baseline.value = "base", "other"
    assert set(view.flips["identifier"]) == {"ds/q1", "ds/q2", "ds/q4", "ds/q5"}
    for html in (view.flips_html, view.to_html()):
        assert SCRIPT not in html
        assert IMG not in html
        assert "<script" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html
        assert f"of {HUGE:,} characters" in html
    # Named evaluations carry their answers: the flipped responses come from them, escaped.
    from kagreport.evaluation import evaluation_from_stats

    named = ComparisonView(
        {name: evaluation_from_stats(hostile, name) for name in ("base", "other")},
        n_resamples=100,
    )
    assert set(named.flips["identifier"]) == set(view.flips["identifier"])
    assert SCRIPT not in named.flips_html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in named.flips_html
    assert f"of {HUGE:,} characters" in named.flips_html


def test_comparison_escapes_evaluation_names_in_tables_and_chart(hostile: StatsReport) -> None:
    from kagreport.evaluation import evaluation_from_stats

    view = ComparisonView(
        {IMG: evaluation_from_stats(hostile, "base"), "b": evaluation_from_stats(hostile, "other")},
        n_resamples=100,
    )
    assert view.comparison is not None
    assert view.comparison.candidate == IMG
    html = view.to_html()
    assert "<svg" in html  # the forest plot names the candidate in its text
    assert "<img" not in html
    assert "<script" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


# ---------------------------------------------------------------------------- AgreementView


def test_agreement_view_follows_the_criterion(llmbar: Any) -> None:
    view = AgreementView(llmbar)
    criteria = list(llmbar.agreement)
    assert list(view.criterion.options) == criteria
    assert list(view.frame["criterion"]) == criteria
    assert view.chart is not None
    assert "<svg" in view.chart_widget.value
    first = view.pairwise_chart
    assert first is not None
    first_svg = view.pairwise_widget.value
    view.criterion.value = criteria[-1]
    assert view.pairwise_chart is not None
    assert view.pairwise_chart.to_dict() != first.to_dict()
    assert view.pairwise_widget.value != first_svg
    assert criteria[-1] in view.message.value
    alpha = llmbar.agreement[criteria[-1]]
    assert f"{alpha:.3f}" in view.table_html
    view.criterion.value = criteria[0]
    assert view.pairwise_chart is first  # cached per criterion


def test_agreement_view_without_agreement(sim: StatsReport) -> None:
    from kagreport.evaluation import evaluation_from_stats

    view = AgreementView(evaluation_from_stats(sim, sim.setup_names[0], answers=False))
    assert view.criterion.value is None
    assert "no judge agreement" in view.message.value
    with pytest.raises(ValueError, match="no agreement"):
        AgreementView(evaluation_from_stats(sim, sim.setup_names[0]), criterion="x")


# ---------------------------------------------------------------------------- static fallback


def _views(sim: StatsReport, llmbar: Any) -> list[Any]:
    return [
        StatsView(sim),
        ComparisonView(sim, n_resamples=200),
        AgreementView(llmbar),
    ]


def test_mimebundle_has_the_widget_and_an_offline_html_snapshot(
    sim: StatsReport, llmbar: Any
) -> None:
    for view in _views(sim, llmbar):
        bundle = view._repr_mimebundle_()
        assert WIDGET_MIME in bundle
        assert bundle[WIDGET_MIME]["model_id"] == view.model_id
        html = bundle["text/html"]
        assert "<svg" in html
        assert "static snapshot" in html
        _no_external_script(html)
        assert len(html) < 2_000_000
        # include / exclude are honoured.
        assert set(view._repr_mimebundle_(include={"text/html"})) == {"text/html"}
        assert "text/html" not in view._repr_mimebundle_(exclude={"text/html"})


def test_item_browser_snapshot(mmlu: StatsReport) -> None:
    browser = ItemBrowser(mmlu, page_size=20)
    html = browser._repr_mimebundle_()["text/html"]
    _no_external_script(html)
    assert html.count("<tr>") == 21  # the header and the visible page only
    assert "page: 1 of" in html


def test_snapshot_follows_the_controls(sim: StatsReport) -> None:
    view = StatsView(sim)
    dropped = sim.setup_names[-1]
    assert f">{dropped}<" in view.to_html()
    view.setups.value = tuple(sim.setup_names[:-1])
    assert f">{dropped}<" not in view.to_html().split("</div>", 1)[1]


def test_chart_svg_inlines_unique_ids(sim: StatsReport) -> None:
    view = StatsView(sim)
    one, two = chart_svg(view.chart), chart_svg(view.chart)
    ids = set(re.findall(r'\sid="([^"]+)"', one)) & set(re.findall(r'\sid="([^"]+)"', two))
    assert not ids
    assert one.startswith("<svg")


def test_comparison_view_shows_tiny_exact_p_values(mmlu: StatsReport) -> None:
    # Issue #10 item 1: an exact p of ~1e-6 showed as "0.0000" in the static snapshot. The
    # expected value is SciPy's binomial test on the discordant questions.
    from scipy.stats import binomtest

    view = ComparisonView(mmlu, n_resamples=200)
    a, b = "gemini-1-5-pro-002", "meta-llama-3-1-70b-instruct"
    view.candidate.value, view.baseline.value = a, b
    outcome: dict[str, dict[tuple[str, str], bool]] = {a: {}, b: {}}
    for row in mmlu.items:
        if row.setup in outcome:
            outcome[row.setup][(row.dataset, row.question)] = row.outcome is Outcome.CORRECT
    wins = sum(outcome[a][k] and not outcome[b][k] for k in outcome[a])
    losses = sum(outcome[b][k] and not outcome[a][k] for k in outcome[a])
    p = binomtest(wins, wins + losses, 0.5).pvalue
    assert p < 1e-4
    html = view.to_html()
    assert f"{p:.2e}" in html
    assert ">0.0000<" not in html  # no table cell reads 0.0000


# ---------------------------------------------------------------------------- views of a run


def _site_comparisons(out: Path) -> list[tuple[dict[str, Any], list[list[str]]]]:
    """Each comparison of a built site: its JSON document and its page's flipped items."""
    found = []
    for path in sorted((out / "data/comparisons").glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        page = (out / "comparisons" / path.name).with_suffix(".html").read_text(encoding="utf-8")
        flips = re.search(r'<script type="application/json" id="flips-data">(.*?)</script>', page)
        found.append((document, json.loads(flips.group(1))["rows"] if flips else []))
    return found


def test_comparison_view_shows_the_sites_numbers_for_the_same_pair(
    mmlu: StatsReport, tmp_path: Path
) -> None:
    # DESIGN.md: the same pair shows the same p-value everywhere. The bundled site's own
    # comparison pages against the view of the same pair, of the report and of its run.
    from kagreport.runs import Run
    from kagreport.site import SiteConfig, build_site

    root = Path(__file__).resolve().parents[2]
    build_site(SiteConfig.from_toml(root / "site/site.toml"), tmp_path / "site")
    compared = _site_comparisons(tmp_path / "site")
    assert len(compared) == len(mmlu.setup_names) - 1
    views = [ComparisonView(mmlu), ComparisonView(Run.from_stats(mmlu))]
    for document, flips in compared:
        (site,) = document["metrics"]
        for view in views:
            view.candidate.value, view.baseline.value = document["candidate"], document["baseline"]
            assert view.comparison is not None
            ours = view.comparison.metrics["correct"]
            for key in ("n_pairs", "mean_difference", "p_value", "method"):
                assert getattr(ours, key) == site[key], (document["candidate"], key)
            # The view's pair is a family of one, the site's a family of the run's pairs: the
            # view's Holm-adjusted interval lies inside the site's (issue #28).
            assert site["ci_low"] <= ours.ci_low
            assert ours.ci_high <= site["ci_high"]
            assert view.comparison.n_items == document["n_items"]
            assert view.dropped == (
                document["metadata"]["items_only_in_candidate"]
                + document["metadata"]["items_only_in_baseline"]
            )
            assert p_value_text(site["p_value"]) in view.table_html
            assert list(view.flips["identifier"]) == [item for item, *_ in flips]
            winners = {item: mine == "correct" for item, mine, *_ in flips}
            assert {
                row["identifier"]: row["flipped_to"] == "candidate"
                for _, row in view.flips.iterrows()
            } == winners


_REFERENCE = "red green blue black"
# (candidate answer, baseline answer) and their SQuAD token F1 against _REFERENCE, by hand:
# F1 = 2PR / (P + R); "red green" has P = 1, R = 1/2, F1 = 2/3; "red": P = 1, R = 1/4, 0.4.
_ANSWERS = {
    "q1": ("red green blue black", "red green", 1.0, 2 / 3),
    "q2": ("red", "red green blue black", 0.4, 1.0),
    "q3": ("red green", "red", 2 / 3, 0.4),
    "q4": ("pink", "pink", 0.0, 0.0),
}


def _f1_run() -> Any:
    from kagreport.evaluation import AnswerItem, evaluate_answers
    from kagreport.evaluation.judges import ExactMatch, TokenF1
    from kagreport.runs import Run

    evaluations = [
        evaluate_answers(
            [AnswerItem(q, "Colours?", pair[side], _REFERENCE) for q, pair in _ANSWERS.items()],
            [ExactMatch(), TokenF1()],
        )
        for side in (0, 1)
    ]
    return Run.from_evaluations(evaluations, labels=["cand", "base"]), evaluations


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        (0.5, {"q2": "baseline", "q3": "candidate"}),
        (0.9, {"q1": "candidate", "q2": "baseline"}),
        (0.3, {}),
    ],
)
def test_comparison_view_of_a_run_from_evaluations_flips_at_the_threshold(
    threshold: float, expected: dict[str, str]
) -> None:
    run, _ = _f1_run()
    view = ComparisonView(run, n_resamples=200, threshold=threshold)
    assert view.comparison is not None
    assert set(view.comparison.metrics) == {"exact_match", "token_f1"}
    f1 = view.comparison.metrics["token_f1"]
    assert f1.mean_difference == pytest.approx(
        sum(c - b for _, _, c, b in _ANSWERS.values()) / 4, abs=1e-12
    )
    view.metric.value = "token_f1"
    assert dict(zip(view.flips["identifier"], view.flips["flipped_to"], strict=True)) == expected
    for _, row in view.flips.iterrows():
        _, _, mine, theirs = _ANSWERS[row["identifier"]]
        assert row["candidate_score"] == pytest.approx(mine)
        assert row["baseline_score"] == pytest.approx(theirs)
    if expected:
        # The run keeps the answers: the flipped responses come from it.
        q = sorted(expected)[0]
        assert f">{_ANSWERS[q][0]}</pre>" in view.flips_html
        assert f"(threshold {threshold:g})" in view.flips_html


def test_comparison_view_of_named_evaluations_equals_the_view_of_their_run() -> None:
    run, evaluations = _f1_run()
    named = ComparisonView(dict(zip(("cand", "base"), evaluations, strict=True)), n_resamples=300)
    of_run = ComparisonView(run, n_resamples=300)
    assert named.comparison is not None
    assert of_run.comparison is not None
    assert named.comparison.to_dict() == of_run.comparison.to_dict()
    # compare() tests the same family with the same numbers; its interval is the bootstrap
    # one, the view's the Holm-adjusted one that agrees with the p-value (issue #28).
    direct = evaluations[0].compare(evaluations[1], n_resamples=300)
    for name, metric in direct.metrics.items():
        mine = named.comparison.metrics[name]
        assert (mine.p_value, mine.p_value_holm) == (metric.p_value, metric.p_value_holm)
        assert (mine.ci_low > 0 or mine.ci_high < 0) == (mine.p_value_holm < 0.05)


def test_comparison_view_of_named_evaluations_with_different_items() -> None:
    from kagreport.evaluation import AnswerItem, evaluate_answers
    from kagreport.evaluation.judges import ExactMatch

    def evaluation(answers: dict[str, str]) -> Any:
        items = [AnswerItem(q, "?", a, "yes") for q, a in answers.items()]
        return evaluate_answers(items, [ExactMatch()])

    one = evaluation({"q1": "yes", "q2": "no", "q3": "yes"})
    two = evaluation({"q2": "yes", "q3": "yes", "q4": "no"})
    view = ComparisonView({"one": one, "two": two}, n_resamples=100)
    assert view.run is None  # no common run: one per pair
    assert view.comparison is not None
    assert view.comparison.n_items == 2
    assert view.dropped == 2
    assert view.comparison.metrics["exact_match"].mean_difference == pytest.approx(-0.5)
    assert list(view.flips["identifier"]) == ["q2"]


def test_item_browser_of_a_run_with_texts_matches_the_report_browser(tmp_path: Path) -> None:
    from kagreport.runs import Run

    made = simulate_run(tmp_path / "sim", questions=12, datasets=2)
    report = grade(made.datasets_path, made.results_path, keep_text=True)
    of_report = ItemBrowser(report, page_size=1000)
    of_run = ItemBrowser(Run.from_stats(report), page_size=1000)
    assert len(of_run.matches) == len(of_report.matches) == len(report.items)
    keys = ("setup", "dataset", "question", "outcome", "response", "error", "generation_secs")
    assert [{k: r[k] for k in keys} for r in of_run.rows] == [
        {k: r[k] for k in keys} for r in of_report.rows
    ]
    for browser in (of_report, of_run):
        browser.pattern.value = "^[ab]$"
        browser.outcome.value = "correct"
    assert {(r["setup"], r["dataset"], r["question"]) for r in of_run.rows} == {
        (r["setup"], r["dataset"], r["question"]) for r in of_report.rows
    }
    assert of_run.rows


def test_item_browser_of_a_run_says_what_it_lacks(sim: StatsReport) -> None:
    import dataclasses

    from kagreport.runs import Run

    # A run that kept no responses (a kag run's are read from its files: dropped here).
    run = dataclasses.replace(Run.from_stats(sim), responses=None, errors=None)
    browser = ItemBrowser(run, page_size=5)
    assert len(browser.matches) == len(sim.items)
    assert all(row["response"] is None for row in browser.rows)
    assert any("the run keeps no responses" in (row["error"] or "") for row in browser.rows)
    browser.pattern.value = "a"
    assert "the run keeps no responses" in browser.message.value
    assert browser.rows == []


def test_item_browser_of_a_run_from_evaluations_escapes_its_texts() -> None:
    from kagreport.evaluation import AnswerItem, evaluate_answers
    from kagreport.evaluation.judges import ExactMatch
    from kagreport.runs import Run

    items = [AnswerItem("q1", "?", SCRIPT, IMG), AnswerItem("q2", "?", "yes", "yes")]
    run = Run.from_evaluations([evaluate_answers(items, [ExactMatch()])], labels=["sys"])
    browser = ItemBrowser(run)
    assert [(r["question"], r["outcome"], r["expected"]) for r in browser.rows] == [
        ("q1", MISSING, IMG),  # no "correct" metric: outcomes unknown, and said so
        ("q2", MISSING, "yes"),
    ]
    assert "The run has no datasets, costs or outcomes" in browser.message.value
    html = browser.to_html()
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    browser.pattern.value = "^y"
    assert [r["question"] for r in browser.rows] == ["q2"]


def _pareto_by_hand(points: dict[str, tuple[float, float]]) -> set[str]:
    """(cost, value) -> the points no other point dominates (cost <= and value >=, one of
    them strict): the definition, pair by pair."""
    return {
        name
        for name, (cost, value) in points.items()
        if not any(
            c <= cost and v >= value and (c < cost or v > value)
            for other, (c, v) in points.items()
            if other != name
        )
    }


def _sim_by_hand(
    sim: StatsReport, dataset: str | None = None
) -> dict[str, tuple[float, float, float]]:
    """Setup -> (accuracy, mean retrieval seconds, mean generation seconds) from the item
    rows: a setup that records no retrieval time retrieves nothing and costs 0 s."""
    found = {}
    for setup in sim.setup_names:
        rows = [r for r in sim.items if r.setup == setup and dataset in (None, r.dataset)]
        retrieval = [r.retrieval_secs for r in rows if r.retrieval_secs is not None]
        generation = [r.generation_secs for r in rows if r.generation_secs is not None]
        found[setup] = (
            sum(r.outcome is Outcome.CORRECT for r in rows) / len(rows),
            sum(retrieval) / len(retrieval) if retrieval else 0.0,
            sum(generation) / len(generation),
        )
    return found


def test_stats_view_of_a_kag_run_is_the_view_of_its_report(
    sim: StatsReport, mmlu: StatsReport
) -> None:
    import pandas as pd

    from kagreport.runs import Run

    for report in (sim, mmlu):
        run = Run.from_stats(report)
        views = [StatsView(report), StatsView(run)]
        assert (views[1].run, views[1].metric) == (run, None)
        assert views[0].cost.options == views[1].cost.options
        assert views[0].datasets.options == views[1].datasets.options

        def same(views: list[StatsView] = views) -> None:
            pd.testing.assert_frame_equal(views[0].frame, views[1].frame, check_exact=True)
            assert views[0].table_html == views[1].table_html
            assert views[0].chart is not None
            assert views[0].chart.to_dict() == views[1].chart.to_dict()
            assert views[0].chart_widget.value == views[1].chart_widget.value

        same()
        for cost in ("retrieval", "generation", "context", "graph"):  # kag's axes
            for view in views:
                view.cost.value = cost
            same()
        for view in views:
            view.per_dataset.value = True
            view.setups.value = tuple(report.setup_names[1:])
            view.datasets.value = view.datasets.options[:1]
        same()
    # A kag run reads its responses from its result files: nothing is said missing.
    assert "The run has no responses." not in views[1].message.value


def test_stats_view_selection_sums_kags_per_dataset_metrics(
    sim: StatsReport, mmlu: StatsReport, tmp_path: Path
) -> None:
    # The selection's metrics (kagreport.runs.setup_metrics of the selected rows) are the
    # sums of kag's own per-dataset metrics, every field of which adds (kag metric.rs),
    # ranked as kag ranks: accuracy descending, None last, then name.
    from dataclasses import astuple, fields

    from kagreport.grading import Metrics
    from kagreport.grading._metrics import RetrievalMetrics
    from kagreport.grading._report import SetupReport

    def by_hand(report: StatsReport, setups: list[str], datasets: set[str]) -> list[Any]:
        kept = []
        for setup in report.setups:
            per = {n: m for n, m in setup.per_dataset.items() if n in datasets}
            if setup.setup not in setups or not per:
                continue
            counts = [
                sum(column) for column in zip(*(astuple(m)[:-1] for m in per.values()), strict=True)
            ]
            retrievals = [astuple(m.retrieval) for m in per.values() if m.retrieval]
            retrieval = (
                RetrievalMetrics(*map(sum, zip(*retrievals, strict=True))) if retrievals else None
            )
            kept.append(SetupReport(setup.setup, Metrics(*counts, retrieval), per))
        kept.sort(key=lambda s: (s.overall.accuracy is None, -(s.overall.accuracy or 0), s.setup))
        return kept

    assert [f.name for f in fields(Metrics)][-1] == "retrieval"
    made = simulate_run(tmp_path / "other", questions=20, datasets=4, seed=7)
    other = grade(made.datasets_path, made.results_path)
    for report in (sim, mmlu, other):
        view = StatsView(report)
        names = sorted({n for s in report.setups for n in s.per_dataset})
        for setups in (list(report.setup_names), list(report.setup_names[::2])):
            for chosen in ([names[0]], names[1:], names):
                view.setups.value = tuple(setups)
                view.datasets.value = tuple(chosen)
                # kag's metrics of the selected run, summed by hand from the report's.
                assert list(setup_metrics(view.selection)) == by_hand(report, setups, set(chosen))


def test_stats_view_of_a_run_without_outcomes_puts_a_setup_without_retrieval_at_0(
    sim: StatsReport,
) -> None:
    # Issue #10 item 7, one meaning in every view: a setup that retrieves nothing costs 0 s
    # of retrieval and 0 graph elements and takes part in the Pareto frontier.
    import dataclasses
    import html

    from kagreport.runs import Run

    run = Run.from_stats(sim)
    # A second score of every item (a judge agreeing with kag), ranked instead of kag's metrics.
    judged = dataclasses.replace(run, metrics={**run.metrics, "judge": run.metrics["correct"]})
    view = StatsView(judged, metric="judge")
    assert view.chart is None
    assert list(view.metric.options) == ["correct", "judge"]
    assert view.cost.value == "retrieval_secs"
    message = html.unescape(view.message.value)
    assert "need metric 'correct' (this view ranks judge)" in message
    assert "a setup that retrieves nothing costs 0 on this axis" in message
    assert "not placed on the frontier" not in message
    expected = _sim_by_hand(sim)
    natives = [s for s in sim.setup_names if s.startswith("native")]
    assert natives
    assert all(expected[s][1] == 0.0 for s in natives)
    front = _pareto_by_hand({s: (e[1], e[0]) for s, e in expected.items()})
    assert front & set(natives)  # at 0 s, the best native is not dominated
    assert set(view.frame["setup"]) == set(sim.setup_names)
    for _, row in view.frame.iterrows():
        accuracy, retrieval, _ = expected[row["setup"]]
        assert row["mean"] == pytest.approx(accuracy, abs=1e-12)
        assert row["cost"] == pytest.approx(retrieval, rel=1e-9, abs=0)
        assert row["on_frontier"] == (row["setup"] in front)
    assert list(view.frame["rank"]) == list(range(1, len(expected) + 1))
    assert list(view.frame["mean"]) == sorted(view.frame["mean"], reverse=True)
    # The same frontier as the chart of the kag run draws.
    drawn = {
        r["setup"]: r["frontier"]
        for r in next(iter(StatsView(run).chart.to_dict()["datasets"].values()))
    }
    assert {s for s, on in drawn.items() if on} == front
    one = view.datasets.options[0]
    view.datasets.value = (one,)
    view.setups.value = tuple(sim.setup_names[:2])
    assert set(view.frame["setup"]) == set(sim.setup_names[:2])
    view.cost.value = "generation_secs"
    assert "mean generation_secs" in view.table_html
    assert "costs 0 on this axis" not in view.message.value
    selected = _sim_by_hand(sim, one)
    for _, row in view.frame.iterrows():
        accuracy, _, generation = selected[row["setup"]]
        assert row["mean"] == pytest.approx(accuracy, abs=1e-12)
        assert row["cost"] == pytest.approx(generation, rel=1e-9)
    view.per_dataset.value = True
    assert set(view.frame["dataset"]) == {OVERALL, one}
    # Without any outcome no answer is known to be committed: whether a setup retrieved
    # nothing is unknown (NaN, off the frontier), and the view says so.
    scores = dataclasses.replace(run, outcome=np.full(len(run), -1, dtype=np.int8))
    view = StatsView(scores)
    message = html.unescape(view.message.value)
    assert "need each row's outcome (metric 'correct'), which this run lacks" in message
    unplaced = message.split(" record no retrieval_secs (not placed on the frontier)")[0]
    assert set(natives) <= set(unplaced.rsplit("; ", 1)[-1].split(", "))


def test_stats_view_of_a_run_from_evaluations_shows_kags_metrics_it_has(
    sim: StatsReport,
) -> None:
    import dataclasses

    from kagreport.evaluation import evaluation_from_stats
    from kagreport.runs import Run

    evaluations = [evaluation_from_stats(sim, s, answers=False) for s in sim.setup_names]
    # The kag bridge's items record kag's costs: the view of their run is the report's.
    run = Run.from_evaluations(evaluations, same_items=False)
    view, of_report = StatsView(run), StatsView(sim)
    assert view.metric is None  # every row has an outcome: kag's metrics
    assert view.cost.options == of_report.cost.options
    assert view.frame.equals(of_report.frame)
    for setup, (accuracy, _, _) in _sim_by_hand(sim).items():
        row = view.frame[view.frame["setup"] == setup].iloc[0]
        assert row["accuracy"] == pytest.approx(accuracy, abs=1e-12)
    # Items that record no cost but their latency (another tool's): what the run has.
    bare = [
        dataclasses.replace(
            e,
            items=tuple(
                dataclasses.replace(i, metadata={k: i.metadata[k] for k in ("dataset", "question")})
                for i in e.items
            ),
        )
        for e in evaluations
    ]
    run = Run.from_evaluations(bare, same_items=False)
    view = StatsView(run)
    assert [value for _, value in view.cost.options] == ["generation"]
    assert view.chart is not None
    assert "The run records no " in view.message.value
    assert "no retrieval or context or graph axis" in view.message.value
    columns = ["setup", "rank", "total", "correct", "errors", "accuracy", "accuracy_low"]
    columns += ["avg_generation_secs"]
    assert view.frame[columns].equals(of_report.frame[columns])
    assert view.frame["avg_retrieval_secs"].isna().all()  # unknown, not 0
    with pytest.raises(ValueError, match="no cost column 'retrieval_secs'"):
        StatsView(run, cost="retrieval")


def test_stats_view_of_a_run_from_evaluations_says_what_it_lacks() -> None:
    run, _ = _f1_run()
    view = StatsView(run, metric="token_f1")
    assert list(view.metric.options) == ["exact_match", "token_f1"]
    means = dict(zip(view.frame["setup"], view.frame["mean"], strict=True))
    assert means["cand"] == pytest.approx(sum(c for _, _, c, _ in _ANSWERS.values()) / 4)
    assert means["base"] == pytest.approx(sum(b for _, _, _, b in _ANSWERS.values()) / 4)
    assert view.cost.value is None  # no latency recorded
    assert "The run has no datasets, costs or outcomes." in view.message.value
    assert "static snapshot" in view.to_html()
    view.metric.value = "exact_match"
    assert dict(zip(view.frame["setup"], view.frame["mean"], strict=True)) == {
        "cand": 0.25,
        "base": 0.25,
    }


def test_comparison_view_threshold_moves_the_flips_not_the_test() -> None:
    run, _ = _f1_run()
    view = ComparisonView(run, n_resamples=200)
    view.metric.value = "token_f1"
    before = view.comparison
    assert before is not None
    assert set(view.flips["identifier"]) == {"q2", "q3"}  # threshold 0.5, as in _ANSWERS
    view.threshold = 0.9
    view.refresh()
    assert set(view.flips["identifier"]) == {"q1", "q2"}
    assert "(threshold 0.9)" in view.flips_html
    assert view.comparison is not None
    assert view.comparison.to_dict() == before.to_dict()  # a display filter: same statistics
