"""``build_site``: grade the runs, compare their setups and write the static site.

Output layout (every link relative; the site opens from ``file://`` with no network)::

    index.html                                   runs, leaderboards, charts, links
    setups/<run>--<setup>.html                   one page per setup, with its items
    comparisons/<run>--<candidate>--vs--<baseline>.html
    evaluations/<name>.html                      one page per evaluation report
    notebooks/<stem>.html                        executed, converted notebooks
    data/report.json                             the first run's kag stats JSON
    data/<run>/report.json                       each run's, when there are several
    data/comparisons/*.json, data/evaluations/*.json
    figures/*.svg                                every chart, for papers
    assets/vega.js, assets/site.css, assets/site.js

The site is built in a sibling temporary folder and swapped in with renames, so a failed
build leaves the previous site as it was.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import kagreport
from kagreport._errors import KagreportError
from kagreport.grading import ItemTable, Outcome, StatsReport, grade
from kagreport.kag import decode_result, read_bytes
from kagreport.site._config import EvaluationSource, RunConfig, SiteConfig
from kagreport.site._figures import FigureWriter
from kagreport.site._json import dumps_json
from kagreport.site._templates import Templates

if TYPE_CHECKING:
    import pandas as pd

    from kagreport.evaluation import (
        AnswerEvaluation,
        EvaluationComparison,
        RetrievalEvaluation,
    )

__all__ = ["MARKER", "RESPONSE_LIMIT", "build_site", "slugify"]

logger = logging.getLogger("kagreport.site")

#: Characters of a response (or error message) kept on a setup page (PITFALLS.md B15).
RESPONSE_LIMIT = 2000
#: Characters of an MCQ option kept in the expected answer.
OPTION_LIMIT = 200
#: Flipped items listed on a comparison page (the count is always given in full).
FLIP_LIMIT = 2000
#: Evaluation documents larger than this (bytes of JSON) are inlined without their items.
INLINE_LIMIT = 2_000_000
#: A file at the root of every built site; a folder without it is never replaced.
MARKER = ".kagreport-site"
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

ProgressCallback = Callable[[str], None]


def slugify(text: str) -> str:
    """A file-name-safe, URL-safe form of ``text``: ``[a-z0-9._-]``, no ``--``, never empty."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-.")
    return slug or "x"


