"""The evaluation pages, the systems page and retrieval against answer on the site.

Expected numbers come from published sources or the raw files, never from the code under
test: LLMBar's per-judge accuracies from the authors' published_statistics.json, the
fast-graphrag "perfect retrieval" rates from its README (and counted again from the raw
files), the paired test of complete@8 from scipy.stats.binomtest on the discordant
questions, Holm's step-down worked here, and the retrieval-against-answer counts from the
simulated items by hand.
"""

from __future__ import annotations

import json
import re
from html import unescape
from html.parser import HTMLParser
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from kagreport.examples import llmbar_published_statistics, simulated_rag
from kagreport.site import EvaluationSource, SiteConfig, build_site

PUBLISHED_COMPLETE = {"vdb": "49.0%", "lightrag": "47.1%", "nano": "74.5%", "graph": "96.1%"}
FAST_GRAPHRAG_FILES = {
    "vdb": "vdb/2wikimultihopqa_51.json",
    "lightrag": "lightrag/2wikimultihopqa_51_local.json",
    "nano": "nano/2wikimultihopqa_51_local.json",
    "graph": "graph/2wikimultihopqa_51.json",
}


class _Tables(HTMLParser):
    """Tables by id: each row's cells as (attributes, text); details as (attributes, summary)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, dict[str, Any]] = {}
        self.details: list[tuple[dict[str, str | None], str]] = []
        self.links: list[str] = []
        self._table: dict[str, Any] | None = None
        self._cell: list[Any] | None = None
        self._summary: list[str] | None = None
        self._detail: dict[str, str | None] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        if tag == "details":
            self._detail = a
        if tag == "summary":
            self._summary = []
        if tag == "table":
            self._depth += 1
            if self._depth == 1:
                self._table = {"attrs": a, "head": [], "rows": []}
                self.tables[str(a.get("id"))] = self._table
        if self._table is None or self._depth != 1:
            return
        if tag == "tr":
            self._table["rows"].append([])
        if tag in ("td", "th"):
            self._cell = [a, ""]
            self._table["rows"][-1].append(self._cell)

    def handle_endtag(self, tag: str) -> None:
        if tag == "summary" and self._summary is not None and self._detail is not None:
            self.details.append((self._detail, "".join(self._summary).strip()))
            self._summary = None
        if tag == "table":
            self._depth -= 1
            if self._depth == 0:
                self._table = None
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._summary is not None:
            self._summary.append(data)
        if self._cell is not None:
            self._cell[1] += data


def _page(path: Path) -> tuple[str, _Tables]:
    html = path.read_text(encoding="utf-8")
    parser = _Tables()
    parser.feed(html)
    return html, parser


def _body(table: dict[str, Any]) -> list[list[Any]]:
    """The rows after the header row."""
    return [row for row in table["rows"][1:] if row]


def _value(cell: list[Any]) -> float | None:
    raw = cell[0].get("data-value")
    return None if raw in (None, "null") else float(raw)


@pytest.fixture(scope="module")
def site(examples_site: Path) -> Path:
    """The default site (``examples_site``), with its evaluations (LLMBar, fast-graphrag,
    the SIMULATED RAG pair): read, never changed."""
    return examples_site


# ---------------------------------------------------------------------- LLMBar


def test_llmbar_headline_and_chart_come_first(site: Path) -> None:
    html, _ = _page(site / "evaluations/llmbar-natural.html")
    order = [html.index(f'<section id="{s}"') for s in ("headline", "charts", "judges")]
    order += [html.index(f'<section id="{s}"') for s in ("metrics", "usage", "errors")]
    assert order == sorted(order)
    summary = html[html.index('<dl class="summary"') : html.index("</dl>")]
    shown = {
        unescape(label): unescape(value)
        for label, value in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", summary)
    }
    assert shown["Items"] == "100"
    assert shown["Judges"] == "65"
    # The best published accuracy: 97 / 100 (GPT-4/Metrics_Reference, swapped order).
    published = llmbar_published_statistics()
    best = max(int(s["correct_True"].split(" /")[0]) for s in published.values())
    assert f": {best}.0% [" in shown["Best metric"]
    assert "vega-spec" in html[order[1] : order[2]]  # the agreement chart, before the tables


def test_llmbar_zero_tables_are_collapsed(site: Path) -> None:
    _, tables = _page(site / "evaluations/llmbar-natural.html")
    summaries = {str(a.get("class")): (a, s) for a, s in tables.details}
    usage_attrs, usage = summaries["usage"]
    errors_attrs, errors = summaries["errors"]
    assert usage.startswith("usage: none recorded")
    assert errors == "errors: none"
    assert "open" not in usage_attrs
    assert "open" not in errors_attrs
    # The collapsed tables are still there, for whoever opens them.
    assert len(_body(tables.tables["usage-table"])) == 65
    assert len(_body(tables.tables["errors-table"])) == 66  # "system" and 65 judges


def test_llmbar_metrics_are_sorted_and_proportions_in_percent(site: Path) -> None:
    _, tables = _page(site / "evaluations/llmbar-natural.html")
    rows = _body(tables.tables["metrics-table"])
    # 65 judges x 2 winner criteria + 7 rating judges x 2 rating criteria.
    assert len(rows) == 65 * 2 + 7 * 2
    values = [_value(r[1]) for r in rows]
    defined = [v for v in values if v is not None]
    assert defined == sorted(defined, reverse=True)
    assert values[: len(defined)] == defined  # undefined last
    for name_cell, mean_cell, *_ in rows:
        if name_cell[1].endswith((".swap_false", ".swap_true")):
            assert re.fullmatch(r"\d+\.\d% \[\d+\.\d%, \d+\.\d%\]", mean_cell[1]), mean_cell
        else:  # ratings mapped to [0, 1]: a score, not a proportion
            assert "%" not in mean_cell[1]
    assert "metrics" in {str(a.get("class")) for a, _ in tables.details}


def test_llmbar_judges_are_sortable_with_the_published_accuracies(site: Path) -> None:
    _, tables = _page(site / "evaluations/llmbar-natural.html")
    table = tables.tables["judges-table"]
    assert table["attrs"]["class"] == "data sortable"
    header = [c[1].strip() for c in table["rows"][0]]
    assert header[:3] == ["Judge", "swap_false", "swap_true"]
    rows = _body(table)
    assert len(rows) == 65
    published = llmbar_published_statistics()
    for row in rows:
        judge = row[0][1]
        stats = published[judge]
        correct_false = int(stats["correct_False"].split(" /")[0])
        correct_true = int(stats["correct_True"].split(" /")[0])
        assert _value(row[1]) == pytest.approx(correct_false / 100)
        assert _value(row[2]) == pytest.approx(correct_true / 100)
        assert row[1][1].startswith(f"{correct_false}.0%")
    first = [_value(r[1]) for r in rows]
    assert first == sorted(first, reverse=True)  # type: ignore[type-var]


# ---------------------------------------------------------------------- systems


def _raw(system: str) -> list[dict[str, Any]]:
    root = Path(str(files("kagreport.examples"))) / "fast-graphrag-2wiki" / "results"
    rows: list[dict[str, Any]] = json.loads((root / FAST_GRAPHRAG_FILES[system]).read_text())
    return rows


def _holm(p: list[float]) -> list[float]:
    """Holm (1979) step-down, worked directly: sorted ascending, p_(i) * (m - i + 1),
    running maximum, capped at 1."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted = [0.0] * len(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, p[i] * (len(p) - rank)))
        adjusted[i] = running
    return adjusted


