"""The pages of a run of another tool (any format :func:`kagreport.read_run` reads).

Output (every link relative)::

    sources/<run>.html                  leaderboard, comparisons, forest plot, cost charts
    sources/<run>--<system>.html        one page per system, with its items
    data/<run>.run.json                 the run model (a kagreport.run document)
    data/<run>.comparisons.json         the comparisons (EvaluationComparison documents)

Every number comes from :mod:`kagreport.runs` (``leaderboard``, with its Wilson
intervals, and ``compare_setups``); nothing here computes a statistic. What a run
cannot show (one system, no shared items, no ``correct`` metric, no cost) is left out,
with a sentence saying why.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import KagreportError, SiteError
from kagreport._format import is_proportion
from kagreport.runs import COSTS, CostAxis, Run, compare_setups, leaderboard
from kagreport.site._config import SourceConfig
from kagreport.site._slugs import setup_slugs
from kagreport.site._templates import PAGE_SIZE

if TYPE_CHECKING:
    from kagreport.site._build import Builder
    from kagreport.site._templates import Chart

__all__ = ["SiteSource", "build_source", "read_source"]

#: Characters of a response, reference or error kept on a system page.
RESPONSE_LIMIT = 2000
#: Resamples of the paired sign-flip test between systems.
N_RESAMPLES = 10_000
#: Item columns inlined in system pages (the order of each row's values).
ITEM_COLUMNS = (
    "dataset",
    "question",
    "outcome",
    "metrics",
    "response",
    "response_length",
    "reference",
    "error",
)


@dataclass
class SiteSource:
    """One run of another tool, as its pages and the index show it."""

    name: str
    slug: str
    config: SourceConfig
    run: Run
    href: str
    document: str
    tool: str
    metric: str | None  # the leaderboard's metric: "correct", else the run's first
    percent: bool = False  # whether the metric is a proportion (shown as a percentage)
    baseline: str | None = None
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    comparisons_data: str | None = None
    forest: Chart | None = None
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    system_hrefs: dict[str, str] = field(default_factory=dict)


def read_source(config: SourceConfig) -> Run:
    """Read the run of ``config``.

    Raises
    ------
    SiteError
        One line naming the path, for a path no format reads or a file a reader refuses.
    """
    from kagreport.sources import read_run

    try:
        return read_run(config.path, config.format)
    except KagreportError as exc:
        message = str(exc)
        if str(config.path) not in message:
            message = f"{config.path}: {message}"
        raise SiteError(f"cannot read the run {message}", path=config.path) from None
    except OSError as exc:
        raise SiteError(
            f"cannot read the run {config.path}: {exc.strerror or exc}", path=config.path
        ) from None


def build_source(site: Builder, config: SourceConfig, run: Run) -> None:
    """Write the pages and data of one run of another tool; the index lists it
    (``site.sources``)."""
    site.say(f"run {config.name}")
    slug = site.slug("sources", config.name)
    metric = _metric(run)
    source = SiteSource(
        config.name,
        slug,
        config,
        run,
        f"sources/{slug}.html",
        f"data/{slug}.run.json",
        str(run.metadata.get("tool") or config.format or "kagreport.run"),
        metric,
    )
    if metric is not None:
        source.percent = is_proportion(metric, run.metrics[metric].tolist())
    site.write(source.document, run.dumps())
    source.system_hrefs = {
        s: f"sources/{slug}--{t}.html" for s, t in setup_slugs(list(run.systems)).items()
    }
    if metric is None:
        source.notes.append(
            "The run records no metric, so there is no leaderboard, comparison or chart."
        )
    else:
        if metric != "correct":
            lacks = (
                "Not every system has a pass/fail `correct` (a score that is not 0 or 1, "
                "such as a mean over epochs, has none)"
                if "correct" in run.metrics
                else "The run has no `correct` metric (pass/fail)"
            )
            source.notes.append(
                f"{lacks}, so systems are ranked and compared by their mean {metric}, with "
                "a Wilson interval only where the values are 0 or 1, and without an "
                "accuracy-against-cost chart."
            )
        _leaderboard(source)
        _comparisons(site, source)
        _cost_charts(site, source)
    _system_pages(site, source)
    site.page(
        source.href,
        "source.html.j2",
        title=config.name,
        source=source,
        page_size=PAGE_SIZE,
    )
    site.sources.append(source)


def _metric(run: Run) -> str | None:
    """The metric the pages rank and compare by: ``correct`` when every system defines
    it somewhere, else the first metric every system defines (the run's order), else the
    first metric; None for a run with no metric."""
    names = list(run.metrics)
    if not names:
        return None

    def everywhere(name: str) -> bool:
        defined = ~np.isnan(run.metrics[name])
        return all(defined[run.system == s].any() for s in range(len(run.systems)))

    if "correct" in names and everywhere("correct"):
        return "correct"
    return next((n for n in names if n != "correct" and everywhere(n)), names[0])


def _leaderboard(source: SiteSource) -> None:
    """The leaderboard rows (:func:`kagreport.runs.leaderboard`, with its Wilson interval
    where the metric is a proportion)."""
    assert source.metric is not None
    rows = leaderboard(source.run, source.metric)
    if not rows:
        source.notes.append("The run holds no system, so there is no leaderboard.")
        return
    source.baseline = source.config.baseline or rows[0].system
    for row in rows:
        # A proportion's count of successes; None for a score (no Wilson interval).
        correct = round(row.mean * row.n_defined) if row.interval == "wilson" else None
        low, high = row.low, row.high
        source.leaderboard.append(
            {
                "rank": row.rank,
                "system": row.system,
                "href": source.system_hrefs[row.system],
                "mean": row.mean,
                "low": low,
                "high": high,
                "correct": correct,
                "n_items": row.n_items,
                "n_defined": row.n_defined,
                "n_errors": row.n_errors,
            }
        )


def _comparisons(site: Builder, source: SiteSource) -> None:
    """Paired sign-flip tests between the systems (:func:`kagreport.runs.compare_setups`),
    Holm-adjusted across the run; the forest plot of them."""
    from kagreport.charts import forest_plot

    run, metric = source.run, source.metric
    assert metric is not None
    if source.baseline is None:  # no system: nothing to compare
        return
    if len(run.systems) < 2:
        source.notes.append("The run has one system only, so there is nothing to compare.")
        return
    if source.baseline not in run.systems:
        index = site.config.sources.index(source.config)
        where = (
            f"{site.config.source}: `sources[{index}].baseline`"
            if site.config.source is not None
            else f"the baseline of run {source.name!r}"
        )
        raise SiteError(
            f"{where} names no system of the run: {source.baseline!r}; "
            f"systems: {', '.join(run.systems)}",
            path=site.config.source,
        )
    found = compare_setups(
        run,
        pairs=source.config.compare,
        metrics=(metric,),
        baseline=source.baseline,
        n_resamples=N_RESAMPLES,
        seed=0,
    )
    for candidate, baseline, only_c, only_b in found.skipped:
        source.notes.append(
            f"{candidate} vs {baseline}: not compared, the two share no item "
            f"({only_c} item(s) only in {candidate}, {only_b} only in {baseline})."
        )
    documents = []
    for c in found.comparisons:
        family = c.family_comparison()
        m = family.metrics[metric]
        documents.append(json.loads(family.dumps("json")))
        source.comparisons.append(
            {
                "candidate": c.candidate,
                "baseline": c.baseline,
                "metric": m,
                "only_candidate": c.only_candidate,
                "only_baseline": c.only_baseline,
                "flips": len(c.flips),
            }
        )
    if not found.comparisons:
        return
    source.comparisons_data = f"data/{source.slug}.comparisons.json"
    site.write(
        source.comparisons_data,
        json.dumps(
            {"family": list(found.family), "adjustment": "holm", "comparisons": documents},
            indent=2,
            sort_keys=True,
            allow_nan=False,
            default=str,
        )
        + "\n",
    )
    percent = metric == "correct"
    title = (
        f"Differences in {metric} between the systems of {source.name}"
        if source.config.compare == "all-pairs"
        else f"Difference in {metric} against {source.baseline} ({source.name})"
    )
    source.forest = site.chart(
        forest_plot(found, title=title, percent=percent, metric=metric),
        f"source--{source.slug}--forest",
        title,
    )


def _cost_charts(site: Builder, source: SiteSource) -> None:
    """Accuracy against each cost axis of :data:`kagreport.runs.COSTS` the run has."""
    from kagreport.charts import accuracy_cost_chart

    run = source.run
    axes: list[CostAxis] = []
    for axis in COSTS.values():
        recorded = all(c in run.costs for c in axis.columns) and any(
            np.isfinite(run.costs[c]).any() for c in axis.columns
        )
        # One chart per cost: "latency" is "generation"'s column, "input_tokens" a part
        # of "tokens".
        if recorded and not any(set(axis.columns) <= set(a.columns) for a in axes):
            axes.append(axis)
    if source.metric != "correct":
        return
    if not axes:
        source.notes.append(
            "The run records no cost (time, tokens, money), so there is no "
            "accuracy-against-cost chart."
        )
        return
    for axis in axes:
        try:
            spec = accuracy_cost_chart(run, cost=axis.name, title=f"Accuracy against {axis.title}")  # type: ignore[arg-type]
        except (KagreportError, ValueError, KeyError) as exc:
            source.notes.append(f"No accuracy-against-cost chart on {axis.title}: {exc}")
            continue
        source.charts.append(
            site.chart(
                spec, f"source--{source.slug}--{axis.name}", f"Accuracy against {axis.title}"
            )
        )


def _system_pages(site: Builder, source: SiteSource) -> None:
    run = source.run
    outcomes = ("correct", "incorrect", "error")
    metric_names = sorted(run.metrics)
    ranks = {r["system"]: r for r in source.leaderboard}
    for s, system in enumerate(run.systems):
        rows_at, _ = run.rows_of(system)
        rows = []
        for i in rows_at.tolist():
            o = int(run.outcome[i])
            values = "; ".join(
                f"{m}={_number(float(run.metrics[m][i]))}"
                for m in metric_names
                if not math.isnan(float(run.metrics[m][i]))
            )
            response = None if run.responses is None else run.responses[i]
            rows.append(
                (
                    run.dataset_names[int(run.dataset[i])],
                    run.question_names[int(run.question[i])],
                    outcomes[o] if 0 <= o < len(outcomes) else "unknown",
                    values,
                    _cut(response),
                    None if response is None else len(response),
                    _cut(None if run.references is None else run.references[i]),
                    _cut(None if run.errors is None else run.errors[i]),
                )
            )
        site.page(
            source.system_hrefs[system],
            "source_system.html.j2",
            title=f"{system} ({source.name})",
            source=source,
            system=system,
            row=ranks.get(system),
            items={"columns": list(ITEM_COLUMNS), "rows": rows},
            first_rows=rows[:PAGE_SIZE],
            page_size=PAGE_SIZE,
            response_limit=RESPONSE_LIMIT,
            index=s,
        )


def _cut(text: str | None) -> str | None:
    return None if text is None else text[:RESPONSE_LIMIT]


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:.4g}"
