"""Ranked-retrieval metrics, worked by hand."""

from __future__ import annotations

import math

import pytest

from kagreport.evaluation import RetrievalItem, evaluate_retrieval
from kagreport.evaluation._retrieval import retrieval_scores


def test_hand_worked_item() -> None:
    # relevant {b, d}; retrieved a b c d: hits at ranks 2 and 4.
    s = retrieval_scores(["a", "b", "c", "d"], ["b", "d"], ks=(1, 2, 4, 10))
    assert s["mrr"] == 0.5
    assert (s["recall@1"], s["recall@2"], s["recall@4"]) == (0.0, 0.5, 1.0)
    assert (s["precision@1"], s["precision@2"], s["precision@4"], s["precision@10"]) == (
        0.0, 0.5, 0.5, 0.2
    )  # fmt: skip
    assert (s["hit@1"], s["hit@2"], s["complete@2"], s["complete@4"]) == (0.0, 1.0, 0.0, 1.0)
    # DCG@4 = 1/log2(3) + 1/log2(5); IDCG@4 = 1 + 1/log2(3).
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert s["ndcg@4"] == pytest.approx(expected, rel=1e-15)
    assert s["ndcg@1"] == 0.0


def test_duplicates_count_once_and_no_relevant_is_undefined() -> None:
    s = retrieval_scores(["a", "a", "b"], ["b"], ks=(2,))
    assert s["recall@2"] == 1.0  # the duplicate a does not push b out of the top 2
    assert s["mrr"] == 0.5
    assert retrieval_scores(["a"], [], ks=(1,)) == {}
    assert retrieval_scores([], ["a"], ks=(1,))["mrr"] == 0.0


def test_bad_k() -> None:
    with pytest.raises(ValueError, match="positive integer"):
        retrieval_scores(["a"], ["a"], ks=(0,))


def test_evaluate_retrieval_means_and_errors() -> None:
    ev = evaluate_retrieval(
        [
            RetrievalItem("1", "q", ("a", "b"), ("a",)),
            RetrievalItem("2", "q", ("c",), ("a",)),
            RetrievalItem("3", "q", (), ("a",), error="timeout"),
            {"identifier": "4", "question": "q", "retrieved": ["x"], "relevant": []},
        ],
        ks=(1,),
    )
    assert ev.metrics["recall@1"] == 0.5
    assert ev.coverage["recall@1"] == 2
    assert ev.errors == {"system": 1}
    assert ev.settings == {"ks": [1]}
    assert math.isnan(ev.per_item("mrr")[2])
