"""Notebooks for the site: executed with nbclient, converted with nbconvert's HTMLExporter.

The exporter uses the site's nbconvert template (``templates/notebook``, extending nbconvert's
``lab`` template) with every network script removed: no require.js, no MathJax (math stays
readable source), no widget manager, no Mermaid. Widget state is not kept
(as with ``store_widget_state=False``), so nbconvert exports their static fallback (``text/html`` or
``text/plain``) rather than a widget view that would need the widget manager from a CDN.
Vega-Lite outputs (Altair charts) become the site's own chart elements, rendered by the
shared ``assets/vega.js``. Every other output, every Markdown cell and every raw HTML cell is
cleaned by the site's allow-list sanitizer (:mod:`kagreport.site._clean`), which parses as
browsers do: no script, no ``<meta http-equiv="refresh">``, nothing that loads or navigates.

nbconvert's Jinja environment has autoescape off (its templates escape explicitly); the site's
header and footer inserted into each page are rendered by the site's own, autoescaping,
environment first.

Stops: nbclient runs in an event loop of ours that refuses signal handlers, so nbclient does
not take SIGINT/SIGTERM (it would stop the kernel and leave a cancelled task behind, the
signal lost). A stop at any moment cancels the execution, the kernel is killed, and the
stop then goes to the caller's handler (:mod:`kagreport.site._signals`).
"""

from __future__ import annotations

import asyncio
import atexit
import copy
import inspect
import os
import re
import subprocess
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from queue import Empty
from typing import Any, TypeVarTuple

from kagreport._errors import SiteError
from kagreport._io import read_regular_file
from kagreport.site._clean import clean_html
from kagreport.site._json import inline_json
from kagreport.site._signals import deferred_signals
from kagreport.site._templates import NOTEBOOK_TEMPLATE, page_csp

__all__ = ["DISPLAY_PRIORITY", "convert_notebook"]

_Ts = TypeVarTuple("_Ts")

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

#: The longest single wait on a kernel channel (seconds); see :func:`poll_in_slices`.
POLL_SECONDS = 1.0


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
        raise SiteError(
            f"cannot convert the notebook {path}: {exc.name or exc} is not installed "
            "(pip install 'nbformat>=5.9' 'nbconvert>=7.16' 'nbclient>=0.10' 'ipykernel>=6.29')",
            path=path,
        ) from None

    try:
        with warnings.catch_warnings():  # e.g. MissingIDFieldWarning: ids are added, fine
            warnings.simplefilter("ignore")
            # Read here: a FIFO is refused at once (nbformat.read would wait for a writer).
            text = read_regular_file(path).decode("utf-8")
            notebook = nbformat.reads(text, as_version=4)
            nbformat.validate(notebook)
    except OSError as exc:
        raise SiteError(
            f"cannot read the notebook {path}: {exc.strerror or exc}", path=path
        ) from None
    except Exception as exc:  # nbformat raises many kinds on a malformed file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SiteError(f"{path} is not a valid notebook: {first}", path=path) from None
    if execute:
        _execute(notebook, path)
    else:
        notebook.metadata.pop("widgets", None)  # saved state would need the widget manager
    from traitlets.config import Config

    # The data-type filter reads the priority from the configuration (not the exporter).
    config = Config({"NbConvertBase": {"display_data_priority": list(DISPLAY_PRIORITY)}})
    # sanitize_html: nbconvert's templates pass Markdown cells, raw HTML cells and HTML and
    # Markdown outputs through their clean_html filter, which is the site's sanitizer here;
    # the site's template passes every other output through it too (_clean.py). nbconvert
    # then parses the page with html.parser and writes it again (BeautifulSoup, for alt
    # texts): harmless on what html5ever wrote, where every "<" in text is escaped and every
    # attribute value quoted, so both parsers read the same tags.
    exporter = exporters.HTMLExporter(
        config=config,
        template_name=NOTEBOOK_TEMPLATE,
        extra_template_basedirs=[str(p) for p in template_dirs],
        exclude_anchor_links=True,
        sanitize_html=True,
    )
    exporter.register_filter("site_json", _site_json)
    exporter.register_filter("clean_html", clean_html)
    resources: dict[str, Any] = {
        "metadata": {"name": path.stem},
        "kagreport_site": {
            "header": header,
            "footer": footer,
            "root": root,
            "title": title,
            "csp": page_csp(root, inline_styles=True),
        },
    }
    try:
        html, _ = exporter.from_notebook_node(notebook, resources=resources)
    except Exception as exc:  # nbconvert raises many kinds; name the notebook
        raise SiteError(f"cannot convert the notebook {path}: {exc}", path=path) from exc
    return str(html)


def _site_json(value: Any) -> str:
    return inline_json(value)


