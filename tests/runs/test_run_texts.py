"""A kag tree read as a run (issue #24 item 1): the same numbers as ``Run.from_stats``, and
texts read lazily; the run document's item texts; the coercion at the views' edge;
flipped items as data.

Expected texts are read from the bundled example's files with ``json`` here, not through
kagreport.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kagreport import InputError, UsageError, as_run, read_run
from kagreport.evaluation import evaluation_from_stats
from kagreport.examples import mmlu_pro_philosophy
from kagreport.grading import StatsReport, grade
from kagreport.kag._tree import LocalTree
from kagreport.runs import Run, compare_setups, flipped_items
from kagreport.runs._metrics import kag_stats_json
from kagreport.runs._texts import LazyTexts

EXAMPLE = mmlu_pro_philosophy()


@pytest.fixture(scope="module")
def report() -> StatsReport:
    return grade(EXAMPLE.datasets, EXAMPLE.results)


@pytest.fixture(scope="module")
def run() -> Run:
    return read_run(EXAMPLE.results, format="kag", datasets=EXAMPLE.datasets)


@pytest.fixture(scope="module")
def datasets() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(EXAMPLE.datasets).read_text(encoding="utf-8"))
    return data


def test_a_kag_tree_read_as_a_run_equals_the_run_of_its_grade(
    run: Run, report: StatsReport
) -> None:
    expected = Run.from_stats(report)
    assert run == expected
    assert run.systems == report.setup_names
    assert len(run) == len(report.items)
    for name in ("generation_secs", "retrieval_secs", "vertices", "context_bytes"):
        np.testing.assert_array_equal(run.costs[name], report.items.column(name))
    assert run.metadata["source"] == "kag"
    # No local path in what a published document would carry.
    assert str(Path(EXAMPLE.results).resolve()) not in json.dumps(run.metadata)
    # Found without format= when a datasets file is given.
    assert read_run(EXAMPLE.results, datasets=EXAMPLE.datasets).systems == run.systems


def test_item_texts_come_from_the_datasets_file(run: Run, datasets: dict[str, Any]) -> None:
    assert run.question_texts is not None
    assert run.options is not None
    assert run.references is not None
    for row in (0, 1, len(run) // 2, len(run) - 1):
        dataset = run.dataset_names[run.dataset[row]]
        question = run.question_names[run.question[row]]
        entry = datasets[dataset][question]
        assert run.question_texts[row] == entry["input"]
        assert run.options[row] == tuple(entry["output"]["options"].items())
        assert run.references[row] == entry["output"]["answer"]


def test_responses_and_errors_come_from_the_result_files(run: Run) -> None:
    assert run.responses is not None
    assert run.errors is not None
    for row in (0, 7, len(run) - 1):
        path = (
            Path(EXAMPLE.results)
            / run.dataset_names[run.dataset[row]]
            / run.question_names[run.question[row]]
            / f"{run.systems[run.system[row]]}.json"
        )
        envelope = json.loads(path.read_text(encoding="utf-8"))
        ok = envelope.get("ok")
        assert run.responses[row] == (ok["result"] if ok else None)
        assert run.errors[row] == envelope.get("error")


def test_texts_are_read_only_when_shown(
    monkeypatch: pytest.MonkeyPatch, report: StatsReport
) -> None:
    reads: list[str] = []
    original = LocalTree.read

    def counted(self: LocalTree, path: str) -> bytes:
        reads.append(path)
        return original(self, path)

    monkeypatch.setattr(LocalTree, "read", counted)
    run = Run.from_stats(report)
    assert isinstance(run.responses, LazyTexts)
    part = run.select(run.systems[:2])
    assert isinstance(part.responses, LazyTexts)
    window = part.responses[10:20]
    assert len(window) == 10
    assert reads == []
    first = part.responses[0]
    assert len(reads) == 1
    assert part.errors[0] is None or first is None  # the same file, read once
    assert len(reads) == 1
    # The selected row is the same item of the same system in the whole run.
    row = int(np.flatnonzero(run.system == run.systems.index(part.systems[0]))[0])
    assert run.responses[row] == first


def test_the_document_stores_item_texts_once(run: Run, datasets: dict[str, Any]) -> None:
    text = run.dumps()
    document = json.loads(text)
    assert document["version"] == 2
    items = document["item_texts"]
    n_items = len({(d, q) for d, q in zip(document["dataset"], document["question"], strict=True)})
    assert len(items["question_texts"]) == len(items["options"]) == n_items
    # One question's text, in JSON, appears once although every setup answered it.
    question = next(iter(datasets["mmlu-pro-philosophy"].values()))["input"]
    assert text.count(json.dumps(question, ensure_ascii=False)[1:-1]) == 1
    assert Run.loads(text) == run


def test_as_run_takes_every_source_the_views_take(run: Run, report: StatsReport) -> None:
    assert as_run(run) is run
    assert as_run(report) == run
    assert as_run(EXAMPLE.results, datasets=EXAMPLE.datasets) == run
    evaluation = evaluation_from_stats(report, report.setup_names[0])
    one = as_run(evaluation)
    assert len(one.systems) == 1
    assert len(one) == len(evaluation.items)
    assert len(as_run([evaluation]).systems) == 1
    with pytest.raises(InputError, match="not dict"):
        as_run({"a": 1})
    with pytest.raises(InputError, match="options datasets are for a path"):
        as_run(run, datasets="x")


def test_a_kag_tree_needs_its_datasets_file() -> None:
    with pytest.raises(UsageError, match="read with its datasets file"):
        read_run(EXAMPLE.results, format="kag")
    with pytest.raises(UsageError, match="takes no option 'datasets'"):
        read_run(EXAMPLE.datasets, format="kagreport", datasets="x")


def _hand_run() -> Run:
    # Items q1..q4; metric correct: A = 1 0 1 -, B = 0 0 1 1 (q4 undefined for A).
    # Flips: q1 (A right, B wrong) only; q2 and q3 agree; q4 is undefined for A.
    return Run(
        kind="answers",
        systems=("A", "B"),
        dataset_names=("d",),
        question_names=("q1", "q2", "q3", "q4"),
        system=np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=np.int32),
        dataset=np.zeros(8, dtype=np.int32),
        question=np.array([0, 1, 2, 3, 3, 2, 1, 0], dtype=np.int32),
        outcome=np.array([0, 1, 0, -1, 0, 0, 1, 1], dtype=np.int8),
        metrics={"correct": np.array([1, 0, 1, math.nan, 1, 1, 0, 0], dtype=np.float64)},
        costs={"generation_secs": np.array([1, 2, 3, 4, 5, 6, 7, math.nan])},
        responses=("a1", "a2", "a3", "a4", "b4", "b3", "b2", "b1"),
        question_texts=("Q1", "Q2", "Q3", "Q4", "Q4", "Q3", "Q2", "Q1"),
        explanations=(None, None, None, None, None, None, None, "wrong letter"),
    )


def test_flipped_items_are_the_comparison_flips_with_their_texts() -> None:
    run = _hand_run()
    (flip,) = flipped_items(run, "A", "B")
    assert (flip.item, flip.question_text) == ("d/q1", "Q1")
    assert (flip.candidate.system, flip.candidate.outcome, flip.candidate.score) == (
        "A",
        "correct",
        1.0,
    )
    assert (flip.baseline.response, flip.baseline.explanation) == ("b1", "wrong letter")
    assert flip.candidate.costs == {"generation_secs": 1.0}
    assert flip.baseline.costs == {"generation_secs": None}
    (comparison,) = compare_setups(run, baseline="B", n_resamples=100)
    assert comparison.flips == (("d/q1", "correct", "incorrect"),)
    assert flipped_items(run, "A", "B", limit=0) == ()


def test_flipped_items_of_the_bundled_example_match_compare_setups(run: Run) -> None:
    comparisons = compare_setups(run, n_resamples=100)
    for c in comparisons:
        items = flipped_items(run, c.candidate, c.baseline)
        assert [(f.item, f.candidate.outcome, f.baseline.outcome) for f in items] == list(c.flips)


def test_the_kag_json_of_a_kag_run_is_kags(run: Run, report: StatsReport) -> None:
    assert kag_stats_json(run) == report.to_json()
    assert kag_stats_json(Run.loads(run.dumps())) == report.to_json()
    evaluation = evaluation_from_stats(report, report.setup_names[0])
    assert kag_stats_json(as_run(evaluation)) is None


def test_a_kag_run_can_keep_its_texts_from_the_grading_pass() -> None:
    kept = read_run(EXAMPLE.results, datasets=EXAMPLE.datasets, keep_text=5)
    assert isinstance(kept.responses, tuple)
    assert all(r is None or len(r) <= 5 for r in kept.responses)
