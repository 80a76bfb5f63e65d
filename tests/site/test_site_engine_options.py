"""The site build grades its kag runs with the engine options it is given, whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kagreport import EngineOptions, grade
from kagreport.kag import simulate_run
from kagreport.site import RunConfig, SiteConfig, build_site

pytest.importorskip("pyarrow")


def test_a_site_grades_its_runs_with_the_engine_options(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=6, datasets=1, vector_dim=8, seed=7)
    store = tmp_path / "store"
    config = SiteConfig(runs=(RunConfig("r", Path(run.datasets_path), Path(run.results_path)),))
    index = build_site(
        config, tmp_path / "site", execute_notebooks=False,
        engine_options=EngineOptions(store=store, workers=1),
    )  # fmt: skip
    assert index.is_file()
    # The grade went through the options' store, which now holds every graded file.
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["live_rows"] == grade(run.datasets_path, run.results_path).files_read
    assert manifest["results"] == str(Path(run.results_path).resolve())
