"""Other tools' costs (tokens, money, latency) as axes of the accuracy-against-cost views.

The expected numbers come from the promptfoo fixture's own per-prompt aggregates
(``results.prompts[].metrics``: ``tokenUsage`` totals, ``cost``, ``totalLatencyMs``,
``score`` and the test counts), read here from the raw JSON, never from the reader.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kagreport import DocumentError, KagreportError
from kagreport.charts import accuracy_cost_chart
from kagreport.charts._accuracy import accuracy_cost_data
from kagreport.frames import stats_frame
from kagreport.frames._tables import COST_AXES
from kagreport.runs import Run, cost_frontier, leaderboard
from kagreport.runs._columns import OUTCOMES
from kagreport.runs._costs import COSTS, cost_axis
from kagreport.sources import read_run
from kagreport.widgets import ComparisonView, ItemBrowser, StatsView

FIXTURE = Path(__file__).parents[1] / "data" / "sources" / "promptfoo" / "results.json"


def _published() -> dict[str, dict[str, float]]:
    """Each provider's per-test means from promptfoo's own prompt metrics."""
    prompts = json.loads(FIXTURE.read_text(encoding="utf-8"))["results"]["prompts"]
    means = {}
    for prompt in prompts:
        m = prompt["metrics"]
        n = m["testPassCount"] + m["testFailCount"] + m["testErrorCount"]
        usage = m["tokenUsage"]
        means[prompt["provider"]] = {
            "tokens": (usage["prompt"] + usage["completion"]) / n,
            "input_tokens": usage["prompt"] / n,
            "output_tokens": usage["completion"] / n,
            "money": m["cost"] / n,
            "latency": m["totalLatencyMs"] / 1000 / n,
            "score": m["score"] / n,
            "correct": m["testPassCount"] / n,
        }
    return means


def _brute_front(points: dict[str, tuple[float, float]]) -> set[str]:
    """Systems no other system dominates (at most the cost, at least the value, one strictly)."""
    return {
        s
        for s, (c, v) in points.items()
        if not any(
            c2 <= c and v2 >= v and (c2 < c or v2 > v) for t, (c2, v2) in points.items() if t != s
        )
    }


@pytest.fixture(scope="module")
def run() -> Run:
    return read_run(FIXTURE)


def test_one_table_of_axes() -> None:
    assert {name: (a.stats_column, a.title) for name, a in COSTS.items()} == COST_AXES
    assert COSTS["latency"].columns == COSTS["generation"].columns == ("generation_secs",)
    assert OUTCOMES == ("correct", "incorrect", "error")
    assert issubclass(DocumentError, KagreportError)


@pytest.mark.parametrize("cost", ["tokens", "input_tokens", "output_tokens", "money", "latency"])
@pytest.mark.parametrize("metric", ["correct", "score"])
def test_frontier_of_a_promptfoo_run(run: Run, cost: str, metric: str) -> None:
    published = _published()
    points = {s: (published[s][cost], published[s][metric]) for s in run.systems}
    frontier = cost_frontier(run, cost, metric)
    for point in frontier:
        assert point.cost == pytest.approx(points[point.system][0], rel=1e-12)
        assert point.value == pytest.approx(points[point.system][1], rel=1e-12)
    assert {p.system for p in frontier if p.on_frontier} == _brute_front(points)


@pytest.mark.parametrize("cost", ["tokens", "money", "latency"])
def test_accuracy_cost_chart_of_a_promptfoo_run(run: Run, cost: str) -> None:
    published = _published()
    data = accuracy_cost_data(run, cost=cost)  # type: ignore[arg-type]
    by_setup = data.set_index("setup")
    assert set(by_setup.index) == set(published)
    for setup, row in by_setup.iterrows():
        assert row["cost"] == pytest.approx(published[str(setup)][cost], rel=1e-12)
        assert row["accuracy"] == pytest.approx(published[str(setup)]["correct"])
        assert row["note"] == ""  # "no retrieval" notes are for the retrieval axes only
    points = {s: (published[s][cost], published[s]["correct"]) for s in published}
    assert set(by_setup.index[by_setup["frontier"]]) == _brute_front(points)
    spec: dict[str, Any] = accuracy_cost_chart(run, cost=cost).to_dict()  # type: ignore[arg-type]
    assert COSTS[cost].title in json.dumps(spec)


def test_stats_frame_holds_the_tool_costs_only_for_runs_that_have_them(run: Run) -> None:
    published = _published()
    frame = stats_frame(run, per_dataset=False).set_index("setup")
    for setup in run.systems:
        assert frame.loc[setup, "avg_tokens"] == pytest.approx(published[setup]["tokens"])
        assert frame.loc[setup, "avg_cost_usd"] == pytest.approx(published[setup]["money"])
    kag_like = dataclasses.replace(run, costs={"generation_secs": run.costs["generation_secs"]})
    assert "avg_tokens" not in stats_frame(kag_like).columns


def test_tokens_needs_both_columns(run: Run) -> None:
    only_input = dataclasses.replace(run, costs={"input_tokens": run.costs["input_tokens"]})
    with pytest.raises(
        KagreportError, match="no cost column 'output_tokens' for the cost 'tokens'"
    ):
        cost_axis(only_input, "tokens")
    with pytest.raises(KagreportError, match="'output_tokens'"):
        accuracy_cost_data(only_input, cost="tokens")
    assert cost_frontier(only_input, "input_tokens")[0].cost == pytest.approx(
        _published()[run.systems[0]]["input_tokens"]
    )


def test_partial_credit_rows(run: Run) -> None:
    """Rows with no outcome and only a float score: the views on ``score`` work; the
    views that need kag's outcomes name what is missing in one line."""
    partial = dataclasses.replace(
        run,
        outcome=np.full(len(run), -1, dtype=np.int8),
        metrics={"score": run.metrics["score"]},
    )
    published = _published()
    rows = leaderboard(partial, "score")
    assert [r.system for r in rows] == sorted(published, key=lambda s: -published[s]["score"])
    for r in rows:
        assert r.mean == pytest.approx(published[r.system]["score"])
    # With no metric named, the run's headline: here its only metric.
    assert partial.headline == "score"
    assert leaderboard(partial) == rows
    for view in (stats_frame, lambda r: accuracy_cost_data(r, cost="money")):
        with pytest.raises(KagreportError, match="no metric 'correct'") as caught:
            view(partial)
        assert "\n" not in str(caught.value)
    assert not math.isnan(cost_frontier(partial, "money", "score")[0].value)


def test_widgets_open_on_a_promptfoo_run(run: Run) -> None:
    view = StatsView(run, cost="tokens")
    assert "Mean tokens per item" in view.table_html
    labels = [label for label, _ in view.cost.options]
    assert len(labels) == len(set(labels))
    assert "Mean latency per item (s)" not in labels  # the generation axis, offered once
    assert "static snapshot" in ComparisonView(run)._repr_mimebundle_()["text/html"]
    assert len(ItemBrowser(run, page_size=100).rows) == len(run)
