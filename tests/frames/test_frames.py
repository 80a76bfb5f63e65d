"""kagreport.frames: tidy frames, Wilson intervals, the Pareto frontier, LaTeX (PITFALLS B2, B16)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from conftest import Tree, brute_frontier, mcq
from kagreport import StatsReport, grade
from kagreport.charts._accuracy import accuracy_cost_data
from kagreport.evaluation import evaluation_from_stats
from kagreport.examples import mmlu_pro_philosophy
from kagreport.frames import (
    comparison_frame,
    evaluation_frame,
    items_frame,
    metrics_frame,
    stats_frame,
    to_latex,
)
from kagreport.frames._latex import latex_escape
from kagreport.frames._tables import OVERALL, cost_values, no_retrieval
from kagreport.kag import simulate_run
from kagreport.stats import pareto_front, wilson_interval


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (81, 100), (361, 499), (1, 3), (0, 1)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    low, high = wilson_interval(k, n)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert float(low) == pytest.approx(ci.low, abs=1e-12)
    assert float(high) == pytest.approx(ci.high, abs=1e-12)


def test_wilson_textbook_values_and_edge_cases() -> None:
    # 0 of 10: [0, 0.2775] (Wilson 1927 upper bound, also Newcombe 1998 table I).
    low, high = wilson_interval([0, 0], [10, 0])
    assert low[0] == 0.0
    assert high[0] == pytest.approx(0.2775, abs=5e-5)
    assert math.isnan(low[1]) and math.isnan(high[1])  # noqa: PT018 - both bounds undefined
    with pytest.raises(ValueError, match="between 0 and trials"):
        wilson_interval(3, 2)


def test_pareto_front_equals_brute_force_on_random_points() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(0, 9))
        # Few distinct values so that ties in cost, in accuracy and in both are common.
        cost = rng.integers(0, 4, n).astype(float)
        acc = rng.integers(0, 4, n) / 4
        cost[rng.random(n) < 0.1] = np.nan
        points = {str(i): (cost[i], acc[i]) for i in range(n)}
        assert dict(zip(points, pareto_front(cost, acc).tolist(), strict=True)) == (
            brute_frontier(points)
        )


def _frontier_run(tree: Tree) -> StatsReport:
    """Six setups on ten questions, native (no retriever) and KAG, plus one that only errs.

    setup      correct  retrieval per item   graph elements per item
    native-a      8/10  none -> 0 s          none -> 0
    native-b      5/10  none -> 0 s          none -> 0      dominated by native-a
    kag-cheap     7/10  1 s                  3              dominated by native-a (issue #10)
    kag-mid       9/10  2 s                  6              on: more accurate than native-a
    kag-twin      9/10  2 s                  6              identical to kag-mid: on together
    kag-slow      9/10  3 s                  9              same accuracy, costlier: dominated
    kag-best     10/10  3 s                  9              most accurate: on
    broken        0/10  errors only          unknown        never on (no committed answer)
    """
    plan = {
        "native-a": (8, None),
        "native-b": (5, None),
        "kag-cheap": (7, 1),
        "kag-mid": (9, 2),
        "kag-twin": (9, 2),
        "kag-slow": (9, 3),
        "kag-best": (10, 3),
    }
    for i in range(10):
        question = f"q{i}"
        tree.question("ds", question, mcq("A"))
        for setup, (correct, secs) in plan.items():
            answer = "A" if i < correct else "B"
            retrieval = None if secs is None else (secs, 0, secs, secs, secs)
            tree.ok("ds", question, setup, answer, retrieval=retrieval)
        tree.error("ds", question, "broken")
    return grade(tree.datasets_path, tree.results)


FRONTIER = {"native-a", "kag-mid", "kag-twin", "kag-best"}


def test_frontier_of_a_hand_made_run_counts_native_setups_at_zero(tree: Tree) -> None:
    report = _frontier_run(tree)
    frame = stats_frame(report, per_dataset=False).set_index("setup")
    # kag's numbers stay kag's: a native setup has no mean retrieval time (null).
    assert math.isnan(frame.loc["native-a", "avg_retrieval_secs"])
    for cost, scale in (("retrieval", 1.0), ("graph", 3.0)):
        values = dict(zip(frame.index, cost_values(frame, cost).tolist(), strict=True))
        assert values["native-a"] == values["native-b"] == 0.0
        assert values["kag-cheap"] == 1.0 * scale  # 1 s; 1 + 1 + 1 elements
        assert values["kag-best"] == 3.0 * scale
        assert math.isnan(values["broken"])
        points = {s: (values[s], frame.loc[s, "accuracy"]) for s in frame.index}
        brute = brute_frontier(points)
        assert {s for s, on in brute.items() if on} == FRONTIER  # the table above
        chart = accuracy_cost_data(report, cost=cost).set_index("setup")  # type: ignore[arg-type]
        assert chart["frontier"].to_dict() == brute
        assert chart.loc["native-a", "cost"] == 0.0
        assert chart.loc["native-b", "status"] == "dominated"
        assert chart.loc["kag-cheap", "status"] == "dominated"  # native-a beats it
        assert not chart.loc["broken", "cost_defined"]
        assert chart.loc["broken", "note"] == "no parsed answer"
    assert {s for s, on in frame["pareto"].items() if on} == FRONTIER
    assert list(no_retrieval(frame)) == [s.startswith("native") for s in frame.index]
    # Costs that are not retrieval stay what they are: every setup spent 1 s generating.
    assert set(cost_values(frame, "generation")[frame.index != "broken"]) == {1.0}
    with pytest.raises(ValueError, match="`cost` must be one of"):
        cost_values(frame, "joules")


def test_pareto_front_on_hand_made_points() -> None:
    #            a     b     c     d     e     f (duplicate of b)  g (nan)
    cost = [1.0, 2.0, 3.0, 2.5, 0.5, 2.0, np.nan]
    acc = [0.5, 0.7, 0.9, 0.6, 0.2, 0.7, 0.99]
    # e (cheapest), a, b and f (identical), c (best) are on the front; d is beaten by b.
    assert list(pareto_front(cost, acc)) == [True, True, True, False, True, True, False]
    assert list(pareto_front([1.0, 1.0], [0.3, 0.5])) == [False, True]
    assert list(pareto_front([], [])) == []


def test_stats_frame_numbers_equal_the_report(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=30, datasets=2)
    report = grade(run.datasets_path, run.results_path)
    frame = stats_frame(report)
    overall = frame[frame["dataset"] == OVERALL].set_index("setup")
    for setup in report.setups:
        m = setup.overall
        row = overall.loc[setup.setup]
        assert row["accuracy"] == m.accuracy
        assert row["total"] == m.total
        low, high = wilson_interval(m.correct, m.total)
        assert (row["accuracy_low"], row["accuracy_high"]) == (float(low), float(high))
        if m.retrieval is None:
            assert math.isnan(row["avg_retrieval_secs"])
        else:
            assert row["avg_retrieval_secs"] == m.retrieval.avg_time_secs
    per = frame[frame["dataset"] != OVERALL]
    assert len(per) == sum(len(s.per_dataset) for s in report.setups)
    assert overall["rank"].tolist() == list(range(1, len(report.setups) + 1))
    # The frontier, with native setups at 0 s (they retrieve nothing), by brute force.
    cost = overall["avg_retrieval_secs"].where(overall["retrieval_samples"] > 0, 0.0)
    points = dict(zip(overall.index, zip(cost, overall["accuracy"], strict=True), strict=True))
    assert overall["pareto"].to_dict() == brute_frontier(points)
    assert overall["pareto"].any()


def test_b2_null_precision_stays_missing(tree: Tree) -> None:
    for q in ("q1", "q2"):
        tree.question("ds", q, mcq("A"))
        tree.error("ds", q, "allerr")
        tree.ok("ds", q, "ok", "A")
    frame = stats_frame(grade(tree.datasets_path, tree.results), per_dataset=False)
    row = frame.set_index("setup").loc["allerr"]
    assert math.isnan(row["precision"])
    assert math.isnan(row["precision_low"])
    assert row["accuracy"] == 0.0
    # Accuracy, precision (undefined: no interval beneath) and coverage; Wilson bounds beneath.
    latex = to_latex(grade(tree.datasets_path, tree.results), wide=True)
    at = latex.index("allerr & 0.0 & --- & 0.0 & ")
    beneath = latex[at:].splitlines()[1]
    assert beneath.startswith(r" & {\footnotesize [0.0, 65.8]} &  & {\footnotesize [0.0, 65.8]}")


def test_items_and_evaluation_frames() -> None:
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    items = items_frame(report)
    assert len(items) == sum(s.overall.total for s in report.setups)
    assert list(items["outcome"].cat.categories) == ["correct", "incorrect", "error"]
    assert items["generation_secs"].eq(0.0).all()  # MMLU-Pro publishes no timings
    pro = evaluation_from_stats(report, "gemini-1-5-pro-002", answers=False)
    frame = evaluation_frame(pro)
    assert frame["correct"].mean() == pro.metrics["correct"]
    assert metrics_frame(pro).to_dict("records") == [
        {"metric": "correct", "mean": pro.metrics["correct"], "items": 499}
    ]
    flash = evaluation_from_stats(report, "gemini-1-5-flash-002", answers=False)
    table = comparison_frame(pro.compare(flash, n_resamples=2000))
    assert table.loc[0, "metric"] == "correct"
    assert bool(table.loc[0, "significant"]) == (table.loc[0, "p_value_holm"] < 0.05)


def test_b16_latex_escaping() -> None:
    frame = pd.DataFrame(
        {"acc_%": ["85.0% ± 2.1", "R&D"], "recall@5": [0.5, 0.25], "judge_a": ["x", "y"]},
        index=pd.Index(["qwen35-9b-kag", "base"], name="setup_name"),
    )
    latex = to_latex(frame, caption="Scores_%", label="tab:b16")
    for expected in (r"setup\_name", r"acc\_\%", r"85.0\% $\pm$ 2.1", r"R\&D", r"judge\_a",
                     r"\toprule", r"\bottomrule", r"Scores\_\%"):  # fmt: skip
        assert expected in latex, expected
    assert latex_escape("a_b & 50% {x}") == r"a\_b \& 50\% \{x\}"


def test_comparison_latex_marks_significance() -> None:
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    pro = evaluation_from_stats(report, "gemini-1-5-pro-002", answers=False)
    llama = evaluation_from_stats(report, "llama-2-7b-hf", answers=False)
    comparison = pro.compare(llama, n_resamples=2000)
    latex = to_latex(comparison)
    holm = comparison.metrics["correct"].p_value_holm
    # One p style in every view (issue #12 item 6): 4 decimals, x.xxe-yy below 1e-4.
    latex_holm = f"{holm:.2e}" if holm < 1e-4 else f"{holm:.4f}"
    assert holm < 0.05
    assert latex_holm + r"$^{\dagger}$" in latex
    assert r"$^{\dagger}$ Holm-adjusted $p < 0.05$" in latex  # the mark is explained
    # Two header lines (units beneath), the metric's line and its interval's line.
    assert latex.count(r"\\") == 4


def test_latex_comparison_says_how_p_was_computed_and_over_which_family() -> None:
    # Issue #10 items 1 and 4: every p-value shown names its method and Holm's family.
    from kagreport.evaluation._compare import compare_scores

    rng = np.random.default_rng(1)
    correct = rng.integers(0, 2, (2, 300)).astype(float)  # 0/1: a lattice, exact at any n
    scores = rng.random((2, 300))  # continuous: no lattice, Monte Carlo
    comparison = compare_scores(
        {"correct": correct[0], "f1": scores[0]},
        {"correct": correct[1], "f1": scores[1]},
        metrics=["correct"],
    )
    latex = to_latex(comparison, caption="c")
    note = latex[latex.index("\\footnotesize") :]
    assert "exact (lattice)" in note
    assert "Monte Carlo, 10000 resamples" in note
    assert "Holm over correct (1 metric)" in note


def test_agreement_frame_counts_single_score_judges() -> None:
    # Rule judges score one criterion each ("score"), so their metrics are their names alone:
    # the frame counted 0 judges for their alpha. The report now records whom alpha compared:
    # the two 0/1 judges, and token F1 (0..1) apart (issue 26, item 2).
    from kagreport.evaluation import AnswerEvaluation, AnswerItem, evaluate_answers
    from kagreport.evaluation.judges import Contains, ExactMatch, TokenF1
    from kagreport.frames import agreement_frame

    items = [AnswerItem(f"q{i}", "?", a, "Paris") for i, a in enumerate(["Paris", "Lyon", "x"])]
    evaluation = evaluate_answers(items, [ExactMatch(), TokenF1(), Contains("Paris")])
    frame = agreement_frame(evaluation)
    assert frame["judges"].tolist() == [2, 1]
    again = AnswerEvaluation.from_dict(json.loads(evaluation.dumps("json")))
    assert again.agreement_judges == evaluation.agreement_judges
    assert agreement_frame(again)["judges"].tolist() == [2, 1]
