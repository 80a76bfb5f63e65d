"""A chart of SIMULATED data says so in its title, wherever it is drawn (helper trial of #14:
the README's figure of `kagreport simulate`'s tree was titled as a measurement)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kagreport import grade
from kagreport.charts import (
    accuracy_cost_chart,
    dataset_heatmap,
    latency_chart,
    outcomes_chart,
    save_figure,
)
from kagreport.examples import mmlu_pro_philosophy
from kagreport.frames import stats_frame
from kagreport.kag import simulate_run
from kagreport.kag._tree import SIMULATED_MARKER
from kagreport.runs import Run

CHARTS = (
    accuracy_cost_chart,
    lambda source: accuracy_cost_chart(source, per_dataset=True),
    outcomes_chart,
    dataset_heatmap,
    lambda source: latency_chart(source, "generation"),
)


def _title(chart: Any) -> str:
    title = chart.to_dict()["title"]
    text = title["text"] if isinstance(title, dict) else title
    return " ".join(text) if isinstance(text, list) else str(text)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Any:
    run = simulate_run(tmp_path_factory.mktemp("sim") / "sim", questions=8, datasets=2)
    return grade(run.datasets_path, run.results_path)


def test_every_chart_of_a_simulated_tree_says_simulated(simulated: Any) -> None:
    assert simulated.simulated
    run = Run.from_stats(simulated)
    assert run.metadata["simulated"] is True
    frame = stats_frame(simulated)
    assert frame.attrs["simulated"] is True
    for make in CHARTS:
        for source in (simulated, run):
            assert _title(make(source)).startswith("SIMULATED: "), make
    # A frame of it too (the charts that take a stats frame).
    assert _title(accuracy_cost_chart(frame)).startswith("SIMULATED: ")
    # A title of one's own gets the label as well, once.
    assert _title(outcomes_chart(simulated, title="SIMULATED outcomes")) == "SIMULATED outcomes"
    assert _title(outcomes_chart(simulated, title="Outcomes")) == "SIMULATED: Outcomes"


def test_the_saved_figure_of_a_simulated_tree_says_simulated(
    simulated: Any, tmp_path: Path
) -> None:
    path = tmp_path / "figure.svg"
    save_figure(accuracy_cost_chart(simulated), path)
    assert "SIMULATED" in path.read_text(encoding="utf-8")


def test_real_data_is_not_labelled(tmp_path: Path) -> None:
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    assert not report.simulated
    for make in (outcomes_chart, dataset_heatmap):
        assert "SIMULATED" not in _title(make(report))
    # The marker is what decides: beside results/ (where `kagreport simulate` writes it).
    assert SIMULATED_MARKER == "SIMULATED.md"
