"""``build_site``: grade the runs, compare their setups and write the static site.

Output layout (every link relative; the site opens from ``file://`` with no network)::

    index.html                                   runs, leaderboards, charts, links
    setups/<run>--<setup>.html                   one page per setup, with its items
    comparisons/<run>--<candidate>--vs--<baseline>.html
    evaluations/<name>.html                      one page per evaluation report
    notebooks/<stem>.html                        executed, converted notebooks
    data/report.json                             the first run's kag stats JSON
    data/runs/<run>/report.json                  each run's, when there are several
    data/comparisons/*.json, data/evaluations/*.json
    figures/*.svg                                run and evaluation figures, for papers
    assets/vega.js, assets/site.css, assets/site.js

The site is built in a sibling temporary folder and swapped in with renames, so a failed
build leaves the previous site as it was.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

import kagreport
from kagreport._errors import SiteError
from kagreport.grading import Outcome, StatsReport, grade
from kagreport.runs import Run as RunModel
from kagreport.site._config import EvaluationSource, RunConfig, SiteConfig
from kagreport.site._figures import FigureWriter
from kagreport.site._json import dumps_json
from kagreport.site._signals import deferred_signals
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
#: Rows a page of an item table (or of flipped items) shows; the first page is in the HTML.
PAGE_SIZE = 50
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


#: Characters a slug keeps: a comparison's file name holds three (run, candidate, baseline)
#: and must stay under the 255 bytes file systems allow.
SLUG_LIMIT = 64


def slugify(text: str) -> str:
    """A file-name-safe, URL-safe form of ``text``: ``[a-z0-9._-]``, no ``--``, never empty,
    at most :data:`SLUG_LIMIT` characters."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-.")
    return slug[:SLUG_LIMIT].rstrip("-.") or "x"


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
    svg: str | None  # path from the site root of its SVG figure, if it has one


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
    warn: ProgressCallback | None = None,
) -> Path:
    """Build the static report site of ``config`` into ``out_dir``.

    Parameters
    ----------
    config : SiteConfig
        What to show.
    out_dir : path
        The site folder. It is replaced whole: the site is built in a temporary sibling
        folder, then swapped in by renames. An existing folder is replaced only if it is
        empty or a site built by kagreport (it holds ``.kagreport-site``). Missing parent
        folders are created.
    execute_notebooks : bool
        Run the notebooks (nbclient) before converting them; False converts them as saved.
    progress : callable, optional
        Called with a short message at each step.
    warn : callable, optional
        Called with a one-line message for what the reader of the site should know but
        that does not stop the build (result files that did not parse, setups that could
        not be compared); also logged as warnings.

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
    out = _site_path(Path(out_dir))
    try:
        _check_output(out, config)
    except PermissionError as exc:
        raise SiteError(
            f"cannot inspect the site folder {out}: {exc.strerror or exc}", path=out
        ) from None
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SiteError(
            f"cannot create the folder of the site {out}: {exc.strerror or exc}", path=out
        ) from None
    # A stop (Ctrl-C, SIGTERM) is held back while a folder appears, the site is swapped in
    # or the build folder goes: none is left half done, and none is left behind.
    staging: Path | None = None
    try:
        with deferred_signals():
            staging = _new_folder(parent, f".{out.name}.build-")
        _Builder(config, staging, execute_notebooks, progress, warn).build()
        with deferred_signals():
            _swap(staging, out)
    except BaseException:
        if staging is not None:
            with deferred_signals():
                shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "index.html"


def _site_path(out: Path) -> Path:
    """``out`` made absolute with its parent resolved (symbolic links and ``..`` as the
    kernel follows them), its own last part kept: a symlinked site folder is refused later,
    not followed."""
    absolute = out.absolute()
    if absolute.name in ("", ".", ".."):
        return absolute.resolve()
    try:
        return absolute.parent.resolve() / absolute.name
    except OSError:  # a loop of links: left to the checks that follow
        return absolute


def _check_output(out: Path, config: SiteConfig) -> None:
    parent = out.absolute().parent
    if parent.exists() and not parent.is_dir():
        raise SiteError(f"the parent of the site folder {out} is not a folder", path=out)
    if out.is_symlink():
        raise SiteError(
            f"the site folder {out} is a symbolic link; give the folder it points to", path=out
        )
    if out.exists() and not out.is_dir():
        raise SiteError(f"the site folder {out} exists and is not a folder", path=out)
    cwd = Path.cwd().resolve()
    if out.resolve() == cwd or out.resolve() in cwd.parents:
        raise SiteError(
            f"the site folder {out} is (or holds) the current folder, which a rebuild cannot "
            "replace; give a folder below it",
            path=out,
        )
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteError(
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
            raise SiteError(
                f"the site folder {out} would replace or sit inside the input {item}", path=out
            )


def _new_folder(parent: Path, prefix: str) -> Path:
    """A new empty folder in ``parent``, created with the process's umask (as ``mkdir``
    does; ``tempfile.mkdtemp`` would make it readable by its owner only)."""
    for _ in range(100):
        folder = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise SiteError(
                f"cannot write in {parent}: {exc.strerror or exc}", path=parent
            ) from None
        return folder
    raise SiteError(f"cannot create a build folder in {parent}", path=parent)


def _swap(staging: Path, out: Path) -> None:
    """Put ``staging`` in place of ``out``: two renames, the old site removed last."""
    old: Path | None = None
    if out.exists():
        old = _new_folder(out.absolute().parent, f".{out.name}.old-")
        old.rmdir()
        try:
            os.rename(out, old)
        except OSError as exc:
            raise SiteError(
                f"cannot replace the site folder {out}: {exc.strerror or exc}", path=out
            ) from None
    try:
        os.rename(staging, out)
    except OSError as exc:
        if old is not None:
            os.rename(old, out)
        raise SiteError(f"cannot move the built site to {out}: {exc}", path=out) from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


class _Builder:
    def __init__(
        self,
        config: SiteConfig,
        root: Path,
        execute_notebooks: bool,
        progress: ProgressCallback | None,
        warn: ProgressCallback | None = None,
    ) -> None:
        self.config = config
        self.on_warning = warn
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

    def warn(self, message: str) -> None:
        logger.warning("%s", message)
        if self.on_warning is not None:
            self.on_warning(message)

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

    def chart(self, chart: Any, name: str, title: str, *, figure: bool = True) -> _Chart:
        """A chart for a page; with ``figure`` also exported to ``figures/<name>.svg``.

        Figures are the charts a paper would use (run and evaluation level); a page's
        detail charts are drawn in the browser only (its menu exports SVG or PNG).
        """
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
        if figure:
            self.figures.submit(spec, self.root / relative)
        self.chart_counter += 1
        return _Chart(f"chart-{slug}", title, spec, relative if figure else None)

    # ------------------------------------------------------------------ build

    def build(self) -> None:
        try:
            if self.config.runs or self.config.evaluations:
                self.figures.start()  # warms up while the runs are graded
                with _charts_unchecked():
                    self.build_pages()
            else:
                self.build_pages()
            self.say("waiting for the figures")
            self.figures.finish()
        finally:
            with deferred_signals():  # the helper process is killed and waited for
                self.figures.close()

    def build_pages(self) -> None:
        self.write(MARKER, "A static report site built by kagreport; rebuilt whole.\n")
        self.assets()
        # Grade every run first: grading forks worker processes only while this process
        # has one thread (the figure helper adds one). The responses shown on setup
        # pages are kept in the same pass.
        graded = [(run, self.grade_run(index, run)) for index, run in enumerate(self.config.runs)]
        for index, (run, report) in enumerate(graded):
            self.build_run(index, run, report)
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
                f"{self.config.source}: `runs[{index}].baseline`"
                if self.config.source is not None
                else "the baseline"
            )
            raise SiteError(
                f"{what} names no setup of run {config.name!r}: "
                f"{baseline!r}; setups: {', '.join(report.setup_names)}",
                path=self.config.source,
            )
        return report

    def build_run(self, index: int, config: RunConfig, report: StatsReport) -> None:
        from kagreport.frames import COST_AXES, OVERALL, stats_frame

        baseline = config.baseline or report.setups[0].setup
        slug = self.run_slugs(config.name)
        json_text = report.to_json()
        data = "data/report.json"
        if len(self.config.runs) > 1:
            data = f"data/runs/{slug}/report.json"
            self.write(data, json_text)
        if index == 0:
            self.write("data/report.json", json_text)
        run = _Run(config.name, slug, config, report, data, baseline)
        run.attribution = config.attribution or _simulated_notice(config.results)
        if report.unparsable_files:
            self.warn(
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
        self.say(f"charts of {config.name}")
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
                self.chart(
                    accuracy_cost_chart(report, cost=cost, title=f"Accuracy against mean {noun}"),
                    f"{slug}--accuracy-cost",
                    f"Accuracy against {noun}",
                )
            )
        run.charts.append(
            self.chart(
                dataset_heatmap(report), f"{slug}--heatmap", "Accuracy per setup and dataset"
            )
        )
        run.charts.append(
            self.chart(
                outcomes_chart(frame, normalize=True),
                f"{slug}--outcomes",
                "Correct, incorrect and error records per setup",
            )
        )
        model = RunModel.from_stats(report)
        self.say(f"comparisons of {config.name}")
        self.compare_setups(run, model)
        self.say(f"setup pages of {config.name}")
        self.setup_pages(run, frame, by_setup, hrefs, model)
        self.comparison_pages(run, hrefs)
        self.runs.append(run)

    def setup_pages(
        self,
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
                expected_cache[d, q] = _expected(
                    truth, table.dataset_names[d], table.question_names[q]
                )
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
            chart = self.chart(
                outcomes_chart(chart_frame, title=f"Outcomes of {name} per dataset"),
                f"{run.slug}--{run.setup_slugs[name]}--outcomes",
                "Outcomes per dataset",
                figure=False,
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
                first_rows=rows[:PAGE_SIZE],
                page_size=PAGE_SIZE,
                response_limit=RESPONSE_LIMIT,
                comparisons_of=[c for c in run.comparisons if name in (c.candidate, c.baseline)],
            )

    def compare_setups(self, run: _Run, model: RunModel) -> None:
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
            self.warn(f"run {run.name!r}: {note}")
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

    def comparison_pages(self, run: _Run, hrefs: Mapping[str, str]) -> None:
        """The run's forest plot, then one page per comparison (with the forest plot)."""
        if not run.comparisons:
            return
        run.forest = self.chart(
            _run_forest(run),
            f"{run.slug}--comparisons-forest",
            "Accuracy differences, every comparison of the run",
        )
        all_pairs = run.config.compare == "all-pairs"
        for c in run.comparisons:
            document = c.comparison.dumps("json")
            self.write(c.data, document)
            figure = run.forest
            if all_pairs:
                # The rows of the two setups only: with every pair, the run's plot has
                # n(n-1)/2 rows, and one copy a page would grow the site as n^4.
                near = [
                    other
                    for other in run.comparisons
                    if {other.candidate, other.baseline} & {c.candidate, c.baseline}
                ]
                figure = self.chart(
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
            self.page(
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
                document=_loads(document),
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

    # ------------------------------------------------------------------ evaluations

    def build_evaluation(self, source: EvaluationSource) -> None:
        try:
            self._build_evaluation(source)
        except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as exc:
            # A report object read from a file can hold values of the wrong kind that the
            # page then trips on; name the file rather than show a traceback.
            where = source.path if source.path is not None else source.name
            raise SiteError(
                f"{where} is not an evaluation report kagreport can show: {exc}",
                path=source.path,
            ) from None

    def _build_evaluation(self, source: EvaluationSource) -> None:
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
            from kagreport.evaluation._text import family_label

            kind = "comparison"
            context["comparison"] = report
            context["rows"] = [m.to_dict() for m in report.metrics.values()]
            context["family"] = family_label(report)
            context["left_out"] = {
                report.candidate: int(report.metadata.get("items_only_in_candidate") or 0),
                report.baseline: int(report.metadata.get("items_only_in_baseline") or 0),
            }
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


@contextlib.contextmanager
def _charts_unchecked() -> Iterator[None]:
    """Altair without its schema validation while the site builds charts.

    The charts of :mod:`kagreport.charts` are validated by their tests; validating each
    again at construction would cost about a third of the time the site spends on them.
    """
    from altair.utils.schemapi import debug_mode

    with debug_mode(False):
        yield


def _setup_slugs(names: Sequence[str]) -> dict[str, str]:
    """The address of each setup's page: its own name when that is already safe in a URL
    and a file name (kag's setup names are), else a slug that none of those takes.

    Never depends on rank, so a page keeps its address when accuracies change.
    """
    # "--" separates the parts of a comparison's file name: a name holding it is not safe.
    safe = {
        n
        for n in names
        if len(n) <= SLUG_LIMIT and re.fullmatch(r"[a-z0-9][a-z0-9._-]*", n) and "--" not in n
    }
    slugs = _Slugs()
    slugs.used |= safe
    found = {name: name for name in safe}
    for name in sorted(set(names) - safe):
        found[name] = slugs(name)
    return {name: found[name] for name in names}


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


def _loads(text: str) -> Any:
    import json

    return json.loads(text)


def _read_evaluation(
    source: EvaluationSource,
) -> AnswerEvaluation | RetrievalEvaluation | EvaluationComparison:
    from kagreport.evaluation import read_report

    assert source.path is not None
    try:
        return read_report(source.path)
    except ValueError as exc:  # the suffix names no format
        raise SiteError(
            f"cannot read the evaluation {source.path}: {exc}", path=source.path
        ) from None


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
                "note": report.agreement_note(criterion),
            }
            for criterion, alpha in report.agreement.items()
        ],
        "n_items": len(report.items),
        "settings": dict(report.settings),
    }
