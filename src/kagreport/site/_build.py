"""``build_site``: grade the runs, compare their setups and write the static site.

Output layout (every link relative; the site opens from ``file://`` with no network)::

    index.html                                   runs, leaderboards, charts, links
    setups/<run>--<setup>.html                   one page per setup, with its items
    comparisons/<run>--<candidate>--vs--<baseline>.html
    evaluations/<name>.html                      one page per evaluation report
    systems/<names>.html                         retrieval systems side by side, paired tests
    notebooks/<stem>.html                        executed, converted notebooks
    sources/<run>.html, sources/<run>--<system>.html   runs of other tools
    data/report.json                             the first run's kag stats JSON
    data/runs/<run>/report.json                  each run's, when there are several
    data/runs/<run>/run.json                     each run's run model (kagreport.run JSON)
    data/comparisons/*.json, data/evaluations/*.json
    data/<run>.run.json, data/<run>.comparisons.json   each run of another tool
    figures/*.svg                                run and evaluation figures, for papers
    assets/vega.js, assets/site.css, assets/site.js, assets/charts.js

The site is built in a sibling temporary folder and swapped in with renames, so a failed
build leaves the previous site as it was (:mod:`kagreport.site._output`). This module is
the builder's shell: it writes files and pages, exports figures and converts notebooks;
the pages of runs are :mod:`kagreport.site._runs`, of the comparisons of their setups
:mod:`kagreport.site._comparisons`, of evaluation reports :mod:`kagreport.site._evaluations`,
of runs of other tools :mod:`kagreport.site._sources`, of retrieval systems side by side
:mod:`kagreport.site._systems`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kagreport
from kagreport._errors import SiteError
from kagreport.site._config import SiteConfig
from kagreport.site._evaluations import build_evaluation
from kagreport.site._figures import FigureWriter
from kagreport.site._labels import label_spec, label_title
from kagreport.site._output import MARKER, check_output, new_folder, site_path, swap
from kagreport.site._runs import build_run, grade_run
from kagreport.site._signals import deferred_signals
from kagreport.site._slugs import Slugs
from kagreport.site._sources import build_source, read_source
from kagreport.site._systems import Systems, build_systems, plan_systems
from kagreport.site._templates import Chart, Page, Templates

if TYPE_CHECKING:
    from kagreport import EngineOptions
    from kagreport.site._runs import SiteRun
    from kagreport.site._sources import SiteSource

__all__ = ["build_site"]

logger = logging.getLogger("kagreport.site")

ProgressCallback = Callable[[str], None]


def build_site(
    config: SiteConfig,
    out_dir: str | os.PathLike[str],
    *,
    execute_notebooks: bool = True,
    progress: ProgressCallback | None = None,
    warn: ProgressCallback | None = None,
    engine_options: EngineOptions | None = None,
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
    engine_options : EngineOptions, optional
        How kag runs are graded (:class:`kagreport.EngineOptions`: workers, a Dask
        cluster, a grade store, storage options), passed whole to each grade.

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
    out = site_path(Path(out_dir))
    try:
        check_output(out, config)
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
            staging = new_folder(parent, f".{out.name}.build-")
        Builder(config, staging, execute_notebooks, progress, warn, engine_options).build()
        with deferred_signals():
            swap(staging, out)
    except BaseException:
        if staging is not None:
            with deferred_signals():
                shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "index.html"


class Builder:
    """One build of a site into ``root``: what the pages share (templates, slugs, figures)
    and what the index lists (runs, evaluations, notebooks), filled as the pages are written."""

    def __init__(
        self,
        config: SiteConfig,
        root: Path,
        execute_notebooks: bool,
        progress: ProgressCallback | None,
        warn: ProgressCallback | None = None,
        engine_options: EngineOptions | None = None,
    ) -> None:
        self.config = config
        self.engine_options = engine_options
        self.on_warning = warn
        self.root = root
        self.execute_notebooks = execute_notebooks
        self.progress = progress
        self.templates = Templates(config.templates)
        self.run_slugs = Slugs()
        self.page_slugs: dict[str, Slugs] = {}
        self.figure_names: set[str] = set()
        self.runs: list[SiteRun] = []
        self.sources: list[SiteSource] = []
        self.evaluations: list[Page] = []
        self.systems = Systems()  # retrieval systems side by side (site/_systems.py)
        self.notebooks: list[Page] = []
        self.chart_counter = 0
        self.figures = FigureWriter(helper=True)
        # While a SIMULATED run's pages are written: its notice, shown on each page and
        # said by each chart's title (kagreport.site._labels).
        self.simulated = ""

    # ------------------------------------------------------------------ helpers

    def say(self, message: str) -> None:
        """Report a step (logged; passed to the progress callback)."""
        logger.info("%s", message)
        if self.progress is not None:
            self.progress(message)

    def warn(self, message: str) -> None:
        """Report what the reader should know but does not stop the build."""
        logger.warning("%s", message)
        if self.on_warning is not None:
            self.on_warning(message)

    def slug(self, namespace: str, text: str) -> str:
        """A slug of ``text`` unique in ``namespace`` (a folder of pages)."""
        return self.page_slugs.setdefault(namespace, Slugs())(text)

    def write(self, relative: str, text: str | bytes) -> None:
        """Write a file of the site (text as UTF-8), its folders created."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8") if isinstance(text, str) else text
        path.write_bytes(data)

    def page(self, relative: str, template: str, /, *, title: str, **context: Any) -> None:
        """Render ``template`` with ``context`` (and what every page has) to ``relative``."""
        depth = relative.count("/")
        context.setdefault("simulated_notice", self.simulated)
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
        """The navigation bar: (label, link from the site root) of each section shown."""
        links = [("Overview", "index.html")]
        if self.config.runs:
            links.append(("Leaderboards", "index.html#runs"))
            links.append(("Comparisons", "index.html#comparisons"))
        if self.config.sources:
            links.append(("Other runs", "index.html#sources"))
        if self.config.evaluations:
            links.append(("Evaluations", "index.html#evaluations"))
        if self.config.notebooks:
            links.append(("Notebooks", "index.html#notebooks"))
        return links

    def chart(self, chart: Any, name: str, title: str, *, figure: bool = True) -> Chart:
        """A chart for a page; with ``figure`` also exported to ``figures/<name>.svg``.

        Figures are the charts a paper would use (run and evaluation level); a page's
        detail charts are drawn in the browser only (its menu exports SVG or PNG).
        """
        from kagreport.charts import fit_container, paper_spec

        # The charts of kagreport.charts are tested; skipping Altair's schema validation
        # here saves most of the time to_dict takes.
        spec: dict[str, Any] = chart if isinstance(chart, dict) else chart.to_dict(validate=False)
        if self.simulated:
            spec, title = label_spec(spec), label_title(title)
        # The figure at its paper size; the page's chart fills its container (assets/charts.js
        # exports the paper figure again from what fit_container keeps of it).
        spec = paper_spec(spec)
        screen = fit_container(spec)
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
        return Chart(f"chart-{slug}", title, screen, relative if figure else None)

    # ------------------------------------------------------------------ build

    def build(self) -> None:
        try:
            if self.config.runs or self.config.sources or self.config.evaluations:
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
        # Read first: an unreadable run stops the build before anything is graded.
        foreign = [(config, read_source(config)) for config in self.config.sources]
        # Grade every run first: grading forks worker processes only while this process
        # has one thread (the figure helper adds one). The responses shown on setup
        # pages are kept in the same pass.
        graded = [(run, grade_run(self, index, run)) for index, run in enumerate(self.config.runs)]
        for index, (run, report) in enumerate(graded):
            build_run(self, index, run, report)
        for config, model in foreign:
            build_source(self, config, model)
        self.systems = plan_systems(self)
        for source in self.config.evaluations:
            build_evaluation(self, source)
        build_systems(self)
        for path in self.config.notebooks:
            self.build_notebook(path)
        self.say("writing the index")
        self.page(
            "index.html",
            "index.html.j2",
            title="Overview",
            runs=self.runs,
            sources=self.sources,
            evaluations=self.evaluations,
            notebooks=self.notebooks,
            config=self.config,
        )

    def assets(self) -> None:
        from kagreport.site._vega import vega_bundle

        self.say("writing the assets")
        self.write("assets/vega.js", vega_bundle())
        assets = files("kagreport.site") / "assets"
        for name in ("site.css", "site.js", "charts.js"):
            self.write(f"assets/{name}", (assets / name).read_bytes())

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
        self.notebooks.append(Page(path.stem, href, "executed" if self.execute_notebooks else ""))


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
