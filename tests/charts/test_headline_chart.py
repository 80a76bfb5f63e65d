"""The headline chart (accuracy against a mean cost) and the paper and screen sizes.

Issue #14 items 2 and 3: small multiples per dataset, each with its own frontier; labels
apart (issue #26 item 9: on every setup, or a key number); intervals on both axes; every recorded cost; charts fill
their container on screen and come back to a paper preset for export, PNG at 300 dpi.
"""

from __future__ import annotations

import math
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc

from conftest import brute_frontier
from kagreport import StatsReport, grade
from kagreport.charts import accuracy_cost_chart, save_figure
from kagreport.charts._export import paper_spec
from kagreport.charts._theme import PRESETS, fit_container, preset_width
from kagreport.frames._tables import OVERALL
from kagreport.kag import simulate_run
from kagreport.runs import Run
from kagreport.runs._costs import COSTS, recorded_costs
from kagreport.runs._intervals import cost_intervals

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> StatsReport:
    root = tmp_path_factory.mktemp("headline")
    run = simulate_run(root, questions=40, datasets=3, unparsable_files=0, temporary_files=0)
    return grade(run.datasets_path, run.results_path)


def _rows(spec: dict[str, Any]) -> list[dict[str, Any]]:
    (rows,) = spec["datasets"].values()
    return list(rows)


def _layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list((spec["spec"] if "facet" in spec else spec)["layer"])


def _mark(layer: dict[str, Any]) -> str:
    mark = layer["mark"]
    return str(mark["type"] if isinstance(mark, dict) else mark)


def _passes(row: dict[str, Any], expression: str) -> bool:
    """The few Vega filter expressions the chart uses, evaluated on one row."""
    python = expression.replace("===", "==").replace("&&", " and ").replace("null", "None")
    python = re.sub(r"!(?!=)", " not ", python)
    python = re.sub(r"datum\.(\w+)", lambda m: f"row[{m.group(1)!r}]", python)
    return bool(eval(python, {"__builtins__": {}}, {"row": row}))


def _shown(spec: dict[str, Any], layer: dict[str, Any]) -> list[dict[str, Any]]:
    filters = [t["filter"] for t in layer.get("transform", []) if "filter" in t]
    return [r for r in _rows(spec) if all(_passes(r, f) for f in filters)]


def _expected_frontier(report: StatsReport) -> dict[tuple[str, str], bool]:
    """Per dataset, by the definition, from the report's own per-dataset metrics: cost is
    the mean retrieval time, 0 for a setup that answered without retrieving."""
    expected: dict[tuple[str, str], bool] = {}
    datasets = sorted({d for s in report.setups for d in s.per_dataset})
    for dataset in datasets:
        points = {}
        for setup in report.setups:
            m = setup.per_dataset[dataset]
            retrieval = m.retrieval
            cost = (
                retrieval.avg_time_secs
                if retrieval is not None and retrieval.samples
                else (0.0 if m.parsed else math.nan)
            )
            points[setup.setup] = (float(cost), m.correct / m.total)
        for name, on in brute_frontier(points).items():
            expected[name, dataset] = on
    return expected


def test_per_dataset_is_one_panel_per_dataset(sim: StatsReport) -> None:
    spec = accuracy_cost_chart(sim, per_dataset=True).to_dict()  # validates
    datasets = sorted({d for s in sim.setups for d in s.per_dataset})
    assert spec["facet"]["field"] == "dataset"
    assert spec["facet"]["sort"] == datasets
    assert spec["columns"] == 3
    assert spec["usermeta"]["kagreport"]["preset"] == "two-column"
    assert sorted({r["dataset"] for r in _rows(spec)}) == datasets
    assert OVERALL not in {r["dataset"] for r in _rows(spec)}
    # One frontier line per panel: the line layer draws the frontier rows, which the facet
    # splits by dataset; no colour or detail channel mixes the datasets in one panel.
    (line,) = [layer for layer in _layers(spec) if _mark(layer) == "line"]
    assert {"filter": "datum.frontier"} in line["transform"]
    assert "detail" not in line["encoding"]
    assert line["encoding"]["color"] == {"value": "#333333"}


