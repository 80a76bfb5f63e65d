"""Notebooks for the site: executed with nbclient, converted with nbconvert's HTMLExporter.

The exporter uses the site's nbconvert template (``templates/notebook``, extending nbconvert's
``lab`` template) with every network script removed: no require.js, no MathJax (math stays
readable source), no widget manager, no Mermaid. Widget state is not kept
(as with ``store_widget_state=False``), so nbconvert exports their static fallback (``text/html`` or
``text/plain``) rather than a widget view that would need the widget manager from a CDN.
Vega-Lite outputs (Altair charts) become the site's own chart elements, rendered by the
shared ``assets/vega.js``.

nbconvert's Jinja environment has autoescape off (its templates escape explicitly); the site's
header and footer inserted into each page are rendered by the site's own, autoescaping,
environment first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kagreport._errors import KagreportError
from kagreport.site._json import inline_json
from kagreport.site._templates import NOTEBOOK_TEMPLATE

__all__ = ["DISPLAY_PRIORITY", "convert_notebook"]

#: Output types the site shows, best first. Vega-Lite comes before HTML (Altair's HTML loads
#: scripts from a CDN); JavaScript and widget views are left out (they need the network or
#: a kernel).
DISPLAY_PRIORITY = (
    "application/vnd.vegalite.v6+json",
    "application/vnd.vegalite.v5+json",
    "application/vnd.vegalite.v4+json",
    "text/html",
    "text/markdown",
    "image/svg+xml",
    "text/latex",
    "image/png",
    "image/jpeg",
    "text/plain",
)

#: Seconds a cell may run.
CELL_TIMEOUT = 600


def convert_notebook(
    path: Path,
    *,
    execute: bool,
    template_dirs: Sequence[Path],
    header: str,
    footer: str,
    root: str,
    title: str,
) -> str:
    """One notebook as a site page (HTML text).

    Raises
    ------
    KagreportError
        If the notebook cannot be read, a cell fails, or the conversion fails.
    """
    import importlib

    # nbformat and nbconvert are untyped: use them through Any.
    nbformat: Any = importlib.import_module("nbformat")
    exporters: Any = importlib.import_module("nbconvert")

    try:
        notebook = nbformat.read(str(path), as_version=4)
    except (OSError, ValueError) as exc:
        raise KagreportError(f"cannot read the notebook {path}: {exc}", path=path) from None
    if execute:
        _execute(notebook, path)
    else:
        notebook.metadata.pop("widgets", None)  # saved state would need the widget manager
    from traitlets.config import Config

    # The data-type filter reads the priority from the configuration (not the exporter).
    config = Config({"NbConvertBase": {"display_data_priority": list(DISPLAY_PRIORITY)}})
    exporter = exporters.HTMLExporter(
        config=config,
        template_name=NOTEBOOK_TEMPLATE,
        extra_template_basedirs=[str(p) for p in template_dirs],
        exclude_anchor_links=True,
    )
    exporter.register_filter("site_json", _site_json)
    resources: dict[str, Any] = {
        "metadata": {"name": path.stem},
        "kagreport_site": {"header": header, "footer": footer, "root": root, "title": title},
    }
    try:
        html, _ = exporter.from_notebook_node(notebook, resources=resources)
    except Exception as exc:  # nbconvert raises many kinds; name the notebook
        raise KagreportError(f"cannot convert the notebook {path}: {exc}", path=path) from exc
    return str(html)


def _site_json(value: Any) -> str:
    return inline_json(value)


#: Run before the notebook's own cells (and removed from the page): Altair's default renderer
#: in a kernel emits HTML that loads Vega from a CDN (and its "mimetype" renderer names the
#: Vega-Lite type without the "+json" nbformat requires); this one emits the spec under
#: ``application/vnd.vegalite.vN+json``, which the site draws with its own script. A notebook
#: that enables another renderer still wins.
SETUP_SOURCE = """\
try:
    import altair as _kagreport_site_alt

    def _kagreport_site_render(spec, _mime="application/vnd.vegalite.v%s+json" % (
        _kagreport_site_alt.SCHEMA_VERSION.lstrip("v").split(".")[0]), **options):
        return {_mime: spec, "text/plain": "<Vega-Lite chart>"}

    _kagreport_site_alt.renderers.register("kagreport-site", _kagreport_site_render)
    _kagreport_site_alt.renderers.enable("kagreport-site")
    del _kagreport_site_alt, _kagreport_site_render
except Exception:
    pass
"""


def _execute(notebook: Any, path: Path) -> None:
    import importlib

    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    # store_widget_state=False is what the site wants (no widget state, so nbconvert exports
    # each widget's static fallback), but nbclient 0.10's Output-widget handler reads the
    # stored state and fails without it: store it, then drop it below.
    v4: Any = importlib.import_module("nbformat.v4")
    setup = v4.new_code_cell(SETUP_SOURCE)
    notebook.cells.insert(0, setup)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
    )
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as exc:
        raise KagreportError(f"the notebook {path} failed: {exc}", path=path) from None
    except Exception as exc:  # a kernel that does not start, and the like
        raise KagreportError(f"cannot execute the notebook {path}: {exc}", path=path) from exc
    finally:
        del notebook.cells[0]  # the setup cell
    # Number the cells as if the setup cell had not run (it took execution count 1).
    for cell in notebook.cells:
        if cell.get("execution_count"):
            cell["execution_count"] -= 1
        for output in cell.get("outputs", ()):
            if output.get("execution_count"):
                output["execution_count"] -= 1
    notebook.metadata.pop("widgets", None)
