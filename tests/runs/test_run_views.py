"""The views draw from the run model: a kag run and a list of evaluations of it give the
same leaderboard, comparisons, frames and charts, and the views compute no statistics.

Expected numbers come from the raw result files read by hand (kag's rule on one-letter
responses), scipy.stats.binomtest on the discordant pairs and Holm's step-down worked by
hand; the two runs are also checked against each other and against the report.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from kagreport import KagreportError
from kagreport.charts import (
    accuracy_cost_chart,
    dataset_heatmap,
    forest_plot,
    latency_chart,
    outcomes_chart,
)
from kagreport.charts._accuracy import accuracy_cost_data
from kagreport.charts._forest import forest_data
from kagreport.evaluation import evaluation_from_stats
from kagreport.examples import ExampleRun, mmlu_pro_philosophy
from kagreport.frames import comparison_frame, items_frame, stats_frame, to_latex
from kagreport.frames._tables import RETRIEVAL_COSTS
from kagreport.grading import StatsReport, grade
from kagreport.kag import simulate_run
from kagreport.runs import Run, compare_setups, cost_frontier, leaderboard, setup_metrics
from kagreport.runs._costs import COSTS

# ------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def example() -> ExampleRun:
    return mmlu_pro_philosophy()


@pytest.fixture(scope="module")
def report(example: ExampleRun) -> StatsReport:
    return grade(example.datasets, example.results)


@pytest.fixture(scope="module")
def from_stats(report: StatsReport) -> Run:
    return Run.from_stats(report)


@pytest.fixture(scope="module")
def from_evaluations(report: StatsReport) -> Run:
    # deepseek-coder-v2 lacks 8 of the 499 result files: a run whose systems lack items.
    evaluations = [evaluation_from_stats(report, s) for s in report.setup_names]
    return Run.from_evaluations(evaluations, same_items=False)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> StatsReport:
    """SIMULATED: kag-* setups retrieve, native-* do not; error records, unparsable files."""
    root = tmp_path_factory.mktemp("sim")
    run = simulate_run(root, questions=30, datasets=3)
    return grade(run.datasets_path, run.results_path)


@pytest.fixture(scope="module")
def by_hand(example: ExampleRun) -> dict[str, dict[str, float]]:
    """Setup -> "dataset/question" -> 1.0 correct / 0.0 not, from the raw files.

    kag's rule (trim, compare ignoring ASCII case) on responses that are one ASCII letter
    or empty, which this example's are (asserted): ``strip().lower()`` is then the rule.
    """
    truth = json.loads(Path(example.datasets).read_text(encoding="utf-8"))
    found: dict[str, dict[str, float]] = {}
    for dataset, questions in truth.items():
        for question, entry in questions.items():
            answer = entry["output"]["answer"]
            for path in sorted((Path(example.results) / dataset / question).glob("*.json")):
                record = json.loads(path.read_text(encoding="utf-8"))
                response = record["ok"]["result"] if "ok" in record else None
                assert response is None or re.fullmatch(r"[A-Za-z]?", response.strip())
                correct = response is not None and response.strip().lower() == answer.lower()
                found.setdefault(path.stem, {})[f"{dataset}/{question}"] = float(correct)
    return found


#: The cost axes a kag tree records (tokens and money come from other tools).
KAG_COSTS = ("retrieval", "generation", "context", "graph")


def _holm(p: list[float]) -> list[float]:
    """Holm (1979) by hand: the i-th smallest of k p-values times (k - i), running maximum."""
    order = sorted(range(len(p)), key=p.__getitem__)
    adjusted, running = [0.0] * len(p), 0.0
    for i, at in enumerate(order):
        running = max(running, min(1.0, (len(p) - i) * p[at]))
        adjusted[at] = running
    return adjusted


def _chart_table(chart: alt.TopLevelMixin, column: str) -> list[dict[str, Any]]:
    """The chart's inline rows that hold ``column``, from ``chart.to_dict()``."""
    spec = chart.to_dict()
    json.dumps(spec, allow_nan=False)
    tables = [rows for rows in spec.get("datasets", {}).values() if rows and column in rows[0]]
    assert len(tables) == 1
    return list(tables[0])


# ------------------------------------------------------- (a) one model, two sources, same views


