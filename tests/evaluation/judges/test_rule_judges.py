"""Rule judges (ANSWER_EVALUATION_SPEC.md judges; PITFALLS.md B1 second half, B4)."""

from __future__ import annotations

import pytest

from kagreport.evaluation import AnswerItem
from kagreport.evaluation.judges import (
    Contains,
    ExactMatch,
    JudgeFailure,
    OptionExtraction,
    OptionMatch,
    RegexMatch,
    TokenF1,
    extract_option,
)
from kagreport.evaluation.judges._rules import normalize_answer

B4 = [
    ("Answer: A looks tempting, but no.\nAnswer: C", "C", "C"),
    ("Answer:\n\nAnswer: C", "C", "C"),
    ("Answer: Answer: C", "C", "C"),
    ("ANSWER: b", "B", "B"),
    ("ANSWER: **A**", "A", "A"),
    ("ANSWER: $A$", "A", "A"),
    ("**Answer:** (D)", "D", "D"),
    ("Codon ATG (M) starts it.\nAnswer: $B", "B", "B"),
    ("\\boxed{C}", "C", "C"),
    ("Answer: $5", "A", None),
]


@pytest.mark.parametrize(("response", "key", "expected"), B4)
def test_b4_extraction(response: str, key: str, expected: str | None) -> None:
    assert extract_option(response) == expected


def test_b4_judge_mean_and_verdicts() -> None:
    judge = OptionExtraction()
    judgements = [
        judge.judge(AnswerItem(f"q{i}", "Q", response, key))
        for i, (response, key, _) in enumerate(B4)
    ]
    scores = [j.scores["score"] for j in judgements]
    assert scores == [1.0] * 9 + [0.0]
    assert sum(scores) / len(scores) == 0.9
    assert [j.verdict for j in judgements] == [e or "no option found" for _, _, e in B4]


def test_b1_option_extraction_second_half() -> None:
    # q1-q6 give B; q8 gives no option. Documented decisions: full-width letters fold
    # to ASCII (q7 gives B); the Kelvin sign is not a K (q9 gives none).
    responses = {"q1": "B", "q2": " b\n", "q3": "\u00a0B\u2003", "q4": "B.", "q5": "(B)",
                 "q6": "Answer: B", "q7": "\uff22", "q8": "", "q9": "\u212a"}  # fmt: skip
    got = {q: extract_option(r, "ABCDJK") for q, r in responses.items()}
    assert got == {"q1": "B", "q2": "B", "q3": "B", "q4": "B", "q5": "B", "q6": "B",
                   "q7": "B", "q8": None, "q9": None}  # fmt: skip
    assert extract_option("答案：Ｂ") == "B"


def test_option_extraction_uses_item_options() -> None:
    judge = OptionExtraction()
    item = AnswerItem("q", "Q", "Answer: K", "k", metadata={"options": {"j": "x", "k": "y"}})
    assert judge.judge(item).scores["score"] == 1.0
    assert judge.judge(AnswerItem("q", "Q", "Answer: K", "k")).scores["score"] == 0.0


@pytest.mark.parametrize(
    ("answer", "reference", "score"),
    [("B", "b", 1.0), (" b\n", "B", 1.0), ("B.", "b", 0.0), ("Answer: b", "b", 0.0),
     ("\uff22", "B", 0.0), ("\u212a", "k", 0.0), ("\u001fB", "B", 0.0)],
)  # fmt: skip
def test_option_match_is_kags_rule(answer: str, reference: str, score: float) -> None:
    assert OptionMatch().judge(AnswerItem("q", "Q", answer, reference)).scores == {"score": score}


def test_squad_normalisation_and_scores() -> None:
    assert normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_answer("an apple, a pear") == "apple pear"
    exact, f1 = ExactMatch(), TokenF1()
    item = AnswerItem("q", "Q", "The Eiffel Tower in Paris", "Eiffel Tower")
    assert exact.judge(item).scores["score"] == 0.0
    # answer tokens: eiffel tower in paris (4); reference: eiffel tower (2); overlap 2.
    # P = 2/4, R = 2/2, F1 = 2 * 0.5 * 1 / 1.5 = 2/3.
    assert f1.judge(item).scores["score"] == pytest.approx(2 / 3, rel=1e-15)
    assert (
        exact.judge(AnswerItem("q", "Q", "the eiffel tower.", "Eiffel Tower")).scores["score"]
        == 1.0
    )
    # Repeated tokens count with multiplicity: "a a b" vs "a b b": overlap {a:1, b:1} = 2.
    assert f1.judge(AnswerItem("q", "Q", "x x y", "x y y")).scores["score"] == pytest.approx(2 / 3)
    assert f1.judge(AnswerItem("q", "Q", "the", "a")).scores["score"] == 1.0  # both empty
    assert f1.judge(AnswerItem("q", "Q", "the", "paris")).scores["score"] == 0.0


def test_regex_and_contains() -> None:
    regex = RegexMatch(pattern=r"\b19\d\d\b", name="year")
    assert regex.judge(AnswerItem("q", "Q", "In 1969.", None)).verdict == "1969"
    assert regex.judge(AnswerItem("q", "Q", "In 2001.", None)).scores["score"] == 0.0
    assert regex.identity["pattern"] == r"\b19\d\d\b"
    with pytest.raises(ValueError, match="invalid regular expression"):
        RegexMatch(pattern="(")
    contains = Contains()
    assert (
        contains.judge(AnswerItem("q", "Q", "It is Paris, France.", "paris")).scores["score"] == 1.0
    )
    assert Contains(text="rome").judge(AnswerItem("q", "Q", "Paris", None)).scores["score"] == 0.0


def test_judges_need_a_reference() -> None:
    for judge in (OptionMatch(), ExactMatch(), TokenF1(), Contains(), OptionExtraction()):
        with pytest.raises(JudgeFailure, match="needs a reference"):
            judge.judge(AnswerItem("q", "Q", "x", None))
