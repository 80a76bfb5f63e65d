"""Tick labels of adjacent panels never run into each other (#26 item 9: "1,200" beside the
next panel's "0" read "1,2000").

Positions come from the rendered SVG (Vega's own layout); widths are estimated here from the
font size with Helvetica's advance widths (digits 0.556 em, comma and period 0.278 em).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import vl_convert as vlc

from kagreport import StatsReport, grade
from kagreport.charts import accuracy_cost_chart, save_figure
from kagreport.charts._theme import fit_container
from kagreport.kag import simulate_run

SVG = "{http://www.w3.org/2000/svg}"
_EM = {",": 0.278, ".": 0.278, " ": 0.278, "\u2212": 0.584, "%": 0.889}


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> StatsReport:
    root = tmp_path_factory.mktemp("facets")
    run = simulate_run(root, questions=40, datasets=3, unparsable_files=0, temporary_files=0)
    return grade(run.datasets_path, run.results_path)


def _shift(node: ET.Element) -> tuple[float, float]:
    found = re.match(r"translate\(([-0-9.e]+),\s*([-0-9.e]+)\)", node.get("transform") or "")
    return (float(found.group(1)), float(found.group(2))) if found else (0.0, 0.0)


def _x_labels(svg: str) -> list[tuple[float, float, float, str]]:
    """(left, right, y, text) of every x-axis tick label, in the figure's coordinates."""
    found: list[tuple[float, float, float, str]] = []

    def walk(node: ET.Element, x: float, y: float, axis: str, label: bool) -> None:
        dx, dy = _shift(node)
        x, y = x + dx, y + dy
        classes = (node.get("class") or "").split()
        if "role-axis" in classes and node.get("aria-label"):
            axis = str(node.get("aria-label"))
        label = label or "role-axis-label" in classes
        if node.tag == f"{SVG}text" and label and axis.startswith("X-axis"):
            text = "".join(node.itertext())
            style = f"{node.get('style') or ''};font-size:{node.get('font-size') or ''}"
            size = float(re.findall(r"font-size:\s*([0-9.]+)", style)[0])
            width = size * sum(_EM.get(ch, 0.556) for ch in text)
            anchor = node.get("text-anchor") or "start"
            left = x - (width / 2 if anchor == "middle" else width if anchor == "end" else 0)
            found.append((left, left + width, round(y, 1), text))
        for child in node:
            walk(child, x, y, axis, label)

    walk(ET.fromstring(svg), 0.0, 0.0, "", False)
    return found


def _overlaps(svg: str) -> list[tuple[str, str]]:
    labels = sorted(_x_labels(svg))
    return [
        (a[3], b[3])
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
        if a[2] == b[2] and b[0] < a[1] + 1.0  # same row, closer than 1 px
    ]


@pytest.mark.parametrize("cost", ["context", "retrieval", "generation", "graph"])
def test_tick_labels_of_adjacent_panels_do_not_touch(
    sim: StatsReport, cost: str, tmp_path: Path
) -> None:
    chart = accuracy_cost_chart(sim, cost=cost, per_dataset=True)  # type: ignore[arg-type]
    paper = save_figure(chart, tmp_path / f"{cost}.svg").read_text("utf-8")
    assert len(_x_labels(paper)) >= 6  # two ticks at least in each of 3 panels
    assert _overlaps(paper) == [], cost
    for width in (700, 1000, 1400):
        spec = fit_container(chart)
        spec["spec"]["width"] = width / 3 - 40
        screen = str(vlc.vegalite_to_svg(spec))
        assert _overlaps(screen) == [], (cost, width)
