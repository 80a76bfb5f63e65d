"""StatsView.follow: a view of a running benchmark, updated in place as result files
arrive (kag writes ``.json.tmp``, then renames), that keeps the person's selection,
survives a failed pass and stops when asked."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kagreport import KagreportError, grade
from kagreport.frames import stats_frame
from kagreport.frames._tables import OVERALL
from kagreport.kag import simulate_run
from kagreport.runs import Run, setup_metrics
from kagreport.widgets import StatsView

#: Bound on waiting for the follower's thread (it checks every INTERVAL seconds; CI's
#: loaded 2-core machines are slow).
BOUND = 30.0
INTERVAL = 0.05


def _until(condition: Callable[[], bool], status: Callable[[], str] = str) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"the view never showed it: {status()}"
        time.sleep(0.01)


def _write(folder: Path, setup: str) -> None:
    """A new setup's result file (a copy of one there), written as kag writes it:
    ``.json.tmp``, then rename."""
    source = sorted(folder.glob("*.json"))[0]
    tmp = folder / f"{setup}.json.tmp"
    shutil.copyfile(source, tmp)
    os.replace(tmp, folder / f"{setup}.json")


def _metrics(run: Run) -> list[dict[str, Any]]:
    """kag's JSON of each setup of a run (what a report of the same tree holds)."""
    return [s.to_dict() for s in setup_metrics(run)]


def test_a_followed_view_shows_each_new_file_and_keeps_the_selection(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=8, datasets=2, vector_dim=8, seed=5)
    datasets, results = run.datasets_path, run.results_path
    graded = sorted(grade(datasets, results).setups[0].per_dataset)
    folders = sorted(p for d in graded for p in sorted(Path(results, d).iterdir()))
    view = StatsView.follow(datasets, results, interval=INTERVAL, workers=1)
    try:
        assert view.following
        assert view.status in view.children
        assert "Following" in view.status.value
        first = list(view.setups.options)
        assert list(view.frame["setup"].unique()) != []
        # The person deselects a setup; then a new setup's files arrive.
        view.setups.value = tuple(first[1:])
        for folder in folders:
            _write(folder, "late-setup")
        fresh = grade(datasets, results)
        _until(  # the update is whole once the table shows the new setup
            lambda: (
                _metrics(view.run) == [s.to_dict() for s in fresh.setups]
                and "late-setup" in view.table_widget.value
            )
        )
        # The deselected setup stays deselected, the new one is selected.
        assert set(view.setups.value) == set(first[1:]) | {"late-setup"}
        # The table is what a fresh grade gives over the selection.
        expected = stats_frame(fresh)
        expected = expected[expected["setup"].isin(view.setups.value)]
        expected = expected[expected["dataset"] == OVERALL]
        shown = view.frame.set_index("setup")["correct"].to_dict()
        assert shown == {s: c for s, c in zip(expected["setup"], expected["correct"], strict=True)}
    finally:
        view.stop()
    assert not view.following
    assert "Stopped following" in view.status.value
    assert not [t for t in threading.enumerate() if t.name == "kagreport-follow"]


def test_a_failed_pass_is_said_and_the_next_one_recovers(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=4, datasets=1, vector_dim=8, seed=6)
    results = Path(run.results_path)
    view = StatsView.follow(run.datasets_path, results, interval=INTERVAL, workers=1)
    try:
        before = _metrics(view.run)
        moved = results.with_name("moved")
        results.rename(moved)
        _until(lambda: "the last pass failed" in view.status.value, lambda: view.status.value)
        assert str(results) in view.status.value
        assert view.following  # it tries again
        assert _metrics(view.run) == before
        shutil.move(moved, results)
        graded = sorted(setup_metrics(view.run)[0].per_dataset)[0]  # not a folder kag skips
        question = sorted((results / graded).iterdir())[0]
        _write(question, "late-setup")
        _until(lambda: "late-setup" in view.setups.options, lambda: view.status.value)
        _until(lambda: "the last pass failed" not in view.status.value, lambda: view.status.value)
    finally:
        view.stop()
    assert not view.following


def test_following_refuses_what_grade_refuses_at_once(tmp_path: Path) -> None:
    with pytest.raises(KagreportError, match="missing"):
        StatsView.follow(tmp_path / "missing.json", tmp_path, interval=INTERVAL)
    run = simulate_run(tmp_path / "sim", questions=2, datasets=1, vector_dim=8, seed=7)
    with pytest.raises(ValueError, match="interval"):
        StatsView.follow(run.datasets_path, run.results_path, interval=0)
    assert not [t for t in threading.enumerate() if t.name == "kagreport-follow"]
    # A view that does not follow: stop() does nothing, update() takes a newer report.
    view = StatsView(grade(run.datasets_path, run.results_path))
    view.stop()
    assert not view.following
    view.update(grade(run.datasets_path, run.results_path))
    with pytest.raises(KagreportError, match="not int"):
        view.update(42)


def test_closing_a_followed_view_stops_its_thread(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=2, datasets=1, vector_dim=8, seed=8)
    view = StatsView.follow(run.datasets_path, run.results_path, interval=INTERVAL, workers=1)
    assert view.following
    view.close()  # what a notebook does with a widget it is done with
    _until(lambda: not view.following)
    assert not [t for t in threading.enumerate() if t.name == "kagreport-follow"]