def test_leaderboard_matches_the_files_read_by_hand(
    report: StatsReport, from_stats: Run, from_evaluations: Run, by_hand: Any
) -> None:
    for run in (from_stats, from_evaluations):
        board = leaderboard(run)
        assert [row.system for row in board] == list(report.setup_names)
        for row in board:
            values = by_hand[row.system].values()
            # kag's accuracy: correct / scorable files of the setup, one division.
            assert row.mean == sum(values) / len(values)
            assert (row.n_items, row.n_defined, row.n_errors) == (len(values), len(values), 0)
    assert leaderboard(from_stats) == leaderboard(from_evaluations)


def test_comparisons_match_binomtest_and_holm_by_hand(
    from_stats: Run, from_evaluations: Run, by_hand: Any
) -> None:
    found = [compare_setups(run, pairs="all-pairs") for run in (from_stats, from_evaluations)]
    assert found[0].family == found[1].family
    assert len(found[0].comparisons) == 15  # 6 setups: every pair
    p_values = []
    for c, d in zip(found[0].comparisons, found[1].comparisons, strict=True):
        assert (c.candidate, c.baseline) == (d.candidate, d.baseline)
        a, b = by_hand[c.candidate], by_hand[c.baseline]
        shared = sorted(set(a) & set(b))
        assert (c.only_candidate, c.only_baseline) == (len(a) - len(shared), len(b) - len(shared))
        only_c = sum(1 for k in shared if a[k] > b[k])
        only_b = sum(1 for k in shared if a[k] < b[k])
        # 0/1 correctness: the exact sign-flip test is the exact binomial test on the
        # discordant pairs (McNemar's exact test).
        p = scipy_stats.binomtest(only_c, only_c + only_b, 0.5).pvalue
        p_values.append(p)
        for pair in (c, d):
            metric = pair.comparison.metrics["correct"]
            assert metric.n_pairs == len(shared)
            assert metric.p_value == pytest.approx(p, rel=1e-9, abs=1e-300)
            difference = (sum(a[k] for k in shared) - sum(b[k] for k in shared)) / len(shared)
            assert metric.mean_difference == pytest.approx(difference, rel=0, abs=1e-15)
            flipped = {k for k in shared if a[k] != b[k]}
            assert {f[0] for f in pair.flips} == flipped
            for item, outcome_c, outcome_b in pair.flips:
                assert (outcome_c == "correct") == (a[item] == 1.0)
                assert (outcome_b == "correct") == (b[item] == 1.0)
        assert c.flips == d.flips
        assert c.p_values_family == d.p_values_family
        assert c.comparison.metrics["correct"].p_value == d.comparison.metrics["correct"].p_value
    family = [c.p_values_family["correct"] for c in found[0].comparisons]
    assert family == pytest.approx(_holm(p_values), rel=1e-9, abs=1e-300)
    assert all(c.family_size == 15 for c in found[0].comparisons)


def test_stats_frame_of_a_run_is_the_reports(
    report: StatsReport, from_stats: Run, from_evaluations: Run
) -> None:
    assert setup_metrics(from_stats) == report.setups
    expected = stats_frame(report)
    pd.testing.assert_frame_equal(stats_frame(from_stats), expected, check_exact=True)
    # The kag bridge's items record every cost kag has: the same frame, to the bit.
    pd.testing.assert_frame_equal(stats_frame(from_evaluations), expected, check_exact=True)


def test_accuracy_chart_data_is_the_same_from_both(
    report: StatsReport, from_stats: Run, from_evaluations: Run, by_hand: Any
) -> None:
    tables = [
        _chart_table(accuracy_cost_chart(source, cost="generation"), "accuracy")
        for source in (report, from_stats, from_evaluations)
    ]
    assert tables[0] == tables[1] == tables[2]
    accuracy = {row["setup"]: row["accuracy"] for row in tables[0]}
    assert accuracy == {s: sum(v.values()) / len(v) for s, v in by_hand.items()}
    # The other charts of the outcomes are the same too.
    for chart in (outcomes_chart, dataset_heatmap):
        assert chart(from_evaluations).to_dict() == chart(report).to_dict()


def _row_costs(run: Run) -> dict[tuple[str, str, str, str], float]:
    return {
        (run.systems[s], run.dataset_names[d], run.question_names[q], name): float(values[i])
        for name, values in run.costs.items()
        for i, (s, d, q) in enumerate(zip(run.system, run.dataset, run.question, strict=True))
    }


