"""Issue #26 items 9 and 5 (charts): a static figure (SVG, PNG: no tooltip) identifies every
point, shows points at one place as such, never cuts a name without the full name nearby,
keeps its axes readable (at most 10 tick labels) and starting at 0 for quantities that are
never negative; tooltips read what the tables read (:mod:`kagreport._format`).

Expectations come from the run (its setups and datasets), from hand-made frames, or from
formatting written out here, never from the chart code.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc

from conftest import hand_frame
from kagreport import StatsReport, grade
from kagreport.charts import (
    accuracy_cost_chart,
    forest_plot,
    latency_chart,
    outcomes_chart,
    retrieval_answer_chart,
    save_figure,
)
from kagreport.charts._theme import fit_container
from kagreport.evaluation import retrieval_answer_table
from kagreport.examples import inspect_popularity
from kagreport.frames._tables import OVERALL
from kagreport.kag import simulate_run
from kagreport.sources import read_run

SVG = "{http://www.w3.org/2000/svg}"
MINUS = "\u2212"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> StatsReport:
    """The simulated run of the issue: 4 setups x 3 datasets, 12 points per dataset chart."""
    root = tmp_path_factory.mktemp("static")
    run = simulate_run(root, questions=40, datasets=3, unparsable_files=0, temporary_files=0)
    return grade(run.datasets_path, run.results_path)


# ------------------------------------------------------------------------ reading a figure


def _text(node: ET.Element) -> str:
    return "".join(node.itertext())


def _classes(node: ET.Element) -> str:
    return node.get("class") or ""


def _mark_texts(node: ET.Element) -> list[str]:
    """The texts of the text marks under ``node`` (labels beside points), not of axes."""
    found: list[str] = []
    for group in node.iter(f"{SVG}g"):
        classes = _classes(group)
        if "mark-text" in classes and "role-mark" in classes:
            found += [_text(t) for t in group.iter(f"{SVG}text")]
    return found


def _x_of(node: ET.Element) -> float:
    shift = re.match(r"translate\(([-0-9.]+)", node.get("transform") or "")
    return float(shift.group(1)) if shift else 0.0


def _panels(svg: str) -> list[list[str]]:
    """The point labels of each panel, left to right (one panel for a single view)."""
    root = ET.fromstring(svg)
    found = [g for g in root.iter(f"{SVG}g") if "cell" in _classes(g).split()]
    if not found:
        return [_mark_texts(root)]
    # Vega draws the panels as the children of one "cell" group, each translated.
    (cells,) = found
    return [_mark_texts(cell) for cell in sorted(cells, key=_x_of)]


def _key(svg: str) -> dict[str, str]:
    """Number -> name, from the key lines ("Key: 1 name; 2 name", continued on the next
    lines) anywhere in the figure."""
    lines = [_text(t) for t in ET.fromstring(svg).iter(f"{SVG}text")]
    # Vega writes a multi-line title as one <text> of <tspan>s: split them again.
    tspans = [
        _text(s) for t in ET.fromstring(svg).iter(f"{SVG}text") for s in t.iter(f"{SVG}tspan")
    ]
    key: dict[str, str] = {}
    started = False
    for line in tspans or lines:
        if line.startswith("Key: "):
            started, line = True, line.removeprefix("Key: ")
        elif not (started and re.match(r"\d+ ", line)):
            started = False
            continue
        for entry in line.split("; "):
            number, _, name = entry.partition(" ")
            key[number] = name
    return key


def _axes(svg: str) -> list[tuple[str, list[str]]]:
    """Each axis of the figure: its ARIA description (Vega's: "X-axis titled ... for a
    linear scale with values from 0 to 0.7") and its tick labels."""
    found = []
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        if "role-axis" not in _classes(group).split() or not group.get("aria-label"):
            continue
        labels = [
            _text(t)
            for g in group.iter(f"{SVG}g")
            if "role-axis-label" in _classes(g)
            for t in g.iter(f"{SVG}text")
        ]
        found.append((str(group.get("aria-label")), labels))
    return found


def _number(label: str) -> float:
    return float(label.replace(MINUS, "-").replace(",", "").rstrip("%"))


def _identified(names: list[str], texts: list[str], key: dict[str, str]) -> dict[str, bool]:
    """Whether each name is drawn whole, or as a number (alone or in "1, 2") of the key."""
    numbers = {n for t in texts for n in re.split(r",\s*", t) if n.isdigit()}
    return {name: name in texts or any(key.get(n) == name for n in numbers) for name in names}


# ------------------------------------------------------------------ every point identified


def test_every_point_of_the_simulated_run_is_identified_in_the_svg(
    sim: StatsReport, tmp_path: Path
) -> None:
    setups = [s.setup for s in sim.setups]
    datasets = sorted({d for s in sim.setups for d in s.per_dataset})
    assert len(setups) * len(datasets) == 12  # the 12 points
    for cost in ("retrieval", "graph"):
        path = save_figure(
            accuracy_cost_chart(sim, cost=cost, per_dataset=True), tmp_path / f"{cost}.svg"
        )
        svg = path.read_text("utf-8")
        panels, key = _panels(svg), _key(svg)
        assert len(panels) == len(datasets)
        for dataset, texts in zip(datasets, panels, strict=True):
            found = _identified(setups, texts, key)
            assert all(found.values()), (cost, dataset, found, texts, key)
        assert set(key.values()) <= set(setups)  # the key gives full names
        assert "…" not in svg  # nothing cut
    # One panel: the same.
    svg = save_figure(accuracy_cost_chart(sim), tmp_path / "one.svg").read_text("utf-8")
    (texts,) = _panels(svg)
    assert all(_identified(setups, texts, _key(svg)).values())


LONG = "meta-llama-3-1-70b-instruct-turbo-2024-07-23"


def test_coincident_points_and_long_names_are_identified(tmp_path: Path) -> None:
    points = {
        "twin-a": (0.30, 0.60),
        "twin-b": (0.30, 0.60),  # drawn at twin-a's place
        LONG: (0.10, 0.50),
        "gpt-4o-mini": (0.50, 0.70),
        "cheap": (0.05, 0.40),
    }
    svg = save_figure(accuracy_cost_chart(hand_frame(points)), tmp_path / "f.svg").read_text(
        "utf-8"
    )
    (texts,) = _panels(svg)
    key = _key(svg)
    assert all(_identified(list(points), texts, key).values()), (texts, key)
    # The two at one place are shown as such: one label names both.
    assert any(
        _identified(["twin-a", "twin-b"], [t, *t.split(", ")], key)
        == {"twin-a": True, "twin-b": True}
        for t in texts
    ), texts
    # No label is cut; a name too long for the plot is whole in the key.
    assert "…" not in svg
    assert LONG in key.values() or LONG in texts


def test_no_label_is_cut_on_screen() -> None:
    """A label whole on paper is whole on a screen too (text 12 px instead of 8)."""
    run = read_run(inspect_popularity().logs[0])
    screen = fit_container(accuracy_cost_chart(run, cost="tokens"))
    screen["width"] = 1200
    svg = vlc.vegalite_to_svg(screen)
    assert "…" not in svg
    assert "openai/gpt-4o-mini" in _panels(svg)[0]


# ----------------------------------------------------------------------------------- axes


def _screen_svg(chart: Any, width: float) -> str:
    """The chart as the site shows it on a wide page (the container's width)."""
    spec = fit_container(chart)
    if "facet" in spec:
        spec["spec"]["width"] = width / 3
    else:
        spec["width"] = width
    return str(vlc.vegalite_to_svg(spec))


def test_axes_have_at_most_ten_tick_labels(sim: StatsReport, tmp_path: Path) -> None:
    tokens = read_run(inspect_popularity().logs[0])
    charts = {
        "tokens": accuracy_cost_chart(tokens, cost="tokens"),
        "retrieval": accuracy_cost_chart(sim, per_dataset=True),
        "context": accuracy_cost_chart(sim, cost="context"),
        "latency": latency_chart(sim, "generation"),
        "outcomes": outcomes_chart(sim),
    }
    for name, chart in charts.items():
        for medium, svg in (
            ("paper", save_figure(chart, tmp_path / f"{name}.svg").read_text("utf-8")),
            ("screen", _screen_svg(chart, 1400)),
        ):
            axes = _axes(svg)
            assert axes, name
            for description, labels in axes:
                if "linear scale" in description:
                    assert 2 <= len(labels) <= 10, (name, medium, description, labels)


def test_axes_of_quantities_never_negative_start_at_0(sim: StatsReport, tmp_path: Path) -> None:
    # A frame whose cost interval reaches below 0 (a normal approximation would): the
    # axis still starts at 0, and accuracy starts at 0 too.
    frame = hand_frame({"a": (0.02, 0.55), "b": (0.4, 0.7)}).assign(
        cost_low=[-0.03, 0.3], cost_high=[0.07, 0.5]
    )
    for name, chart in {
        "frame": accuracy_cost_chart(frame),
        "retrieval": accuracy_cost_chart(sim, per_dataset=True),
        "generation": accuracy_cost_chart(sim, cost="generation"),
        "latency": latency_chart(sim, "generation"),
    }.items():
        svg = save_figure(chart, tmp_path / f"{name}.svg").read_text("utf-8")
        for description, labels in _axes(svg):
            if "linear scale" not in description:
                continue
            values = [_number(label) for label in labels]
            assert values[0] == 0, (name, description, labels)
            assert min(values) == 0, (name, description, labels)
            assert re.search(r"values from 0(\.0+)?%? to", description), (name, description)


# ------------------------------------------------------------------------------- tooltips


def _tooltips(spec: dict[str, Any]) -> list[dict[str, Any]]:
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            tooltip = node.get("encoding", {}).get("tooltip") if "encoding" in node else None
            if isinstance(tooltip, list):
                found.extend(tooltip)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


def _rows(spec: dict[str, Any], column: str) -> list[dict[str, Any]]:
    tables = [rows for rows in spec.get("datasets", {}).values() if column in rows[0]]
    assert len(tables) == 1
    return list(tables[0])


def test_tooltips_are_texts_written_in_python(sim: StatsReport) -> None:
    """No tooltip formats a number with d3: each shows a text the tables would write."""
    for chart in (
        accuracy_cost_chart(sim),
        accuracy_cost_chart(sim, per_dataset=True),
        outcomes_chart(sim, normalize=True),
        latency_chart(sim, "retrieval"),
        retrieval_answer_chart(retrieval_answer_table([1, 1, 0], [1, 0, 0])),
    ):
        tooltips = _tooltips(chart.to_dict())
        assert tooltips
        for tooltip in tooltips:
            assert "format" not in tooltip, tooltip
            assert tooltip["type"] == "nominal", tooltip


def test_accuracy_tooltip_reads_as_the_tables() -> None:
    # 8 of 13 right: 61.538...%, one decimal as every table writes it (not d3's "61.54%").
    frame = pd.DataFrame(
        {
            "setup": ["a", "b"],
            "dataset": OVERALL,
            "accuracy": [8 / 13, 0.5],
            "accuracy_low": [0.3551, 0.25],
            "accuracy_high": [0.8228, 0.75],
            "avg_retrieval_secs": [1104.991, 0.04123],
            "cost_low": [1000.0, 0.0399],
            "cost_high": [1210.4, 0.0431],
            "total": [13, 4],
            "correct": [8, 2],
            "errors": [1234, 0],
        }
    )
    rows = {r["setup"]: r for r in _rows(accuracy_cost_chart(frame).to_dict(), "accuracy_text")}
    assert rows["a"]["accuracy_text"] == "61.5% [35.5%, 82.3%]"
    assert rows["b"]["accuracy_text"] == "50.0% [25.0%, 75.0%]"
    # A mean time with three significant digits and its integer part whole, grouped.
    assert rows["a"]["cost_text"] == "1,105 [1,000, 1,210]"
    assert rows["b"]["cost_text"] == "0.0412 [0.0399, 0.0431]"
    assert (rows["a"]["total_text"], rows["a"]["errors_text"]) == ("13", "1,234")


def test_forest_tooltip_in_points_and_p_values() -> None:
    frame = pd.DataFrame(
        {
            "metric": ["accuracy"],
            "mean_difference": [-0.106],
            "ci_low": [-0.146],
            "ci_high": [-0.066],
            "p_value": [1.91e-06],
            "p_value_holm": [0.03125],
            "n_pairs": [1500],
            "candidate_mean": [0.617],
            "baseline_mean": [0.723],
        }
    )
    spec = forest_plot(frame, percent=True).to_dict()
    (row,) = _rows(spec, "difference_text")
    assert row["difference_text"] == f"{MINUS}10.6 pp [{MINUS}14.6, {MINUS}6.6]"
    assert (row["p_text"], row["holm_text"]) == ("1.91e-06", "0.0312")
    assert (row["candidate_text"], row["baseline_text"]) == ("61.7%", "72.3%")
    assert row["pairs_text"] == "1,500"
    # The axis of differences of proportions is in points too.
    assert "pp" in spec["layer"][2]["encoding"]["x"]["title"]
    # A score that is no proportion: 3 decimals, a real minus.
    scores = frame.assign(metric="mrr", mean_difference=-0.25, ci_low=-0.5, ci_high=0.0)
    (row,) = _rows(forest_plot(scores).to_dict(), "difference_text")
    assert row["difference_text"] == f"{MINUS}0.250 [{MINUS}0.500, 0.000]"


def test_retrieval_answer_tooltip_and_counts() -> None:
    # 2 of 8 items hit and wrong.
    table = retrieval_answer_table([1, 1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 1, 0, 0])
    cell = table.cell("hit", "wrong")
    rows = _rows(retrieval_answer_chart(table).to_dict(), "share_text")
    (row,) = [r for r in rows if r["cell"] == "hit, wrong (generator)"]
    low, high = cell.low, cell.high
    assert row["share_text"] == f"25.0% [{100 * low:.1f}%, {100 * high:.1f}%]"
    assert (row["count_text"], row["n_text"]) == ("2", "8")
    assert np.isclose(cell.proportion, 0.25)
