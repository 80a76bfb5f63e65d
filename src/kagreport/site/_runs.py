"""The pages of a kag run: its leaderboard and charts (on the index), one page per setup
with its items, and one page per comparison of two setups.

The comparisons, their run-level Holm family and the flipped items are
:func:`kagreport.runs.compare_setups` on the run model; nothing here computes a statistic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kagreport._errors import SiteError
from kagreport.grading import Outcome, StatsReport, grade
from kagreport.runs import Run as RunModel
from kagreport.site._config import RunConfig
from kagreport.site._slugs import _setup_slugs

if TYPE_CHECKING:
    import pandas as pd

    from kagreport.evaluation import EvaluationComparison
    from kagreport.site._build import _Builder
    from kagreport.site._templates import _Chart

__all__ = ["RESPONSE_LIMIT", "build_run", "grade_run"]

#: Characters of a response (or error message) kept on a setup page (PITFALLS.md B15).
RESPONSE_LIMIT = 2000
#: Characters of an MCQ option kept in the expected answer.
OPTION_LIMIT = 200
#: Rows a page of an item table (or of flipped items) shows; the first page is in the HTML.
PAGE_SIZE = 50
#: Resamples of the paired sign-flip test between setups.
N_RESAMPLES = 10_000
#: Item columns inlined in setup pages (the order of each row's values).
ITEM_COLUMNS = (
    "dataset",
    "question",
    "outcome",
    "expected",
    "response",
    "response_length",
    "error",
    "generation_secs",
    "retrieval_secs",
)


@dataclass
class _Comparison:
    run: str
    candidate: str
    baseline: str
    href: str
    data: str
    comparison: EvaluationComparison
    flips: list[tuple[str, str, str]]  # (item, candidate outcome, baseline outcome), sorted
    only_candidate: int  # items graded for the candidate only
    only_baseline: int
    p_value_family: float  # Holm-adjusted across the run's comparisons


@dataclass
class _Run:
    name: str
    slug: str
    config: RunConfig
    report: StatsReport
    data: str
    baseline: str
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    charts: list[_Chart] = field(default_factory=list)
    comparisons: list[_Comparison] = field(default_factory=list)
    forest: _Chart | None = None  # every comparison of the run, one row each
    notes: list[str] = field(default_factory=list)  # said under the run's charts
    attribution: str = ""
    skipped: list[str] = field(default_factory=list)
    setup_slugs: dict[str, str] = field(default_factory=dict)


def grade_run(site: _Builder, index: int, config: RunConfig) -> StatsReport:
    site.say(f"grading {config.name}")
    report = grade(config.datasets, config.results, config.prefix, keep_text=RESPONSE_LIMIT)
    if not report.setups:
        raise SiteError(
            f"run {config.name!r} has no graded result under {config.results}",
            path=config.results,
        )
    baseline = config.baseline or report.setups[0].setup
    if baseline not in report.setup_names:
        # From a configuration file, name the key; from flags, the flag.
        what = (
            f"{site.config.source}: `runs[{index}].baseline`"
            if site.config.source is not None
            else "the baseline"
        )
        raise SiteError(
            f"{what} names no setup of run {config.name!r}: "
            f"{baseline!r}; setups: {', '.join(report.setup_names)}",
            path=site.config.source,
        )
    return report


def build_run(site: _Builder, index: int, config: RunConfig, report: StatsReport) -> None:
    from kagreport.frames import COST_AXES, OVERALL, stats_frame

    baseline = config.baseline or report.setups[0].setup
    slug = site.run_slugs(config.name)
    json_text = report.to_json()
    data = "data/report.json"
    if len(site.config.runs) > 1:
        data = f"data/runs/{slug}/report.json"
        site.write(data, json_text)
    if index == 0:
        site.write("data/report.json", json_text)
    run = _Run(config.name, slug, config, report, data, baseline)
    run.attribution = config.attribution or _simulated_notice(config.results)
    if report.unparsable_files:
        site.warn(
            f"run {config.name!r}: {len(report.unparsable_files)} result file(s) did not "
            "parse and were skipped (the index lists the count; -v lists the files)"
        )
    frame = stats_frame(report)
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in r.items()} for r in frame.to_dict("records")
    ]
    by_setup: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_setup.setdefault(str(record["setup"]), []).append(record)
    run.setup_slugs = _setup_slugs(report.setup_names)
    hrefs = {s: f"setups/{slug}--{t}.html" for s, t in run.setup_slugs.items()}
    for rank, setup in enumerate(report.setups, start=1):
        overall = next(r for r in by_setup[setup.setup] if r["dataset"] == OVERALL)
        run.leaderboard.append(
            {
                "rank": rank,
                "setup": setup.setup,
                "href": hrefs[setup.setup],
                "json": setup.overall.to_dict(),
                "frame": overall,
            }
        )
    site.say(f"charts of {config.name}")
    from kagreport.charts import accuracy_cost_chart, dataset_heatmap, outcomes_chart

    cost = _cost_axis(frame)
    if cost is None:
        run.notes.append(
            "No setup of this run recorded a cost above zero (retrieval or generation "
            "time, context length, graph elements retrieved), so there is no "
            "accuracy-against-cost chart."
        )
    else:
        noun = COST_AXES[cost][1].removeprefix("Mean ").split(" (")[0]
        run.charts.append(
            site.chart(
                accuracy_cost_chart(report, cost=cost, title=f"Accuracy against mean {noun}"),
                f"{slug}--accuracy-cost",
                f"Accuracy against {noun}",
            )
        )
    run.charts.append(
        site.chart(dataset_heatmap(report), f"{slug}--heatmap", "Accuracy per setup and dataset")
    )
    run.charts.append(
        site.chart(
            outcomes_chart(frame, normalize=True),
            f"{slug}--outcomes",
            "Correct, incorrect and error records per setup",
        )
    )
    model = RunModel.from_stats(report)
    site.say(f"comparisons of {config.name}")
    run_comparisons(site, run, model)
    site.say(f"setup pages of {config.name}")
    setup_pages(site, run, frame, by_setup, hrefs, model)
    comparison_pages(site, run, hrefs)
    site.runs.append(run)


def setup_pages(
    site: _Builder,
    run: _Run,
    frame: pd.DataFrame,
    by_setup: Mapping[str, list[dict[str, Any]]],
    hrefs: Mapping[str, str],
    model: RunModel,
) -> None:
    """Write each setup's page: per-dataset table, outcome chart, every item."""
    from kagreport.charts import outcomes_chart
    from kagreport.frames import OVERALL

    report = run.report
    table = report.items
    texts = table.texts
    assert texts is not None  # graded with keep_text
    truth = report.ground_truth
    dataset_codes = table.codes("dataset")
    question_codes = table.codes("question")
    outcome_codes = table.codes("outcome")
    generation = table.codes("generation_secs")
    retrieval = table.codes("retrieval_secs")
    labels = np.array([o.label for o in Outcome], dtype=object)
    dataset_names = np.array(table.dataset_names, dtype=object)
    question_names = np.array(table.question_names, dtype=object)
    lengths = np.asarray(texts.response_lengths, dtype=np.int64)
    expected_cache: dict[tuple[int, int], str | None] = {}

    def expected(d: int, q: int) -> str | None:
        if (d, q) not in expected_cache:
            expected_cache[d, q] = _expected(truth, table.dataset_names[d], table.question_names[q])
        return expected_cache[d, q]

    for rank, setup in enumerate(report.setups, start=1):
        name = setup.setup
        at, _ = model.rows_of(name)
        positions = at.tolist()
        d, q = dataset_codes[at], question_codes[at]
        # Columns first (NumPy where it can), then rows: each row is an ITEM_COLUMNS tuple.
        rows = list(
            zip(
                dataset_names[d].tolist(),
                question_names[q].tolist(),
                labels[outcome_codes[at]].tolist(),
                list(map(expected, d.tolist(), q.tolist())),
                [texts.responses[i] for i in positions],
                [None if n < 0 else n for n in lengths[at].tolist()],
                [texts.errors[i] for i in positions],
                [None if g < 0 else round(g / 1e9, 3) for g in generation[at].tolist()],
                [None if r < 0 else round(r / 1e9, 3) for r in retrieval[at].tolist()],
                strict=True,
            )
        )
        records = by_setup[name]
        datasets = [r for r in records if r["dataset"] != OVERALL]
        overall = next(r for r in records if r["dataset"] == OVERALL)
        chart_frame = frame[(frame["setup"] == name) & (frame["dataset"] != OVERALL)].copy()
        chart_frame["setup"] = chart_frame["dataset"]
        chart_frame["dataset"] = OVERALL
        chart_frame["rank"] = range(1, len(chart_frame) + 1)
        chart = site.chart(
            outcomes_chart(chart_frame, title=f"Outcomes of {name} per dataset"),
            f"{run.slug}--{run.setup_slugs[name]}--outcomes",
            "Outcomes per dataset",
            figure=False,
        )
        site.page(
            hrefs[name],
            "setup.html.j2",
            title=f"{name} ({run.name})",
            run=run,
            setup=name,
            rank=rank,
            overall=overall,
            json=setup.overall.to_dict(),
            datasets=datasets,
            per_dataset_json={k: m.to_dict() for k, m in setup.per_dataset.items()},
            figure=chart,
            items={"columns": list(ITEM_COLUMNS), "rows": rows},
            first_rows=rows[:PAGE_SIZE],
            page_size=PAGE_SIZE,
            response_limit=RESPONSE_LIMIT,
            comparisons_of=[c for c in run.comparisons if name in (c.candidate, c.baseline)],
        )


