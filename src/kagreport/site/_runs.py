"""The pages of a kag run: its leaderboard and charts (on the index) and one page per
setup with its items; the comparisons of its setups are :mod:`kagreport.site._comparisons`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from kagreport._errors import SiteError
from kagreport.grading import Outcome, StatsReport, grade
from kagreport.kag import setup_name
from kagreport.runs import Run, recorded_costs
from kagreport.site._comparisons import SiteComparison, comparison_pages, run_comparisons
from kagreport.site._config import RunConfig
from kagreport.site._labels import SIMULATED, simulated_notice
from kagreport.site._slugs import setup_slugs
from kagreport.site._templates import PAGE_SIZE

if TYPE_CHECKING:
    import pandas as pd

    from kagreport.site._build import Builder
    from kagreport.site._templates import Chart

__all__ = ["RESPONSE_LIMIT", "build_run", "grade_run"]

#: Characters of a response (or error message) kept on a setup page (PITFALLS.md B15).
RESPONSE_LIMIT = 2000
#: Characters of an MCQ option kept in the expected answer and the options list.
OPTION_LIMIT = 200
#: Characters of a question's text kept beside its id.
QUESTION_LIMIT = 1000
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
    "question_text",
    "options",
)


@dataclass
class SiteRun:
    """One run of the site: what the index shows of it and what its pages link to."""

    name: str
    slug: str
    config: RunConfig
    report: StatsReport
    data: str  # its kag stats JSON
    document: str  # its run model, a kagreport.run document
    baseline: str
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    comparisons: list[SiteComparison] = field(default_factory=list)
    forest: Chart | None = None  # every comparison of the run, one row each
    notes: list[str] = field(default_factory=list)  # said under the run's charts
    attribution: str = ""
    skipped: list[str] = field(default_factory=list)
    setup_slugs: dict[str, str] = field(default_factory=dict)
    simulated: str = ""  # the SIMULATED notice of a run `kagreport simulate` wrote
    unparsable: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    costs: list[tuple[str, str]] = field(default_factory=list)  # leaderboard cost columns


def unparsable_files(report: StatsReport) -> list[tuple[str, str]]:
    """The result files of ``report`` that did not parse, as (path relative to the results
    root, with ``/``, UTF-8 text; reason), sorted by path."""
    import os

    root = report.results
    reasons = report.unparsable_reasons or ("",) * len(report.unparsable_files)
    found = []
    for path, reason in zip(report.unparsable_files, reasons, strict=True):
        shown = os.path.relpath(path, root) if root is not None else path
        # A name that is not UTF-8 (surrogate escapes) is shown with U+FFFD, as written.
        shown = os.fsencode(shown).decode("utf-8", "replace").replace(os.sep, "/")
        reason = reason.encode("utf-8", "replace").decode("utf-8")
        found.append((shown, reason or "did not parse"))
    return sorted(found)


def grade_run(site: Builder, index: int, config: RunConfig) -> StatsReport:
    """Grade run ``index`` of the site, keeping the texts its setup pages show.

    Raises
    ------
    SiteError
        If nothing was graded, or the configured baseline names no setup of the run.
    """
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


def build_run(site: Builder, index: int, config: RunConfig, report: StatsReport) -> None:
    """Write a graded run's data (its kag stats JSON and its run model, a ``kagreport.run``
    document of :class:`kagreport.runs.Run`), comparisons, setup and comparison pages; the
    index lists its leaderboard and charts (``site.runs``)."""
    baseline = config.baseline or report.setups[0].setup
    slug = site.run_slugs(config.name)
    json_text = report.to_json()
    data = "data/report.json"
    if len(site.config.runs) > 1:
        data = f"data/runs/{slug}/report.json"
        site.write(data, json_text)
    if index == 0:
        site.write("data/report.json", json_text)
    document = f"data/runs/{slug}/run.json"
    notice = simulated_notice(config.results)
    name = config.name
    if notice and SIMULATED.lower() not in name.lower():
        name = f"{name} ({SIMULATED})"
    run = SiteRun(name, slug, config, report, data, document, baseline)
    run.simulated = notice
    run.attribution = config.attribution or notice
    run.unparsable = unparsable_files(report)
    if report.unparsable_files:
        site.warn(
            f"run {config.name!r}: {len(report.unparsable_files)} result file(s) did not "
            "parse and were skipped (the index lists them with the reason)"
        )
    site.simulated = notice
    try:
        _build_run_pages(site, run, report)
    finally:
        site.simulated = ""
    site.runs.append(run)


def _build_run_pages(site: Builder, run: SiteRun, report: StatsReport) -> None:
    """The leaderboard, charts, run document, comparisons and pages of ``run``."""
    from kagreport.frames import stats_frame

    config, slug, document = run.config, run.slug, run.document
    frame = stats_frame(report)
    by_setup = _records_by_setup(frame)
    run.setup_slugs = setup_slugs(report.setup_names)
    hrefs = {s: f"setups/{slug}--{t}.html" for s, t in run.setup_slugs.items()}
    _leaderboard(run, by_setup, hrefs)
    site.say(f"charts of {config.name}")
    model = Run.from_stats(report)
    _run_charts(site, run, frame, model)
    # Published without the local paths it was read from (a build is the same anywhere).
    metadata = {k: v for k, v in model.metadata.items() if k != "provenance"}
    site.write(document, dataclasses.replace(model, metadata=metadata).dumps())
    site.say(f"comparisons of {config.name}")
    run_comparisons(site, run, model)
    site.say(f"setup pages of {config.name}")
    setup_pages(site, run, frame, by_setup, hrefs, model)
    comparison_pages(site, run, hrefs)


def _records_by_setup(frame: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``frame`` (:func:`kagreport.frames.stats_frame`) as records, by setup."""
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in r.items()} for r in frame.to_dict("records")
    ]
    by_setup: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_setup.setdefault(str(record["setup"]), []).append(record)
    return by_setup