def test_systems_page_is_linked_and_shows_the_published_rates(site: Path) -> None:
    page = site / "systems/fast-graphrag-systems.html"
    assert page.is_file()
    _, index = _page(site / "index.html")
    assert "systems/fast-graphrag-systems.html" in index.links
    # Its numbers as JSON, linked from the index's data list (every link resolves).
    assert "data/systems/fast-graphrag-systems.json" in index.links
    for link in index.links:
        if link.startswith("data/"):
            assert (site / link).is_file(), link
    data = json.loads((site / "data/systems/fast-graphrag-systems.json").read_text("utf-8"))
    assert data["family"] == {"adjust": "holm", "size": 12, "metrics": ["complete@8", "mrr"]}
    assert len(data["paired_tests"]) == 12
    for system in PUBLISHED_COMPLETE:
        _, evaluation = _page(site / f"evaluations/fast-graphrag-{system}.html")
        assert "../systems/fast-graphrag-systems.html" in evaluation.links
    _, tables = _page(page)
    table = tables.tables["systems-table"]
    assert table["attrs"]["class"] == "data sortable"
    header = [c[1].strip() for c in table["rows"][0]]
    column = header.index("complete@8")
    rows = {r[0][1]: r for r in _body(table)}
    for system, published in PUBLISHED_COMPLETE.items():
        raw = _raw(system)
        complete = sum(set(r["ground_truth"]) <= set(r["evidence"]) for r in raw)
        cell = rows[f"fast-graphrag {system}"][column]
        assert cell[1].startswith(published)
        assert _value(cell) == pytest.approx(complete / len(raw))
        assert re.search(r"\[\d+\.\d%, \d+\.\d%\]", cell[1])  # its Wilson interval


