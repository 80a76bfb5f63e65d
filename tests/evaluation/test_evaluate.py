"""evaluate_answers: judges over items, failures, errors, metrics and agreement."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import krippendorff
import numpy as np
import pytest

from kagreport.evaluation import AnswerItem, evaluate_answers
from kagreport.evaluation.judges import (
    ExactMatch,
    JudgeFailure,
    Judgement,
    OptionExtraction,
    OptionMatch,
    TokenF1,
    Usage,
)


@dataclass
class Scripted:
    """A judge whose verdicts are given per item; "fail" raises, "boom" raises a bug."""

    name: str
    verdicts: Mapping[str, Any]
    criteria: tuple[str, ...] = ("score",)
    identity: Mapping[str, Any] = field(default_factory=lambda: {"kind": "scripted"})
    delay: float = 0.0
    active: list[int] = field(default_factory=lambda: [0, 0])
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def scales(self) -> dict[str, str]:
        return dict.fromkeys(self.criteria, "interval 0..1")

    def judge(self, item: AnswerItem) -> Judgement:
        with self.lock:
            self.active[0] += 1
            self.active[1] = max(self.active[1], self.active[0])
        try:
            time.sleep(self.delay)
            verdict = self.verdicts[item.identifier]
            if verdict == "fail":
                raise JudgeFailure("unparsable verdict", verdict="??", usage=Usage(responses=1))
            if verdict == "boom":
                raise RuntimeError("a bug in the judge")
            scores = verdict if isinstance(verdict, dict) else {self.criteria[0]: verdict}
            return Judgement(
                scores, verdict=f"v{verdict}", usage=Usage(responses=1, input_tokens=10)
            )
        finally:
            with self.lock:
                self.active[0] -= 1


ITEMS = [
    AnswerItem("q1", "Capital of France?", "Paris", "Paris"),
    AnswerItem("q2", "Capital of Italy?", "Milan", "Rome"),
    AnswerItem("q3", "Capital of Spain?", None, "Madrid", error="timeout"),
    AnswerItem("q4", "Capital of Peru?", "Lima, Peru", "Lima"),
]


def test_metrics_errors_and_names() -> None:
    ev = evaluate_answers(ITEMS, [ExactMatch(), TokenF1()], agreement_resamples=0)
    assert ev.errors == {"system": 1, "exact_match": 0, "token_f1": 0}
    assert ev.metrics["exact_match"] == pytest.approx(1 / 3)
    # token F1: q1 1, q2 0, q4: "lima peru" vs "lima": P 1/2, R 1, F1 2/3.
    assert ev.metrics["token_f1"] == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert ev.coverage == {"exact_match": 3, "token_f1": 3}
    assert "exact_match" not in ev.items[2].scores  # no answer: undefined, not 0
    assert ev.judges["token_f1"] == {"kind": "token_f1", "version": 1}
    assert ev.usage["exact_match"]["responses"] == 0


def test_failing_judgements_are_counted_never_fatal() -> None:
    judge = Scripted("j", {"q1": 1.0, "q2": "fail", "q4": "boom"})
    ev = evaluate_answers(ITEMS, [judge], keep_verdicts=True, agreement_resamples=0)
    assert ev.errors == {"system": 1, "j": 2}
    assert ev.metrics == {"j": 1.0}
    assert ev.coverage == {"j": 1}
    assert ev.items[0].verdicts["j"] == "v1.0"
    assert ev.items[1].verdicts["j"] == {"error": "unparsable verdict", "verdict": "??"}
    assert ev.usage["j"]["responses"] == 2  # the failed attempt's usage is counted too
    assert ev.usage["j"]["input_tokens"] == 10
    assert math.isnan(ev.agreement["score"])  # one judge: alpha undefined


def test_several_criteria_name_metrics_judge_dot_criterion() -> None:
    verdicts = {"q1": {"fluency": 1.0, "accuracy": 0.5}, "q2": {"fluency": 0.0, "accuracy": 0.0},
                "q4": {"fluency": 1.0}}  # fmt: skip
    ev = evaluate_answers(
        ITEMS, [Scripted("j", verdicts, criteria=("fluency", "accuracy"))], agreement_resamples=0
    )
    assert ev.metrics == {"j.fluency": 2 / 3, "j.accuracy": 0.25}
    assert ev.coverage == {"j.fluency": 3, "j.accuracy": 2}


def test_agreement_matches_the_krippendorff_package() -> None:
    a = {"q1": 1.0, "q2": 0.0, "q4": 1.0}
    b = {"q1": 1.0, "q2": 1.0, "q4": 1.0}
    c = {"q1": 0.5, "q2": 0.0, "q4": "fail"}
    ev = evaluate_answers(
        ITEMS, [Scripted("a", a), Scripted("b", b), Scripted("c", c)], agreement_resamples=200
    )
    data = np.array([[1, 0, np.nan, 1], [1, 1, np.nan, 1], [0.5, 0, np.nan, np.nan]])
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert ev.agreement["score"] == pytest.approx(expected, rel=1e-12)
    low, high = ev.agreement_intervals["score"]
    assert low <= high


def test_concurrency_is_bounded() -> None:
    many = [AnswerItem(f"q{i}", "Q", "A", "A") for i in range(24)]
    judge = Scripted("slow", {f"q{i}": 1.0 for i in range(24)}, delay=0.02)
    evaluate_answers(many, [judge], max_concurrency=3, agreement_resamples=0)
    assert 1 < judge.active[1] <= 3


def test_existing_scores_are_kept_and_inputs_validated() -> None:
    ev = evaluate_answers(
        [
            {
                "identifier": "x",
                "question": "Q",
                "answer": "B",
                "reference": "b",
                "scores": {"kag": 1},
            }
        ],
        [OptionMatch()],
        agreement_resamples=0,
    )
    assert ev.items[0].scores == {"kag": 1.0, "option_match": 1.0}
    with pytest.raises(ValueError, match="identifiers must be unique; repeated: 'q1'"):
        evaluate_answers([ITEMS[0], ITEMS[0]], [ExactMatch()])
    with pytest.raises(ValueError, match="judge names must be unique"):
        evaluate_answers(ITEMS, [ExactMatch(), ExactMatch()])
    with pytest.raises(ValueError, match="item 0 has no 'identifier'"):
        evaluate_answers([{"question": "Q"}], [ExactMatch()])
    with pytest.raises(ValueError, match="non-empty string"):
        AnswerItem("", "Q", "A")
    with pytest.raises(ValueError, match="finite"):
        AnswerItem("x", "Q", "A", scores={"s": math.nan})


@dataclass
class Returns:
    name: str
    value: Any
    criteria: tuple[str, ...] = ("score",)
    identity: Mapping[str, Any] = field(default_factory=lambda: {"kind": "returns"})

    def judge(self, item: AnswerItem) -> Judgement:
        return Judgement({"score": self.value})


def test_a_failed_judgement_leaves_no_stale_score() -> None:
    items = [
        AnswerItem("q1", "Q", "Paris", None, scores={"token_f1": 1.0}),  # no reference: fails
        AnswerItem("q2", "Q", "x", "Paris"),
    ]
    ev = evaluate_answers(items, [TokenF1()], agreement_resamples=0)
    assert ev.errors["token_f1"] == 1
    assert "token_f1" not in ev.items[0].scores
    assert ev.metrics["token_f1"] == 0.0
    assert ev.coverage["token_f1"] == 1


@pytest.mark.parametrize("value", ["0.7", 10**400, [1], True])
def test_bad_scores_from_a_custom_judge_are_failed_judgements(value: Any) -> None:
    ev = evaluate_answers([AnswerItem("q", "Q", "A")], [Returns("j", value)], agreement_resamples=0)
    assert ev.errors["j"] == 1
    assert ev.items[0].scores == {}


def test_inputs_are_validated() -> None:
    with pytest.raises(ValueError, match=r"both produce the metric 'a\.b\.x'"):
        evaluate_answers(
            [AnswerItem("q", "Q", "A")],
            [Returns("a.b", 1.0, ("x", "y")), Returns("a", 1.0, ("b.x", "z"))],
        )
    with pytest.raises(ValueError, match="agreement_level"):
        evaluate_answers([AnswerItem("q", "Q", "A")], [TokenF1()], agreement_level="bogus")
    with pytest.raises(ValueError, match="seed"):
        evaluate_answers([AnswerItem("q", "Q", "A")], [TokenF1()], seed=-1)
    with pytest.raises(TypeError, match="is not a judge"):
        evaluate_answers([AnswerItem("q", "Q", "A")], ["token_f1"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="non-empty string"):
        TokenF1(name="")
    with pytest.raises(ValueError, match="letters"):
        OptionExtraction(letters="")
    with pytest.raises(ValueError, match="answer must be a string"):
        AnswerItem("q", "Q", 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be a finite number"):
        AnswerItem.from_dict({"identifier": "q", "scores": {"s": "0.5"}})
    import numpy as np

    assert AnswerItem("q", "Q", "A", scores={"s": np.float32(0.5), "t": np.int64(1)}).scores == {
        "s": 0.5,
        "t": 1.0,
    }


def test_means_of_huge_scores_do_not_overflow() -> None:
    items = [AnswerItem(f"q{i}", "Q", "A", scores={"s": 1e308}) for i in range(2)]
    assert evaluate_answers(items, [], agreement_resamples=0).metrics["s"] == 1e308