#: The leaderboard's cost columns beyond the shared metric cells, as ``kag stats`` shows
#: them (CTX_LEN, VERTICE, RELATION, PROPERTY): (key, heading, decimals, group).
COST_COLUMNS = (
    ("avg_context_length", "Mean context length (bytes)", 3, "context"),
    ("retrieval.avg_vertices", "Mean vertices", 2, "graph"),
    ("retrieval.avg_relationships", "Mean relationships", 2, "graph"),
    ("retrieval.avg_properties", "Mean properties", 2, "graph"),
)


def _cost_cell(overall: dict[str, Any], key: str) -> Any:
    """The value of ``key`` (``a.b`` reads a nested object) in kag's JSON of a setup."""
    value: Any = overall
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _leaderboard(
    run: SiteRun, by_setup: Mapping[str, list[dict[str, Any]]], hrefs: Mapping[str, str]
) -> None:
    """The run's leaderboard rows, in kag's rank order, and the cost columns it shows:
    context length when a setup recorded one (above zero), the graph elements when a
    setup retrieved."""
    from kagreport.frames import OVERALL

    for rank, setup in enumerate(run.report.setups, start=1):
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
    recorded = set()
    for row in run.leaderboard:
        if (row["json"]["avg_context_length"] or 0) > 0:
            recorded.add("context")
        if row["json"]["retrieval"] is not None:
            recorded.add("graph")
    run.costs = [(k, heading) for k, heading, _, group in COST_COLUMNS if group in recorded]
    decimals = {k: d for k, _, d, _ in COST_COLUMNS}
    for row in run.leaderboard:
        row["costs"] = [(k, _cost_cell(row["json"], k), decimals[k]) for k, _ in run.costs]


def _run_charts(site: Builder, run: SiteRun, frame: pd.DataFrame, model: Run) -> None:
    """The run's figures on the index: accuracy against each cost the run recorded (small
    multiples per dataset when it has several), accuracy per setup and dataset, outcomes
    per setup."""
    from kagreport.charts import accuracy_cost_chart, dataset_heatmap, outcomes_chart
    from kagreport.frames import COST_AXES

    report, slug = run.report, run.slug
    first = _cost_axis(frame)
    # Every recorded cost, the headline's first (kag's costs: the tool costs need a run).
    costs = [
        c for c in recorded_costs(model) if c in ("retrieval", "generation", "context", "graph")
    ]
    if first is None:
        run.notes.append(
            "No setup of this run recorded a cost above zero (retrieval or generation "
            "time, context length, graph elements retrieved), so there is no "
            "accuracy-against-cost chart."
        )
        costs = []
    else:
        costs = [first, *(c for c in costs if c != first)]
    per_dataset = len(set(frame["dataset"])) > 2  # the overall row and two datasets or more
    for cost in costs:
        noun = COST_AXES[cost][1].removeprefix("Mean ").split(" (")[0]
        chart = accuracy_cost_chart(
            report,
            cost=cost,  # type: ignore[arg-type]
            per_dataset=per_dataset,
            title=f"Accuracy against mean {noun}",
        )
        name = "accuracy-cost" if cost == first else f"accuracy-{cost}"
        label = f"Accuracy against {noun}" + (", per dataset" if per_dataset else "")
        run.charts.append(site.chart(chart, f"{slug}--{name}", label))
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


