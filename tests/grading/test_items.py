"""The per-item outcome table kept beside the kag aggregates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import Tree, mcq
from kagreport import grade
from kagreport.grading import Outcome
from kagreport.kag import simulate_run


def test_rows_hold_each_graded_file(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.question("ds", "q2", mcq("A"))
    tree.ok("ds", "q1", "kag", "A", secs=2, nanos=5, prompt="abc", retrieval=(0, 7, 3, 2, 1))
    tree.ok("ds", "q2", "kag", "B", secs=1, prompt="")
    tree.error("ds", "q1", "base")
    tree.raw("ds", "q2", "base.json", "{")  # unparsable: no row
    report = grade(tree.datasets_path, tree.results)
    rows = sorted(report.items, key=lambda r: (r.setup, r.question))
    assert len(report.items) == 3
    base, kag1, kag2 = rows
    assert (base.setup, base.question, base.outcome) == ("base", "q1", Outcome.ERROR)
    assert base.generation_secs is None
    assert base.context_bytes is None
    assert kag1.outcome is Outcome.CORRECT
    assert kag1.generation_secs == 2.000000005
    assert kag1.retrieval_secs == 7e-9
    assert (kag1.vertices, kag1.relationships, kag1.properties, kag1.context_bytes) == (3, 2, 1, 3)
    assert kag2.outcome is Outcome.INCORRECT
    assert kag2.retrieval_secs is None
    assert kag2.vertices is None
    assert kag2.context_bytes == 0
    assert report.items.path(kag1) == str(tree.results / "ds" / "q1" / "kag.json")


def test_columns_are_numpy_arrays_with_nan_for_absent(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "s", "A", secs=3)
    tree.error("ds", "q1", "t")
    columns = grade(tree.datasets_path, tree.results).items.to_columns()
    assert list(columns) == [
        "setup", "dataset", "question", "outcome", "generation_secs", "retrieval_secs",
        "vertices", "relationships", "properties", "context_bytes",
    ]  # fmt: skip
    order = np.argsort(columns["setup"])
    assert list(columns["setup"][order]) == ["s", "t"]
    assert list(columns["outcome"][order]) == ["correct", "error"]
    gen = columns["generation_secs"][order]
    assert gen[0] == 3.0
    assert math.isnan(gen[1])
    assert all(len(c) == 2 for c in columns.values())


def test_empty_table(tree: Tree) -> None:
    items = grade(tree.datasets_path, tree.results).items
    assert len(items) == 0
    assert all(len(c) == 0 for c in items.to_columns().values())


@pytest.mark.slow
def test_table_sums_equal_the_metrics_and_stay_compact(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = simulate_run(tmp_path / "sim", questions=60, datasets=3, seed=11)
    report = grade(run.datasets_path, run.results_path)
    items = report.items
    setups = items.column("setup")
    outcome = items.codes("outcome")
    gen_ns = items.codes("generation_secs")
    for s in report.setups:
        mine = setups == s.setup
        assert int((outcome[mine] == Outcome.CORRECT).sum()) == s.overall.correct
        assert int((outcome[mine] == Outcome.ERROR).sum()) == s.overall.errors
        assert int(gen_ns[mine][gen_ns[mine] >= 0].sum()) == s.overall.generation_ns
    assert len(items) == sum(s.overall.total for s in report.setups)
    assert items.nbytes / len(items) <= 64  # bytes per row, names stored once
