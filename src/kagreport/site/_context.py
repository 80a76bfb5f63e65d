"""What a site is made of before anything is written: :class:`SiteContent`.

The page modules (runs, evaluations, systems, notebooks) compute their page data and
record it here: pages (a template and its context), data files and figures (a Vega-Lite
spec to export as SVG). They write nothing; :mod:`kagreport.site._write` renders the pages
and writes every file last. This module imports none of them, so they form no cycle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kagreport.site._labels import label_spec, label_title
from kagreport.site._slugs import Slugs
from kagreport.site._templates import Chart, Page

if TYPE_CHECKING:
    from kagreport.site._config import SiteConfig

__all__ = ["FileOut", "PageOut", "SiteContent"]

logger = logging.getLogger("kagreport.site")

ProgressCallback = Callable[[str], None]


@dataclass(frozen=True)
class PageOut:
    """A page to render: ``template`` with ``context`` at ``path`` (from the site root)."""

    path: str
    template: str
    title: str
    context: Mapping[str, Any]
    simulated: str = ""  # the SIMULATED notice the page shows, if any


@dataclass(frozen=True)
class FileOut:
    """A data file of the site: text (written as UTF-8) or bytes at ``path``."""

    path: str
    data: str | bytes


@dataclass
class SiteContent:
    """Everything a site holds, filled by the page modules, written at the end.

    Attributes
    ----------
    config : SiteConfig
    pages, files : list
        :class:`PageOut` and :class:`FileOut`, in the order they were made.
    figures : list of (dict, str)
        (paper spec, path) of each figure to export as SVG.
    runs, evaluations, notebooks : list
        What the index lists (runs as :class:`kagreport.site._run.SiteRun`).
    """

    config: SiteConfig
    progress: ProgressCallback | None = None
    on_warning: ProgressCallback | None = None
    pages: list[PageOut] = field(default_factory=list)
    files: list[FileOut] = field(default_factory=list)
    figures: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    runs: list[Any] = field(default_factory=list)
    evaluations: list[Page] = field(default_factory=list)
    notebooks: list[Page] = field(default_factory=list)
    systems: Any = None  # retrieval systems side by side (site/_systems.py)
    history: Any = None  # the history page's data (site/_history.py)
    page_slugs: dict[str, Slugs] = field(default_factory=dict)
    figure_names: set[str] = field(default_factory=set)
    # While a SIMULATED run's pages are made: its notice, shown on each page and said
    # by each chart's title (kagreport.site._labels).
    simulated: str = ""

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

    @property
    def has_data(self) -> bool:
        """Whether the site offers data for download: a run's or an evaluation's files, which
        the index's Data section lists (the footer points there only then)."""
        return bool(self.runs or self.evaluations)

    def write(self, relative: str, data: str | bytes) -> None:
        """Record a data file of the site."""
        self.files.append(FileOut(relative, data))

    def page(self, relative: str, template: str, /, *, title: str, **context: Any) -> None:
        """Record a page: ``template`` rendered with ``context`` at ``relative``."""
        self.pages.append(PageOut(relative, template, title, context, self.simulated))

    def chart(self, chart: Any, name: str, title: str, *, figure: bool = True) -> Chart:
        """A chart for a page; with ``figure`` also exported to ``figures/<name>.svg``.

        Figures are the charts a paper would use (run and evaluation level); a page's
        detail charts are drawn in the browser only (its menu exports SVG or PNG).
        """
        from kagreport.charts._export import paper_spec
        from kagreport.charts._theme import fit_container

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
        if figure:
            self.figures.append((spec, relative))
        return Chart(f"chart-{slug}", title, screen, relative if figure else None)

    def nav(self) -> list[tuple[str, str]]:
        """The navigation bar: (label, link from the site root) of each section shown."""
        links = [("Overview", "index.html")]
        if self.config.runs or self.config.sources:
            links.append(("Leaderboards", "index.html#runs"))
            links.append(("Comparisons", "index.html#comparisons"))
        if self.config.history is not None:
            links.append(("History", "history/index.html"))
        if self.config.evaluations:
            links.append(("Evaluations", "index.html#evaluations"))
        if self.config.notebooks:
            links.append(("Notebooks", "index.html#notebooks"))
        return links