def setup_pages(
    site: Builder,
    run: SiteRun,
    frame: pd.DataFrame,
    by_setup: Mapping[str, list[dict[str, Any]]],
    hrefs: Mapping[str, str],
    model: Run,
) -> None:
    """Write each setup's page: per-dataset table, outcome chart, every item."""
    from kagreport.charts import outcomes_chart
    from kagreport.frames import OVERALL

    report = run.report
    item_rows = _ItemRows(report)
    for rank, setup in enumerate(report.setups, start=1):
        name = setup.setup
        rows = item_rows(model.rows_of(name)[0])
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
            unparsable=[
                (path, reason)
                for path, reason in run.unparsable
                if setup_name(path.rsplit("/", 1)[-1], report.prefix) == name
            ],
        )


class _ItemRows:
    """The rows of a setup page's item table (:data:`ITEM_COLUMNS`) from the report's
    item table, its columns read once for every setup of the run."""

    def __init__(self, report: StatsReport) -> None:
        table = report.items
        texts = table.texts
        assert texts is not None  # graded with keep_text
        self.table, self.texts, self.truth = table, texts, report.ground_truth
        self.dataset_codes = table.codes("dataset")
        self.question_codes = table.codes("question")
        self.outcome_codes = table.codes("outcome")
        self.generation = table.codes("generation_secs")
        self.retrieval = table.codes("retrieval_secs")
        self.labels = np.array([o.label for o in Outcome], dtype=object)
        self.dataset_names = np.array(table.dataset_names, dtype=object)
        self.question_names = np.array(table.question_names, dtype=object)
        self.lengths = np.asarray(texts.response_lengths, dtype=np.int64)
        self.expected_cache: dict[tuple[int, int], str | None] = {}
        self.question_cache: dict[tuple[int, int], tuple[str | None, list[list[str]] | None]] = {}

    def expected(self, d: int, q: int) -> str | None:
        """The expected answer of dataset ``d``, question ``q`` (codes), looked up once."""
        if (d, q) not in self.expected_cache:
            table = self.table
            found = _expected(self.truth, table.dataset_names[d], table.question_names[q])
            self.expected_cache[d, q] = found
        return self.expected_cache[d, q]

    def question(self, d: int, q: int) -> tuple[str | None, list[list[str]] | None]:
        """The text (cut to :data:`QUESTION_LIMIT`) and the ``[key, option]`` pairs of
        dataset ``d``, question ``q`` (codes); None where the datasets lack them."""
        if (d, q) not in self.question_cache:
            table = self.table
            self.question_cache[d, q] = _question(
                self.truth, table.dataset_names[d], table.question_names[q]
            )
        return self.question_cache[d, q]

    def __call__(self, at: npt.NDArray[np.intp]) -> list[tuple[Any, ...]]:
        """The rows of the table rows ``at``, in that order."""
        texts, positions = self.texts, at.tolist()
        d, q = self.dataset_codes[at], self.question_codes[at]
        questions = list(map(self.question, d.tolist(), q.tolist()))
        # Columns first (NumPy where it can), then rows: each row is an ITEM_COLUMNS tuple.
        return list(
            zip(
                self.dataset_names[d].tolist(),
                self.question_names[q].tolist(),
                self.labels[self.outcome_codes[at]].tolist(),
                list(map(self.expected, d.tolist(), q.tolist())),
                [texts.responses[i] for i in positions],
                [None if n < 0 else n for n in self.lengths[at].tolist()],
                [texts.errors[i] for i in positions],
                [None if g < 0 else round(g / 1e9, 3) for g in self.generation[at].tolist()],
                [None if r < 0 else round(r / 1e9, 3) for r in self.retrieval[at].tolist()],
                [text for text, _ in questions],
                [options for _, options in questions],
                strict=True,
            )
        )


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


def _expected(truth: Any, dataset: str, question: str) -> str | None:
    entry = truth.get(dataset, question) if truth is not None else None
    if entry is None or entry.output is None or entry.answer is None:
        return None
    option = entry.output.options.get(entry.answer)
    if option is None:
        return str(entry.answer)
    return f"{entry.answer}: {_cut(option, OPTION_LIMIT)}"


def _cut(text: str, limit: int) -> str:
    return text[:limit] + ("…" if len(text) > limit else "")


def _question(truth: Any, dataset: str, question: str) -> tuple[str | None, list[list[str]] | None]:
    """A question's text and its MCQ options as ``[key, text]`` pairs, each cut."""
    entry = truth.get(dataset, question) if truth is not None else None
    if entry is None:
        return None, None
    stripped = entry.input.strip() if entry.input else ""
    text = _cut(stripped, QUESTION_LIMIT) if stripped else None
    if entry.output is None or not entry.output.options:
        return text, None
    return text, [[k, _cut(v, OPTION_LIMIT)] for k, v in entry.output.options.items()]