class _Slugs:
    """Unique slugs within one namespace, assigned in call order (deterministic)."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def __call__(self, text: str) -> str:
        base = slugify(text)
        slug, n = base, 1
        while slug in self.used:
            n += 1
            slug = f"{base}-{n}"
        self.used.add(slug)
        return slug


@dataclass
class _Chart:
    id: str
    title: str
    spec: dict[str, Any]
    svg: str  # path from the site root


@dataclass
class _Comparison:
    run: str
    candidate: str
    baseline: str
    href: str
    data: str
    comparison: EvaluationComparison
    flips: int


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
    skipped: list[str] = field(default_factory=list)
    setup_slugs: dict[str, str] = field(default_factory=dict)


@dataclass
class _Page:
    title: str
    href: str
    note: str = ""


def build_site(
    config: SiteConfig,
    out_dir: str | os.PathLike[str],
    *,
    execute_notebooks: bool = True,
    progress: ProgressCallback | None = None,
) -> Path:
    """Build the static report site of ``config`` into ``out_dir``.

    Parameters
    ----------
    config : SiteConfig
        What to show.
    out_dir : path
        The site folder. It is replaced whole: the site is built in a temporary sibling
        folder, then swapped in by renames. An existing folder is replaced only if it is
        empty or a site built by kagreport (it holds ``.kagreport-site``).
    execute_notebooks : bool
        Run the notebooks (nbclient) before converting them; False converts them as saved.
    progress : callable, optional
        Called with a short message at each step.

    Returns
    -------
    Path
        ``out_dir / "index.html"``.

    Raises
    ------
    KagreportError
        For an unreadable input, a bad baseline, a notebook that fails, an output folder that
        cannot be replaced; the previous site is then left intact.
    """
    out = Path(out_dir)
    _check_output(out, config)
    parent = out.absolute().parent
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=parent))
    try:
        _Builder(config, staging, execute_notebooks, progress).build()
        _swap(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "index.html"


def _check_output(out: Path, config: SiteConfig) -> None:
    parent = out.absolute().parent
    if not parent.is_dir():
        raise KagreportError(f"the parent folder of the site {out} does not exist", path=out)
    if out.exists() and not out.is_dir():
        raise KagreportError(f"the site folder {out} exists and is not a folder", path=out)
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise KagreportError(
            f"{out} is not empty and is not a site built by kagreport (no {MARKER}); "
            "choose another folder or empty it",
            path=out,
        )
    target = out.resolve()
    inputs: list[Path] = []
    for run in config.runs:
        inputs += [run.datasets, run.results]
    inputs += [e.path for e in config.evaluations if e.path is not None]
    inputs += list(config.notebooks)
    if config.templates is not None:
        inputs.append(config.templates)
    for item in inputs:
        resolved = item.resolve()
        if resolved == target or target in resolved.parents or resolved in target.parents:
            raise KagreportError(
                f"the site folder {out} would replace or sit inside the input {item}", path=out
            )


def _swap(staging: Path, out: Path) -> None:
    """Put ``staging`` in place of ``out``: two renames, the old site removed last."""
    old: Path | None = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.absolute().parent))
        old.rmdir()
        os.rename(out, old)
    try:
        os.rename(staging, out)
    except OSError as exc:
        if old is not None:
            os.rename(old, out)
        raise KagreportError(f"cannot move the built site to {out}: {exc}", path=out) from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


class _Builder:
    def __init__(
        self,
        config: SiteConfig,
        root: Path,
        execute_notebooks: bool,
        progress: ProgressCallback | None,
    ) -> None:
        self.config = config
        self.root = root
        self.execute_notebooks = execute_notebooks
        self.progress = progress
        self.templates = Templates(config.templates)
        self.run_slugs = _Slugs()
        self.page_slugs: dict[str, _Slugs] = {}
        self.figure_names: set[str] = set()
        self.runs: list[_Run] = []
        self.evaluations: list[_Page] = []
        self.notebooks: list[_Page] = []
        self.chart_counter = 0
        self.figures = FigureWriter(helper=True)

    # ------------------------------------------------------------------ helpers

    def say(self, message: str) -> None:
        logger.info("%s", message)
        if self.progress is not None:
            self.progress(message)

    def slug(self, namespace: str, text: str) -> str:
        return self.page_slugs.setdefault(namespace, _Slugs())(text)

    def write(self, relative: str, text: str | bytes) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8") if isinstance(text, str) else text
        path.write_bytes(data)

    def page(self, relative: str, template: str, /, *, title: str, **context: Any) -> None:
        depth = relative.count("/")
        html = self.templates.render(
            template,
            site_title=self.config.title,
            page_title=title,
            root="../" * depth,
            nav=self.nav(),
            version=kagreport.__version__,
            **context,
        )
        self.write(relative, html)

    def nav(self) -> list[tuple[str, str]]:
        links = [("Overview", "index.html")]
        if self.config.runs:
            links.append(("Leaderboards", "index.html#runs"))
            links.append(("Comparisons", "index.html#comparisons"))
        if self.config.evaluations:
            links.append(("Evaluations", "index.html#evaluations"))
        if self.config.notebooks:
            links.append(("Notebooks", "index.html#notebooks"))
        return links

    def chart(self, chart: Any, name: str, title: str) -> _Chart:
        # The charts of kagreport.charts are tested; skipping Altair's schema validation
        # here saves most of the time to_dict takes.
        spec: dict[str, Any] = chart if isinstance(chart, dict) else chart.to_dict(validate=False)
        slug, n = name, 1
        while slug in self.figure_names:
            n += 1
            slug = f"{name}-{n}"
        self.figure_names.add(slug)
        relative = f"figures/{slug}.svg"
        (self.root / "figures").mkdir(exist_ok=True)
        self.figures.submit(spec, self.root / relative)
        self.chart_counter += 1
        return _Chart(f"chart-{slug}", title, spec, relative)

    # ------------------------------------------------------------------ build

    def build(self) -> None:
        try:
            self.build_pages()
            self.say("waiting for the figures")
            self.figures.finish()
        finally:
            self.figures.close()

    def build_pages(self) -> None:
        self.write(MARKER, "A static report site built by kagreport; rebuilt whole.\n")
        self.assets()
        # Grade every run first: grading forks worker processes only while this process
        # has one thread (the figure helper adds one).
        # Responses are read then too, in forked workers like grading's.
        graded = []
        for index, run in enumerate(self.config.runs):
            report = self.grade_run(index, run)
            self.say(f"reading the responses of {run.name}")
            graded.append((run, report, _read_responses(report.items)))
        for index, (run, report, responses) in enumerate(graded):
            self.build_run(index, run, report, responses)
        for source in self.config.evaluations:
            self.build_evaluation(source)
        for path in self.config.notebooks:
            self.build_notebook(path)
        self.say("writing the index")
        self.page(
            "index.html",
            "index.html.j2",
            title="Overview",
            runs=self.runs,
            evaluations=self.evaluations,
            notebooks=self.notebooks,
            config=self.config,
        )

    def assets(self) -> None:
        from kagreport.site._vega import vega_bundle

        self.say("writing the assets")
        self.write("assets/vega.js", vega_bundle())
        assets = files("kagreport.site") / "assets"
        for name in ("site.css", "site.js"):
            self.write(f"assets/{name}", (assets / name).read_bytes())

    # ------------------------------------------------------------------ runs

    def grade_run(self, index: int, config: RunConfig) -> StatsReport:
        self.say(f"grading {config.name}")
        report = grade(config.datasets, config.results, config.prefix)
        where = self.config.source or "the site configuration"
        if not report.setups:
            raise KagreportError(
                f"{where}: run {config.name!r} has no graded result under {config.results}",
                path=config.results,
            )
        baseline = config.baseline or report.setups[0].setup
        if baseline not in report.setup_names:
            raise KagreportError(
                f"{where}: `runs[{index}].baseline` names no setup of run {config.name!r}: "
                f"{baseline!r}; setups: {', '.join(report.setup_names)}",
                path=self.config.source,
            )
        return report

    def build_run(
        self, index: int, config: RunConfig, report: StatsReport, responses: list[_Response]
    ) -> None:
        from kagreport.frames import stats_frame

        baseline = config.baseline or report.setups[0].setup
        slug = self.run_slugs(config.name)
        json_text = report.to_json()
        data = "data/report.json"
        if len(self.config.runs) > 1:
            data = f"data/{slug}/report.json"
            self.write(data, json_text)
        if index == 0:
            self.write("data/report.json", json_text)
        run = _Run(config.name, slug, config, report, data, baseline)
        frame = stats_frame(report)
        records: list[dict[str, Any]] = [
            {str(k): v for k, v in r.items()} for r in frame.to_dict("records")
        ]
        by_setup: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            by_setup.setdefault(str(record["setup"]), []).append(record)
        setup_slugs = _Slugs()
        for setup in report.setups:
            run.setup_slugs[setup.setup] = setup_slugs(setup.setup)
        hrefs = {s: f"setups/{slug}--{t}.html" for s, t in run.setup_slugs.items()}
        from kagreport.frames import OVERALL

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
        self.say(f"charts of {config.name}")
        from kagreport.charts import accuracy_cost_chart, dataset_heatmap

        run.charts.append(
            self.chart(
                accuracy_cost_chart(report, title="Accuracy against mean retrieval time"),
                f"{slug}--accuracy-cost",
                "Accuracy against retrieval cost",
            )
        )
        run.charts.append(
            self.chart(
                dataset_heatmap(report), f"{slug}--heatmap", "Accuracy per setup and dataset"
            )
        )
        self.say(f"setup pages of {config.name}")
        outcomes = self.setup_pages(run, frame, by_setup, hrefs, responses)
        self.say(f"comparisons of {config.name}")
        self.comparisons(run, outcomes, hrefs)
        self.runs.append(run)

    def setup_pages(
        self,
        run: _Run,
        frame: pd.DataFrame,
        by_setup: Mapping[str, list[dict[str, Any]]],
        hrefs: Mapping[str, str],
        responses: list[_Response],
    ) -> dict[str, dict[str, str]]:
        """Write each setup's page; return setup -> item identifier -> outcome label."""
        from kagreport.charts import outcomes_chart
        from kagreport.frames import OVERALL

        report = run.report
        table = report.items
        truth = report.ground_truth
        setup_codes = table.codes("setup")
        dataset_codes = table.codes("dataset")
        question_codes = table.codes("question")
        outcome_codes = table.codes("outcome")
        generation = table.codes("generation_secs")
        retrieval = table.codes("retrieval_secs")
        labels = [o.label for o in Outcome]
        expected_cache: dict[tuple[int, int], str | None] = {}
        outcomes: dict[str, dict[str, str]] = {}
        for rank, setup in enumerate(report.setups, start=1):
            name = setup.setup
            code = table.setup_names.index(name)
            indices = np.flatnonzero(setup_codes == code)
            keyed = sorted(
                (
                    (
                        table.dataset_names[dataset_codes[i]],
                        table.question_names[question_codes[i]],
                    ),
                    int(i),
                )
                for i in indices
            )
            rows: list[list[Any]] = []
            per_item: dict[str, str] = {}
            for (dataset, question), i in keyed:
                key = (int(dataset_codes[i]), int(question_codes[i]))
                if key not in expected_cache:
                    expected_cache[key] = _expected(truth, dataset, question)
                outcome = labels[int(outcome_codes[i])]
                per_item[f"{dataset}/{question}"] = outcome
                response, response_length, error = responses[i]
                rows.append(
                    [
                        dataset,
                        question,
                        outcome,
                        expected_cache[key],
                        response,
                        response_length,
                        error,
                        _secs(int(generation[i])),
                        _secs(int(retrieval[i])),
                    ]
                )
            outcomes[name] = per_item
            records = by_setup[name]
            datasets = [r for r in records if r["dataset"] != OVERALL]
            overall = next(r for r in records if r["dataset"] == OVERALL)
            chart_frame = frame[(frame["setup"] == name) & (frame["dataset"] != OVERALL)].copy()
            chart_frame["setup"] = chart_frame["dataset"]
            chart_frame["dataset"] = OVERALL
            chart_frame["rank"] = range(1, len(chart_frame) + 1)
            chart = self.chart(
                outcomes_chart(chart_frame, title=f"Outcomes of {name} per dataset"),
                f"{run.slug}--{run.setup_slugs[name]}--outcomes",
                "Outcomes per dataset",
            )
            self.page(
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
                first_rows=rows[:50],
                page_size=50,
                response_limit=RESPONSE_LIMIT,
                comparisons_of=[],
            )
        return outcomes

    def comparisons(
        self, run: _Run, outcomes: Mapping[str, Mapping[str, str]], hrefs: Mapping[str, str]
    ) -> None:
        from kagreport.charts import forest_plot
        from kagreport.evaluation import evaluation_from_stats

        report = run.report
        ranked = list(report.setup_names)
        if run.config.compare == "all-pairs":
            pairs = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]]
        else:
            pairs = [(s, run.baseline) for s in ranked if s != run.baseline]
        evaluations: dict[str, AnswerEvaluation] = {}
        slugs = run.setup_slugs
        for candidate, baseline in pairs:
            mine, theirs = outcomes[candidate], outcomes[baseline]
            if mine.keys() != theirs.keys():
                only_c = len(mine.keys() - theirs.keys())
                only_b = len(theirs.keys() - mine.keys())
                run.skipped.append(
                    f"{candidate} vs {baseline}: not compared, the item sets differ "
                    f"({only_c} item(s) only in {candidate}, {only_b} only in {baseline})"
                )
                continue
            for setup in (candidate, baseline):
                if setup not in evaluations:
                    evaluations[setup] = evaluation_from_stats(
                        _only_setup(report, setup), setup, answers=False
                    )
            comparison = evaluations[candidate].compare(
                evaluations[baseline], n_resamples=N_RESAMPLES, seed=0
            )
            name = f"{run.slug}--{slugs[candidate]}--vs--{slugs[baseline]}"
            href = f"comparisons/{name}.html"
            data = f"data/comparisons/{name}.json"
            document = comparison.dumps("json")
            self.write(data, document)
            flips = sorted(
                (identifier, outcome, theirs[identifier])
                for identifier, outcome in mine.items()
                if (outcome == "correct") != (theirs[identifier] == "correct")
            )
            chart = self.chart(
                forest_plot(comparison), f"{name}--forest", f"{candidate} − {baseline}"
            )
            self.page(
                href,
                "comparison.html.j2",
                title=f"{candidate} vs {baseline} ({run.name})",
                run=run,
                candidate=candidate,
                baseline=baseline,
                candidate_href=hrefs[candidate],
                baseline_href=hrefs[baseline],
                comparison=comparison,
                rows=[m.to_dict() for m in comparison.metrics.values()],
                document=_loads(document),
                data=data,
                figure=chart,
                flips=flips[:FLIP_LIMIT],
                n_flips=len(flips),
                gained=sum(1 for _, o, _ in flips if o == "correct"),
            )
            run.comparisons.append(
                _Comparison(run.name, candidate, baseline, href, data, comparison, len(flips))
            )

    # ------------------------------------------------------------------ evaluations

    def build_evaluation(self, source: EvaluationSource) -> None:
        from kagreport.evaluation import (
            AnswerEvaluation,
            EvaluationComparison,
            RetrievalEvaluation,
        )

        self.say(f"evaluation {source.name}")
        report = source.report if source.report is not None else _read_evaluation(source)
        slug = self.slug("evaluations", source.name)
        href = f"evaluations/{slug}.html"
        data = f"data/evaluations/{slug}.json"
        document = report.dumps("json")
        self.write(data, document)
        parsed = _loads(document)
        inline = parsed
        trimmed = False
        if len(document) > INLINE_LIMIT and "items" in parsed:
            inline = {k: v for k, v in parsed.items() if k != "items"}
            trimmed = True
        context: dict[str, Any] = {
            "name": source.name,
            "data": data,
            "document": inline,
            "trimmed": trimmed,
            "metadata": dict(report.metadata),
            "source_path": None if source.path is None else source.path.name,
            "charts": [],
        }
        if isinstance(report, EvaluationComparison):
            from kagreport.charts import forest_plot

            kind = "comparison"
            context["comparison"] = report
            context["rows"] = [m.to_dict() for m in report.metrics.values()]
            context["charts"].append(
                self.chart(
                    forest_plot(report),
                    f"evaluation--{slug}--forest",
                    f"{report.candidate} − {report.baseline}",
                )
            )
            note = f"comparison {report.candidate} vs {report.baseline}"
        elif isinstance(report, AnswerEvaluation):
            kind = "answers"
            context.update(_answer_context(report))
            if report.agreement:
                from kagreport.charts import agreement_chart

                context["charts"].append(
                    self.chart(
                        agreement_chart(report),
                        f"evaluation--{slug}--agreement",
                        "Agreement between judges",
                    )
                )
            note = f"answer evaluation, {len(report.items)} items, {len(report.judges)} judge(s)"
        elif isinstance(report, RetrievalEvaluation):
            kind = "retrieval"
            context["metrics"] = [
                {"name": k, "value": v, "coverage": report.coverage.get(k)}
                for k, v in report.metrics.items()
            ]
            context["errors"] = dict(report.errors)
            context["settings"] = dict(report.settings)
            note = f"retrieval evaluation, {len(report.items)} items"
        else:  # pragma: no cover - _read_evaluation returns one of the three
            raise TypeError(type(report).__name__)
        self.page(
            href,
            "evaluation.html.j2",
            title=str(report.metadata.get("name") or source.name),
            kind=kind,
            **context,
        )
        self.evaluations.append(_Page(str(report.metadata.get("name") or source.name), href, note))

    # ------------------------------------------------------------------ notebooks

    def build_notebook(self, path: Path) -> None:
        from kagreport.site._notebooks import convert_notebook

        self.say(f"notebook {path.name}")
        slug = self.slug("notebooks", path.stem)
        href = f"notebooks/{slug}.html"
        header = self.templates.render(
            "_header.html.j2",
            site_title=self.config.title,
            nav=self.nav(),
            root="../",
        )
        footer = self.templates.render("_footer.html.j2", root="../", version=kagreport.__version__)
        html = convert_notebook(
            path,
            execute=self.execute_notebooks,
            template_dirs=self.templates.notebook_dirs(),
            header=header,
            footer=footer,
            root="../",
            title=f"{path.stem} · {self.config.title}",
        )
        self.write(href, html)
        self.notebooks.append(_Page(path.stem, href, "executed" if self.execute_notebooks else ""))


