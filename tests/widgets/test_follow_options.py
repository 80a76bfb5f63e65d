"""StatsView.follow takes the engine options whole (kagreport.EngineOptions), as grade does;
its keywords replace their fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from kagreport import EngineOptions, grade
from kagreport.kag import simulate_run
from kagreport.runs import setup_metrics
from kagreport.widgets import StatsView

pytest.importorskip("pyarrow")


def test_a_followed_view_grades_with_the_options_it_is_given(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=6, datasets=1, vector_dim=8, seed=3)
    store = tmp_path / "store"
    options = EngineOptions(interval=30.0, workers=1, store=store)
    view = StatsView.follow(run.datasets_path, run.results_path, options=options)
    try:
        # The first pass went to the options' store, and the status says their interval.
        assert (store / "manifest.json").is_file()
        assert "checked every 30 s" in view.status.value
        expected = grade(run.datasets_path, run.results_path).setups
        assert setup_metrics(view.run) == expected
    finally:
        view.stop(timeout=0)
        view.close()
    # A keyword replaces its field of the options.
    view = StatsView.follow(run.datasets_path, run.results_path, interval=20, options=options)
    try:
        assert "checked every 20 s" in view.status.value
    finally:
        view.stop(timeout=0)
        view.close()
    with pytest.raises(ValueError, match="`interval` must be a positive number"):
        StatsView.follow(run.datasets_path, run.results_path, interval=-1, options=options)