def test_systems_page_paired_tests_holm_across_the_family(site: Path) -> None:
    stats = pytest.importorskip("scipy.stats")
    html, tables = _page(site / "systems/fast-graphrag-systems.html")
    assert "sign-flip" in html
    assert "Holm" in html
    assert "family of all 12 tests" in html
    rows = _body(tables.tables["paired-tests-table"])
    assert len(rows) == 6 * 2  # 6 pairs of 4 systems x (complete@8, mrr)
    p = [_value(r[4]) for r in rows]
    holm = [_value(r[5]) for r in rows]
    assert holm == pytest.approx(_holm(p))  # type: ignore[arg-type]
    # complete@8 is 0/1 per question: the exact sign-flip p is the two-sided binomial
    # test on the discordant questions.
    for row in rows:
        if row[1][1] != "complete@8":
            continue
        first, second = (s.removeprefix("fast-graphrag ") for s in row[0][1].split(" − "))
        a = {r["question"]: set(r["ground_truth"]) <= set(r["evidence"]) for r in _raw(first)}
        b = {r["question"]: set(r["ground_truth"]) <= set(r["evidence"]) for r in _raw(second)}
        only_a = sum(a[q] and not b[q] for q in a)
        only_b = sum(b[q] and not a[q] for q in a)
        expected = stats.binomtest(only_a, only_a + only_b, 0.5).pvalue
        assert _value(row[4]) == pytest.approx(expected, rel=1e-9)
        assert row[7][1].startswith("exact")  # row[6]: the verdict (issue #28)
        assert (row[6][1] in ("better", "worse")) == (_value(row[5]) < 0.05)


# ---------------------------------------------------------------------- retrieval/answer


def test_retrieval_against_answer_per_setup(site: Path) -> None:
    html, tables = _page(site / "systems/simulated-rag-systems.html")
    assert "SIMULATED" in html
    assert "Retrieval against answer" in html
    for index, (setup, (retrieval, answers)) in enumerate(simulated_rag().items(), start=1):
        # By hand: hit = both gold passages among the 5 retrieved; right = the answer is
        # the reference.
        right = {i.identifier: i.answer == i.reference for i in answers.items}
        hits = {i.identifier: set(i.relevant) <= set(i.retrieved[:5]) for i in retrieval.items}
        cells = {
            ("hit", True): 0,
            ("hit", False): 0,
            ("miss", True): 0,
            ("miss", False): 0,
        }
        for key, hit in hits.items():
            cells["hit" if hit else "miss", right[key]] += 1
        table = tables.tables[f"retrieval-answer-{index}"]
        shown = {r[0][1].removeprefix("Retrieval "): r for r in _body(table)}
        for (retrieval_cell, is_right), count in cells.items():
            cell = shown[retrieval_cell][1 if is_right else 2]
            assert _value(cell) == count, (setup, retrieval_cell, is_right)
            assert cell[1].startswith(f"{count} · ")
        assert "generator's error" in shown["hit"][2][1]
        assert "retriever's error" in shown["miss"][2][1]
    # Each setup's retrieval page shows its own table; the chart is on the systems page.
    page, _ = _page(site / "evaluations/simulated-rag-small-retrieval.html")
    assert 'id="retrieval-answer-table"' in page
    assert "hit, wrong (generator)" in html  # the chart's data