def test_a_run_from_evaluations_carries_the_costs_its_items_record(
    report: StatsReport, from_stats: Run, from_evaluations: Run, sim: StatsReport
) -> None:
    # The kag bridge records each item's costs in its metadata (None where kag has none):
    # the run of the evaluations holds the report's costs item by item, so every cost
    # axis draws the same chart from the report, its run and its evaluations.
    for source, run in ((report, from_stats), (sim, Run.from_stats(sim))):
        evaluations = [evaluation_from_stats(source, s) for s in source.setup_names]
        again = Run.from_evaluations(evaluations, same_items=False)
        assert sorted(again.costs) == sorted(run.costs)
        want, got = _row_costs(run), _row_costs(again)
        assert got.keys() == want.keys()
        assert all(got[k] == v or (v != v and got[k] != got[k]) for k, v in want.items())
        for cost in KAG_COSTS:
            tables = [
                _chart_table(accuracy_cost_chart(x, cost=cost), "accuracy")  # type: ignore[arg-type]
                for x in (source, run, again)
            ]
            assert tables[0] == tables[1] == tables[2], cost
    assert sorted(from_evaluations.costs) == sorted(from_stats.costs)


def test_a_run_from_evaluations_names_what_it_lacks(report: StatsReport) -> None:
    # Evaluations whose items record no cost but their latency (any other tool's items).
    from dataclasses import replace

    bare = []
    for setup in report.setup_names:
        evaluation = evaluation_from_stats(report, setup)
        items = tuple(
            replace(i, metadata={k: i.metadata[k] for k in ("dataset", "question")})
            for i in evaluation.items
        )
        bare.append(replace(evaluation, items=items))
    from_evaluations = Run.from_evaluations(bare, same_items=False)
    assert sorted(from_evaluations.costs) == ["generation_secs"]
    for cost in ("retrieval", "graph", "context"):
        with pytest.raises(KagreportError, match=COSTS[cost].columns[0]):
            accuracy_cost_chart(from_evaluations, cost=cost)  # type: ignore[arg-type]
        with pytest.raises(KagreportError, match=COSTS[cost].columns[0]):
            cost_frontier(from_evaluations, cost)
    with pytest.raises(KagreportError, match="'retrieval_secs'"):
        latency_chart(from_evaluations, "retrieval")
    latency_chart(from_evaluations, "generation")  # what it has, it draws
    # A run without outcomes (a judge score, no 'correct'): kag's tables name the metric.
    zeros = np.zeros(2, dtype=np.int32)
    judged = Run(
        kind="answers",
        systems=("a",),
        dataset_names=("",),
        question_names=("q1", "q2"),
        system=zeros,
        dataset=zeros,
        question=np.arange(2, dtype=np.int32),
        outcome=np.full(2, -1, dtype=np.int8),
        metrics={"judge.score": np.array([0.5, 1.0])},
        costs={"generation_secs": np.array([1.0, 2.0])},
    )
    with pytest.raises(KagreportError, match=r"'correct'.*judge\.score"):
        stats_frame(judged)
    with pytest.raises(KagreportError, match="'correct'"):
        accuracy_cost_chart(judged, cost="generation")
    assert leaderboard(judged, "judge.score")[0].mean == 0.75


KAG_COST_COLUMNS = (
    "generation_secs",
    "retrieval_secs",
    "vertices",
    "relationships",
    "properties",
    "context_bytes",
)


