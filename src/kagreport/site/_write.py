"""The last step of a build: render the pages of a :class:`SiteContent` and write every file.

:func:`render_page` is pure (templates and page data in, HTML out); :func:`write_site`
writes the assets, the data files and the pages into the build folder, converts the
notebooks and hands the figures to the SVG exporter.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import kagreport
from kagreport._errors import SiteError
from kagreport.site._output import MARKER
from kagreport.site._templates import SORT_MIN_ROWS, Page, Templates

if TYPE_CHECKING:
    from kagreport.site._context import PageOut, SiteContent
    from kagreport.site._figures import FigureWriter

__all__ = ["render_page", "write_site"]


def render_page(templates: Templates, content: SiteContent, page: PageOut) -> str:
    """The HTML of ``page``: its template with its context and what every page has
    (site title, navigation, relative root, version, SIMULATED notice)."""
    depth = page.path.count("/")
    context = dict(page.context)
    context.setdefault("simulated_notice", page.simulated)
    return templates.render(
        page.template,
        site_title=content.config.title,
        page_title=page.title,
        root="../" * depth,
        nav=content.nav(),
        version=kagreport.__version__,
        has_data=content.has_data,
        **context,
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def _write(root: Path, relative: str, data: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        # A lone surrogate (a text read from a JSON escape such as "\ud800") is no text and
        # no UTF-8 file can hold it: U+FFFD in its place, as the evaluations do.
        data = _SURROGATE.sub("\ufffd", data).encode("utf-8")
    path.write_bytes(data)


_SORT_MIN_ROWS_JS = re.compile(rb"var SORT_MIN_ROWS = \d+;")


def site_script(source: bytes) -> bytes:
    """assets/site.js as the site ships it: its ``SORT_MIN_ROWS`` set to
    :data:`~kagreport.site._templates.SORT_MIN_ROWS`, the threshold the pages' "click a
    header to sort" hint is decided with, so the two never disagree.

    Raises
    ------
    SiteError
        If the script does not declare ``SORT_MIN_ROWS`` exactly once.
    """
    written, n = _SORT_MIN_ROWS_JS.subn(f"var SORT_MIN_ROWS = {SORT_MIN_ROWS};".encode(), source)
    if n != 1:
        raise SiteError("assets/site.js does not declare SORT_MIN_ROWS once")
    return written


def write_site(
    content: SiteContent,
    root: Path,
    templates: Templates,
    figures: FigureWriter,
    *,
    execute_notebooks: bool,
) -> None:
    """Write the site of ``content`` into the (new, empty) folder ``root``.

    Raises
    ------
    KagreportError
        For a template that fails to render or a notebook that fails.
    """
    from kagreport.site._vega import vega_bundle

    _write(root, MARKER, "A static report site built by kagreport; rebuilt whole.\n")
    content.say("writing the assets")
    _write(root, "assets/vega.js", vega_bundle())
    assets = files("kagreport.site") / "assets"
    for name in ("site.css", "site.js", "charts.js"):
        data = (assets / name).read_bytes()
        _write(root, f"assets/{name}", site_script(data) if name == "site.js" else data)
    (root / "figures").mkdir(exist_ok=True)
    for spec, relative in content.figures:
        figures.submit(spec, root / relative)
    for file in content.files:
        _write(root, file.path, file.data)
    content.say("writing the pages")
    for page in content.pages:
        _write(root, page.path, render_page(templates, content, page))
    for path in content.config.notebooks:
        _notebook(content, root, templates, path, execute_notebooks)
    content.say("writing the index")
    _write(
        root,
        "index.html",
        templates.render(
            "index.html.j2",
            site_title=content.config.title,
            page_title="Overview",
            root="",
            nav=content.nav(),
            version=kagreport.__version__,
            has_data=content.has_data,
            simulated_notice="",
            runs=content.runs,
            evaluations=content.evaluations,
            notebooks=content.notebooks,
            config=content.config,
            history=content.history,
        ),
    )


def _notebook(
    content: SiteContent, root: Path, templates: Templates, path: Path, execute: bool
) -> None:
    from kagreport.site._notebooks import convert_notebook

    content.say(f"notebook {path.name}")
    slug = content.slug("notebooks", path.stem)
    href = f"notebooks/{slug}.html"
    header = templates.render(
        "_header.html.j2", site_title=content.config.title, nav=content.nav(), root="../"
    )
    footer = templates.render(
        "_footer.html.j2", root="../", version=kagreport.__version__, has_data=content.has_data
    )
    html = convert_notebook(
        path,
        execute=execute,
        template_dirs=templates.notebook_dirs(),
        header=header,
        footer=footer,
        root="../",
        title=f"{path.stem} · {content.config.title}",
    )
    _write(root, href, html)
    content.notebooks.append(Page(path.stem, href, "executed" if execute else ""))