# ---------------------------------------------------------------------- helpers


def _only_setup(report: StatsReport, setup: str) -> StatsReport:
    """``report`` with the rows of one setup only in its item table (same metrics).

    :func:`evaluation_from_stats` walks the whole item table for each setup; giving it
    one setup's rows keeps a site of many setups linear in the number of items.
    """
    from array import array

    table = report.items
    mask = table.codes("setup") == table.setup_names.index(setup)
    columns = tuple(
        array(typecode, table.codes(name)[mask].tobytes())
        for name, typecode in zip(ItemTable.COLUMNS, "IIIBqqqqqq", strict=True)
    )
    subset = ItemTable(
        table.setup_names,
        table.dataset_names,
        table.question_names,
        columns,
        results=table.results,
        prefix=table.prefix,
    )
    return dataclasses.replace(report, items=subset)


def _secs(nanos: int) -> float | None:
    return None if nanos < 0 else round(nanos / 1e9, 3)


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= RESPONSE_LIMIT:
        return text
    return text[:RESPONSE_LIMIT]


#: Below this many items, responses are read in this process.
_POOL_MIN_ITEMS = 5000

_Response = tuple[str | None, int | None, str | None]


def _read_responses(table: ItemTable) -> list[_Response]:
    """(response cut, full length, error cut) of every row of ``table``, in row order.

    Large tables are read by a pool of forked workers (Linux, and only while this process
    has a single thread, as :func:`kagreport.grade` does); the result is the same.
    """
    if table.results is None:
        return [(None, None, "(the report does not know its results folder)")] * len(table)
    setups = table.codes("setup")
    datasets = table.codes("dataset")
    questions = table.codes("question")
    paths = [
        os.path.join(
            table.results,
            table.dataset_names[d],
            table.question_names[q],
            f"{table.prefix}{table.setup_names[s]}.json",
        )
        for s, d, q in zip(setups.tolist(), datasets.tolist(), questions.tolist(), strict=True)
    ]
    workers = min(8, os.cpu_count() or 1)
    fork_ok = sys.platform.startswith("linux") and threading.active_count() == 1
    if len(paths) < _POOL_MIN_ITEMS or workers < 2 or not fork_ok:
        return [_read_response(path) for path in paths]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(_read_response, paths, chunksize=1000)