def test_a_hand_made_pair_is_counted_on_its_page(tmp_path: Path) -> None:
    from kagreport.evaluation import AnswerItem, RetrievalItem, evaluate_answers, evaluate_retrieval
    from kagreport.evaluation.judges import ExactMatch

    # q1 hit right, q2 hit wrong, q3 miss wrong, q4 miss right, q5 miss wrong.
    gold = {"q1": "d1", "q2": "d2", "q3": "d3", "q4": "d4", "q5": "d5"}
    found = {"q1": "d1", "q2": "d2", "q3": "x", "q4": "x", "q5": "x"}
    right = {"q1": True, "q2": False, "q3": False, "q4": True, "q5": False}
    meta = {"setup": "mine"}
    retrieval = evaluate_retrieval(
        [RetrievalItem(q, q, (found[q],), (gold[q],)) for q in gold],
        ks=(1,),
        metadata={"name": "mine", **meta},
    )
    answers = evaluate_answers(
        [AnswerItem(q, q, "yes" if right[q] else "no", "yes") for q in gold],
        [ExactMatch()],
        metadata={"name": "mine answers", **meta},
    )
    config = SiteConfig(
        title="t",
        evaluations=(
            EvaluationSource("mine-retrieval", report=retrieval),
            EvaluationSource("mine-answers", report=answers),
        ),
    )
    out = tmp_path / "site"
    build_site(config, out, execute_notebooks=False)
    for name in ("mine-retrieval", "mine-answers"):
        _, tables = _page(out / f"evaluations/{name}.html")
        rows = {r[0][1]: r for r in _body(tables.tables["retrieval-answer-table"])}
        assert [_value(c) for c in rows["Retrieval hit"][1:]] == [1, 1]
        assert [_value(c) for c in rows["Retrieval miss"][1:]] == [1, 2]
    assert not (out / "systems").exists()  # one retrieval system: nothing side by side


def test_reports_that_cannot_be_compared_warn_and_build(tmp_path: Path) -> None:
    from kagreport.evaluation import RetrievalItem, evaluate_retrieval

    # No relevant id anywhere: every metric undefined, nothing to compare.
    empty = [RetrievalItem("q1", "q1", ("a",), ()), RetrievalItem("q2", "q2", ("b",), ())]
    config = SiteConfig(
        title="t",
        evaluations=tuple(
            EvaluationSource(name, report=evaluate_retrieval(empty, metadata={"name": name}))
            for name in ("one", "two")
        ),
    )
    warnings: list[str] = []
    out = tmp_path / "site"
    build_site(config, out, execute_notebooks=False, warn=warnings.append)
    assert (out / "evaluations/one.html").is_file()
    assert not (out / "systems").exists()
    assert any(w.startswith("no systems page for one, two") for w in warnings), warnings


def test_an_evaluation_with_human_labels_shows_the_correction(tmp_path: Path) -> None:
    from kagreport.evaluation import AnswerItem, evaluate_answers
    from kagreport.evaluation.judges import ExactMatch

    # The exact_match case of tests/evaluation/test_labels.py, whose numbers come from ppi_py
    # and scipy.stats (rounded here by hand).
    answers = ["Paris", "the city of Paris", "Rome", "paris.", "Paris or Rome"]
    items = [AnswerItem(f"q{i:02d}", "Capital?", answers[i % 5], "Paris") for i in range(40)]
    labels = [1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0]
    report = evaluate_answers(
        items,
        [ExactMatch()],
        labels={f"q{i:02d}": {"exact_match": v} for i, v in enumerate(labels)},
        metadata={"name": "labelled"},
    )
    config = SiteConfig(title="t", evaluations=(EvaluationSource("labelled", report=report),))
    out = tmp_path / "site"
    build_site(config, out, execute_notebooks=False)
    html, tables = _page(out / "evaluations/labelled.html")
    rows = _body(tables.tables["label-corrections-table"])
    assert [cell[1] for cell in rows[0]] == [
        "exact_match",
        "13 of 40",
        "40.0% [24.1%, 55.9%]",
        "53.8% [22.5%, 85.2%]",
        "54.5% [29.0%, 80.0%]",
        "+14.5 pp",
    ]
    assert (
        "the judge&#39;s bias moved the mean of exact_match by +14.5 pp, from 40.0% (judge "
        "alone) to 54.5% [29.0%, 80.0%]"
    ) in html
    # Without labels, no such section (the other evaluation pages).
    plain = evaluate_answers(items, [ExactMatch()], metadata={"name": "plain"})
    config = SiteConfig(title="t", evaluations=(EvaluationSource("plain", report=plain),))
    build_site(config, tmp_path / "plain", execute_notebooks=False)
    assert "label-corrections" not in (tmp_path / "plain/evaluations/plain.html").read_text()
