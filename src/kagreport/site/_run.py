"""The pages of a run, whatever tool wrote it: its leaderboard and charts (on the index),
one page per system with its items; the comparisons of its systems are
:mod:`kagreport.site._comparisons`.

A kag result tree and another tool's file are both read into a :class:`kagreport.runs.Run`
(:func:`kagreport.read_run`); from there one pipeline makes every page. A run whose every
row has an outcome and whose headline metric is ``correct`` (a kag tree's, an Inspect log's
with a pass/fail scorer) gets kag's metrics (accuracy, precision, coverage with Wilson
intervals, per dataset); any other run its leaderboard of its headline metric. Every
number comes from :mod:`kagreport.runs` and :mod:`kagreport.frames`; nothing here computes
a statistic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import KagreportError, SiteError
from kagreport._format import (
    NAME_LIMIT,
    is_proportion,
    isolated,
    percent_interval,
    plural,
    rank_range,
)
from kagreport.runs import Run, leaderboard, pass_k, setup_metrics
from kagreport.runs._costs import COSTS, recorded_columns, recorded_costs
from kagreport.runs._leaderboard import CLUSTER_INTERVAL
from kagreport.runs._metrics import kag_stats_json
from kagreport.site._comparisons import plan_comparisons
from kagreport.site._config import RunConfig, SourceConfig
from kagreport.site._items import ITEM_COLUMNS, RESPONSE_LIMIT, item_columns, item_rows
from kagreport.site._labels import SIMULATED, SIMULATED_NOTICE
from kagreport.site._pagedata import SiteRun
from kagreport.site._slugs import setup_slugs
from kagreport.site._templates import PAGE_SIZE

if TYPE_CHECKING:
    import pandas as pd

    from kagreport.site._context import SiteContent

__all__ = ["plan_run", "read_input"]

RunInput = RunConfig | SourceConfig


def read_input(config: RunInput, key: str, source: Any, engine_options: Any = None) -> Run:
    """Read one run of the site: a kag tree graded, or another tool's file.

    ``engine_options`` (:class:`kagreport.EngineOptions`) say how a kag tree is graded.

    Raises
    ------
    SiteError
        One line naming the path, for a tree or file that cannot be read, a kag tree with
        no graded result, or a baseline the run does not hold (naming the configuration
        key, or the flag).
    """
    from kagreport.sources import read_run

    try:
        if isinstance(config, RunConfig):
            # Texts are read from the result files as the pages show them (whole, so the
            # pages give a cut response's full length), never all held at once.
            run = read_run(
                config.results,
                format="kag",
                datasets=config.datasets,
                prefix=config.prefix,
                engine_options=engine_options,
            )
        else:
            run = read_run(config.path, config.format)
    except KagreportError as exc:
        if isinstance(config, RunConfig):
            raise
        path = config.path
        message = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
        raise SiteError(f"cannot read the run {message}", path=path) from None
    except OSError as exc:
        where = config.results if isinstance(config, RunConfig) else config.path
        raise SiteError(f"cannot read the run {where}: {exc.strerror or exc}", path=where) from None
    if isinstance(config, RunConfig) and not run.systems:
        raise SiteError(
            f"run {config.name!r} has no graded result under {config.results}",
            path=config.results,
        )
    if config.baseline is not None and config.baseline not in run.systems:
        what = f"{source}: `{key}.baseline`" if source is not None else "the baseline"
        if source is None and isinstance(config, SourceConfig):
            what = f"the baseline of run {config.name!r}"
        noun = "setup" if isinstance(config, RunConfig) else "system"
        raise SiteError(
            f"{what} names no {noun} of run {config.name!r}: "
            f"{config.baseline!r}; {noun}s: {', '.join(run.systems)}",
            path=source,
        )
    return run


def headline_metric(run: Run) -> str | None:
    """The metric the pages rank and compare by: the run's headline
    (:attr:`kagreport.runs.Run.headline`) when every system defines it somewhere, else the
    first metric every system defines (the run's order), else the first metric; None for a
    run with no metric."""
    names = list(run.metrics)
    if not names:
        return None

    def everywhere(name: str) -> bool:
        defined = ~np.isnan(run.metrics[name])
        return all(defined[run.system == s].any() for s in range(len(run.systems)))

    if everywhere(run.headline):
        return run.headline
    return next((n for n in names if everywhere(n)), names[0])


def plan_run(site: SiteContent, config: RunInput, key: str, run: Run) -> SiteRun:
    """Make the pages and data of one run; the index lists it (``site.runs``)."""
    site.say(f"run {config.name}")
    run, lengths = _cut_texts(run)
    slug = site.slug("runs", config.name)
    name = config.name
    simulated = SIMULATED_NOTICE if run.metadata.get("simulated") else ""
    if simulated and SIMULATED.lower() not in name.lower():
        name = f"{name} ({SIMULATED})"
    tool = str(run.metadata.get("tool") or getattr(config, "format", None) or "kagreport.run")
    entry = SiteRun(name, slug, config, key, run, tool, f"data/runs/{slug}/run.json")
    entry.response_lengths = lengths
    entry.simulated = simulated
    entry.attribution = config.attribution or simulated
    entry.unparsable = [(str(f), str(r)) for f, r in run.metadata.get("unparsable", ())]
    counts = run.metadata.get("kag_stats")
    entry.counts = dict(counts) if isinstance(counts, dict) else {}
    entry.system_slugs = setup_slugs(list(run.systems))
    entry.system_hrefs = {s: f"setups/{slug}--{t}.html" for s, t in entry.system_slugs.items()}
    entry.metric = headline_metric(run)
    if entry.unparsable:
        site.warn(
            f"run {config.name!r}: {plural(len(entry.unparsable), 'result file')} did not parse "
            f"and {'was' if len(entry.unparsable) == 1 else 'were'} skipped (the index lists "
            "them with the reason)"
        )
    site.simulated = simulated
    try:
        _data(site, entry)
        if entry.metric is None:
            entry.notes.append(
                "The run records no metric, so there is no leaderboard, comparison or chart."
            )
        else:
            entry.percent = is_proportion(entry.metric, run.metrics[entry.metric].tolist())
            entry.kag = entry.metric == "correct" and bool((run.outcome >= 0).all())
            _leaderboard(entry)
            _pass_k(entry)
            _charts(site, entry)
            plan_comparisons(site, entry)
        _system_pages(site, entry)
    finally:
        site.simulated = ""
    site.runs.append(entry)
    return entry


def _cut_texts(run: Run) -> tuple[Run, list[int | None] | None]:
    """``run`` with its row texts cut to ``RESPONSE_LIMIT`` characters, as every page
    and its document show them, and the length of each whole response.

    One pass over the rows: a kag run's response and error of a row come from one read of
    its result file.
    """
    import dataclasses

    responses, errors, explanations = run.responses, run.errors, run.explanations
    lengths: list[int | None] | None = None
    kept: dict[str, list[str | None]] = {}
    if responses is not None:
        lengths = []
        kept["responses"] = []
    for name, column in (("errors", errors), ("explanations", explanations)):
        if column is not None:
            kept[name] = []
    for row in range(len(run)):
        if responses is not None and lengths is not None:
            text = responses[row]
            lengths.append(None if text is None else len(text))
            kept["responses"].append(None if text is None else text[:RESPONSE_LIMIT])
        for name, column in (("errors", errors), ("explanations", explanations)):
            if column is not None:
                value = column[row]
                kept[name].append(None if value is None else value[:RESPONSE_LIMIT])
    texts: dict[str, Any] = {k: tuple(v) for k, v in kept.items()}
    return dataclasses.replace(run, **texts), lengths


def _data(site: SiteContent, entry: SiteRun) -> None:
    """The run's data files: its run model and, for a kag tree, kag's JSON (the first
    kag run's also at ``data/report.json``)."""
    site.write(entry.document, entry.run.dumps())
    stats = kag_stats_json(entry.run)
    if stats is None:
        return
    first = not any(r.data for r in site.runs)
    several = len(site.config.runs) > 1
    entry.data = f"data/runs/{entry.slug}/report.json" if several else "data/report.json"
    if several:
        site.write(entry.data, stats)
    if first:
        site.write("data/report.json", stats)


#: The leaderboard's cost columns beyond the shared metric cells, as ``kag stats`` shows
#: them (CTX_LEN, VERTICE, RELATION, PROPERTY): (key, heading, group); shown as quantities.
COST_COLUMNS = (
    ("avg_context_length", "Mean context length (bytes)", "context"),
    ("retrieval.avg_vertices", "Mean vertices", "graph"),
    ("retrieval.avg_relationships", "Mean relationships", "graph"),
    ("retrieval.avg_properties", "Mean properties", "graph"),
)


def _cost_cell(overall: dict[str, Any], key: str) -> Any:
    """The value of ``key`` (``a.b`` reads a nested object) in kag's JSON of a setup."""
    value: Any = overall
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _rank_cells(row: dict[str, Any], low: int | None, high: int | None, group: int | None) -> None:
    """A leaderboard row's rank interval and tie group (None where the metric is not 0/1)."""
    row.update(
        rank_low=low,
        rank_high=high,
        ranks=rank_range(low, high),
        tie_group=group,
    )


def _pass_k(entry: SiteRun) -> None:
    """pass@k and pass^k of each system of a run with repeats (:func:`kagreport.runs.pass_k`
    of the headline metric); none for a run without."""
    assert entry.metric is not None
    entry.passk = [
        {
            "system": row.system,
            "k": row.k,
            "at": percent_interval(row.pass_at_k, *row.pass_at_k_ci),
            "hat": percent_interval(row.pass_hat_k, *row.pass_hat_k_ci),
            "n_items": row.n_items,
        }
        for row in pass_k(entry.run, entry.metric)
    ]


def _leaderboard(entry: SiteRun) -> None:
    """The leaderboard rows: kag's metrics (``kagreport.runs.setup_metrics`` and the
    Wilson intervals of :func:`kagreport.frames.stats_frame`), in kag's rank order, or the
    run's :func:`kagreport.runs.leaderboard` of its headline metric."""
    run = entry.run
    assert entry.metric is not None
    if entry.kag:
        from kagreport.frames import stats_frame
        from kagreport.frames._tables import OVERALL

        frame = stats_frame(run, per_dataset=False)
        entry.clustered = bool(frame.attrs.get("accuracy_interval"))
        overall = {r["setup"]: r for r in frame.to_dict("records") if r["dataset"] == OVERALL}
        for rank, setup in enumerate(setup_metrics(run), start=1):
            entry.leaderboard.append(
                {
                    "rank": rank,
                    "system": setup.setup,
                    "href": entry.system_hrefs[setup.setup],
                    "json": setup.overall.to_dict(),
                    "frame": overall[setup.setup],
                    "per_dataset": {k: m.to_dict() for k, m in setup.per_dataset.items()},
                }
            )
        recorded = set()
        for row in entry.leaderboard:
            if (row["json"]["avg_context_length"] or 0) > 0:
                recorded.add("context")
            if row["json"]["retrieval"] is not None:
                recorded.add("graph")
        entry.costs = [(k, h) for k, h, group in COST_COLUMNS if group in recorded]
        if "generation_secs" not in recorded_columns(run):
            # kag's table prints 0.000 for times never recorded; the page shows "—".
            for row in entry.leaderboard:
                row["json"] = {**row["json"], "avg_generation_secs": None}
                row["per_dataset"] = {
                    k: {**m, "avg_generation_secs": None} for k, m in row["per_dataset"].items()
                }
            if recorded_costs(run):  # else the note that no cost was recorded says it
                entry.notes.append(
                    "No setup recorded a generation time above zero (every result file holds "
                    "0 s), so mean generation times show as — (kag's table prints 0.000)."
                )
        for row in entry.leaderboard:
            row["costs"] = [(k, _cost_cell(row["json"], k)) for k, _ in entry.costs]
        # Rank intervals and tie groups of accuracy (kag ranks by it).
        ranks = (
            {r.system: r for r in leaderboard(run, "correct")} if "correct" in run.metrics else {}
        )
        for row in entry.leaderboard:
            found = ranks.get(row["system"])
            if found is None:
                _rank_cells(row, None, None, None)
            else:
                _rank_cells(row, found.rank_low, found.rank_high, found.tie_group)
    else:
        for ranked in leaderboard(run, entry.metric):
            # A proportion's count of successes; None for a score (no Wilson interval).
            wilson = ranked.interval == "wilson"
            correct = round(ranked.mean * ranked.n_defined) if wilson else None
            entry.leaderboard.append(
                {
                    "rank": ranked.rank,
                    "system": ranked.system,
                    "href": entry.system_hrefs[ranked.system],
                    "mean": ranked.mean,
                    "low": ranked.low,
                    "high": ranked.high,
                    "correct": correct,
                    "n_items": ranked.n_items,
                    "n_defined": ranked.n_defined,
                    "n_errors": ranked.n_errors,
                }
            )
            _rank_cells(entry.leaderboard[-1], ranked.rank_low, ranked.rank_high, ranked.tie_group)
        entry.wilson = any(row["correct"] is not None for row in entry.leaderboard)
        entry.clustered = any(
            r.interval == CLUSTER_INTERVAL for r in leaderboard(run, entry.metric)
        )
        if entry.metric != "correct" and run.metadata.get("headline") == entry.metric:
            entry.notes.append(
                f"Systems are ranked and compared by {isolated(entry.metric)}, the tool's own "
                "headline metric, with a Wilson interval where its values are 0 or 1, and "
                "without an accuracy-against-cost chart (which counts every item's outcome)."
            )
        elif entry.metric != "correct":
            lacks = (
                "Not every system has a pass/fail `correct` (a score that is not 0 or 1, "
                "such as a mean over epochs, has none)"
                if "correct" in run.metrics
                else "The run has no `correct` metric (pass/fail)"
            )
            entry.notes.append(
                f"{lacks}, so systems are ranked and compared by their mean "
                f"{isolated(entry.metric)}, with a Wilson interval only where the values are 0 "
                "or 1, and without an accuracy-against-cost chart."
            )
    first = entry.leaderboard[0]["system"] if entry.leaderboard else None
    entry.baseline = entry.config.baseline or first


def _cost_axes(run: Run) -> list[str]:
    """The cost axes to draw accuracy against: each recorded one (some item costs more
    than 0), one per set of columns ("tokens" covers its parts), kag's first."""
    axes: list[str] = []
    for name in recorded_costs(run):
        columns = set(COSTS[name].columns)
        if not any(columns <= set(COSTS[a].columns) for a in axes):
            axes = [a for a in axes if not set(COSTS[a].columns) <= columns] + [name]
    return axes


def _charts(site: SiteContent, entry: SiteRun) -> None:
    """The run's figures on the index: accuracy against each cost it recorded (small
    multiples per dataset when it has several), and for kag's metrics accuracy per setup
    and dataset and the outcomes per setup."""
    from kagreport.charts import accuracy_cost_chart, dataset_heatmap, outcomes_chart

    run, slug = entry.run, entry.slug
    if entry.metric != "correct":
        return
    axes = _cost_axes(run)
    if not axes:
        entry.notes.append(
            "No system of this run recorded a cost above zero (time, context length, graph "
            "elements, tokens, money), so there is no accuracy-against-cost chart."
        )
    per_dataset = entry.kag and len(set(run.dataset_names)) > 1
    for k, name in enumerate(axes):
        axis = COSTS[name]
        noun = axis.title.removeprefix("Mean ").split(" (")[0]
        try:
            chart = accuracy_cost_chart(
                run,
                cost=name,  # type: ignore[arg-type]
                per_dataset=per_dataset,
                title=f"Accuracy against mean {noun}",
            )
        except (KagreportError, ValueError) as exc:
            entry.notes.append(f"No accuracy-against-cost chart on {axis.title}: {exc}")
            continue
        figure = "accuracy-cost" if k == 0 else f"accuracy-{name}"
        label = f"Accuracy against {noun}" + (", per dataset" if per_dataset else "")
        entry.charts.append(site.chart(chart, f"{slug}--{figure}", label))
    if entry.kag:
        entry.charts.append(
            site.chart(dataset_heatmap(run), f"{slug}--heatmap", "Accuracy per setup and dataset")
        )
        entry.charts.append(
            site.chart(
                outcomes_chart(run, normalize=True),
                f"{slug}--outcomes",
                "Correct, incorrect and error records per setup",
            )
        )


def _system_pages(site: SiteContent, entry: SiteRun) -> None:
    """Each system's page: its per-dataset metrics and outcomes (kag's metrics) or its
    leaderboard row, its comparisons, its result files that did not parse, every item."""
    from kagreport.frames import stats_frame
    from kagreport.frames._tables import OVERALL

    run = entry.run
    frame: pd.DataFrame | None = stats_frame(run) if entry.kag else None
    columns = item_columns(run)
    ranks = {row["system"]: row for row in entry.leaderboard}
    for system in run.systems:
        rows = item_rows(run, run.rows_of(system)[0], entry.response_lengths)
        context: dict[str, Any] = {}
        if frame is not None:
            from kagreport.charts import outcomes_chart

            mine = frame[frame["setup"] == system]
            chart_frame = mine[mine["dataset"] != OVERALL].copy()
            chart_frame["setup"] = chart_frame["dataset"]
            chart_frame["dataset"] = OVERALL
            chart_frame["rank"] = range(1, len(chart_frame) + 1)
            context["figure"] = site.chart(
                outcomes_chart(
                    chart_frame,
                    title=f"Outcomes of {isolated(system, NAME_LIMIT)} per dataset",
                ),
                f"{entry.slug}--{entry.system_slugs[system]}--outcomes",
                "Outcomes per dataset",
                figure=False,
            )
            context["datasets"] = [r for r in mine.to_dict("records") if r["dataset"] != OVERALL]
            context["overall"] = next(r for r in mine.to_dict("records") if r["dataset"] == OVERALL)
        shown_unparsable = [
            (path, reason)
            for path, reason in entry.unparsable
            if _setup_of(path, str(run.metadata.get("prefix", ""))) == system
        ]
        site.page(
            entry.system_hrefs[system],
            "setup.html.j2",
            title=f"{isolated(system)} ({isolated(entry.name)})",
            run=entry,
            setup=system,
            row=ranks.get(system),
            items={"columns": list(ITEM_COLUMNS), "rows": rows},
            columns=columns,
            first_rows=rows[:PAGE_SIZE],
            page_size=PAGE_SIZE,
            response_limit=RESPONSE_LIMIT,
            comparisons_of=[c for c in entry.comparisons if system in (c.candidate, c.baseline)],
            unparsable=shown_unparsable,
            **context,
        )


def _setup_of(path: str, prefix: str) -> str:
    """The setup a result file's path names (``.../<prefix><setup>.json``)."""
    leaf = path.rsplit("/", 1)[-1]
    return leaf.removeprefix(prefix).removesuffix(".json")