def test_labels_name_every_setup_and_the_frontier_is_filled(sim: StatsReport) -> None:
    """Issue #26 item 9: every placed setup is named (or numbered in the key), once; the
    frontier setups, by the definition, are the filled ones."""
    expected = _expected_frontier(sim)
    for per_dataset in (True, False):
        spec = accuracy_cost_chart(sim, per_dataset=per_dataset).to_dict()
        texts = [layer for layer in _layers(spec) if _mark(layer) == "text"]
        assert texts
        labelled = [r for t in texts for r in _shown(spec, t)]
        keys = [(r["setup"], r["dataset"]) for r in labelled]
        assert len(keys) == len(set(keys))  # no label twice: nothing stacked
        for layer in texts:
            assert layer["encoding"]["text"]["field"] == "point_label"
        for row in labelled:
            assert row["point_label"] in (row["setup"], str(row["key"])), row
        rows = _rows(spec)
        assert set(keys) == {(r["setup"], r["dataset"]) for r in rows}  # every point
        filled = {(r["setup"], r["dataset"]) for r in rows if r["frontier"]}
        if per_dataset:
            assert filled == {k for k, on in expected.items() if on}
        else:
            overall = {}
            for setup in sim.setups:
                m = setup.overall
                r = m.retrieval
                cost = r.avg_time_secs if r is not None and r.samples else 0.0
                overall[setup.setup] = (float(cost), m.correct / m.total)
            front = brute_frontier(overall)
            assert {s for s, _ in filled} == {s for s, on in front.items() if on}


def test_error_bars_on_both_axes(sim: StatsReport) -> None:
    spec = accuracy_cost_chart(sim, per_dataset=True).to_dict()
    rules = [layer for layer in _layers(spec) if _mark(layer) == "rule"]
    vertical = [r for r in rules if "y2" in r["encoding"]]
    horizontal = [r for r in rules if "x2" in r["encoding"]]
    assert [v["encoding"]["y"]["field"] for v in vertical] == ["accuracy_low"]
    assert vertical[0]["encoding"]["y2"]["field"] == "accuracy_high"
    assert [h["encoding"]["x"]["field"] for h in horizontal] == ["cost_low"]
    assert horizontal[0]["encoding"]["x2"]["field"] == "cost_high"
    # The bars are the run's bootstrap intervals of the mean retrieval time.
    intervals = {
        (c.system, c.dataset): c
        for c in cost_intervals(Run.from_stats(sim), "retrieval", per_dataset=True)
    }
    kag = 0
    for row in _rows(spec):
        interval = intervals[row["setup"], row["dataset"]]
        if row["no_retrieval"]:
            assert row["cost_low"] == row["cost_high"] == row["cost"] == 0.0
            continue
        kag += 1
        assert row["cost_low"] == interval.low
        assert row["cost_high"] == interval.high
        assert row["cost_low"] < row["cost"] < row["cost_high"]
        assert row["cost"] == pytest.approx(interval.mean, abs=1e-9)  # kag rounds to ns
        assert row["accuracy_low"] < row["accuracy"] < row["accuracy_high"]
    assert kag == 6  # two KAG setups x three datasets


def _label_boxes(svg: str) -> list[tuple[float, float, float, float, str]]:
    """Approximate boxes of the setup labels in a rendered figure (8 pt Liberation Sans), in
    the figure's coordinates (each panel of a facet is translated)."""
    boxes = []

    def walk(node: ET.Element, dx: float, dy: float, in_text: bool) -> None:
        shift = re.match(r"translate\(([-0-9.]+),\s*([-0-9.]+)\)", node.get("transform") or "")
        if node.tag == f"{SVG}g" and shift:
            dx, dy = dx + float(shift.group(1)), dy + float(shift.group(2))
        classes = node.get("class") or ""
        in_text = in_text or ("role-mark" in classes and "mark-text" in classes)
        if node.tag == f"{SVG}text" and in_text:
            x, y = (float(v) for v in re.findall(r"[-0-9.]+", node.get("transform", "0,0"))[:2])
            x, y = x + dx, y + dy
            width = 0.5 * 8 * len("".join(node.itertext()))
            anchor = node.get("text-anchor", "start")
            left = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
            boxes.append((left, y - 8, left + width, y, "".join(node.itertext())))
            return
        for child in node:
            walk(child, dx, dy, in_text)

    walk(ET.fromstring(svg), 0.0, 0.0, False)
    return boxes


def _overlapping(boxes: list[tuple[float, float, float, float, str]]) -> list[tuple[str, str]]:
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5:
                found.append((a[4], b[4]))
    return found


def test_labels_do_not_overlap_in_the_figure(sim: StatsReport) -> None:
    # A crowded frontier: eight setups on a rising line, close in cost and accuracy.
    n = 8
    crowded = pd.DataFrame(
        {
            "setup": [f"setup-{k}" for k in range(n)],
            "dataset": OVERALL,
            "accuracy": np.linspace(0.50, 0.60, n),
            "accuracy_low": np.linspace(0.45, 0.55, n),
            "accuracy_high": np.linspace(0.55, 0.65, n),
            "avg_retrieval_secs": np.linspace(0.10, 0.30, n),
        }
    )
    for chart in (
        accuracy_cost_chart(sim, per_dataset=True),
        accuracy_cost_chart(sim),
        accuracy_cost_chart(crowded),
    ):
        svg = vlc.vegalite_to_svg(paper_spec(chart))
        boxes = _label_boxes(svg)
        assert boxes
        assert _overlapping(boxes) == []


