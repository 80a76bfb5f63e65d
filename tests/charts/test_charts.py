"""kagreport.charts: the numbers drawn equal the report's, and export works offline (B2, B13-B15)."""

from __future__ import annotations

import json
import math
import re
import shutil
import struct
import subprocess
import warnings
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import pytest

import kagreport.charts as charts
from conftest import Tree, brute_frontier, hand_frame, mcq
from kagreport import StatsReport, grade
from kagreport.charts import (
    accuracy_cost_chart,
    agreement_chart,
    dataset_heatmap,
    forest_plot,
    latency_chart,
    outcomes_chart,
    pairwise_agreement_chart,
    save_figure,
)
from kagreport.charts._accuracy import FRONTIER_LABELS, accuracy_cost_data
from kagreport.charts._export import MissingGlyphWarning, missing_glyphs
from kagreport.charts._theme import COLUMN_WIDTH, THEME_NAME, apply_theme
from kagreport.evaluation import (
    AnswerEvaluation,
    EvaluationComparison,
    MetricComparison,
    evaluation_from_stats,
)
from kagreport.evaluation._agreement import pairwise_agreement
from kagreport.examples import fast_graphrag_2wiki, llmbar_natural
from kagreport.frames import stats_frame
from kagreport.frames._tables import OVERALL
from kagreport.kag import simulate_run

# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> StatsReport:
    """The SIMULATED run: kag-* setups retrieve, native-* do not; every setup answers every item."""
    root = tmp_path_factory.mktemp("sim")
    run = simulate_run(root, questions=40, datasets=3, unparsable_files=0, temporary_files=0)
    return grade(run.datasets_path, run.results_path)


@pytest.fixture(scope="module")
def llmbar() -> AnswerEvaluation:
    return llmbar_natural(agreement_resamples=200)


@pytest.fixture(scope="module")
def retrieval_comparison() -> EvaluationComparison:
    runs = fast_graphrag_2wiki()
    return runs["lightrag"].compare(runs["vdb"], n_resamples=2000)


@pytest.fixture
def b2(tree: Tree) -> StatsReport:
    """PITFALLS.md B2: ``allerr`` has only error records, ``mixed`` one of each outcome."""
    for q in ("q1", "q2", "q3"):
        tree.question("ds", q, mcq("A"))
        tree.error("ds", q, "allerr", "request timed out")
    tree.ok("ds", "q1", "mixed", "A")
    tree.ok("ds", "q2", "mixed", "I cannot tell")
    tree.error("ds", "q3", "mixed", "x")
    return grade(tree.datasets_path, tree.results)


# ------------------------------------------------------------------------------ helpers


def _spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    json.dumps(spec, allow_nan=False)  # B11: no bare NaN or Infinity token
    return spec


