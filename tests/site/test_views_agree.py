"""One number everywhere (issue #24): for the bundled MMLU-Pro philosophy run, each
setup's accuracy and its Wilson interval, mean generation time, and each comparison's p and
Holm p are the same in the frame, the chart's data, the widget and the site page.

Each view is read through its own output (the frame's columns, the chart's inline data, the
widget's table frame, the site's HTML attributes), so a view that computed a number of its
own, or formatted it from another source, would disagree here.
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from kagreport import read_run
from kagreport.charts import accuracy_cost_chart
from kagreport.charts._accuracy import accuracy_cost_data
from kagreport.examples import mmlu_pro_philosophy
from kagreport.frames import comparison_frame, stats_frame
from kagreport.frames._tables import OVERALL
from kagreport.runs import Run, compare_setups
from kagreport.widgets import ComparisonView, StatsView


class _Cells(HTMLParser):
    """Every ``td[data-key]`` of the page by (table id, row's data-setup or order, key)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.table = ""
        self.row = ""
        self.rows = 0
        self.cells: dict[tuple[str, str, str], dict[str, str | None]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.table, self.rows = str(a.get("id") or ""), 0
        elif tag == "tr":
            self.rows += 1
            self.row = str(a.get("data-setup") or self.rows)
        elif tag == "td" and a.get("data-key"):
            self.cells[self.table, self.row, str(a["data-key"])] = a


@pytest.fixture(scope="module")
def run() -> Run:
    example = mmlu_pro_philosophy()
    return read_run(example.results, datasets=example.datasets)


@pytest.fixture(scope="module")
def site(mmlu_site: Path) -> dict[tuple[str, str, str], Any]:
    parser = _Cells()
    parser.feed((mmlu_site / "index.html").read_text(encoding="utf-8"))
    return parser.cells


def _number(value: Any) -> float:
    return math.nan if str(value) == "null" else float(str(value))


def _same(a: float, b: float) -> bool:
    """Equal, or both unknown (NaN): MMLU-Pro records no time, so every view's is NaN."""
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_accuracy_interval_and_cost_are_the_same_in_every_view(
    run: Run, site: dict[tuple[str, str, str], Any]
) -> None:
    frame = stats_frame(run)
    frame = frame[frame["dataset"] == OVERALL].set_index("setup")
    chart = accuracy_cost_data(run, cost="generation").set_index("setup")
    # The chart's own inline data, as it is drawn.
    spec = accuracy_cost_chart(run, cost="generation").to_dict()
    tables = list(spec.get("datasets", {}).values())
    tables += [layer.get("data", {}).get("values", []) for layer in spec.get("layer", [spec])]
    drawn = {
        v["setup"]: v
        for values in tables
        for v in values
        if isinstance(v, dict) and "setup" in v and "accuracy_low" in v
    }
    widget = StatsView(run, cost="generation").frame.set_index("setup")
    assert set(frame.index) == set(chart.index) == set(widget.index) == set(run.systems)
    assert set(drawn) == set(run.systems)
    for setup in run.systems:
        expected = frame.loc[setup]
        for name in ("accuracy", "accuracy_low", "accuracy_high"):
            assert chart.loc[setup, name] == expected[name], (setup, name)
            assert drawn[setup][name] == expected[name], (setup, name)
            assert widget.loc[setup, name] == expected[name], (setup, name)
        cell = site["leaderboard-mmlu", setup, "accuracy"]
        assert _number(cell["data-value"]) == expected["accuracy"]
        assert _number(cell["data-low"]) == expected["accuracy_low"]
        assert _number(cell["data-high"]) == expected["accuracy_high"]
        cost = expected["avg_generation_secs"]
        assert math.isnan(cost)  # no time recorded: unknown in every view (issue 26, item 3)
        assert _same(chart.loc[setup, "cost"], cost)
        assert _same(widget.loc[setup, "avg_generation_secs"], cost)
        assert _same(
            _number(site["leaderboard-mmlu", setup, "avg_generation_secs"]["data-value"]), cost
        )


def test_p_values_are_the_same_in_every_view(
    run: Run, site: dict[tuple[str, str, str], Any]
) -> None:
    comparisons = compare_setups(run, metrics=("correct",), n_resamples=10_000, seed=0)
    frame = comparison_frame(comparisons)
    assert len(frame) == len(run.systems) - 1
    by_candidate = {c.candidate: c for c in comparisons}
    for k, row in enumerate(frame.to_dict("records"), start=2):  # row 1: the header row
        c = by_candidate[str(row["candidate"])]
        cells = {key: site["comparisons-mmlu", str(k), key] for key in ("p_value",)}
        assert _number(cells["p_value"]["data-value"]) == row["p_value"]
        holm = site["comparisons-mmlu", str(k), "p_value_holm_across_run"]
        assert _number(holm["data-value"]) == row["p_value_holm"] == c.p_values_family["correct"]
        view = ComparisonView(run, metrics=["correct"])
        view.candidate.value, view.baseline.value = c.candidate, c.baseline
        (widget,) = view.frame.to_dict("records")
        assert widget["p_value"] == row["p_value"]
        assert widget["mean_difference"] == row["mean_difference"]
        # The widget's pair is a family of its own (its metrics), the site's row one of the
        # run: each interval is at its own family's Holm level and agrees with its own
        # adjusted p (issue #28), so the two intervals differ but never contradict.
        for shown in (widget, row):
            excludes = shown["ci_low"] > 0 or shown["ci_high"] < 0
            assert excludes == (shown["p_value_holm"] < 0.05)
        # A family of one tests at 5%, the run's at 5% / (its size) or more strictly: the
        # widget's interval lies inside the site's.
        assert widget["p_value_holm"] == row["p_value"]
        assert row["ci_low"] <= widget["ci_low"]
        assert widget["ci_high"] <= row["ci_high"]
        view.close()


def test_the_site_states_where_each_number_comes_from(
    site: dict[tuple[str, str, str], Any],
) -> None:
    keys = {key for _, _, key in site}
    assert {"accuracy", "p_value", "p_value_holm_across_run", "method"} <= keys
    methods = {v["data-value"] for (t, _, k), v in site.items() if k == "method"}
    assert all(re.fullmatch(r"[a-z-]+", str(m)) for m in methods)
