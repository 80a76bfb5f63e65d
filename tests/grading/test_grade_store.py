"""Incremental grading: a grade store keeps graded files between runs (Parquet shards and a
manifest of file identities), so a rerun reads only new or changed files; the report is
always the one a fresh grade of the same tree gives; ``watch`` regrades as files arrive.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import Tree, mcq
from kagreport import grade
from kagreport.grading import GradeStore, StoreError, watch
from kagreport.kag import simulate_run

pytest.importorskip("pyarrow")


def _same(report: Any, fresh: Any) -> None:
    assert report.to_json() == fresh.to_json()
    assert report.to_text() == fresh.to_text()
    assert list(report.items) == list(fresh.items)
    assert report.unparsable_files == fresh.unparsable_files


def _add(run: Any, dataset: str, question: str, setup: str, answer: str) -> None:
    """Write a result file as kag does: ``.json.tmp``, then rename."""
    folder = Path(run.results_path, dataset, question)
    body = {"ok": {"result": f"Answer: {answer}", "stats": {}}}
    tmp = folder / f"{setup}.json.tmp"
    tmp.write_text(json.dumps(body), encoding="utf-8")
    os.replace(tmp, folder / f"{setup}.json")


def test_a_rerun_reads_only_new_and_changed_files(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=30, datasets=2, vector_dim=8, seed=2)
    store = tmp_path / "store"
    first = grade(run.datasets_path, run.results_path, store=store)
    fresh = grade(run.datasets_path, run.results_path)
    _same(first, fresh)
    assert first.files_read == fresh.files_read > 200
    again = grade(run.datasets_path, run.results_path, store=store)
    _same(again, first)
    assert again.files_read == 0
    # One new file, one rewritten, one deleted.
    questions = sorted(p for p in Path(run.results_path, "sim-history").iterdir())
    _add(run, "sim-history", questions[0].name, "new-setup", "a")
    changed = sorted(questions[1].glob("*.json"))[0]
    changed.write_text(json.dumps({"error": "rewritten"}), encoding="utf-8")
    os.utime(changed, ns=(1, 1))  # an older mtime than before: still a change
    sorted(questions[2].glob("*.json"))[0].unlink()
    rerun = grade(run.datasets_path, run.results_path, store=store)
    _same(rerun, grade(run.datasets_path, run.results_path))
    assert rerun.files_read == 2
    assert rerun.to_json() != first.to_json()


def test_the_store_belongs_to_one_tree_and_prefix(tmp_path: Path, tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "alpha", "A")
    store = tmp_path / "store"
    grade(tree.datasets_path, tree.results, store=store)
    with pytest.raises(StoreError, match="use another folder"):
        grade(tree.datasets_path, tree.results, "run1-", store=store)
    (store / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match="manifest"):
        grade(tree.datasets_path, tree.results, store=store)


def test_a_changed_answer_regrades_kept_files(tree: Tree, tmp_path: Path) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "alpha", "A")
    tree.raw("ds", "q1", "broken.json", '{"ok": ')
    store = GradeStore(tmp_path / "store")
    first = grade(tree.datasets_path, tree.results, store=store)
    tree.question("ds", "q1", mcq("B"))  # the ground truth changed, no result file did
    second = grade(tree.datasets_path, tree.results, store=store)
    _same(second, grade(tree.datasets_path, tree.results))
    assert second.to_json() != first.to_json()
    assert len(second.unparsable_files) == 1  # a kept unparsable file is still reported


def test_watch_yields_a_report_each_time_files_arrive(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=10, datasets=2, vector_dim=8, seed=3)
    question = sorted(Path(run.results_path, "sim-history").iterdir())[0].name
    arrivals = iter(["x1", "x2"])
    seen: list[Any] = []

    def sleep(_: float) -> None:  # between passes: the benchmark writes a file, or not
        name = next(arrivals, None)
        if name is not None:
            _add(run, "sim-history", question, name, "a")

    for report in watch(run.datasets_path, run.results_path, interval=0.01, sleep=sleep):
        seen.append(report)
        if len(seen) == 3:
            break
    full = grade(run.datasets_path, run.results_path).files_read
    assert [r.files_read for r in seen] == [full - 2, 1, 1]
    _same(seen[-1], grade(run.datasets_path, run.results_path))
    with pytest.raises(ValueError, match="interval"):
        next(iter(watch(run.datasets_path, run.results_path, interval=0)))
