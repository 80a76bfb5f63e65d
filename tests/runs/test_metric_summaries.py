"""Per-system metric summaries and retrieval-against-answer tables of a run.

Expected numbers: the fast-graphrag README's published "perfect retrieval" rates (the
share of questions with every gold title among the 8 retrieved), counted again here from
the raw files; Wilson bounds from scipy.stats.binomtest; MRR from the raw files by hand.
"""

from __future__ import annotations

import json
import math
from importlib.resources import files
from pathlib import Path

import pytest

from kagreport.evaluation import AnswerItem, evaluate_answers
from kagreport.evaluation.judges import ExactMatch
from kagreport.examples import fast_graphrag_2wiki
from kagreport.runs import Run, metric_summaries
from kagreport.runs._summaries import retrieval_answer_tables

PUBLISHED_COMPLETE = {"vdb": 0.490, "lightrag": 0.471, "nano": 0.745, "graph": 0.961}
FILES = {
    "vdb": "vdb/2wikimultihopqa_51.json",
    "lightrag": "lightrag/2wikimultihopqa_51_local.json",
    "nano": "nano/2wikimultihopqa_51_local.json",
    "graph": "graph/2wikimultihopqa_51.json",
}


def _raw(system: str) -> list[dict[str, object]]:
    root = Path(str(files("kagreport.examples"))) / "fast-graphrag-2wiki" / "results"
    rows: list[dict[str, object]] = json.loads((root / FILES[system]).read_text("utf-8"))
    return rows


@pytest.fixture(scope="module")
def run() -> Run:
    evaluations = fast_graphrag_2wiki()
    return Run.from_evaluations(list(evaluations.values()), labels=list(evaluations))


def test_proportions_have_wilson_intervals(run: Run) -> None:
    stats = pytest.importorskip("scipy.stats")
    rows = {s.system: s for s in metric_summaries(run, ["complete@8"])}
    assert list(rows) == ["vdb", "lightrag", "nano", "graph"]
    for system, published in PUBLISHED_COMPLETE.items():
        raw = _raw(system)
        complete = sum(set(r["ground_truth"]) <= set(r["evidence"]) for r in raw)  # type: ignore[arg-type]
        row = rows[system]
        assert round(row.mean, 3) == published
        assert row.mean == pytest.approx(complete / len(raw))
        assert row.proportion
        assert row.method == "wilson"
        assert row.n_defined == 51
        ci = stats.binomtest(complete, len(raw)).proportion_ci(0.95, method="wilson")
        assert (row.low, row.high) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_scores_have_bootstrap_intervals(run: Run) -> None:
    (row,) = metric_summaries(run.select(["graph"]), ["mrr"])
    ranks = []
    for r in _raw("graph"):
        ranked = list(dict.fromkeys(r["evidence"]))  # type: ignore[call-overload]
        first = next((i for i, doc in enumerate(ranked) if doc in r["ground_truth"]), None)  # type: ignore[operator]
        ranks.append(0.0 if first is None else 1.0 / (first + 1))
    assert row.mean == pytest.approx(math.fsum(ranks) / len(ranks))
    assert row.method == "percentile-bootstrap"
    assert not row.proportion
    assert row.low <= row.mean <= row.high


def test_unknown_metric_is_refused(run: Run) -> None:
    from kagreport import KagreportError

    with pytest.raises(KagreportError, match="no metric"):
        metric_summaries(run, ["nope"])


def test_retrieval_answer_tables_per_setup() -> None:
    # Two setups answering the same three items; a per-item retrieval hit recorded as a
    # metric beside "correct" (an ExactMatch of the answer).
    def evaluation(name: str, answers: list[str], hits: list[float]) -> object:
        items = [
            AnswerItem(identifier=f"q{i}", question="q", answer=a, reference="yes")
            for i, a in enumerate(answers)
        ]
        report = evaluate_answers(items, [ExactMatch()], metadata={"name": name})
        scored = [
            AnswerItem(
                identifier=item.identifier,
                question=item.question,
                answer=item.answer,
                reference=item.reference,
                scores={"correct": next(iter(item.scores.values())), "hit": h},
            )
            for item, h in zip(report.items, hits, strict=True)
        ]
        return type(report)(
            metrics={"correct": 0.0, "hit": 0.0},
            items=tuple(scored),
            judges=report.judges,
            agreement={},
            usage={},
            errors={},
            settings={},
            metadata={"name": name},
        )

    a = evaluation("a", ["yes", "no", "yes"], [1.0, 1.0, 0.0])
    b = evaluation("b", ["no", "no", "yes"], [0.0, 0.0, 1.0])
    run = Run.from_evaluations([a, b])  # type: ignore[list-item]
    tables = retrieval_answer_tables(run, "hit", "correct")
    assert list(tables) == ["a", "b"]
    # a: q0 hit right, q1 hit wrong, q2 miss right; b: q0, q1 miss wrong, q2 hit right.
    assert tables["a"].counts == ((1, 1), (1, 0))
    assert tables["b"].counts == ((1, 0), (0, 2))
