"""``build_site``: read the runs, make their pages and write the static site.

Output layout (every link relative; the site opens from ``file://`` with no network)::

    index.html                                   runs, leaderboards, charts, links
    setups/<run>--<system>.html                  one page per system, with its items
    comparisons/<run>--<candidate>--vs--<baseline>.html
    evaluations/<name>.html                      one page per evaluation report
    history/index.html, history/<run>.html       the history of --history DIR, a light page per run
    systems/<names>.html                         retrieval systems side by side, paired tests
    notebooks/<stem>.html                        executed, converted notebooks
    data/report.json                             the first kag run's kag stats JSON
    data/runs/<run>/report.json                  each kag run's, when there are several
    data/runs/<run>/run.json                     each run's run model (kagreport.run JSON)
    data/comparisons/*.json, data/evaluations/*.json
    figures/*.svg                                run and evaluation figures, for papers
    assets/vega.js, assets/site.css, assets/site.js, assets/charts.js

A build has three steps: every run is read (:func:`kagreport.read_run`: a kag tree and
another tool's file alike), then the page data of every page is computed
(:func:`plan_site`: runs in :mod:`kagreport.site._run` and
:mod:`kagreport.site._comparisons`, evaluation reports in
:mod:`kagreport.site._evaluations`, retrieval systems side by side in
:mod:`kagreport.site._systems`), then the pages are rendered and every file written
(:mod:`kagreport.site._write`). The site is built in a sibling temporary folder and
swapped in with renames, so a failed build leaves the previous site as it was
(:mod:`kagreport.site._output`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kagreport._errors import SiteError
from kagreport.site._config import RunConfig, SiteConfig, SourceConfig
from kagreport.site._context import SiteContent
from kagreport.site._evaluations import build_evaluation
from kagreport.site._figures import FigureWriter
from kagreport.site._history import history_folder, plan_history
from kagreport.site._output import check_output, new_folder, site_path, swap
from kagreport.site._run import plan_run, read_input
from kagreport.site._signals import deferred_signals
from kagreport.site._systems import build_systems, plan_systems
from kagreport.site._templates import Templates
from kagreport.site._write import write_site

if TYPE_CHECKING:
    from kagreport import EngineOptions

__all__ = ["build_site", "plan_site"]

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
        not be compared, a figure that could not be exported: its file says so and its page
        draws it); also logged as warnings.
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
    figures = FigureWriter(helper=True)
    try:
        templates = Templates(config.templates)
        with deferred_signals():
            staging = new_folder(parent, f".{out.name}.build-")
        if config.runs or config.sources or config.evaluations:
            figures.start()  # the helper warms up while the pages are made
        content = plan_site(config, progress, warn, engine_options)
        write_site(content, staging, templates, figures, execute_notebooks=execute_notebooks)
        content.say("waiting for the figures")
        for failure in figures.finish():
            content.warn(failure)
        with deferred_signals():
            swap(staging, out)
    except BaseException:
        if staging is not None:
            with deferred_signals():
                shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        with deferred_signals():  # the helper process is killed and waited for
            figures.close()
    return out / "index.html"


def plan_site(
    config: SiteConfig,
    progress: ProgressCallback | None = None,
    warn: ProgressCallback | None = None,
    engine_options: EngineOptions | None = None,
) -> SiteContent:
    """Every page, data file and figure of the site of ``config``, nothing written.

    Every run, whatever tool wrote it, goes through one pipeline
    (:mod:`kagreport.site._run`): read into a :class:`kagreport.runs.Run`, then its
    leaderboard, charts, system pages and comparisons. Evaluations and retrieval systems
    side by side have pages of their own.

    Raises
    ------
    KagreportError
        For an unreadable input or a bad baseline (before anything is computed).
    """
    site = SiteContent(config, progress, warn)
    inputs: list[tuple[RunConfig | SourceConfig, str]] = [
        *((run, f"runs[{k}]") for k, run in enumerate(config.runs)),
        *((source, f"sources[{k}]") for k, source in enumerate(config.sources)),
    ]
    # Read every run first: an unreadable one stops the build before any page is made.
    read = []
    for run_config, key in inputs:
        site.say(f"reading {run_config.name}")
        read.append((run_config, key, read_input(run_config, key, config.source, engine_options)))
    charts = read or config.evaluations or config.history is not None
    with _charts_unchecked() if charts else contextlib.nullcontext():
        for run_config, key, run in read:
            plan_run(site, run_config, key, run)
        if config.history is not None:
            site.history = plan_history(site, history_folder(config.history))
        site.systems = plan_systems(site)
        for source in config.evaluations:
            build_evaluation(site, source)
        build_systems(site)
    return site


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