def run_comparisons(site: _Builder, run: _Run, model: RunModel) -> None:
    """Paired sign-flip tests of per-item correctness between the run's setups
    (:func:`kagreport.runs.compare_setups`: on the items graded for both setups,
    Holm-adjusted across the run's comparisons); unpaired pairs are noted."""
    from kagreport.runs import compare_setups

    found = compare_setups(
        model,
        pairs="all-pairs" if run.config.compare == "all-pairs" else "baseline",
        baseline=run.baseline,
        n_resamples=N_RESAMPLES,
        seed=0,
    )
    for candidate, baseline, only_c, only_b in found.skipped:
        note = (
            f"{candidate} vs {baseline}: not compared, no item was graded for both "
            f"({only_c} item(s) only in {candidate}, {only_b} only in {baseline})"
        )
        run.skipped.append(note)
        site.warn(f"run {run.name!r}: {note}")
    slugs = run.setup_slugs
    for found_c in found.comparisons:
        candidate, baseline = found_c.candidate, found_c.baseline
        name = f"{run.slug}--{slugs[candidate]}--vs--{slugs[baseline]}"
        c = _Comparison(
            run.name,
            candidate,
            baseline,
            f"comparisons/{name}.html",
            f"data/comparisons/{name}.json",
            found_c.comparison,
            [(item, str(a), str(b)) for item, a, b in found_c.flips],
            found_c.only_candidate,
            found_c.only_baseline,
            p_value_family=found_c.p_values_family["correct"],
        )
        c.comparison = _with_context(c, found_c.family_comparison(), list(found.family))
        run.comparisons.append(c)