def _tables(spec: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return list(spec.get("datasets", {}).values())


def _table(chart: alt.TopLevelMixin, column: str = "setup") -> pd.DataFrame:
    """The chart's table that has ``column`` (guides such as a zero rule have their own)."""
    tables = [rows for rows in _tables(_spec(chart)) if column in rows[0]]
    assert len(tables) == 1
    return pd.DataFrame(tables[0], dtype=object)  # keeps None (null) apart from numbers


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _dicts(value)


def _same(a: Any, b: Any) -> bool:
    """Equal, with None in the chart's data standing for NaN in the frame."""
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return a is None or (isinstance(a, float) and math.isnan(a))
    return bool(a == b)


def _png_rgb(data: bytes, rows: int) -> tuple[int, int, list[bytes]]:
    """Width, height and the first ``rows`` unfiltered scanlines of an 8-bit RGB(A) PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8
    assert colour in (2, 6)
    bpp = 4 if colour == 6 else 3
    raw, stride, lines, prior = zlib.decompress(idat), width * bpp, [], bytes(width * bpp)
    for y in range(min(rows, height)):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prior[i], prior[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (
                    line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)
                ) & 255
        prior = bytes(line)
        lines.append(bytes(b for k in range(0, stride, bpp) for b in line[k : k + 3]))
    return width, height, lines


@pytest.fixture(scope="module")
def all_specs(
    sim: StatsReport, llmbar: AnswerEvaluation, retrieval_comparison: EvaluationComparison
) -> dict[str, dict[str, Any]]:
    """The validated spec of every kind of chart, built once."""
    built = {
        "accuracy": accuracy_cost_chart(sim),
        "accuracy_per_dataset": accuracy_cost_chart(sim, per_dataset=True, cost="graph"),
        "outcomes": outcomes_chart(sim, normalize=True),
        "heatmap": dataset_heatmap(sim, "precision"),
        "latency": latency_chart(sim, "retrieval"),
        "forest": forest_plot(retrieval_comparison),
        "agreement": agreement_chart(llmbar),
        "pairwise": pairwise_agreement_chart(llmbar, "score_1"),
    }
    return {name: _spec(chart) for name, chart in built.items()}


# ------------------------------------------------------------------------- public surface


def test_public_names_exist_and_theme_is_registered() -> None:
    assert charts.__all__ == sorted(charts.__all__, key=lambda n: (not n.isupper(), n))
    for name in charts.__all__:
        assert hasattr(charts, name), name
    assert THEME_NAME in alt.theme.names()


def test_specs_validate_carry_inline_data_and_the_paper_theme(
    all_specs: dict[str, dict[str, Any]],
) -> None:
    for name, spec in all_specs.items():
        # B13: data is inline (values), never fetched from a URL.
        assert not any("url" in d for d in _dicts(spec)), name
        assert _tables(spec), name
        assert all(rows for rows in _tables(spec)), name
        assert spec["config"]["font"] == "Liberation Sans", name
        assert spec["config"]["view"]["stroke"] is None, name  # no chart border
        sizes = [v for d in _dicts(spec["config"]) for k, v in d.items() if k.endswith("ontSize")]
        assert min(sizes) >= 8, name  # paper-ready: nothing below 8 pt


def test_theme_false_leaves_a_composable_chart(sim: StatsReport) -> None:
    plain: list[Any] = [accuracy_cost_chart(sim, theme=False), outcomes_chart(sim, theme=False)]
    assert "font" not in _spec(plain[0]).get("config", {})
    _spec(alt.vconcat(*plain))  # a chart with a config could not be concatenated
    assert _spec(apply_theme(alt.vconcat(*plain)))["config"]["font"] == "Liberation Sans"


def test_text_layers_come_last(all_specs: dict[str, dict[str, Any]]) -> None:
    # B14 / vega/vl-convert#147: a PDF draws text above the shapes declared after it, so no
    # chart declares a shape after a text layer, and PNG and PDF agree.
    for name, spec in all_specs.items():
        marks = [
            layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
            for layer in spec.get("layer", [])
        ]
        if "text" in marks:
            first = marks.index("text")
            assert set(marks[first:]) == {"text"}, (name, marks)


def test_tooltips_show_texts_not_d3_formats(all_specs: dict[str, dict[str, Any]]) -> None:
    # Issue #26 item 5: a tooltip reads what the tables read, a text written in Python by
    # kagreport._format (d3 cannot write its p-values, quantities or points).
    for name, spec in all_specs.items():
        tooltips = [
            t
            for node in _dicts(spec)
            if isinstance(node.get("tooltip"), list)
            for t in node["tooltip"]
            if isinstance(t, dict)
        ]
        assert tooltips, name
        for tooltip in tooltips:
            assert "format" not in tooltip, (name, tooltip)
            assert tooltip["type"] == "nominal", (name, tooltip)


# ----------------------------------------------------------------- accuracy against cost


def test_accuracy_chart_numbers_equal_stats_frame(sim: StatsReport) -> None:
    frame = stats_frame(sim).set_index(["setup", "dataset"])
    for per_dataset in (False, True):
        data = _table(accuracy_cost_chart(sim, per_dataset=per_dataset))
        assert (
            (data["dataset"] != OVERALL).all()
            if per_dataset
            else (data["dataset"] == OVERALL).all()
        )
        assert len(data) == (12 if per_dataset else 4)
        for row in data.to_dict("records"):
            expected = frame.loc[(row["setup"], row["dataset"])]
            # A native setup retrieves nothing: 0 s on this axis, where kag says null.
            native = expected["retrieval_samples"] == 0
            assert row["cost"] == 0.0 if native else row["cost"] > 0, row["setup"]
            for column, source in [
                ("accuracy", "accuracy"),
                ("accuracy_low", "accuracy_low"),
                ("accuracy_high", "accuracy_high"),
                *([] if native else [("cost", "avg_retrieval_secs")]),
                ("total", "total"),
                ("correct", "correct"),
                ("errors", "errors"),
            ]:
                assert _same(row[column], expected[source]), (row["setup"], column)
    graph = _table(accuracy_cost_chart(sim, cost="graph")).set_index("setup")["cost"]
    assert graph.to_dict() == {
        "kag-large": frame.loc[("kag-large", OVERALL), "avg_graph_elements"],
        "kag-small": frame.loc[("kag-small", OVERALL), "avg_graph_elements"],
        "native-large": 0.0,  # no retrieval: 0 graph elements
        "native-small": 0.0,
    }


def test_native_setups_are_points_at_zero_retrieval_cost(sim: StatsReport) -> None:
    # Issue #10 item 7: a setup without a retriever costs 0 s and 0 graph elements; it is a
    # point at 0, labelled so, and takes part in the frontier (it was a rule off the axis).
    for cost, unit in (("retrieval", "s"), ("graph", "elements")):
        chart = accuracy_cost_chart(sim, cost=cost)  # type: ignore[arg-type]
        data = _table(chart).set_index("setup")
        for native in ("native-large", "native-small"):
            assert data.loc[native, "cost"] == 0.0
            assert data.loc[native, "cost_defined"]
            assert data.loc[native, "no_retrieval"]
            assert data.loc[native, "status"] in FRONTIER_LABELS
            assert data.loc[native, "note"] == f"no retrieval, 0 {unit}"
            assert data.loc[native, "label"] == f"{native} (no retrieval, 0 {unit})"
        for kag in ("kag-large", "kag-small"):
            assert not data.loc[kag, "no_retrieval"]
            assert data.loc[kag, "note"] == ""
        # The frontier is the definition's, with the natives at 0 (brute force).
        points = {s: (data.loc[s, "cost"], data.loc[s, "accuracy"]) for s in data.index}
        assert data["frontier"].to_dict() == brute_frontier(points)
        spec = _spec(chart)
        assert f"At 0: 2 setups without retrieval (0 {unit})." in spec["title"]["subtitle"]
        assert not any("Dashed" in line for line in spec["title"]["subtitle"])
    # The default title is the report site's (one wording in Python and on the site).
    title = _spec(accuracy_cost_chart(sim))["title"]["text"]
    # A tree `kagreport simulate` wrote: the title says so, wherever the figure ends up.
    assert sim.simulated
    assert title == ["SIMULATED: Accuracy against mean", "retrieval time"]
    # The most accurate native setup is never dominated: nothing is cheaper than 0.
    best_native = max(("native-large", "native-small"), key=lambda s: sim[s].overall.accuracy)
    assert _table(accuracy_cost_chart(sim)).set_index("setup").loc[best_native, "frontier"]
    # Generation time is defined for every setup, and nobody is at 0 for lack of retrieval.
    generation = _table(accuracy_cost_chart(sim, cost="generation"))
    assert generation["cost_defined"].all()
    assert not generation["no_retrieval"].any()
    assert (generation["cost"] > 0).all()


def test_pareto_frontier_on_hand_made_points() -> None:
    #   cost  acc
    # e 0.5  0.2  cheapest: on the frontier
    # a 1.0  0.5  on
    # b 2.0  0.7  on
    # d 2.5  0.6  dominated by b (cheaper and more accurate)
    # c 3.0  0.9  most accurate: on
    # f NaN  0.99 no retrieval: a rule, never on the frontier (even though it is the most accurate)
    points = {
        "a": (1.0, 0.5),
        "b": (2.0, 0.7),
        "c": (3.0, 0.9),
        "d": (2.5, 0.6),
        "e": (0.5, 0.2),
        "f": (math.nan, 0.99),
    }
    frame = hand_frame(points)
    frame["pareto"] = True  # the chart recomputes the frontier, whatever the frame says
    chart = accuracy_cost_chart(frame)
    data = _table(chart).set_index("setup")
    assert data["frontier"].to_dict() == {
        "a": True,
        "b": True,
        "c": True,
        "d": False,
        "e": True,
        "f": False,
    }
    assert data["status"].to_dict() == {
        "a": "on the Pareto frontier", "b": "on the Pareto frontier", "c": "on the Pareto frontier",
        "d": "dominated", "e": "on the Pareto frontier", "f": "",
    }  # fmt: skip
    spec = _spec(chart)
    line = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "line")
    assert line["mark"]["interpolate"] == "step-after"
    assert {"filter": "datum.frontier"} in line["transform"]
    assert line["encoding"]["order"]["field"] == "cost"
    # Another cost axis has its own frontier: by generation time, c is now the cheapest.
    generation = hand_frame(
        {"a": (3.0, 0.5), "b": (2.0, 0.7), "c": (1.0, 0.9)}, "avg_generation_secs"
    )
    data = accuracy_cost_data(generation, cost="generation").set_index("setup")
    assert data["frontier"].to_dict() == {"a": False, "b": False, "c": True}


def test_accuracy_chart_frontier_per_dataset() -> None:
    frame = pd.concat(
        [
            hand_frame({"x": (1.0, 0.5), "y": (2.0, 0.4)}).assign(dataset="d1"),
            hand_frame({"x": (1.0, 0.5), "y": (2.0, 0.6)}).assign(dataset="d2"),
        ]
    )
    data = accuracy_cost_data(frame, per_dataset=True)
    front = {(r["setup"], r["dataset"]): r["frontier"] for r in data.to_dict("records")}
    assert front == {("x", "d1"): True, ("y", "d1"): False, ("x", "d2"): True, ("y", "d2"): True}


def test_accuracy_chart_rejects_bad_arguments(sim: StatsReport) -> None:
    with pytest.raises(
        ValueError,
        match="`cost` must be one of 'retrieval', 'generation', 'context', 'graph', "
        "'latency', 'tokens', 'input_tokens', 'output_tokens', 'money', not 'joules'",
    ):
        accuracy_cost_chart(sim, cost="joules")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("lacks the column(s) 'accuracy_low'")):
        accuracy_cost_chart(pd.DataFrame({"setup": ["a"], "dataset": [OVERALL], "accuracy": [0.5]}))
    with pytest.raises(TypeError, match=r"expected a kagreport\.runs\.Run"):
        accuracy_cost_chart([1, 2])  # type: ignore[arg-type]


# ------------------------------------------------------------- outcomes, heatmap and B2


def test_outcome_counts_equal_the_report(sim: StatsReport) -> None:
    data = _table(outcomes_chart(sim))
    counts = {(r["setup"], r["outcome"]): r["count"] for r in data.to_dict("records")}
    for setup in sim.setups:
        m = setup.overall
        assert counts[(setup.setup, "correct")] == m.correct
        assert counts[(setup.setup, "incorrect")] == m.incorrect
        assert counts[(setup.setup, "error")] == m.errors
    assert list(dict.fromkeys(data["setup"])) == [s.setup for s in sim.setups]  # kag's ranking
    shares = _table(outcomes_chart(sim, normalize=True)).groupby("setup")["share"].sum()
    assert shares.to_numpy() == pytest.approx(1.0)
    assert _spec(outcomes_chart(sim, normalize=True))["encoding"]["x"]["field"] == "share"


def test_heatmap_values_equal_stats_frame(sim: StatsReport) -> None:
    frame = stats_frame(sim).set_index(["setup", "dataset"])
    data = _table(dataset_heatmap(sim))
    assert len(data) == 4 * 4  # 4 setups x (3 datasets + overall)
    for row in data.to_dict("records"):
        value = frame.loc[(row["setup"], row["dataset"]), "accuracy"]
        assert row["value"] == value
        assert row["label"] == f"{100 * value:.1f}%"  # as the tables write it
    with pytest.raises(ValueError, match=r"`metric` must be one of .*accuracy.*; not 'speed'"):
        dataset_heatmap(sim, "speed")


def test_b2_null_precision_is_missing_not_zero(b2: StatsReport, tmp_path: Path) -> None:
    chart = dataset_heatmap(b2, "precision")
    data = _table(chart).set_index(["setup", "dataset"])
    assert data.loc[("allerr", "ds"), "value"] is None  # null, not 0
    assert data.loc[("allerr", "ds"), "label"] == "—"  # kagreport._format.MISSING
    assert not data.loc[("allerr", "ds"), "defined"]
    assert data.loc[("mixed", "ds"), "value"] == 0.5
    coloured = _spec(chart)["layer"][1]
    assert coloured["transform"] == [{"filter": "datum.defined"}]  # missing cells stay grey
    # The accuracy chart on generation time: allerr has no mean time, so it is a labelled rule.
    by_time = accuracy_cost_chart(b2, cost="generation")
    acc = _table(by_time).set_index("setup")
    assert acc.loc["allerr", "cost"] is None
    assert acc.loc["allerr", "note"] == "no parsed answer"
    assert acc.loc["allerr", "accuracy"] == 0.0
    assert acc.loc["mixed", "accuracy"] == pytest.approx(1 / 3)
    for figure in (chart, by_time):
        save_figure(figure, tmp_path / "b2.svg")  # renders, no crash


# ---------------------------------------------------------------------------- latency, B15


def test_latency_chart_bins_100000_items_into_a_small_chart() -> None:
    rng = np.random.default_rng(0)
    n = 100_000
    secs = rng.lognormal(0.0, 0.5, n)
    secs[::50] = np.nan  # error records have no time
    items = pd.DataFrame(
        {
            "setup": pd.Categorical(np.where(np.arange(n) % 2 == 0, "a", "b")),
            "generation_secs": secs,
            "retrieval_secs": np.nan,
        }
    )
    with alt.data_transformers.enable("default", max_rows=5000):
        chart = latency_chart(items, bins=40)
        spec = _spec(chart)  # no MaxRowsError
    rows = sum(len(t) for t in _tables(spec))
    assert rows <= 2 * 40 + 2
    assert len(json.dumps(spec)) < 60_000
    histogram, summary = (pd.DataFrame(t) for t in _tables(spec))
    timed = items.dropna(subset=["generation_secs"])
    assert (
        histogram.groupby("setup")["count"].sum().to_dict()
        == timed["setup"].value_counts().to_dict()
    )
    medians = summary.set_index("setup")["median"]
    assert medians["a"] == pytest.approx(
        timed.loc[timed["setup"] == "a", "generation_secs"].median()
    )
    assert summary.set_index("setup")["missing"].to_dict() == {"a": 2000, "b": 0}  # every 50th
    # No retrieval time at all: an empty strip and a subtitle, not a crash.
    spec = _spec(latency_chart(items, "retrieval"))
    assert "No retrieval time: a, b." in spec["title"]["subtitle"]


def test_latency_chart_of_a_report(sim: StatsReport) -> None:
    spec = _spec(latency_chart(sim, "retrieval", log=True))
    assert "No retrieval time: native-large, native-small." in spec["title"]["subtitle"]
    histogram = pd.DataFrame(_tables(spec)[0])
    assert set(histogram["setup"]) == {"kag-large", "kag-small"}
    retrieved = sum(s.overall.retrieval.samples for s in sim.setups if s.overall.retrieval)
    assert histogram["count"].sum() == retrieved
    with pytest.raises(ValueError, match="`kind` must be one of 'generation', 'retrieval'"):
        latency_chart(sim, "total")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`bins` must be a positive integer"):
        latency_chart(sim, bins=0)


# ------------------------------------------------------------------- comparison, agreement


def test_forest_plot_values_equal_the_comparison(
    retrieval_comparison: EvaluationComparison, sim: StatsReport
) -> None:
    candidate = evaluation_from_stats(sim, "kag-large", answers=False)
    baseline = evaluation_from_stats(sim, "native-large", answers=False)
    for comparison in (retrieval_comparison, candidate.compare(baseline, n_resamples=2000)):
        data = _table(forest_plot(comparison), "metric").set_index("metric")
        assert list(data.index) == list(comparison.metrics)
        verdicts = comparison.verdicts()
        for name, m in comparison.metrics.items():
            row = data.loc[name]
            assert row["mean_difference"] == m.mean_difference
            # The interval drawn beside the verdict (at the family's adjusted level), not
            # the bootstrap interval the comparison also keeps.
            assert (row["ci_low"], row["ci_high"]) == (verdicts[name].low, verdicts[name].high)
            # NaN (null in the chart's data) for a metric outside the family under test.
            holm = None if math.isnan(m.p_value_holm) else m.p_value_holm
            assert row["p_value_holm"] == holm
            assert row["n_pairs"] == m.n_pairs
            # Filled where the verdict rejects: the Holm-adjusted p in the family, the raw
            # p of a metric judged alone outside it.
            tested = m.p_value_holm if not math.isnan(m.p_value_holm) else m.p_value
            assert row["significant"] == (tested < 0.05)
            assert row["significant"] == (verdicts[name].verdict in ("better", "worse"))
    family = set(retrieval_comparison.family or ())
    drawn = _table(forest_plot(retrieval_comparison), "metric").query("significant")["metric"]
    assert set(drawn) & family == set(retrieval_comparison.significant())
    spec = _spec(forest_plot(retrieval_comparison))
    assert spec["title"]["text"] == "lightrag − vdb"
    zero = spec["layer"][0]
    assert zero["mark"]["type"] == "rule"
    assert zero["encoding"]["x"]["field"] == "zero"


def test_forest_plot_keeps_a_metric_without_pairs() -> None:
    def metric(name: str, diff: float, p: float, n: int) -> MetricComparison:
        return MetricComparison(
            name, n, math.nan, math.nan, diff, diff - 0.1, diff + 0.1, p, p, True, 4, n
        )

    comparison = EvaluationComparison(
        kind="answers",
        candidate="new",
        baseline="old",
        metrics={"a": metric("a", 0.2, 0.01, 10), "b": metric("b", math.nan, math.nan, 0)},
        n_items=10,
    )
    chart = forest_plot(comparison)
    data = _table(chart, "metric").set_index("metric")
    assert data.loc["a", "significant"]
    assert data.loc["a", "status"] == "Holm p < 0.05"
    assert data.loc["b", "mean_difference"] is None
    assert not data.loc["b", "significant"]
    text = _spec(chart)["layer"][-1]
    assert text["encoding"]["text"] == {"value": "no pairs"}


def test_agreement_chart_values_equal_the_evaluation(llmbar: AnswerEvaluation) -> None:
    data = _table(agreement_chart(llmbar), "criterion").set_index("criterion")
    assert list(data.index) == list(llmbar.agreement)
    for criterion, alpha in llmbar.agreement.items():
        assert data.loc[criterion, "alpha"] == alpha
        low, high = llmbar.agreement_intervals[criterion]
        assert (data.loc[criterion, "low"], data.loc[criterion, "high"]) == (low, high)
    assert data.loc["swap_false", "label"] == "swap_false (65 judges)"


def test_pairwise_agreement_chart(llmbar: AnswerEvaluation) -> None:
    judges = [j for j in llmbar.judges if f"{j}.score_1" in llmbar.metrics]
    data = _table(pairwise_agreement_chart(llmbar, "score_1"), "judge_a")
    assert len(data) == len(judges) * (len(judges) - 1) // 2  # the lower triangle
    expected = pairwise_agreement(
        {
            j: [None if math.isnan(v) else v for v in llmbar.per_item(f"{j}.score_1")]
            for j in judges
        },
        "interval",
    )
    for row in data.to_dict("records"):
        pair = (row["judge_a"], row["judge_b"])
        value = expected.get(pair, expected.get(pair[::-1]))
        assert _same(row["alpha"], value)
    means = data.groupby("judge_a")["mean_a"].first()
    order = list(dict.fromkeys(data["judge_a"]))
    assert list(means[order]) == sorted(means, reverse=True)  # sorted by mean alpha
    # 65 judges: legible by default (30 shown, said in the subtitle), all on request.
    spec = _spec(pairwise_agreement_chart(llmbar, "swap_false"))
    assert len(_tables(spec)[0]) == 30 * 29 // 2
    assert "30 of 65 judges: those with the highest mean alpha." in spec["title"]["subtitle"]
    chosen = _table(pairwise_agreement_chart(llmbar, "swap_false", judges=judges[:3]), "judge_a")
    assert len(chosen) == 3
    with pytest.raises(ValueError, match=r"no judge criterion 'tone'.*'swap_false'"):
        pairwise_agreement_chart(llmbar, "tone")
    with pytest.raises(ValueError, match="no ratings on 'score_1' by 'nobody'"):
        pairwise_agreement_chart(llmbar, "score_1", judges=["nobody", judges[0]])


# ------------------------------------------------------------------------ export, B14


def _b14_chart(title: str = "Précision vs coût – 精度") -> Any:
    frame = hand_frame({"qwen35-9b-kag": (0.8, 0.7), "base": (math.nan, 0.5)})
    return accuracy_cost_chart(frame, title=title)


def _expect_glyph_warning(path: Path, chart: Any) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save_figure(chart, path)
    return [w for w in caught if issubclass(w.category, MissingGlyphWarning)]


def test_save_figure_writes_svg_png_and_pdf(tmp_path: Path) -> None:
    chart = _b14_chart()
    missing = missing_glyphs("精度")  # what this host lacks (no CJK font on a clean Debian)
    svg_path = tmp_path / "figure.svg"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SVG keeps text as text: nothing to warn about
        assert save_figure(chart, svg_path) == svg_path
    root = ET.parse(svg_path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("width") == "237.6"  # a paper column: 3.3 in at 72 px per inch
    texts = " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "Précision vs coût – 精度" in texts
    assert "qwen35-9b-kag" in texts
    height = float(root.get("height", "0"))

    for suffix in (".png", ".pdf"):
        caught = _expect_glyph_warning(tmp_path / f"figure{suffix}", chart)
        if missing:  # never silent tofu: the warning names the characters
            assert len(caught) == 1, suffix
            assert "精" in str(caught[0].message), suffix
            assert caught[0].message.characters == missing  # type: ignore[union-attr]
        else:
            assert caught == [], suffix

    png = (tmp_path / "figure.png").read_bytes()
    assert png[:4] == b"\x89PNG"
    assert len(png) > 5_000
    width, png_height, rows = _png_rgb(png, 24)
    assert width == 990  # 3.3 in x 300 dpi
    assert abs(png_height - height * 300 / 72) <= 1
    assert png[png.index(b"pHYs") + 4 : png.index(b"pHYs") + 13] == struct.pack(
        ">IIB", 11811, 11811, 1
    )  # 300 ppi: 300 / 0.0254 pixels per metre
    dark = sum(1 for line in rows for k in range(0, len(line), 3) if max(line[k : k + 3]) < 90)
    assert dark > 50  # the title's text pixels

    pdf = (tmp_path / "figure.pdf").read_bytes()
    assert pdf[:5] == b"%PDF-"
    assert len(pdf) > 5_000
    assert pdf.rstrip().endswith(b"%%EOF")
    if shutil.which("pdftotext"):
        text = subprocess.run(
            ["pdftotext", str(tmp_path / "figure.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "Précision" in text
        assert "qwen35-9b-kag" in text


def test_label_size_zero_and_a_later_shape_export(tmp_path: Path) -> None:
    # vega/vl-convert#172: labelFontSize 0 once aborted with "Failed to locate text in SVG".
    chart = _b14_chart(title="Précision vs coût").configure_axis(labelFontSize=0)
    for suffix in (".svg", ".png", ".pdf"):
        path = save_figure(chart, tmp_path / f"zero{suffix}")
        assert path.stat().st_size > 1_000
    assert 'font-size="0px"' in (tmp_path / "zero.svg").read_text(encoding="utf-8")
    # A user's chart with a shape after its text still exports (it is their layering).
    data = pd.DataFrame({"x": [1.0], "y": [1.0], "t": ["qwen35-9b-kag"]})
    base = alt.Chart(data)
    layered = alt.layer(
        base.mark_text().encode(x="x", y="y", text="t"),
        base.mark_rect(color="white").encode(x="x", y="y"),
    )
    for suffix in (".png", ".pdf"):
        assert save_figure(layered, tmp_path / f"layered{suffix}").stat().st_size > 500


def test_missing_glyphs_asks_the_renderer(tmp_path: Path) -> None:
    assert missing_glyphs("plain ASCII, Précision – α") == ""  # Liberation Sans has these
    assert missing_glyphs("a\u0380b\u0380") == "\u0380"  # unassigned: no font has it
    with pytest.warns(MissingGlyphWarning, match="U\\+0380"):
        save_figure(_b14_chart(title="x \u0380"), tmp_path / "tofu.pdf")


def test_save_figure_size_font_and_errors(tmp_path: Path) -> None:
    chart = _b14_chart(title="Sizes")
    wide = save_figure(chart, tmp_path / "wide.svg", width=300, font="DejaVu Sans")
    root = ET.parse(wide).getroot()
    assert root.get("width") == "300"
    assert any(
        t.get("font-family") == "DejaVu Sans" for t in root.iter("{http://www.w3.org/2000/svg}text")
    )
    with pytest.raises(
        ValueError, match=re.escape("suffix '.jpg'; use one of .svg, .png, .pdf, .html")
    ):
        save_figure(chart, tmp_path / "figure.jpg")
    with pytest.raises(ValueError, match="`scale` must be a positive number"):
        save_figure(chart, tmp_path / "figure.png", scale=0)
    with pytest.raises(ValueError, match="`width` must be a positive number of pixels"):
        save_figure(chart, tmp_path / "figure.png", width=-5)
    assert not (tmp_path / "figure.jpg").exists()
    assert not (tmp_path / "figure.png").exists()
    # Atomic: a spec vl-convert rejects leaves the existing file as it was, and no temporary.
    existing = tmp_path / "kept.svg"
    existing.write_text("old", encoding="utf-8")
    with pytest.raises(ValueError):  # noqa: PT011 - vl-convert's own message
        save_figure(
            {
                "mark": "point",
                "encoding": {"x": {"field": "a", "type": "quantitative"}},
                "data": {"values": [{"a": 1}]},
                "transform": [{"calculate": "(", "as": "b"}],
            },
            existing,
        )
    assert existing.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.svg", "wide.svg"]


@pytest.mark.slow
def test_save_figure_html_is_self_contained(tmp_path: Path, sim: StatsReport) -> None:
    page = save_figure(outcomes_chart(sim), tmp_path / "outcomes.html").read_text(encoding="utf-8")
    assert 'src="http' not in page
    assert "from 'http" not in page
    assert 'from "http' not in page
    assert '"kag-large"' in page  # the data is in the page


# ------------------------------------------------------------------ nothing outside the figure


def _content_width(chart: alt.TopLevelMixin) -> tuple[float, float]:
    """(figure width, width everything drawn needs), from vl-convert's own layout.

    The paper theme fixes the figure width (``autosize: fit-x``) and shrinks the plot to fit;
    whatever cannot fit is clipped at the figure's edge. Laid out again with the plot at that
    width and ``autosize: pad`` (the figure grows to hold everything), the figure's width is
    what the content needs: any excess is text the fixed-width figure clips.
    """
    import copy

    import vl_convert as vlc

    from kagreport.charts._export import vegalite_version

    spec = chart.to_dict()
    fitted = vlc.vegalite_to_scenegraph(spec, vl_version=vegalite_version())
    padded = copy.deepcopy(spec)
    padded["width"] = fitted["scenegraph"]["items"][0]["width"]
    padded["config"]["autosize"] = {"type": "pad", "contains": "padding"}
    grown = vlc.vegalite_to_scenegraph(padded, vl_version=vegalite_version())
    return float(fitted["width"]), float(grown["width"])


LONG_NAMES = (
    "meta-llama-3-1-70b-instruct",
    "gemini-1-5-flash-002 with a knowledge graph",
    "deepseek-coder-v2",
    "a-setup-name-of-sixty-four-characters-with-no-space-in-it-at-all",
)


def _long_comparison_frame() -> pd.DataFrame:
    rows = []
    for i, name in enumerate(LONG_NAMES):
        rows.append(
            {
                "metric": f"{name} − gemini-1-5-pro-002",
                "mean_difference": -0.1 * i,
                "ci_low": -0.1 * i - 0.05,
                "ci_high": -0.1 * i + 0.05,
                "p_value": 0.01,
                "p_value_holm": 0.03 * (i + 1),
                "n_pairs": 491.0,
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda f: outcomes_chart(f), id="outcomes"),
        pytest.param(lambda f: outcomes_chart(f, normalize=True), id="outcomes-shares"),
        pytest.param(lambda f: dataset_heatmap(f), id="heatmap"),
        pytest.param(
            lambda f: accuracy_cost_chart(f, title="Accuracy against mean retrieval time (s)"),
            id="accuracy-cost",
        ),
        pytest.param(
            lambda f: forest_plot(
                _long_comparison_frame(),
                title="Accuracy difference against gemini-1-5-pro-002 (MMLU-Pro philosophy)",
            ),
            id="forest",
        ),
        pytest.param(
            lambda f: forest_plot(
                _long_comparison_frame().assign(metric=lambda d: d["metric"] + "x" * 120),
                title="Accuracy difference against " + "y" * 70,
            ),
            id="forest-no-spaces",
        ),
    ],
)
def test_no_text_runs_past_a_one_column_figure(sim: StatsReport, make: Any) -> None:
    """Long setup names and titles (as on the report site) stay inside the 240 px figure."""
    frame = stats_frame(sim)
    renamed = {name: LONG_NAMES[i % len(LONG_NAMES)] + f"{i}" for i, name in
               enumerate(sorted(frame["setup"].unique()))}  # fmt: skip
    frame = frame.assign(setup=frame["setup"].map(renamed))
    figure, needed = _content_width(make(frame))
    assert figure == COLUMN_WIDTH
    assert needed <= figure + 0.5, f"content needs {needed} px of a {figure} px figure"


def test_evaluation_charts_stay_inside_the_figure(
    llmbar: AnswerEvaluation, retrieval_comparison: EvaluationComparison
) -> None:
    for chart in (
        agreement_chart(llmbar),
        pairwise_agreement_chart(llmbar, "score_1"),
        forest_plot(retrieval_comparison),
    ):
        figure, needed = _content_width(chart)
        assert needed <= figure + 0.5, f"content needs {needed} px of a {figure} px figure"
