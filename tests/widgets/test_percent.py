"""Percent everywhere a proportion is shown: widgets, text reports and LaTeX (issue #14 item 4).

The numbers are worked by hand: a setup right on 13 of 21 questions has accuracy
13/21 = 0.619047... = 61.9%, one right on 8 of 21 has 8/21 = 38.1%; their difference is
5/21 = 0.238095... = +23.8 percentage points. Wilson bounds come from SciPy's binomtest,
not from kagreport.
"""

from __future__ import annotations

import re

import pytest
from scipy.stats import binomtest

from conftest import Tree, mcq
from kagreport import StatsReport, _format, grade
from kagreport.evaluation import AnswerItem, evaluate_answers
from kagreport.evaluation._compare import compare_scores
from kagreport.evaluation._text import render_comparison, render_evaluation
from kagreport.evaluation.judges import ExactMatch, TokenF1
from kagreport.frames import to_latex
from kagreport.runs import Run
from kagreport.widgets import ComparisonView, StatsView
from kagreport.widgets._html import fmt_percent, fmt_percent_interval, fmt_points

MINUS = "\u2212"


def _wilson(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


@pytest.fixture
def report(tree: Tree) -> StatsReport:
    """Setup ``strong`` right on questions 0-12 (13 of 21), ``weak`` on 0-7 (8 of 21)."""
    for i in range(21):
        q = f"q{i:02d}"
        tree.question("ds", q, mcq("A"))
        tree.ok("ds", q, "strong", "A" if i < 13 else "B")
        tree.ok("ds", q, "weak", "A" if i < 8 else "C")
    return grade(tree.datasets_path, tree.results)


def _cells(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", html)


def test_the_formatters() -> None:
    assert _format.percent(13 / 21) == fmt_percent(13 / 21) == "61.9%"
    low, high = _wilson(13, 21)
    assert fmt_percent_interval(13 / 21, low, high) == (
        f"61.9% [{100 * low:.1f}%, {100 * high:.1f}%]"
    )
    assert fmt_percent_interval(13 / 21, None, high) == "61.9%"  # no bound, no interval
    assert fmt_points(-0.05) == f"{MINUS}5.0 pp"  # a real minus sign, not a hyphen
    assert fmt_points(5 / 21) == "+23.8 pp"
    assert fmt_points(-0.0004) == "0.0 pp"  # rounds to zero: no sign
    assert _format.points_interval(-0.05, -0.091, -0.009) == (
        f"{MINUS}5.0 pp [{MINUS}9.1, {MINUS}0.9]"
    )
    assert fmt_percent(None) == fmt_points(float("nan")) == _format.MISSING


def test_stats_view_shows_rates_in_percent_with_wilson_bounds(report: StatsReport) -> None:
    view = StatsView(report)
    low, high = _wilson(13, 21)
    strong = f"61.9% [{100 * low:.1f}%, {100 * high:.1f}%]"
    cells = _cells(view.table_html)
    assert strong in cells  # accuracy
    low, high = _wilson(21, 21)
    assert cells.count(f"100.0% [{100 * low:.1f}%, {100 * high:.1f}%]") == 2  # coverage 21/21
    low, high = _wilson(8, 21)
    assert f"38.1% [{100 * low:.1f}%, {100 * high:.1f}%]" in cells
    # Numbers are right-aligned in tabular figures; names are not.
    at = view.table_html.index(strong)
    td = view.table_html[view.table_html.rindex("<td", 0, at) : at]
    assert "text-align:right" in td
    assert "tabular-nums" in td
    name = view.table_html[: view.table_html.index(">strong<")]
    assert "text-align:right" not in name[name.rindex("<td") :]


def test_comparison_view_shows_means_in_percent_and_the_difference_in_points(
    report: StatsReport,
) -> None:
    view = ComparisonView(report, n_resamples=500)
    view.candidate.value, view.baseline.value = "strong", "weak"
    cells = _cells(view.table_html)
    assert cells[2:4] == ["61.9%", "38.1%"]
    # The difference and its interval in points, one string as in every view.
    # 5 discordant questions, all for strong: p = 2 / 2**5 = 0.0625, so the Holm-adjusted
    # interval reaches below 0 (the 95% bootstrap one did not, beside "not significant").
    assert re.fullmatch(rf"\+23\.8 pp \[{MINUS}?\d+\.\d, \d+\.\d\]", cells[4])
    view.candidate.value, view.baseline.value = "weak", "strong"
    cells = _cells(view.table_html)
    assert cells[2:4] == ["38.1%", "61.9%"]
    assert cells[4].startswith(f"{MINUS}23.8 pp [{MINUS}")


def _scores_run() -> Run:
    references = ["Paris", "Lyon", "Nice", "Lille"]
    said = {"a": ["Paris", "Lyon", "Nice", "x"], "b": ["Paris", "Lyon x", "no", "y"]}
    evaluations = [
        evaluate_answers(
            [
                AnswerItem(f"q{i}", "?", s, r)
                for i, (s, r) in enumerate(zip(answers, references, strict=True))
            ],
            [ExactMatch(), TokenF1()],
        )
        for answers in said.values()
    ]
    return Run.from_evaluations(evaluations, labels=list(said))


def test_a_leaderboard_of_a_proportion_is_in_percent_and_of_a_score_is_not() -> None:
    run = _scores_run()
    view = StatsView(run, metric="exact_match")
    low, high = _wilson(3, 4)  # a: exact on 3 of 4
    assert f"75.0% [{100 * low:.1f}%, {100 * high:.1f}%]" in _cells(view.table_html)
    view.metric.value = "token_f1"
    # b: token F1 1, 2/3 ("Lyon x" against "Lyon": precision 1/2, recall 1: F1 2/3), 0, 0:
    # a score with 3 decimals.
    assert "0.417" in _cells(view.table_html)  # (1 + 2/3) / 4


def test_text_reports_and_latex_show_percent() -> None:
    references = ["Paris", "Lyon", "Nice", "Lille"]
    evaluations = [
        evaluate_answers(
            [
                AnswerItem(f"q{i}", "?", s, r)
                for i, (s, r) in enumerate(zip(said, references, strict=True))
            ],
            [ExactMatch(), TokenF1()],
        )
        for said in (["Paris", "Lyon", "Nice", "Lille x"], ["Paris", "no", "no", "y"])
    ]
    text = render_evaluation(evaluations[0])
    # "Lille x" against "Lille": token precision 1/2, recall 1, F1 2/3; not an exact match.
    assert re.search(r"exact_match\s+75\.0%\s+4", text)  # 3 of 4
    assert re.search(r"token_f1\s+0\.917\s+4", text)  # (3 + 2/3) / 4: a score, not a rate
    # A comparison keeps no items: its metric's name says whether it is a proportion.
    compared = render_comparison(
        compare_scores({"correct": [1, 1, 1, 0]}, {"correct": [1, 0, 0, 0]}, n_resamples=200)
    )
    assert re.search(r"correct\s+4\s+75\.0%\s+25\.0%\s+\+50\.0 pp", compared)  # 3/4 - 1/4
    assert "0.7500" not in compared
    latex = to_latex(evaluations[0])
    assert r"exact\_match & 75.0\% & 4 \\" in latex
    assert r"token\_f1 & 0.917 & 4 \\" in latex


def test_latex_stats_table_is_in_percent(report: StatsReport) -> None:
    latex = to_latex(report)
    low, high = _wilson(13, 21)
    assert r"strong & 61.9 & 100.0 & 21 &" in latex
    assert f"[{100 * low:.1f}, {100 * high:.1f}]" in latex
    assert r"Acc. & Cov." in latex
    assert r"(\%) & (\%)" in latex
