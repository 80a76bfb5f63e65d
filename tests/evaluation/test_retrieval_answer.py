"""The 2 x 2 of retrieval hit/miss by answer right/wrong: counts by hand, intervals by SciPy."""

from __future__ import annotations

import math

import pytest

from kagreport.evaluation import (
    AnswerItem,
    RetrievalAnswerTable,
    RetrievalItem,
    evaluate_answers,
    evaluate_retrieval,
    retrieval_answer_table,
)
from kagreport.evaluation._retrieval_answer import retrieval_answer_from_reports
from kagreport.evaluation.judges import ExactMatch

# Ten items, written out so each cell can be counted by eye:
#   item:   0  1  2  3  4  5  6  7  8  9
#   hit:    1  1  1  1  1  0  0  0  -  1     (- undefined: no gold evidence)
#   right:  1  1  1  0  0  1  0  0  1  -     (- undefined: no reference)
# Both defined: items 0-7 (n = 8); hit-right {0,1,2} = 3, hit-wrong {3,4} = 2,
# miss-right {5} = 1, miss-wrong {6,7} = 2; left out: items 8 and 9 = 2.
HITS = [1, 1, 1, 1, 1, 0, 0, 0, None, 1]
RIGHT = [1, 1, 1, 0, 0, 1, 0, 0, 1, math.nan]


def test_counts_by_hand() -> None:
    table = retrieval_answer_table(HITS, RIGHT)
    assert isinstance(table, RetrievalAnswerTable)
    assert table.counts == ((3, 2), (1, 2))
    assert table.n == 8
    assert table.left_out == 2
    assert [c.trials for c in table.cells] == [8, 8, 8, 8]
    assert table.cell("hit", "wrong").proportion == pytest.approx(2 / 8)
    assert table.cell("hit", "wrong").blame == "generator"
    assert table.cell("miss", "wrong").blame == "retriever"
    assert table.cell("hit", "right").blame is None
    # Accuracy given a hit: 3 of 5; given a miss: 1 of 3.
    assert (table.right_given_hit.count, table.right_given_hit.trials) == (3, 5)
    assert (table.right_given_miss.count, table.right_given_miss.trials) == (1, 3)
    assert table.method == "wilson"


def test_wilson_against_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    table = retrieval_answer_table(HITS, RIGHT)
    for cell in (*table.cells, table.right_given_hit, table.right_given_miss):
        expected = stats.binomtest(cell.count, cell.trials).proportion_ci(0.95, method="wilson")
        assert cell.low == pytest.approx(expected.low, abs=1e-12)
        assert cell.high == pytest.approx(expected.high, abs=1e-12)


def test_wilson_published_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857-872, table I, example (i): 81/263,
    # Wilson score interval 0.2553 to 0.3662.
    hits = [1] * 263
    right = [1] * 81 + [0] * 182
    cell = retrieval_answer_table(hits, right).right_given_hit
    assert (cell.count, cell.trials) == (81, 263)
    assert round(cell.low, 4) == 0.2553
    assert round(cell.high, 4) == 0.3662


def test_empty_and_errors() -> None:
    table = retrieval_answer_table([], [])
    assert table.n == 0
    assert all(math.isnan(c.proportion) and math.isnan(c.low) for c in table.cells)
    with pytest.raises(ValueError, match="0 or 1"):
        retrieval_answer_table([0.5], [1])
    with pytest.raises(ValueError, match="retrieval value"):
        retrieval_answer_table([1, 0], [1])


def test_from_reports_pairs_by_identifier() -> None:
    retrieval = evaluate_retrieval(
        [
            RetrievalItem(identifier="a", question="q", retrieved=("x",), relevant=("x",)),
            RetrievalItem(identifier="b", question="q", retrieved=("y",), relevant=("x",)),
            RetrievalItem(identifier="c", question="q", retrieved=("x",), relevant=("x",)),
            RetrievalItem(
                identifier="only-retrieval", question="q", retrieved=("x",), relevant=("x",)
            ),
        ],
        ks=(1,),
    )
    answers = evaluate_answers(
        [
            AnswerItem(identifier="c", question="q", answer="no", reference="yes"),
            AnswerItem(identifier="b", question="q", answer="yes", reference="yes"),
            AnswerItem(identifier="a", question="q", answer="yes", reference="yes"),
        ],
        [ExactMatch()],
    )
    metric = next(iter(answers.metrics))
    table = retrieval_answer_from_reports(
        retrieval, answers, retrieval_metric="hit@1", answer_metric=metric
    )
    # a: hit, right; b: miss, right; c: hit, wrong; "only-retrieval" has no answer.
    assert table.counts == ((1, 1), (1, 0))
    assert table.left_out == 1
    assert table.retrieval_metric == "hit@1"


def test_simulated_rag_pairs_retrieval_and_answers() -> None:
    from kagreport.examples import simulated_rag
    from kagreport.examples._simulated_rag import SIMULATED_RAG_ATTRIBUTION

    first, again = simulated_rag(questions=30), simulated_rag(questions=30)
    assert list(first) == ["SIMULATED RAG small", "SIMULATED RAG large"]
    for setup, (retrieval, answers) in first.items():
        assert retrieval.dumps("json") == again[setup][0].dumps("json")  # deterministic
        assert answers.metadata["setup"] == retrieval.metadata["setup"] == setup
        assert "SIMULATED" in SIMULATED_RAG_ATTRIBUTION
        assert retrieval.metadata["attribution"] == SIMULATED_RAG_ATTRIBUTION
        # By hand: a hit has both gold passages among the 5 retrieved; right = reference.
        hits = [set(i.relevant) <= set(i.retrieved) for i in retrieval.items]
        right = [i.answer == i.reference for i in answers.items]
        table = retrieval_answer_from_reports(
            retrieval, answers, retrieval_metric="complete@5", answer_metric="exact_match"
        )
        assert table.counts == (
            (
                sum(h and r for h, r in zip(hits, right, strict=True)),
                sum(h and not r for h, r in zip(hits, right, strict=True)),
            ),
            (
                sum(r and not h for h, r in zip(hits, right, strict=True)),
                sum(not h and not r for h, r in zip(hits, right, strict=True)),
            ),
        )
    with pytest.raises(ValueError, match="questions"):
        simulated_rag(questions=-1)