def comparison_pages(site: _Builder, run: _Run, hrefs: Mapping[str, str]) -> None:
    """The run's forest plot, then one page per comparison (with the forest plot)."""
    if not run.comparisons:
        return
    run.forest = site.chart(
        _run_forest(run),
        f"{run.slug}--comparisons-forest",
        "Accuracy differences, every comparison of the run",
    )
    all_pairs = run.config.compare == "all-pairs"
    for c in run.comparisons:
        document = c.comparison.dumps("json")
        site.write(c.data, document)
        figure = run.forest
        if all_pairs:
            # The rows of the two setups only: with every pair, the run's plot has
            # n(n-1)/2 rows, and one copy a page would grow the site as n^4.
            near = [
                other
                for other in run.comparisons
                if {other.candidate, other.baseline} & {c.candidate, c.baseline}
            ]
            figure = site.chart(
                _run_forest(
                    run,
                    near,
                    title=f"Accuracy differences involving {c.candidate} or "
                    f"{c.baseline} ({run.name})",
                ),
                f"{c.href.removeprefix('comparisons/').removesuffix('.html')}--forest",
                f"Accuracy differences involving {c.candidate} or {c.baseline}",
                figure=False,
            )
        site.page(
            c.href,
            "comparison.html.j2",
            title=f"{c.candidate} vs {c.baseline} ({run.name})",
            run=run,
            c=c,
            candidate=c.candidate,
            baseline=c.baseline,
            candidate_href=hrefs[c.candidate],
            baseline_href=hrefs[c.baseline],
            comparison=c.comparison,
            rows=[m.to_dict() for m in c.comparison.metrics.values()],
            document=json.loads(document),
            data=c.data,
            figure=figure,
            all_pairs=all_pairs,
            forest_row=_forest_label(run, c),
            flips={"columns": ["item", "candidate", "baseline"], "rows": c.flips},
            first_flips=c.flips[:PAGE_SIZE],
            page_size=PAGE_SIZE,
            n_flips=len(c.flips),
            gained=sum(1 for _, o, _ in c.flips if o == "correct"),
            family=len(run.comparisons),
        )