def _read_response(path: str) -> _Response:
    """(response cut to the limit, its full length, error message cut) of one result file."""
    try:
        record = decode_result(read_bytes(path))
    except (OSError, ValueError) as exc:
        return None, None, _cut(f"cannot read the result file: {exc}")
    response = record.result
    return _cut(response), None if response is None else len(response), _cut(record.error)


def _expected(truth: Any, dataset: str, question: str) -> str | None:
    entry = truth.get(dataset, question) if truth is not None else None
    if entry is None or entry.output is None or entry.answer is None:
        return None
    option = entry.output.options.get(entry.answer)
    if option is None:
        return str(entry.answer)
    cut = option[:OPTION_LIMIT] + ("…" if len(option) > OPTION_LIMIT else "")
    return f"{entry.answer}: {cut}"


def _loads(text: str) -> Any:
    import json

    return json.loads(text)


def _read_evaluation(
    source: EvaluationSource,
) -> AnswerEvaluation | RetrievalEvaluation | EvaluationComparison:
    from kagreport.evaluation import (
        AnswerEvaluation,
        EvaluationComparison,
        RetrievalEvaluation,
    )
    from kagreport.evaluation._serialize import format_for, loads_document

    path = source.path
    assert path is not None
    try:
        kind = format_for(path, None)
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KagreportError(
            f"cannot read the evaluation {path}: {exc.strerror or exc}", path=path
        ) from None
    except ValueError as exc:
        raise KagreportError(f"cannot read the evaluation {path}: {exc}", path=path) from None
    classes: dict[str, Any] = {
        "kagreport.AnswerEvaluation": AnswerEvaluation,
        "kagreport.RetrievalEvaluation": RetrievalEvaluation,
        "kagreport.EvaluationComparison": EvaluationComparison,
    }
    try:
        items_key = "items"
        document = loads_document(text, kind, items_key=items_key)
        schema = document.get("schema")
        if schema == "kagreport.EvaluationComparison" and kind == "jsonl":
            document = loads_document(text, kind, items_key="metrics")
        cls = classes.get(str(schema))
        if cls is None:
            raise ValueError(f"schema {schema!r} is none of {', '.join(sorted(classes))}")
        report: AnswerEvaluation | RetrievalEvaluation | EvaluationComparison = cls.from_dict(
            document
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise KagreportError(
            f"{path} is not an evaluation report kagreport can show: {exc}", path=path
        ) from None
    return report


def _answer_context(report: AnswerEvaluation) -> dict[str, Any]:
    coverage = report.coverage
    usage = []
    for judge, counts in sorted(report.usage.items()):
        responses = int(counts.get("responses", 0))
        cached = int(counts.get("cached_responses", 0))
        usage.append(
            {
                "judge": judge,
                "responses": responses,
                "cached": cached,
                "saved": cached / responses if responses else None,
                "input_tokens": counts.get("input_tokens"),
                "output_tokens": counts.get("output_tokens"),
                "without_counts": counts.get("responses_without_token_counts"),
            }
        )
    return {
        "metrics": [
            {"name": k, "value": v, "coverage": coverage.get(k)} for k, v in report.metrics.items()
        ],
        "judges": [
            {"name": name, "identity": dumps_json(identity)}
            for name, identity in report.judges.items()
        ],
        "usage": usage,
        "errors": dict(report.errors),
        "agreement": [
            {
                "criterion": criterion,
                "alpha": alpha,
                "interval": report.agreement_intervals.get(criterion),
            }
            for criterion, alpha in report.agreement.items()
        ],
        "n_items": len(report.items),
        "settings": dict(report.settings),
    }
