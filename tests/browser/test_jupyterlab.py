"""kagreport's charts live and offline in a real JupyterLab and Notebook 7 (issue 14, item 1).

One JupyterLab server is started from this interpreter (the venv's), with ``make lab``'s flags
(read from the Makefile), on 127.0.0.1 and a free port, with a token, a temporary root folder
and temporary ``JUPYTER_*`` and IPython folders, so that nothing of the machine's own Jupyter
set-up takes part. The notebook run is the README's two cells (its notebook quick start, the
blocks marked ``<!-- notebook -->``), as written: they write a SIMULATED kag run themselves.

Chromium (Debian's, :mod:`tests.browser.conftest`) opens it with every request routed: one to
a host other than 127.0.0.1 is aborted and recorded, and the test asserts none was attempted.
The checks: a live Vega view (``.vega-embed`` with an SVG holding marks) is drawn from the
kernel's output, hovering a point shows Vega's tooltip, the actions menu offers the export,
the StatsView's cost dropdown redraws its chart in place, the saved notebook keeps a static
SVG, and Notebook 7 (``/notebooks/...`` on the same server) draws the chart live too.

Waits are on conditions (up to :data:`WAIT_MS`), never sleeps; the server's process group, and
any kernel it started, is ended in the fixture's teardown whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from markdown_blocks import marked_blocks

from .conftest import OUTPUT, Browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
# Generous: a loaded machine starts a kernel and imports pandas, Altair and vl-convert slowly.
WAIT_MS = 120_000
LOCAL_HOSTS = frozenset({"127.0.0.1"})


# --------------------------------------------------------------------------- inputs


def readme_cells() -> list[str]:
    """The README's notebook quick start, one cell per block marked ``<!-- notebook -->``."""
    cells = marked_blocks(REPO / "README.md", "notebook")
    assert [c.language for c in cells] == ["python", "python"], "the README has two cells"
    return [cell.code.rstrip("\n") for cell in cells]


