"""Agreement compares judges only on the same criterion and scale (issue 26, item 2).

Exact match (0/1), token F1 (0..1) and a 1-5 rating all score a criterion named ``score`` by
default; they answer different questions, so they are not coders of one alpha. Expected alphas
come from the ``krippendorff`` package on the scores worked out by hand below.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import krippendorff
import numpy as np
import pytest

from kagreport.evaluation import AnswerEvaluation, AnswerItem, evaluate_answers
from kagreport.evaluation._text import render_evaluation, render_evaluation_html
from kagreport.evaluation.judges import (
    Contains,
    ExactMatch,
    Judgement,
    LLMJudge,
    OptionExtraction,
    OptionMatch,
    TokenF1,
)
from kagreport.frames import agreement_frame

ITEMS = [
    AnswerItem("q1", "Capital of France?", "Paris", "Paris"),
    AnswerItem("q2", "Capital of Italy?", "Milan", "Rome"),
    AnswerItem("q3", "Capital of Spain?", None, "Madrid", error="timeout"),
    AnswerItem("q4", "Capital of Peru?", "Lima, Peru", "Lima"),
]


@dataclass
class Rated:
    """A judge replaying given scores on one criterion; ``scale`` None declares none."""

    name: str
    scores: Mapping[str, float]
    scale: str | None
    criteria: tuple[str, ...] = ("score",)
    identity: Mapping[str, Any] = field(default_factory=lambda: {"kind": "rated"})
    blocking: bool = False

    @property
    def scales(self) -> dict[str, str]:
        return {} if self.scale is None else dict.fromkeys(self.criteria, self.scale)

    def judge(self, item: AnswerItem) -> Judgement:
        return Judgement({self.criteria[0]: self.scores[item.identifier]})


# Faithfulness on 1-5, stored as (x - 1) / 4: q1 5, q2 2, q4 4.
FAITHFULNESS = Rated("faithfulness", {"q1": 1.0, "q2": 0.25, "q4": 0.75}, "ordinal 1-5")


@pytest.fixture(scope="module")
def mixed() -> AnswerEvaluation:
    judges = [ExactMatch(), OptionMatch(), Contains(), TokenF1(), FAITHFULNESS]
    return evaluate_answers(ITEMS, judges, agreement_resamples=200)


def test_rule_and_llm_judges_declare_their_scales() -> None:
    for judge in (ExactMatch(), OptionMatch(), Contains(), OptionExtraction()):
        assert judge.scales == {"score": "nominal 0/1"}
    assert TokenF1().scales == {"score": "interval 0..1"}

    def llm(**settings: Any) -> dict[str, str]:
        judge = LLMJudge("j", model="m", base_url="http://127.0.0.1:9/v1", prompt="p", **settings)
        return judge.scales

    assert llm() == {"score": "nominal 0/1"}
    assert llm(scale="1-5") == {"score": "ordinal 1-5"}
    assert llm(scale="1-10", criteria=["faithfulness"]) == {"faithfulness": "ordinal 1-10"}
    assert llm(scale="json", criteria=["a", "b"], score_range=(1, 7)) == {
        "a": "interval 1..7",
        "b": "interval 1..7",
    }


def test_alpha_compares_only_judges_on_the_same_scale(mixed: AnswerEvaluation) -> None:
    assert list(mixed.agreement) == [
        "score (nominal 0/1)",
        "score (interval 0..1)",
        "score (ordinal 1-5)",
    ]
    # exact_match, option_match, contains on q1, q2, q4 (q3 has no answer): the 0/1 judges.
    binary = np.array([[1, 0, np.nan, 0], [1, 0, np.nan, 0], [1, 0, np.nan, 1]])
    expected = krippendorff.alpha(reliability_data=binary, level_of_measurement="interval")
    assert mixed.agreement["score (nominal 0/1)"] == pytest.approx(expected, rel=1e-12)
    assert mixed.agreement_judges["score (nominal 0/1)"] == (
        "exact_match",
        "option_match",
        "contains",
    )
    assert mixed.agreement_note("score (nominal 0/1)") == ""
    for key, judge in (
        ("score (interval 0..1)", "token_f1"),
        ("score (ordinal 1-5)", "faithfulness"),
    ):
        assert math.isnan(mixed.agreement[key])
        assert mixed.agreement_judges[key] == (judge,)
        note = mixed.agreement_note(key)
        assert note.startswith(f"alpha undefined: one judge on {key[7:-1]} ({judge})")
        assert "only judges that declare the same criterion on the same scale" in note
    assert "nominal 0/1 (exact_match, option_match, contains)" in mixed.agreement_note(
        "score (ordinal 1-5)"
    )


def test_a_criterion_on_one_scale_keeps_its_name() -> None:
    ev = evaluate_answers(ITEMS, [ExactMatch(), Contains()], agreement_resamples=0)
    assert list(ev.agreement) == ["score"]
    binary = np.array([[1, 0, np.nan, 0], [1, 0, np.nan, 1]])
    expected = krippendorff.alpha(reliability_data=binary, level_of_measurement="interval")
    assert ev.agreement["score"] == pytest.approx(expected, rel=1e-12)


def test_judges_that_declare_no_scale_are_not_compared() -> None:
    a = Rated("a", {"q1": 1.0, "q2": 0.0, "q4": 1.0}, None)
    b = Rated("b", {"q1": 5.0, "q2": 1.0, "q4": 3.0}, None)
    ev = evaluate_answers(ITEMS, [a, b], agreement_resamples=0)
    assert math.isnan(ev.agreement["score"])
    assert ev.agreement_note("score").startswith("alpha undefined: no scale declared (a, b)")
    # With a declared judge beside them, the declared one is apart too.
    ev = evaluate_answers(ITEMS, [a, b, FAITHFULNESS], agreement_resamples=0)
    assert list(ev.agreement) == ["score (no scale declared)", "score (ordinal 1-5)"]
    assert all(math.isnan(alpha) for alpha in ev.agreement.values())


def test_every_view_says_why_alpha_is_absent(mixed: AnswerEvaluation) -> None:
    frame = agreement_frame(mixed)
    assert frame["criterion"].tolist() == list(mixed.agreement)
    assert frame["judges"].tolist() == [3, 1, 1]
    assert frame["note"].tolist() == [mixed.agreement_note(k) for k in mixed.agreement]
    assert frame["note"].iloc[0] == ""
    assert "one judge on interval 0..1 (token_f1)" in frame["note"].iloc[1]
    text = render_evaluation(mixed)
    html = render_evaluation_html(mixed)
    for key in list(mixed.agreement)[1:]:
        assert f"{key}: {mixed.agreement_note(key)}" in text
        assert mixed.agreement_note(key).replace("'", "&#x27;") in html
    again = AnswerEvaluation.from_dict(json.loads(mixed.dumps("json")))
    assert agreement_frame(again).equals(frame)


def test_pairwise_ratings_follow_the_judges_alpha_compared(mixed: AnswerEvaluation) -> None:
    from kagreport.charts._agreement import criterion_ratings

    ratings = criterion_ratings(mixed, "score (nominal 0/1)")
    assert list(ratings) == ["exact_match", "option_match", "contains"]
    np.testing.assert_array_equal(ratings["contains"], [1, 0, np.nan, 1])