def test_sim_metrics_frames_and_charts_equal_the_reports(sim: StatsReport) -> None:
    run = Run.from_stats(sim)
    assert setup_metrics(run) == sim.setups
    pd.testing.assert_frame_equal(stats_frame(run), stats_frame(sim), check_exact=True)
    # A report's items frame is its run's (the frames draw a run).
    got_items = items_frame(run)
    pd.testing.assert_frame_equal(got_items, items_frame(sim))
    assert got_items["correct"].tolist() == (got_items["outcome"] == "correct").tolist()
    columns = ["setup", "dataset", "question", "outcome", *KAG_COST_COLUMNS, "correct"]
    assert list(got_items.columns) == columns
    for name in KAG_COST_COLUMNS:
        np.testing.assert_array_equal(got_items[name].to_numpy(), sim.items.column(name))
    for cost in KAG_COSTS:
        assert accuracy_cost_data(run, cost=cost).equals(accuracy_cost_data(sim, cost=cost))
        for per_dataset in (False, True):
            assert (
                accuracy_cost_chart(run, cost=cost, per_dataset=per_dataset).to_dict()
                == accuracy_cost_chart(sim, cost=cost, per_dataset=per_dataset).to_dict()
            )
    for kind in ("generation", "retrieval"):
        assert latency_chart(run, kind).to_dict() == latency_chart(sim, kind).to_dict()  # type: ignore[arg-type]
    assert to_latex(run) == to_latex(sim)
    # Evaluations of the same run (unparsable files: systems lack items).
    evaluations = [evaluation_from_stats(sim, s, answers=False) for s in sim.setup_names]
    other = Run.from_evaluations(evaluations, same_items=False)
    assert leaderboard(other) == leaderboard(run)
    assert [c.flips for c in compare_setups(other)] == [c.flips for c in compare_setups(run)]
    frame = stats_frame(other)
    assert frame["errors"].tolist() == stats_frame(sim)["errors"].tolist()
    assert frame["errors"].sum() > 0  # the simulated run has error records


def test_cost_frontier_is_the_charts_frontier(sim: StatsReport) -> None:
    run = Run.from_stats(sim)
    for cost in KAG_COSTS:
        data = accuracy_cost_data(sim, cost=cost)
        chart = dict(zip(data["setup"], data["frontier"], strict=True))
        points = cost_frontier(run, cost)
        assert {p.system: p.on_frontier for p in points} == chart
        means = dict(zip(data["setup"], data["cost"], strict=True))
        for p in points:
            # The chart's kag mean of a time is a Rust Duration (whole nanoseconds); the
            # run's is the float mean: they agree to half a nanosecond.
            close = {"abs": 1e-9} if cost in ("retrieval", "generation") else {"rel": 1e-12}
            assert p.cost == pytest.approx(means[p.system], **close)
        # The column names work as well as the axis names.
        if len(COSTS[cost].columns) == 1:
            assert cost_frontier(run, COSTS[cost].columns[0]) == points
    # Native setups retrieve nothing: 0 on the retrieval axes, as the chart draws them.
    native = [s for s in run.systems if s.startswith("native")]
    assert native
    for cost in RETRIEVAL_COSTS:
        assert {p.system: p.cost for p in cost_frontier(run, cost) if p.system in native} == {
            s: 0.0 for s in native
        }
    with pytest.raises(KagreportError, match="no cost 'joules'"):
        cost_frontier(run, "joules")
    with pytest.raises(KagreportError, match="no cost column 'input_tokens', 'output_tokens'"):
        cost_frontier(run, "tokens")  # a kag run records no tokens


def test_forest_plots_and_tables_of_run_comparisons(from_stats: Run) -> None:
    found = compare_setups(from_stats, n_resamples=2000)
    rows = forest_data(found)
    assert rows["metric"].tolist() == [c.candidate for c in found.comparisons]
    assert rows["p_value_holm"].tolist() == [c.p_values_family["correct"] for c in found]
    pair = found.comparisons[0]
    single = forest_data(pair)
    assert single["p_value_holm"].tolist() == [pair.p_values_family["correct"]]
    assert single["p_value"].tolist() == [pair.comparison.metrics["correct"].p_value]
    spec = forest_plot(found).to_dict()
    assert " ".join(spec["title"]["text"]) == "Difference in correct against gemini-1-5-pro-002"
    all_pairs = compare_setups(from_stats, pairs="all-pairs", n_resamples=2000)
    labels = forest_data(all_pairs)["metric"].tolist()
    assert labels == [f"{c.candidate} − {c.baseline}" for c in all_pairs]
    frame = comparison_frame(all_pairs)
    assert len(frame) == 15
    assert frame["p_value_holm"].tolist() == [c.p_values_family["correct"] for c in all_pairs]
    latex = to_latex(pair)
    assert "Holm across the run" in latex
    assert "5 hypotheses" in latex
    with pytest.raises(KagreportError, match="no metric 'f1'"):
        forest_data(found, metric="f1")


