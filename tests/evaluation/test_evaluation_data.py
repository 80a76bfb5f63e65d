"""Real data through the evaluation layer: LLMBar verdicts, fast-graphrag retrievals, kag runs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy.stats import binomtest

from kagreport import grade
from kagreport.evaluation import AnswerEvaluation, evaluate_answers, evaluation_from_stats
from kagreport.evaluation._kag import answer_items_from_run
from kagreport.evaluation.judges import OptionExtraction
from kagreport.examples import (
    fast_graphrag_2wiki,
    llmbar_natural,
    llmbar_published_statistics,
    mmlu_pro_philosophy,
)
from kagreport.kag import simulate_run


@pytest.fixture(scope="module")
def llmbar() -> AnswerEvaluation:
    return llmbar_natural(agreement_resamples=200)


def test_llmbar_reproduces_the_published_accuracy_counts(llmbar: AnswerEvaluation) -> None:
    published = llmbar_published_statistics()
    assert len(published) == 65
    assert len(llmbar.judges) == 65
    assert llmbar.n_items == 100
    for judge, stats in published.items():
        for criterion, key in (("swap_false", "correct_False"), ("swap_true", "correct_True")):
            count = int(stats[key].split("/")[0])  # e.g. "81 / 100 = 81.0%"
            metric = f"{judge}.{criterion}"
            assert llmbar.metrics[metric] * llmbar.coverage[metric] == pytest.approx(count), metric
            assert llmbar.coverage[metric] == 100


def test_llmbar_agreement_is_computed(llmbar: AnswerEvaluation) -> None:
    assert set(llmbar.agreement) == {"swap_false", "swap_true", "score_1", "score_2"}
    for criterion, alpha in llmbar.agreement.items():
        assert -1.0 <= alpha <= 1.0, criterion
        low, high = llmbar.agreement_intervals[criterion]
        assert low <= alpha <= high, criterion


@pytest.mark.slow
def test_llmbar_two_judges_compare_like_mcnemar(llmbar: AnswerEvaluation) -> None:
    # Two judge configurations as two "systems": the paired test on 0/1 correctness equals
    # the exact binomial test on the discordant items when it enumerates.
    gpt4 = llmbar.per_item("GPT-4/CoT.swap_false")
    chatgpt = llmbar.per_item("ChatGPT/CoT.swap_false")
    wins = int(((gpt4 == 1) & (chatgpt == 0)).sum())
    losses = int(((gpt4 == 0) & (chatgpt == 1)).sum())
    assert wins + losses > 0
    from kagreport.stats import sign_flip_test

    result = sign_flip_test(gpt4 - chatgpt, n_resamples=2 ** (wins + losses))
    assert result.exact
    assert result.p_value == pytest.approx(binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-9)


def test_fast_graphrag_reproduces_the_perfect_retrieval_rates() -> None:
    systems = fast_graphrag_2wiki()
    published = {"vdb": 0.490, "lightrag": 0.471, "nano": 0.745, "graph": 0.961}
    for system, rate in published.items():
        assert systems[system].n_items == 51
        assert round(systems[system].metrics["complete@8"], 3) == rate, system
    # Exact counts behind the rounded rates: 25, 24, 38 and 49 of 51.
    assert systems["graph"].metrics["complete@8"] == 49 / 51


def test_fast_graphrag_systems_compare_pairwise() -> None:
    systems = fast_graphrag_2wiki()
    # The benchmark's headline metric is complete@8: named as the one under test (the
    # retrieval default family is mrr alone).
    comparison = systems["graph"].compare(
        systems["vdb"], n_resamples=20000, seed=1, metrics=["complete@8"]
    )
    row = comparison.metrics["complete@8"]
    assert row.n_pairs == 51
    assert row.mean_difference == pytest.approx(49 / 51 - 25 / 51)
    assert row.p_value < 0.001
    assert "complete@8" in comparison.significant()
    again = systems["nano"].compare(systems["lightrag"], n_resamples=5000)
    assert set(again.metrics) == set(systems["nano"].metrics)


def test_two_setups_of_a_kag_run_compare() -> None:
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    pro = evaluation_from_stats(report, "gemini-1-5-pro-002")
    flash = evaluation_from_stats(report, "gemini-1-5-flash-002")
    assert pro.metrics["correct"] == report["gemini-1-5-pro-002"].overall.accuracy
    assert pro.items[0].identifier.startswith("mmlu-pro-philosophy/")
    assert pro.items[0].reference in "abcdefghij"
    comparison = pro.compare(flash, n_resamples=10000)
    row = comparison.metrics["correct"]
    assert row.n_pairs == 499
    assert row.mean_difference == pytest.approx((361 - 302) / 499)
    # Independent check: exact binomial (McNemar) test on the discordant questions.
    by_id = {i.identifier: i.scores["correct"] for i in flash.items}
    diffs = [i.scores["correct"] - by_id[i.identifier] for i in pro.items]
    wins, losses = diffs.count(1.0), diffs.count(-1.0)
    exact = binomtest(wins, wins + losses, 0.5).pvalue
    se = math.sqrt(exact * (1 - exact) / 10000)
    assert abs(row.p_value - exact) <= 4 * se + 1 / 10001
    with pytest.raises(KeyError, match="no setup 'nope'"):
        evaluation_from_stats(report, "nope")


def test_setups_with_different_items_cannot_be_compared() -> None:
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    deepseek = evaluation_from_stats(report, "deepseek-coder-v2", answers=False)  # 491 items
    pro = evaluation_from_stats(report, "gemini-1-5-pro-002", answers=False)
    with pytest.raises(ValueError, match=r"different items .*; only in the candidate: 'mmlu-pro"):
        pro.compare(deepseek)
    with pytest.raises(TypeError, match="AnswerEvaluation"):
        pro.compare(fast_graphrag_2wiki()["vdb"])


def test_free_form_answers_of_a_kag_run_can_be_judged(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=5, datasets=1, free_form_questions=4)
    items = answer_items_from_run(run.datasets_path, run.results_path, "kag-large")
    assert {i.identifier.split("/")[0] for i in items} == {"sim-open"}
    answered = [i for i in items if i.answer is not None]
    assert answered
    assert all(i.reference is None for i in items)
    assert all("context" in i.metadata for i in answered)  # the retrieved context, for prompts
    mcq = answer_items_from_run(run.datasets_path, run.results_path, "kag-large", questions="mcq")
    ev = evaluate_answers(mcq, [OptionExtraction()], agreement_resamples=0)
    assert ev.errors["system"] == sum(i.answer is None for i in mcq)
    assert 0.0 <= ev.metrics["option_extraction"] <= 1.0