def _simulated_notice(results: Path) -> str:
    """The notice of a run written by ``kagreport simulate`` (it leaves SIMULATED.md)."""
    for folder in (results, results.parent):
        if (folder / "SIMULATED.md").is_file():
            return "SIMULATED data: no model was run (SIMULATED.md beside its results says how)."
    return ""


def _cost_axis(
    frame: pd.DataFrame,
) -> Literal["retrieval", "generation", "context", "graph"] | None:
    """The cost the headline chart draws: the first the run recorded (a positive mean).

    Retrieval time first (the cost knowledge augmentation adds), then generation time,
    context length and graph elements; None when no setup recorded any of them (a run
    converted from predictions alone). A setup that retrieves nothing has no mean here
    (kag's null) and is drawn by the chart at 0 s (``kagreport.frames.cost_values``), so
    retrieval is chosen only when some setup retrieves.
    """
    from kagreport.frames import COST_AXES, OVERALL

    overall = frame[frame["dataset"] == OVERALL]
    costs: tuple[Literal["retrieval", "generation", "context", "graph"], ...] = (
        "retrieval",
        "generation",
        "context",
        "graph",
    )
    for cost in costs:
        values = overall[COST_AXES[cost][0]].to_numpy(dtype=float)
        if np.any(np.nan_to_num(values) > 0):
            return cost
    return None


def _forest_label(run: _Run, comparison: _Comparison) -> str:
    if run.config.compare == "all-pairs":
        return f"{comparison.candidate} − {comparison.baseline}"
    return comparison.candidate


def _run_forest(
    run: _Run, comparisons: list[_Comparison] | None = None, title: str | None = None
) -> Any:
    """The forest plot of the comparisons of ``run`` (default all): one row per pair.

    The rows carry the Holm adjustment across the run's comparisons, so a filled point
    means significant after correcting for all of them.
    """
    import pandas as pd

    from kagreport.charts import forest_plot

    rows = []
    for c in run.comparisons if comparisons is None else comparisons:
        m = c.comparison.metrics["correct"].to_dict()
        m["metric"] = _forest_label(run, c)
        m["p_value_holm"] = c.p_value_family
        rows.append(m)
    if title is None and run.config.compare == "all-pairs":
        title = f"Accuracy differences between the setups of {run.name}"
    elif title is None:
        title = f"Accuracy difference against {run.baseline} ({run.name})"
    return forest_plot(pd.DataFrame(rows), title=title, percent=True)


def _with_context(
    c: _Comparison, comparison: EvaluationComparison, family: list[str]
) -> EvaluationComparison:
    """``comparison`` (its Holm-adjusted p-value already the one across the run's
    comparisons, named in ``family`` as ``"candidate vs baseline"``) as the site reports
    it: the site's context, that family included, is in its metadata."""
    import dataclasses

    size = len(family)
    p_value = c.p_value_family
    settings = dict(comparison.settings)
    settings["adjustment"] = f"holm across the {size} comparison(s) of run {c.run!r}"
    return dataclasses.replace(
        comparison,
        settings=settings,
        metadata={
            "run": c.run,
            "items_only_in_candidate": c.only_candidate,
            "items_only_in_baseline": c.only_baseline,
            "comparisons_in_run": size,
            "holm_family": list(family),
            "p_value_holm_across_run": None if math.isnan(p_value) else p_value,
        },
    )


def _expected(truth: Any, dataset: str, question: str) -> str | None:
    entry = truth.get(dataset, question) if truth is not None else None
    if entry is None or entry.output is None or entry.answer is None:
        return None
    option = entry.output.options.get(entry.answer)
    if option is None:
        return str(entry.answer)
    cut = option[:OPTION_LIMIT] + ("…" if len(option) > OPTION_LIMIT else "")
    return f"{entry.answer}: {cut}"