#: Run before the notebook's own cells (and removed from the page): Altair's default renderer
#: in a kernel emits HTML that loads Vega from a CDN (and its "mimetype" renderer names the
#: Vega-Lite type without the "+json" nbformat requires); this one emits the spec under
#: ``application/vnd.vegalite.vN+json``, which the site draws with its own script. A notebook
#: that enables another renderer still wins. It also defers rfc3987-syntax's parsers, which
#: importing Altair would build (about 1.4 s of every notebook; the behaviour is the same).
SETUP_SOURCE = """\
try:
    from kagreport._optional import defer_iri_grammar as _kagreport_site_defer

    _kagreport_site_defer()
    del _kagreport_site_defer
except Exception:
    pass
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
        raise SiteError(
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
        client.on_notebook_start = lambda notebook, client=client: poll_in_slices(client.kc)
        try:
            _run_client(client)
            break
        except CellTimeoutError as exc:
            # A kernel that stops answering (a lost idle message) is rare but real: start a
            # fresh kernel once before calling the notebook broken.
            if attempt == 2:
                raise SiteError(f"the notebook {path} timed out: {exc}", path=path) from None
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
            raise SiteError(
                f"the notebook {path} failed{where}: {exc.ename}: {_one_line(exc.evalue)}",
                path=path,
            ) from None
        except Exception as exc:  # a kernel that does not start, and the like
            raise SiteError(f"cannot execute the notebook {path}: {exc}", path=path) from exc
        finally:
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


def poll_in_slices(kernel_client: Any) -> None:
    """Make every wait of ``kernel_client`` (a jupyter_client ``AsyncKernelClient``) for a
    message on its shell or IOPub channel a series of waits of at most ``POLL_SECONDS``.

    A long wait on a channel sometimes misses the message it waits for, most often the
    execute reply of a cell that drew widgets on a busy machine (jupyter/nbclient issue 312):
    the reply is there, the wait goes on until the cell's timeout, then the cell fails as
    timed out. A new wait sees the message at once, so the reply is read within
    ``POLL_SECONDS``. A wait with a timeout still ends with ``queue.Empty`` at its deadline;
    one without goes on until a message comes.
    """
    for channel in (kernel_client.shell_channel, kernel_client.iopub_channel):
        channel.get_msg = _sliced(channel.get_msg)


def _sliced(get_msg: Callable[..., Any]) -> Callable[..., Any]:
    async def sliced(timeout: float | None = None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SECONDS if deadline is None else deadline - time.monotonic()
            try:
                return await get_msg(timeout=max(0.0, min(POLL_SECONDS, left)))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    return sliced


class _KernelLoop(asyncio.SelectorEventLoop):
    """The event loop notebooks run in: it refuses signal handlers.

    nbclient takes SIGINT and SIGTERM on its loop while it runs a notebook: it then stops the
    kernel, but the build is left waiting on a cancelled task and which signal it was is
    lost. It does without when ``add_signal_handler`` fails (as it does outside the main
    thread), which leaves the stops to :func:`_run_client`.
    """

    def add_signal_handler(self, sig: int, callback: Callable[[*_Ts], object], *args: *_Ts) -> None:
        raise RuntimeError("the site build handles SIGINT and SIGTERM itself")


def _run_client(client: Any) -> None:
    """Execute the notebook of ``client`` (an nbclient ``NotebookClient``) in its own loop.

    A stop (SIGINT, SIGTERM) at any moment, the kernel starting included, cancels the
    execution; the kernel is killed (it runs in a session of its own, so a signal to the
    build's process group does not reach it), the loop is closed, then the stop is
    delivered to the handler the caller had (:func:`deferred_signals`): the command line
    ends with its usual 130 or 143.
    """
    loop = _KernelLoop()
    main = loop.create_task(_execute_then_kill(client))

    def stop(signum: int) -> None:
        # From the signal handler: the loop cancels the execution at its next step. nbclient's
        # own clean-up (it stops the kernel as it leaves) then skips the polite shutdown.
        client.shutdown_kernel = "immediate"
        loop.call_soon_threadsafe(main.cancel)

    def run() -> None:
        try:
            loop.run_until_complete(main)
        finally:
            left = asyncio.all_tasks(loop)  # nbclient's pollers of a cancelled cell, if any
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.wait(left))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    try:
        with deferred_signals(stop):
            if _loop_running():
                _run_in_thread(run)
            else:
                run()
    except asyncio.CancelledError:
        # Cancelled for a stop whose handler did not raise: the execution is gone all the
        # same. (CancelledError is a BaseException: left as is, it would end in a traceback.)
        raise KeyboardInterrupt from None


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_in_thread(run: Callable[[], None]) -> None:
    """``run()`` in a thread of its own, its exception raised here: a caller's event loop
    runs in this thread (Jupyter, Playwright's synchronous API), and a thread runs one loop."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            run()
        except BaseException as exc:  # raised in the caller's thread below
            failure.append(exc)

    thread = threading.Thread(target=target, name="kagreport-notebook", daemon=True)
    thread.start()
    thread.join()  # a signal meanwhile is held and cancels the execution (see stop above)
    if failure:
        raise failure[0]


async def _execute_then_kill(client: Any) -> None:
    try:
        # The kernel's own log lines (e.g. about unencrypted local TCP) are not ours to show.
        await client.async_execute(stderr=subprocess.DEVNULL)
    finally:
        # nbclient stops the kernel itself, except when it is cancelled while the kernel
        # starts; then its atexit hook would try again at exit (and fail on the manager it
        # already dropped).
        atexit.unregister(client._cleanup_kernel)
        manager = client.km
        if manager is not None and manager.has_kernel:
            await _maybe_await(manager.shutdown_kernel(now=True))
        if client.kc is not None:
            client.kc.stop_channels()
            client.kc = None


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


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
