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
from kagreport.grading import watch
from kagreport.grading.engine import GradeStore, StoreError
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


def test_a_damaged_store_is_one_line_never_a_wrong_report(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kagreport import KagreportError

    run = simulate_run(tmp_path / "sim", questions=6, datasets=1, vector_dim=8, seed=4)
    fresh = grade(run.datasets_path, run.results_path)
    store = tmp_path / "store"
    manifest = store / "manifest.json"

    def make() -> tuple[dict[str, Any], Path]:
        if store.exists():
            for path in store.iterdir():
                path.unlink()
        grade(run.datasets_path, run.results_path, store=store)
        document = json.loads(manifest.read_text())
        return document, store / document["shards"][0]

    def rewrite_shard(shard: Path, name: str, values: Any) -> None:
        table = pq.read_table(shard)
        column = pa.array(values, table.schema.field(name).type)
        pq.write_table(table.set_column(table.schema.get_field_index(name), name, column), shard)

    damages = {
        "manifest without grader": lambda d, s: manifest.write_text(
            json.dumps({k: v for k, v in d.items() if k != "grader"})
        ),
        "stored_rows not a count": lambda d, s: manifest.write_text(
            json.dumps({**d, "stored_rows": "abc"})
        ),
        "deeply nested manifest": lambda d, s: manifest.write_text("[" * 100_000),
        "shard deleted": lambda d, s: s.unlink(),
        "outcome out of range": lambda d, s: rewrite_shard(
            s, "outcome", [99] * pq.read_table(s).num_rows
        ),
        "null setup": lambda d, s: rewrite_shard(s, "setup", [None] * pq.read_table(s).num_rows),
        "exact not six numbers": lambda d, s: rewrite_shard(
            s, "exact", ["5"] * pq.read_table(s).num_rows
        ),
    }
    for what, damage in damages.items():
        document, shard = make()
        damage(document, shard)
        with pytest.raises(KagreportError) as raised:
            grade(run.datasets_path, run.results_path, store=store)
        message = str(raised.value)
        assert "delete the folder to grade afresh" in message, (what, message)
        assert "\n" not in message, what
    # Deleted, as the message says: a fresh store, the fresh report.
    for path in store.iterdir():
        path.unlink()
    _same(grade(run.datasets_path, run.results_path, store=store), fresh)


def test_a_store_knows_a_local_tree_by_its_real_path(tmp_path: Path, monkeypatch: Any) -> None:
    run = simulate_run(tmp_path / "sim", questions=4, datasets=1, vector_dim=8, seed=9)
    store = GradeStore(tmp_path / "store")
    first = grade(run.datasets_path, run.results_path, store=store)
    monkeypatch.chdir(Path(run.results_path).parent)
    for spelling in ("results", "./results", "results/", str(Path(run.results_path).resolve())):
        again = grade(run.datasets_path, spelling, store=store)
        assert again.files_read == 0, spelling
        assert again.to_json() == first.to_json()
    other = simulate_run(tmp_path / "other", questions=4, datasets=1, vector_dim=8, seed=10)
    monkeypatch.chdir(Path(other.results_path).parent)  # "results" now names another tree
    with pytest.raises(StoreError, match="holds"):
        grade(other.datasets_path, "results", store=store)