def test_comparison_reprs_are_short(from_stats: Run) -> None:
    found = compare_setups(from_stats, pairs="all-pairs", n_resamples=2000)
    flips = sum(len(c.flips) for c in found)
    assert flips > 1000
    text = repr(found)
    assert len(text.splitlines()) == 1 + 5 + 1  # head, five pairs, "... 10 more"
    assert "... 10 more" in text
    assert "15 pairs x 1 metric (correct)" in text
    assert len(text) < 2000
    one = repr(found.comparisons[0])
    assert f"{len(found.comparisons[0].flips)} flipped" in one
    assert one.count("/") <= 3 + 1  # three items shown (dataset/question), then "N more"
    assert len(one) < 400


# ------------------------------------------------------------- (b) the views compute no statistics

VIEWS = ("frames", "charts", "widgets", "site")
SOURCE = Path(__file__).resolve().parents[2] / "src" / "kagreport"
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: Where the check runs: a view package's name, or this for a notebook's cells.
NOTEBOOK = "notebooks"

#: Modules whose import is a statistics library (or a random draw) of its own.
FORBIDDEN_MODULES = ("scipy", "statistics", "statsmodels", "sklearn", "pingouin", "random")
#: Packages whose public names the views may use for numbers.
PUBLIC = ("kagreport.stats", "kagreport.runs", "kagreport.evaluation")
#: The views that may call kagreport.stats themselves, with the reason; the others (the
#: widgets, the site, the notebooks) show numbers computed by the run model and the frames.
STATS_USERS = {
    "frames": "stats_frame's Wilson intervals of kag's counts and its retrieval frontier",
    # It reached the same function through frames' re-export before issue 30 removed it.
    "charts": "the accuracy-against-cost chart's Pareto frontier, recomputed for the chosen axis",
}
#: Private modules outside its own package a view may import: (views, the names, or None for
#: any name of an infrastructure module, the reason). The notebooks import none.
ALLOWED_PRIVATE: dict[str, tuple[tuple[str, ...], frozenset[str] | None, str]] = {
    "kagreport._errors": (VIEWS, None, "the one exception tree"),
    "kagreport._optional": (VIEWS, None, "the one-line error naming a missing extra"),
    "kagreport._format": (
        ("frames", "charts", "widgets", "site"),
        None,
        "the one formatting module",
    ),
    "kagreport._atomic": (("charts", "site"), None, "atomic writes of figures and pages"),
    "kagreport._signals": (("site",), None, "the stop state of a long build"),
    "kagreport._io": (("site",), None, "reading a named file that may be a FIFO"),
    "kagreport._document._config": (
        ("site",),
        frozenset({"decode_config", "read_toml"}),
        "the site configuration file decoded as every configuration file is",
    ),
    "kagreport.evaluation._text": (
        ("frames", "charts", "widgets", "site"),
        frozenset({"compared_proportion", "family_label", "method_label"}),
        "display labels only: how a p-value was computed, which metrics Holm ran over, "
        "whether a compared metric shows as a percentage",
    ),
    "kagreport.evaluation._correction": (
        ("site",),
        frozenset(
            {
                "METHOD_NOTE",
                "TITLES",
                "correction_cells",
                "correction_sentence",
                "is_proportion_correction",
            }
        ),
        "display only: the human labels' correction (computed by the evaluation) in the "
        "cells and sentence the text view shows",
    ),
    "kagreport.runs._times": (
        ("site",),
        frozenset({"kept_file_time", "run_time"}),
        "display only: a history run's time and which file time it is, as the run model's "
        "history orders the runs",
    ),
    "kagreport.charts._export": (
        ("widgets", "site"),
        frozenset({"vegalite_version", "paper_spec"}),
        "the Vega-Lite version the charts' offline export targets, and the paper figure a "
        "page's export button restores",
    ),
    # Issue 30: the plumbing the views share went private; each view reaches it here, named.
    "kagreport.charts._data": (
        ("site",),
        frozenset({"SIMULATED", "label_title"}),
        "the SIMULATED label a chart title carries, so a page's title says it the same way",
    ),
    "kagreport.charts._live": (("widgets",), frozenset({"live_available"}), "live charts or not"),
    "kagreport.charts._renderer": (
        ("widgets",),
        frozenset({"notebook_spec"}),
        "the chart a widget shows is the spec the notebook renderer would show",
    ),
    "kagreport.charts._retrieval_answer": (
        ("site",),
        frozenset({"CELL_LABELS"}),
        "the chart's cell names, as the page's table names them",
    ),
    "kagreport.charts._theme": (
        ("site",),
        frozenset({"fit_container"}),
        "a page's chart fills its column",
    ),
    "kagreport.evaluation._agreement": (
        ("charts",),
        frozenset({"pairwise_agreement"}),
        "the pairwise table the evaluation computes, drawn",
    ),
    "kagreport.evaluation._compare": (
        ("widgets",),
        frozenset({"primary_metrics"}),
        "which metrics a comparison tests by default, as `compare` chooses them",
    ),
    "kagreport.evaluation._read": (
        ("site",),
        frozenset({"read_report"}),
        "an evaluation report file of either kind",
    ),
    "kagreport.evaluation._retrieval_answer": (
        ("site",),
        frozenset({"retrieval_answer_from_reports"}),
        "the retrieval-against-answer table of two report files",
    ),
    "kagreport.examples._attribution": (
        ("site",),
        frozenset({"FAST_GRAPHRAG_ATTRIBUTION", "LLMBAR_ATTRIBUTION"}),
        "the bundled examples' sources and licences, shown with them",
    ),
    "kagreport.frames._tables": (
        ("charts", "widgets", "site"),
        frozenset({"COST_AXES", "OVERALL", "RETRIEVAL_COSTS", "cost_values", "no_retrieval"}),
        "the cost axes of the accuracy-against-cost plane and a setup's cost on them, as the "
        "stats frame holds them",
    ),
    "kagreport.runs._columns": (("widgets", "site"), frozenset({"OUTCOMES"}), "outcome labels"),
    "kagreport.runs._costs": (
        ("frames", "charts", "widgets", "site"),
        frozenset({"COSTS", "cost_axis", "recorded_columns", "recorded_costs"}),
        "the run model's one table of cost axes and which costs a run recorded",
    ),
    "kagreport.runs._intervals": (
        ("charts",),
        frozenset({"cost_intervals"}),
        "the bootstrap interval of a mean cost, computed by the run model",
    ),
    "kagreport.runs._leaderboard": (
        ("frames", "site"),
        frozenset({"CLUSTER_INTERVAL"}),
        "the label of the clustered interval the leaderboard computes",
    ),
    "kagreport.runs._metrics": (
        ("site",),
        frozenset({"kag_stats_json"}),
        "the kag stats JSON a page offers for download, as kag writes it",
    ),
    "kagreport.runs._search": (
        ("widgets",),
        frozenset({"response_matcher"}),
        "the item browser searches responses as `stats find` does",
    ),
    "kagreport.sources._registry": (
        ("site",),
        frozenset({"FORMATS"}),
        "the format names a site configuration may give",
    ),
}
#: NumPy reductions and draws a view must not make: numbers come from the run model.
NUMPY_FORBIDDEN = {"mean", "nanmean", "average", "std", "nanstd", "var", "median", "percentile"}
NUMPY_FORBIDDEN |= {"quantile", "corrcoef", "cumsum", "sum", "nansum", "random"}
#: (file, NumPy function) a view may call, with the reason.
NUMPY_ALLOWED = {
    (
        "charts/_latency.py",
        "quantile",
    ): "the latency chart's percentile summary of the times it draws",
    ("charts/_agreement.py", "nansum"): "the mean of the alphas it is given, to order the judges",
}
#: kagreport's statistics functions: a notebook shows their results, never calls them.
PRIMITIVES = {"holm_adjust", "sign_flip_test", "bootstrap_mean_interval", "paired_differences"}
PRIMITIVES |= {"pareto_front", "wilson_interval", "compare_scores", "alpha_bootstrap_interval"}
PRIMITIVES |= {"bootstrap_alphas", "exact_mean", "pairable"}
#: Names that say a function computes a statistic.
STATISTIC = re.compile(
    r"interval|holm|p_?value|bootstrap|pareto|sign_?flip|alpha|wilson|krippendorff|"
    r"binom|mcnemar|permutation",
    re.IGNORECASE,
)
#: Functions whose name matches STATISTIC but that only format numbers they are given.
DISPLAY_HELPERS = {
    ("frames/_latex.py", "_interval"): "formats a value and its bounds as LaTeX text",
    ("site/_templates.py", "holm_family"): "names the family a Holm adjustment covers",
    ("widgets/_html.py", "fmt_percent_interval"): "formats a proportion and its bounds in %",
    ("widgets/_stats.py", "interval"): "a table column's formatter of given bounds",
    ("site/_evaluations.py", "shown_interval"): "formats a value and its bounds as page text",
    ("site/_templates.py", "fmt_mean_interval"): "the page filter of a mean and its bounds",
    ("site/_templates.py", "split_interval"): "splits a formatted interval off its value",
    ("charts/_data.py", "quantity_interval"): "formats an amount and its bounds for a tooltip",
}