def test_container_width_on_screen_and_presets_on_paper(sim: StatsReport, tmp_path: Path) -> None:
    assert PRESETS == {"one-column": 3.3, "two-column": 7.0}
    assert preset_width("one-column") == pytest.approx(3.3 * 72)
    assert preset_width("two-column") == pytest.approx(7 * 72)
    with pytest.raises(ValueError, match="`preset` must be one of 'one-column', 'two-column'"):
        preset_width("a4")
    chart = accuracy_cost_chart(sim)
    paper = chart.to_dict()
    screen = fit_container(chart)
    assert paper["width"] == pytest.approx(237.6)
    assert screen["width"] == "container"
    assert screen["config"]["axis"]["labelFontSize"] > paper["config"]["axis"]["labelFontSize"]
    kept = screen["usermeta"]["kagreport"]["paper"]
    assert (kept["preset"], kept["width"]) == ("one-column", pytest.approx(237.6))
    back = paper_spec(screen)
    assert back["width"] == pytest.approx(237.6)
    assert back["height"] == paper["height"]
    assert back["config"] == paper["config"]  # the paper's text sizes, 8 pt and up
    assert paper_spec(screen, "two-column")["width"] == pytest.approx(504)
    # A container-width chart exports at its paper width, not at some screen's.
    path = save_figure(screen, tmp_path / "screen.svg")
    assert ET.parse(path).getroot().get("width") == "237.6"
    # Small multiples: Vega-Lite sizes a facet by its panels, so on screen the site's script
    # sets them; on paper they are fitted so that the whole figure is 7 in wide.
    facet = accuracy_cost_chart(sim, per_dataset=True)
    facet_screen = fit_container(facet)
    assert "width" not in facet_screen
    assert facet_screen["usermeta"]["kagreport"]["paper"]["preset"] == "two-column"
    svg = save_figure(facet_screen, tmp_path / "facet.svg")
    assert float(ET.parse(svg).getroot().get("width", "0")) == pytest.approx(504, abs=0.01)


def _png(path: Path) -> tuple[int, int, bytes]:
    data = path.read_bytes()
    width, height = struct.unpack(">II", data[16:24])
    at = data.index(b"pHYs")
    return width, height, data[at + 4 : at + 13]


@pytest.mark.parametrize(
    ("preset", "per_dataset"),
    [("one-column", False), ("two-column", False), ("two-column", True)],
)
def test_save_figure_png_is_300_dpi_at_the_preset_width(
    sim: StatsReport, tmp_path: Path, preset: str, per_dataset: bool
) -> None:
    chart = accuracy_cost_chart(sim, per_dataset=per_dataset)
    path = save_figure(chart, tmp_path / "figure.png", preset=preset)
    width, _, density = _png(path)
    assert width == round(PRESETS[preset] * 300)  # 990 or 2100 pixels
    # pHYs: pixels per metre in x and y, unit 1 (metre); 300 dpi = 300 / 0.0254.
    assert density == struct.pack(">IIB", 11811, 11811, 1)
    width, _, density = _png(save_figure(chart, tmp_path / "low.png", preset=preset, dpi=150))
    assert width == round(PRESETS[preset] * 150)
    assert density == struct.pack(">IIB", 5906, 5906, 1)


def test_every_recorded_cost_is_offered_and_drawn(sim: StatsReport) -> None:
    run = Run.from_stats(sim)
    assert recorded_costs(run) == ("retrieval", "generation", "context", "graph")
    for cost in recorded_costs(run):
        rows = _rows(accuracy_cost_chart(run, cost=cost).to_dict())  # type: ignore[arg-type]
        assert all(r["cost"] is not None for r in rows), cost
    # Another tool's run with tokens and money: each recorded, each drawn.
    n = 4
    tools = Run(
        kind="answers",
        systems=("a", "b"),
        dataset_names=("d",),
        question_names=tuple(f"q{k}" for k in range(n)),
        system=np.repeat(np.arange(2, dtype=np.int32), n),
        dataset=np.zeros(2 * n, dtype=np.int32),
        question=np.tile(np.arange(n, dtype=np.int32), 2),
        outcome=np.array([0, 1, 0, 0, 1, 1, 0, 1], dtype=np.int8),
        metrics={"correct": np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=np.float64)},
        costs={
            "input_tokens": np.arange(100.0, 108.0),
            "output_tokens": np.arange(10.0, 18.0),
            "cost_usd": np.linspace(0.001, 0.008, 8),
            "generation_secs": np.full(8, math.nan),
        },
    )
    found = recorded_costs(tools)
    assert found == ("tokens", "input_tokens", "output_tokens", "money")
    assert set(found) <= set(COSTS)
    for cost in found:
        rows = _rows(accuracy_cost_chart(tools, cost=cost).to_dict())  # type: ignore[arg-type]
        assert all(r["cost_low"] <= r["cost"] <= r["cost_high"] for r in rows), cost
