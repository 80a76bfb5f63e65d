"""Flipped items as data (:func:`kagreport.runs.flipped_items`) on a hand-built run whose
flips are worked out here, and the same items as ``compare_setups``' flips."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kagreport import KagreportError
from kagreport.runs import FlippedItem, Run, compare_setups, flipped_items

nan = math.nan

# Items (dataset/question), rows of A then B (B's rows in another order; B lacks "y/4").
#            A: correct  score  |  B: correct  score
#   x/10        1        0.9    |     0         0.9
#   x/2         0        0.1    |     1         0.8
#   x/3         1        1.0    |     1         0.7
#   y/1         nan      nan    |     0         0.2
#   y/4         1        0.5    |     (no row)
# Flips on correct (both defined, different): x/10 (A right), x/2 (B right), in label order
# "x/10" < "x/2". On score: x/2, x/3 (x/10 ties at 0.9; y/1 undefined for A).
ITEMS = [("x", "10"), ("x", "2"), ("x", "3"), ("y", "1"), ("y", "4")]
A = {"correct": [1, 0, 1, nan, 1], "score": [0.9, 0.1, 1.0, nan, 0.5]}
B_ORDER = [3, 2, 1, 0]
B = {"correct": [0, 1, 1, 0], "score": [0.9, 0.8, 0.7, 0.2]}  # for items x/10, x/2, x/3, y/1


def _run() -> Run:
    datasets, questions = ("x", "y"), ("10", "2", "3", "1", "4")
    rows = [(0, k) for k in range(5)] + [(1, k) for k in B_ORDER]
    correct = A["correct"] + [B["correct"][k] for k in B_ORDER]
    score = A["score"] + [B["score"][k] for k in B_ORDER]
    outcome = [0 if c == 1 else (-1 if math.isnan(c) else 1) for c in correct]
    return Run(
        kind="answers",
        systems=("A", "B"),
        dataset_names=datasets,
        question_names=questions,
        system=np.array([s for s, _ in rows], dtype=np.int32),
        dataset=np.array([datasets.index(ITEMS[k][0]) for _, k in rows], dtype=np.int32),
        question=np.array([questions.index(ITEMS[k][1]) for _, k in rows], dtype=np.int32),
        outcome=np.array(outcome, dtype=np.int8),
        metrics={"correct": np.array(correct, float), "score": np.array(score, float)},
        costs={"generation_secs": np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, nan, 8.0, 9.0])},
        responses=tuple(f"{'AB'[s]} says {ITEMS[k][1]}" for s, k in rows),
        references=tuple(f"gold {ITEMS[k][1]}" for _, k in rows),
        question_texts=tuple(f"What is {ITEMS[k][1]}?" for _, k in rows),
        options=tuple(((("a", "one"), ("b", "two")) if k == 1 else None) for _, k in rows),
        explanations=tuple(f"why {'AB'[s]} {ITEMS[k][1]}" for s, k in rows),
        errors=tuple(None for _ in rows),
    )


def test_flips_on_correct_in_label_order_with_both_sides() -> None:
    flips = flipped_items(_run(), "A", "B")
    assert [f.item for f in flips] == ["x/10", "x/2"]
    first, second = flips
    assert isinstance(first, FlippedItem)
    assert (first.dataset, first.question) == ("x", "10")
    assert first.question_text == "What is 10?"
    assert first.reference == "gold 10"
    assert first.options is None
    assert second.options == (("a", "one"), ("b", "two"))
    assert (first.candidate.system, first.candidate.outcome, first.candidate.score) == (
        "A",
        "correct",
        1.0,
    )
    assert (first.baseline.system, first.baseline.outcome, first.baseline.score) == (
        "B",
        "incorrect",
        0.0,
    )
    assert first.candidate.response == "A says 10"
    assert first.baseline.response == "B says 10"
    assert first.baseline.explanation == "why B 10"
    assert first.candidate.error is None
    # Costs of each side's own row; NaN is None. B's rows hold y/1, x/3, x/2, x/10 (costs
    # 6, NaN, 8, 9).
    assert first.candidate.costs == {"generation_secs": 1.0}
    assert first.baseline.costs == {"generation_secs": 9.0}
    assert second.baseline.costs == {"generation_secs": 8.0}


def test_flips_on_another_metric_and_a_limit() -> None:
    run = _run()
    flips = flipped_items(run, "A", "B", "score")
    assert [(f.item, f.candidate.score, f.baseline.score) for f in flips] == [
        ("x/2", 0.1, 0.8),
        ("x/3", 1.0, 0.7),
    ]
    assert flips[1].baseline.costs == {"generation_secs": None}
    assert [f.item for f in flipped_items(run, "B", "A", limit=1)] == ["x/10"]
    assert flipped_items(run, "A", "B", limit=0) == ()


def test_flips_are_compare_setups_flips() -> None:
    run = _run()
    (comparison,) = compare_setups(run, baseline="B", metrics=("correct",), n_resamples=100)
    assert comparison.candidate == "A"
    flips = flipped_items(run, comparison.candidate, comparison.baseline)
    assert [(f.item, f.candidate.outcome, f.baseline.outcome) for f in flips] == list(
        comparison.flips
    )
    assert comparison.flips == (("x/10", "correct", "incorrect"), ("x/2", "incorrect", "correct"))


def test_flips_name_what_is_wrong() -> None:
    run = _run()
    with pytest.raises(KagreportError, match="no metric 'bleu'; metrics: correct, score"):
        flipped_items(run, "A", "B", "bleu")
    with pytest.raises(KagreportError, match="no system 'C'"):
        flipped_items(run, "A", "C")
    with pytest.raises(KagreportError, match="`limit` must be 0 or more"):
        flipped_items(run, "A", "B", limit=-1)