def _view_modules() -> list[tuple[str, Path]]:
    paths = [(view, p) for view in VIEWS for p in sorted((SOURCE / view).rglob("*.py"))]
    assert len(paths) > 20
    return paths


def _notebook_sources() -> list[tuple[str, str]]:
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = [
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells
            if c["cell_type"] == "code"
        ]
        # IPython magics and shell lines are not Python.
        text = "\n".join(
            line
            for block in code
            for line in block.splitlines()
            if line.lstrip()[:1] not in ("%", "!")
        )
        found.append((path.name, text))
    assert len(found) == 5
    return found


def _imports(tree: ast.AST) -> list[tuple[str, set[str]]]:
    """(module, names imported from it) of every import statement, relative ones resolved
    to nothing (the views import absolutely)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, set()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import in a view"
            found.append((node.module or "", {alias.name for alias in node.names}))
    return found


def _check(where: str, view: str, tree: ast.AST, used: set[Any] | None = None) -> None:
    """Assert that the code of ``view`` (a package of VIEWS, or NOTEBOOK) at ``where``
    computes no statistic of its own; record the allowances it needed in ``used``."""
    import importlib

    used = set() if used is None else used
    for module, names in _imports(tree):
        parts = module.split(".")
        assert parts[0] not in FORBIDDEN_MODULES, f"{where} imports {module}"
        if parts[0] != "kagreport" or module == f"kagreport.{view}" or parts[1:2] == [view]:
            continue
        if module == "kagreport.stats" or module.startswith("kagreport.stats."):
            assert view in STATS_USERS, f"{where} calls kagreport.stats itself ({module})"
            used.add(("stats", view))
        if any(part.startswith("_") for part in parts[1:]):
            allowed = ALLOWED_PRIVATE.get(module)
            assert view != NOTEBOOK, f"{where} imports the private module {module}"
            assert allowed is not None, f"{where} imports the private module {module}"
            views, public, _ = allowed
            assert view in views, f"{where}: the {view} may not import {module}"
            if public is not None:
                assert names <= public, f"{where} imports {names - public} from {module}"
                used.update((module, name) for name in names)
            used.add((module, view))
            continue
        if any(module == p or module.startswith(p + ".") for p in PUBLIC):
            public_names = set(importlib.import_module(module).__all__)
            assert names <= public_names, (
                f"{where} imports non-public {names - public_names} from {module}"
            )
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in {"np", "numpy"}
            and node.attr in NUMPY_FORBIDDEN
        ):
            key = (where, node.attr)
            assert key in NUMPY_ALLOWED, f"{where}:{node.lineno}: np.{node.attr}"
            used.add(key)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and STATISTIC.search(node.name):
            assert (where, node.name) in DISPLAY_HELPERS, f"{where} defines {node.name}()"
            used.add((where, node.name))
        if view == NOTEBOOK:
            name = (
                node.id
                if isinstance(node, ast.Name)
                else node.attr
                if isinstance(node, ast.Attribute)
                else node.name
                if isinstance(node, ast.alias)
                else None
            )
            assert name not in PRIMITIVES, f"{where} computes {name}() itself"


def test_the_views_and_notebooks_compute_no_statistics() -> None:
    # Issue #12: frames, charts, widgets, the site and the notebooks draw their numbers from
    # the run model (kagreport.runs), the evaluation results and the frames; none holds a
    # private copy of a statistic (the old ComparisonView recomputed means with
    # evaluation._report.mean_scores; notebooks once adjusted p-values by hand).
    used: set[Any] = set()
    for view, path in _view_modules():
        where = str(path.relative_to(SOURCE))
        _check(where, view, ast.parse(path.read_text("utf-8")), used)
    for name, text in _notebook_sources():
        _check(name, NOTEBOOK, ast.parse(text), used)
        # Not even named in a cell or a comment (nor the statistics package itself).
        assert [p for p in (*sorted(PRIMITIVES), "kagreport.stats") if p in text] == []
        assert re.findall(r"kagreport(?:\.\w+)*\._\w+", text) == []
    # Every allowance is still needed (a stale one would hide a new use of that name).
    needed = {("stats", view) for view in STATS_USERS} | set(NUMPY_ALLOWED) | set(DISPLAY_HELPERS)
    for module, (views, names, _) in ALLOWED_PRIVATE.items():
        needed |= {(module, view) for view in views}
        needed |= {(module, name) for name in names or ()}
    assert needed - used == set()


@pytest.mark.parametrize(
    ("view", "source"),
    [
        ("widgets", "import scipy.stats"),
        ("site", "from statistics import mean"),
        ("charts", "import random"),
        ("frames", "from kagreport.stats._holm import holm_adjust"),
        ("widgets", "from kagreport.stats import holm_adjust"),
        ("site", "from kagreport.stats import pareto_front"),
        ("charts", "from kagreport.runs._views import _flips"),
        ("frames", "from kagreport.stats import _lattice"),
        ("widgets", "from kagreport.evaluation._compare import compare_scores"),
        ("widgets", "from kagreport.evaluation._report import mean_scores"),
        ("widgets", "from kagreport.evaluation._text import compare_scores"),
        ("widgets", "from kagreport._atomic import write_atomic"),
        ("frames", "from kagreport.grading._items import ItemTable"),
        ("widgets", "x = np.mean(values)"),
        ("site", "x = numpy.random.default_rng(0)"),
        ("charts", "def holm(p): return p"),
        (NOTEBOOK, "from kagreport._format import MISSING"),
        (NOTEBOOK, "from kagreport.frames import pareto_front"),
        (NOTEBOOK, "adjusted = holm_adjust(p_values)"),
        (NOTEBOOK, "import kagreport.stats as s\ns.sign_flip_test(d)"),
    ],
)
def test_the_statistics_check_catches_a_statistic(view: str, source: str) -> None:
    """The check above fails on the code a view must not hold."""
    with pytest.raises(AssertionError):
        _check("probe", view, ast.parse(source))


def test_the_statistics_check_passes_what_a_view_may_do() -> None:
    _check("probe", "frames", ast.parse("from kagreport.stats import holm_adjust"))
    _check("probe", "widgets", ast.parse("from kagreport.runs import compare_setups"))
    _check("probe", "widgets", ast.parse("from kagreport._format import p_value"))
    _check("probe", NOTEBOOK, ast.parse("from kagreport.runs import Run, leaderboard"))


def test_leaderboard_intervals_are_scipys_wilson_for_proportions_only() -> None:
    # Hand-made: a proportion (0/1 with a NaN), and a score that is not one.
    run = Run(
        kind="answers",
        systems=("a", "b"),
        dataset_names=("",),
        question_names=tuple(f"q{i}" for i in range(5)),
        system=np.array([0] * 5 + [1] * 5, dtype=np.int32),
        dataset=np.zeros(10, dtype=np.int32),
        question=np.array(list(range(5)) * 2, dtype=np.int32),
        outcome=np.array([0, 1, 0, 0, -1, -1, -1, -1, -1, -1], dtype=np.int8),
        metrics={
            "correct": np.array([1, 0, 1, 1, np.nan, *[np.nan] * 5]),
            "score": np.array([1, 0, 1, 1, 0.5, 0.2, 0.4, 1.0, 0.0, 0.9]),
        },
    )
    a, b = leaderboard(run)
    expected = scipy_stats.binomtest(3, 4).proportion_ci(0.95, method="wilson")
    assert (a.system, a.interval) == ("a", "wilson")
    assert a.low == pytest.approx(expected.low, abs=1e-12)
    assert a.high == pytest.approx(expected.high, abs=1e-12)
    assert (b.system, b.n_defined, b.interval) == ("b", 0, None)
    assert np.isnan(b.low)
    for row in leaderboard(run, "score"):
        assert row.interval is None
        assert np.isnan(row.low)
        assert np.isnan(row.high)
