"""Charts in notebooks: live and offline, with a static SVG kept (issue 14, item 1).

Without a front end: what the renderer puts in a display bundle, what the live widget holds,
and how a view's :class:`~kagreport.widgets.ChartPane` redraws in place. The front ends
themselves (JupyterLab, Notebook 7) are driven in tests/browser/test_jupyterlab.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import pytest

from kagreport import grade
from kagreport.charts import enable_notebook_renderer, live_chart
from kagreport.charts._renderer import RENDERER_NAME, notebook_spec
from kagreport.kag import simulate_run
from kagreport.widgets import StatsView
from kagreport.widgets._base import ChartPane, ChartResult

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
VEGALITE = "application/vnd.vegalite.v" + alt.SCHEMA_VERSION.lstrip("v").split(".")[0] + "+json"


def _chart(values: list[float]) -> Any:
    frame = pd.DataFrame({"setup": [f"s{i}" for i in range(len(values))], "accuracy": values})
    return alt.Chart(frame).mark_point(tooltip=True).encode(x="setup", y="accuracy")


def _widget(model_id: str) -> Any:
    from ipywidgets.widgets.widget import _instances

    return _instances[model_id]


def _bundle(chart: Any) -> dict[str, Any]:
    bundle = chart._repr_mimebundle_()
    return dict(bundle[0] if isinstance(bundle, tuple) else bundle)


@pytest.fixture
def renderer() -> Any:
    """The kagreport renderer enabled for one test, Altair's choice restored after it."""
    before = alt.renderers.active
    options = dict(alt.renderers.options)
    enable_notebook_renderer()
    yield
    alt.renderers.enable(before, **options)


def test_importing_charts_enables_the_renderer_unless_another_was_chosen() -> None:
    code = (
        "import altair as alt\n"
        "assert alt.renderers.active == 'default', alt.renderers.active\n"
        "{choice}"
        "import kagreport.charts\n"
        "print(alt.renderers.active)\n"
    )
    for choice, expected in (("", RENDERER_NAME), ("alt.renderers.enable('svg')\n", "svg")):
        done = subprocess.run(
            [sys.executable, "-c", code.format(choice=choice)],
            capture_output=True, text=True, check=True, timeout=300,
        )  # fmt: skip
        assert done.stdout.strip() == expected


@pytest.mark.usefixtures("renderer")
def test_a_displayed_chart_is_a_live_offline_widget_with_a_static_svg() -> None:
    chart = _chart([0.5, 0.75])
    bundle = _bundle(chart)
    assert set(bundle) == {WIDGET_VIEW, "image/svg+xml", VEGALITE, "text/plain"}
    assert bundle[VEGALITE] == chart.to_dict()  # what the report site draws
    assert bundle["image/svg+xml"].lstrip().startswith("<svg")
    assert "s1" in bundle["image/svg+xml"]  # an axis label, drawn by vl-convert
    widget = _widget(bundle[WIDGET_VIEW]["model_id"])
    # On screen as wide as the output area; the paper figure is kept for export.
    assert widget.spec["width"] == "container"
    assert widget.spec["usermeta"]["kagreport"]["paper"]["width"] == 237.6  # 3.3 in
    assert widget.spec == notebook_spec(chart.to_dict())
    # Offline: the front-end code imports nothing (no CDN); Vega comes bundled.
    assert "esm.sh" not in widget._esm
    assert not [line for line in widget._esm.splitlines() if line.startswith("import ")]
    assert "vega" in widget._esm.lower()
    assert widget.embed_options["actions"]["export"] is True
    assert widget.embed_options["actions"]["editor"] is False  # would post the data online


def test_the_static_renderer_has_no_widget(renderer: Any) -> None:
    enable_notebook_renderer(live=False)
    bundle = _bundle(_chart([0.5]))
    assert WIDGET_VIEW not in bundle
    assert "image/svg+xml" in bundle


def test_live_chart_follows_its_chart() -> None:
    first, second = _chart([0.5]), _chart([0.25, 0.5, 0.75])
    widget = live_chart(first)
    assert widget.spec == first.to_dict()
    widget.chart = second
    assert widget.spec == second.to_dict()


def test_chart_pane_redraws_the_same_widget_in_place() -> None:
    pane = ChartPane()
    assert pane.value == ""
    first, second = _chart([0.5]), _chart([0.25, 0.75])
    pane.show(ChartResult(first, "<svg>one</svg>"))
    widget = pane.live
    assert widget is not None
    assert pane.children == (widget,)
    assert pane.value == "<svg>one</svg>"
    pane.show(ChartResult(second, "<svg>two</svg>"))
    assert pane.live is widget  # the same widget: the front end redraws where it is
    assert widget.spec == notebook_spec(second.to_dict())
    assert pane.value == "<svg>two</svg>"
    pane.show(ChartResult(error="cannot draw the chart: <b>no</b>"))
    assert pane.children == (pane.static,)
    assert "&lt;b&gt;no&lt;/b&gt;" in pane.value
    pane.show(ChartResult(first, "<svg>one</svg>"))
    assert pane.children == (widget,)
    assert widget.spec == notebook_spec(first.to_dict())


def test_stats_view_redraws_its_live_chart_when_the_cost_changes(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=10, datasets=1)
    view = StatsView(grade(run.datasets_path, run.results_path))
    widget = view.chart_widget.live
    assert widget is not None
    assert widget.spec == notebook_spec(view.chart.to_dict())
    before = widget.spec
    view.cost.value = "generation"
    assert view.chart_widget.live is widget
    assert widget.spec == notebook_spec(view.chart.to_dict())
    assert widget.spec != before
    assert "<svg" in view.chart_widget.value  # the static form, for the snapshot
    assert "<svg" in view.to_html()


def test_small_multiples_in_a_notebook_are_laid_out_for_its_width(tmp_path: Path) -> None:
    from kagreport.charts import accuracy_cost_chart
    from kagreport.charts._renderer import NOTEBOOK_WIDTH

    run = simulate_run(tmp_path / "sim", questions=10, datasets=3)
    chart = accuracy_cost_chart(grade(run.datasets_path, run.results_path), per_dataset=True)
    paper = chart.to_dict()
    screen = notebook_spec(paper)
    # Three panels of 860 px less the axis: a row of three, each wider than on paper.
    assert screen["columns"] == 3
    assert screen["spec"]["width"] == (NOTEBOOK_WIDTH - 80) // 3 - 1
    assert screen["spec"]["width"] > paper["spec"]["width"]
    assert screen["usermeta"]["kagreport"]["paper"]["cell_width"] == paper["spec"]["width"]
