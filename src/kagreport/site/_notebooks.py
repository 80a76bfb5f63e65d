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

import copy
import os
import re
import signal
import subprocess
import threading
import warnings
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

#: Seconds a cell may run (``KAGREPORT_NOTEBOOK_CELL_TIMEOUT`` overrides it).
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
    try:
        nbformat: Any = importlib.import_module("nbformat")
        exporters: Any = importlib.import_module("nbconvert")
    except ImportError as exc:
        raise KagreportError(
            f"cannot convert the notebook {path}: {exc.name or exc} is not installed "
            "(pip install 'nbformat>=5.9' 'nbconvert>=7.16' 'nbclient>=0.10' 'ipykernel>=6.29')",
            path=path,
        ) from None

    try:
        with warnings.catch_warnings():  # e.g. MissingIDFieldWarning: ids are added, fine
            warnings.simplefilter("ignore")
            notebook = nbformat.read(str(path), as_version=4)
            nbformat.validate(notebook)
    except OSError as exc:
        raise KagreportError(
            f"cannot read the notebook {path}: {exc.strerror or exc}", path=path
        ) from None
    except Exception as exc:  # nbformat raises many kinds on a malformed file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise KagreportError(f"{path} is not a valid notebook: {first}", path=path) from None
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
    raw = os.environ.get("KAGREPORT_NOTEBOOK_CELL_TIMEOUT", str(CELL_TIMEOUT))
    if not raw.strip().isdigit() or int(raw) < 1:
        raise KagreportError(
            f"KAGREPORT_NOTEBOOK_CELL_TIMEOUT must be a whole number of seconds >= 1, not {raw!r}"
        )
    timeout = int(raw)
    original = copy.deepcopy(notebook)
    for attempt in (1, 2):
        setup = v4.new_code_cell(SETUP_SOURCE)
        notebook.cells.insert(0, setup)
        client = NotebookClient(
            notebook,
            timeout=timeout,
            resources={"metadata": {"path": str(path.parent)}},
            store_widget_state=True,
        )
        # nbclient handles SIGINT/SIGTERM itself while it runs (it stops the kernel) and
        # then resets them to the defaults: put back what the caller had installed.
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            # The kernel's own log lines (e.g. about unencrypted local TCP) are not ours to show.
            client.execute(stderr=subprocess.DEVNULL)
            break
        except CellTimeoutError as exc:
            # A kernel that stops answering (a lost idle message) is rare but real: start a
            # fresh kernel once before calling the notebook broken.
            if attempt == 2:
                raise KagreportError(f"the notebook {path} timed out: {exc}", path=path) from None
            notebook.cells[:] = copy.deepcopy(original.cells)
            notebook.metadata = copy.deepcopy(original.metadata)
            continue
        except CellExecutionError as exc:
            # One line: the exception, not the cell source and coloured traceback nbclient gives.
            # The last cell with an error output: cells tagged raises-exception may fail
            # before it, and nothing runs after it.
            cell = next(
                (n for n in reversed(range(len(notebook.cells)))
                 if any(o.get("output_type") == "error"
                        for o in notebook.cells[n].get("outputs", ()))),
                None,
            )  # fmt: skip
            where = "" if cell is None else f" in cell {cell}"  # the setup cell is cell 0
            raise KagreportError(
                f"the notebook {path} failed{where}: {exc.ename}: {_one_line(exc.evalue)}",
                path=path,
            ) from None
        except Exception as exc:  # a kernel that does not start, and the like
            stop = _stop_request(exc)
            if stop is not None:
                raise stop from None
            raise KagreportError(f"cannot execute the notebook {path}: {exc}", path=path) from exc
        finally:
            if threading.current_thread() is threading.main_thread():
                for sig, handler in handlers.items():
                    if handler is not None:
                        signal.signal(sig, handler)
            if notebook.cells and notebook.cells[0] is setup:
                del notebook.cells[0]  # the setup cell
    # Number the cells as if the setup cell had not run (it took execution count 1).
    for cell in notebook.cells:
        if cell.get("execution_count"):
            cell["execution_count"] -= 1
        for output in cell.get("outputs", ()):
            if output.get("execution_count"):
                output["execution_count"] -= 1
    _inline_output_widgets(notebook)
    notebook.metadata.pop("widgets", None)


def _stop_request(exc: BaseException) -> BaseException | None:
    """The Ctrl-C or SIGTERM (SystemExit) that ``exc`` hides, if any.

    Interrupted while it waits for the kernel, nbclient's event loop cancels its task and
    its own clean-up can fail (an AssertionError), hiding the interruption; the build must
    still stop as asked (the command line records the signal: ``stop_requested``).
    """
    import asyncio

    from kagreport._errors import stop_requested

    recorded = stop_requested()
    if recorded is not None:
        return recorded
    seen: set[int] = set()
    current: BaseException | None = exc
    cancelled = False
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt | SystemExit):
            return current
        cancelled = cancelled or isinstance(current, asyncio.CancelledError)
        current = current.__context__
    # nbclient answers SIGINT and SIGTERM itself by stopping the kernel: what is left is a
    # cancelled task (and a dead kernel). Which signal it was is lost: stop as for Ctrl-C.
    return KeyboardInterrupt() if cancelled else None


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", str(text)).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _inline_output_widgets(notebook: Any) -> None:
    """Copy what ``Output`` widgets captured into the cells, before the widget state goes.

    The text printed into an ``ipywidgets.Output`` lives only in the widget state, which
    the site drops (it would need the widget manager from a CDN); without this step the
    page would show ``Output()`` and lose the text (PITFALLS.md B13).
    """
    state = (
        notebook.metadata.get("widgets", {})
        .get("application/vnd.jupyter.widget-state+json", {})
        .get("state", {})
    )
    if not state:
        return

    def captured(model_id: str, seen: set[str]) -> list[Any]:
        if model_id in seen or model_id not in state:
            return []
        seen.add(model_id)
        model = state[model_id]
        fields = model.get("state", {})
        if model.get("model_name") == "OutputModel":
            return list(fields.get("outputs", []))
        found: list[Any] = []
        for child in fields.get("children", []) or []:
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                found += captured(child.removeprefix("IPY_MODEL_"), seen)
        return found

    for cell in notebook.cells:
        outputs = cell.get("outputs")
        if not outputs:
            continue
        expanded = []
        for output in outputs:
            expanded.append(output)
            view = output.get("data", {}).get(_WIDGET_VIEW)
            if isinstance(view, dict) and isinstance(view.get("model_id"), str):
                expanded += captured(view["model_id"], set())
        cell["outputs"] = expanded