def lab_flags() -> list[str]:
    """``LAB_FLAGS`` of the Makefile: what ``make lab`` passes to JupyterLab."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^LAB_FLAGS :=((?:.*\\\n)*.*)$", text, flags=re.M)
    assert match, "the Makefile defines LAB_FLAGS"
    flags = match.group(1).replace("\\\n", " ").split()
    assert "--ServerApp.ip=127.0.0.1" in flags
    return flags


def write_notebook(path: Path, cells: list[str]) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(notebook, path)


# --------------------------------------------------------------------------- the server


@dataclass
class Lab:
    """A running JupyterLab server."""

    url: str
    token: str
    root: Path
    log: Path

    def page_url(self, path: str) -> str:
        return f"{self.url}{path}?token={self.token}"

    def server_log(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-4000:]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _descendants(pid: int) -> list[int]:
    """The processes started by ``pid``, at any depth (Linux ``/proc``): the kernels."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the server's process group and every kernel it started (each kernel runs in a
    session of its own, out of the group)."""
    kernels = _descendants(process.pid)
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
    for pid in kernels:  # the server shuts its kernels down on SIGTERM; a SIGKILL does not
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _answers(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for 127.0.0.1
    try:
        with opener.open(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    root.mkdir()
    write_notebook(root / "readme.ipynb", readme_cells())
    write_notebook(root / "notebook7.ipynb", readme_cells()[:1])
    env = dict(os.environ)
    for name in ("config", "data", "runtime"):
        env[f"JUPYTER_{name.upper()}_DIR"] = str(base / f"jupyter-{name}")
    env["IPYTHONDIR"] = str(base / "ipython")
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.pop("JUPYTER_PATH", None)
    env["JUPYTER_CONFIG_PATH"] = str(REPO / "etc" / "jupyter")  # as make lab sets it
    # The kernel imports the kagreport under test.
    src = str(Path(__import__("kagreport").__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab", *lab_flags(),
        f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        "--ServerApp.open_browser=False",
        # The test reads the notebook's state through the app (window.jupyterapp).
        "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",
        # A server left behind by a test process killed hard goes away by itself.
        "--MappingKernelManager.cull_idle_timeout=600", "--MappingKernelManager.cull_interval=60",
        "--ServerApp.shutdown_no_activity_timeout=900",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = base / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    lab = Lab(f"http://127.0.0.1:{port}", token, root, log)
    try:
        deadline = time.monotonic() + WAIT_MS / 1000
        while not _answers(f"{lab.url}/api/status?token={token}"):
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {process.returncode}:\n{lab.server_log()}")
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer in time:\n{lab.server_log()}")
            time.sleep(0.2)  # polling interval, not an assertion
        yield lab
    finally:
        _stop(process)


# --------------------------------------------------------------------------- the browser


@dataclass
class Network:
    """Every request of a browser context; those to another host are aborted."""

    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def route(self, route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname in LOCAL_HOSTS or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def watch(self, page: Any) -> None:
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("websocket", lambda socket: self.requests.append(socket.url))
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.on(
            "console",
            lambda m: (
                self.console_errors.append(m.text) if m.type in ("error", "warning") else None
            ),
        )

    def offsite(self) -> list[str]:
        local = ("data:", "blob:", "about:")
        seen = self.blocked + [
            u for u in self.requests if not u.startswith(local) and urlsplit(u).hostname not in LOCAL_HOSTS
        ]  # fmt: skip
        return list(dict.fromkeys(seen))


@pytest.fixture
def network_page(browser: Browser) -> Iterator[tuple[Any, Network]]:
    context = browser.browser.new_context(
        viewport={"width": 1400, "height": 1000}, service_workers="block"
    )
    network = Network()
    context.route("**/*", network.route)
    page = context.new_page()
    network.watch(page)
    try:
        yield page, network
    finally:
        context.close()


# The notebook in the main area: its kernel's status, and each code cell's execution count
# and outputs (their types and, for errors, the message).
NOTEBOOK_STATE_JS = """
() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.filter((c) => c.model.type === 'code').map((c) => {
    const outputs = c.model.outputs.toJSON();
    return {
      count: c.model.executionCount,
      types: outputs.map((o) => o.output_type),
      errors: outputs.filter((o) => o.output_type === 'error').map((o) => o.ename + ': ' + o.evalue),
      mimetypes: outputs.flatMap((o) => Object.keys(o.data || {})),
    };
  });
  return {kernel: kernel ? kernel.status : null, cells};
}
"""

# The live Vega views on the page: marks drawn in each (graphical elements inside the data
# mark groups; axes, legends and titles excluded), the x-axis title, the actions offered.
VEGA_STATE_JS = """
() => Array.from(document.querySelectorAll('.jp-OutputArea-output .vega-embed')).map((el) => {
  const svg = el.querySelector('svg');
  const groups = svg ? Array.from(svg.querySelectorAll('g[class*="mark-"]')) : [];
  const data = groups.filter((g) => !/role-(axis|legend|title|frame|scope)/.test(g.getAttribute('class') || ''));
  const marks = data.reduce((n, g) => n + g.querySelectorAll(':scope > path, :scope > line, :scope > rect, :scope > text, :scope > circle').length, 0);
  const axisTitles = svg ? Array.from(svg.querySelectorAll('.role-axis-title text')).map((t) => t.textContent) : [];
  const actions = Array.from(el.querySelectorAll('.vega-actions a')).map((a) => a.textContent.trim());
  const cell = el.closest('.jp-Cell');
  const cells = Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'));
  return {cell: cells.indexOf(cell), marks, symbols: svg ? svg.querySelectorAll('g.mark-symbol path').length : 0,
          axisTitles, actions, tag: el.dataset.kagreportTest || '',
          width: svg ? svg.getBoundingClientRect().width : 0,
          area: el.closest('.jp-OutputArea-output').getBoundingClientRect().width,
          title: svg ? Array.from(svg.querySelectorAll('.role-title-text text')).map((t) => t.textContent).join(' ') : ''};
})
"""


def _notebook_state(page: Any) -> dict[str, Any] | None:
    state: dict[str, Any] | None = page.evaluate(NOTEBOOK_STATE_JS)
    return state


def _vega_views(page: Any) -> list[dict[str, Any]]:
    views: list[dict[str, Any]] = page.evaluate(VEGA_STATE_JS)
    return views


def _wait(page: Any, js: str, what: str, network: Network, arg: Any = None) -> None:
    try:
        page.wait_for_function(js, arg=arg, timeout=WAIT_MS, polling=100)
    except Exception as exc:  # Playwright's TimeoutError: say what the page showed
        state = _notebook_state(page)
        OUTPUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUTPUT / "jupyterlab-failure.png"), full_page=True)
        outputs = page.evaluate(
            "() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))"
            ".map((o) => (o.getAttribute('data-mime-type') || '') + ': ' + o.innerHTML.slice(0, 300))"
        )
        raise AssertionError(
            f"{what}: {type(exc).__name__}\nnotebook: {state}\nviews: {_vega_views(page)}\n"
            f"outputs: {outputs}\npage errors: {network.page_errors}\nconsole: {network.console_errors}\noffsite: {network.offsite()}"
        ) from None


def _run_notebook(page: Any, network: Network, url: str) -> dict[str, Any]:
    """Open ``url``, wait for an idle kernel, run all cells, wait until each has run."""
    page.goto(url, wait_until="load", timeout=WAIT_MS)
    kernel_idle = (
        "() => { const app = window.jupyterapp; const p = app && app.shell.currentWidget;"
        " const k = p && p.sessionContext && p.sessionContext.session"
        " && p.sessionContext.session.kernel; return !!k && k.status === 'idle'; }"
    )
    _wait(page, kernel_idle, "the notebook's kernel is idle", network)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    all_ran = (
        "() => { const s = (" + NOTEBOOK_STATE_JS + ")(); return !!s && s.kernel === 'idle'"
        " && s.cells.every((c) => c.count !== null && c.count > 0); }"
    )
    _wait(page, all_ran, "every cell ran", network)
    state = _notebook_state(page)
    assert state is not None
    errors = [e for cell in state["cells"] for e in cell["errors"]]
    assert not errors, errors
    return state


def _wait_for_live_chart(page: Any, network: Network, cell: int) -> dict[str, Any]:
    drawn = "(cell) => (" + VEGA_STATE_JS + ")().some((v) => v.cell === cell && v.symbols > 0)"
    _wait(page, drawn, f"cell {cell} draws a live Vega view with marks", network, arg=cell)
    return next(v for v in _vega_views(page) if v["cell"] == cell and v["symbols"] > 0)


def _hover_shows_tooltip(page: Any, cell: int) -> str:
    """Hover the chart's points one by one until Vega's tooltip shows; its text."""
    points = (
        page.locator(".jp-Notebook .jp-Cell").nth(cell).locator(".vega-embed g.mark-symbol path")
    )
    for index in range(points.count()):
        points.nth(index).hover(force=True)
        try:
            page.wait_for_selector("#vg-tooltip-element.visible", timeout=5_000)
        except Exception:  # this point is under a label: the next one
            continue
        return str(page.locator("#vg-tooltip-element").inner_text())
    return ""


# --------------------------------------------------------------------------- the tests


def test_jupyterlab_draws_the_readme_cells_live_and_offline(
    lab: Lab, network_page: tuple[Any, Network], output_dir: Path
) -> None:
    page, network = network_page
    state = _run_notebook(page, network, lab.page_url("/lab/tree/readme.ipynb"))
    # The chart cell's output carries the widget view and the static SVG.
    chart_cell = state["cells"][0]
    for mimetype in ("application/vnd.jupyter.widget-view+json", "image/svg+xml"):
        assert mimetype in chart_cell["mimetypes"]

    view = _wait_for_live_chart(page, network, 0)
    assert view["marks"] >= view["symbols"] > 0
    # As wide as the output area, not the 238 px paper figure (the static SVG keeps that).
    assert view["width"] >= 0.9 * view["area"] > 600, view
    # The README's run is a SIMULATED one: the chart says so wherever it is shown.
    assert view["title"].startswith("SIMULATED"), view["title"]
    assert any("SVG" in a for a in view["actions"]), view["actions"]  # the export menu
    assert any("PNG" in a for a in view["actions"]), view["actions"]
    assert not any("Editor" in a for a in view["actions"])  # would post the data to a site
    tooltip = _hover_shows_tooltip(page, 0)
    assert "accuracy" in tooltip.lower(), tooltip
    page.screenshot(path=str(output_dir / "jupyterlab-tooltip.png"))

    # The StatsView: its cost dropdown redraws the same live view in place.
    stats = _wait_for_live_chart(page, network, 1)
    page.evaluate(
        "() => { const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[1];"
        " cell.querySelector('.vega-embed').dataset.kagreportTest = 'before'; }"
    )
    dropdown = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".widget-dropdown select")
    assert dropdown.count() >= 1
    cost = dropdown.first
    values = cost.locator("option").evaluate_all("(os) => os.map((o) => o.value)")
    current = cost.input_value()
    other = next(v for v in values if v != current)
    cost.select_option(other)
    changed = (
        "([cell, titles]) => (" + VEGA_STATE_JS + ")().some((v) => v.cell === cell"
        " && v.symbols > 0 && JSON.stringify(v.axisTitles) !== JSON.stringify(titles))"
    )
    _wait(
        page, changed, "the cost dropdown redraws the chart", network, arg=[1, stats["axisTitles"]]
    )
    after = [v for v in _vega_views(page) if v["cell"] == 1]
    assert len(after) == 1, after
    assert after[0]["tag"] == "before", after  # the same element: redrawn in place
    page.locator(".jp-Notebook .jp-Cell").nth(1).scroll_into_view_if_needed()
    page.screenshot(path=str(output_dir / "jupyterlab-readme.png"))

    # No prompt to fetch news from the Internet (etc/jupyter turns the announcements off).
    config = json.loads(page.locator("#jupyter-config-data").text_content() or "{}")
    assert "@jupyterlab/apputils-extension:announcements" in config.get("disabledExtensions", [])
    assert "Jupyter news" not in page.locator("body").inner_text()
    # ... and the server fetches none either (make lab's flags), nor asks PyPI for extensions.
    assert config.get("news") == {"disabled": True}, config.get("news")
    assert "Extension Manager is 'readonly'" in lab.log.read_text(encoding="utf-8")

    # Saved, the notebook keeps the chart as a static SVG beside the widget and the spec.
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    saved = _wait_saved(lab.root / "readme.ipynb")
    assert {"image/svg+xml", "application/vnd.jupyter.widget-view+json"} <= saved
    assert any(m.startswith("application/vnd.vegalite.") for m in saved)
    # Exported without a kernel (no widget state is saved), the chart is that SVG.
    import nbconvert
    import nbformat

    exported, _ = nbconvert.HTMLExporter().from_notebook_node(
        nbformat.read(lab.root / "readme.ipynb", as_version=4)
    )
    assert "jp-RenderedSVG" in exported
    assert "Accuracy against" in exported  # the chart's title, drawn in the SVG

    assert network.offsite() == [], network.offsite()


def _wait_saved(path: Path) -> set[str]:
    """The mimetypes of the first cell's outputs in the saved file, once it has some."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        found = {m for o in cells[0].get("outputs", []) for m in o.get("data", {})}
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)  # polling interval, not an assertion


def test_notebook_7_draws_the_chart_live_and_offline(
    lab: Lab, network_page: tuple[Any, Network], output_dir: Path
) -> None:
    page, network = network_page
    _run_notebook(page, network, lab.page_url("/notebooks/notebook7.ipynb"))
    view = _wait_for_live_chart(page, network, 0)
    assert any("SVG" in a for a in view["actions"]), view["actions"]
    page.screenshot(path=str(output_dir / "notebook7.png"), full_page=True)
    assert network.offsite() == [], network.offsite()
