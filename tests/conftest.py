"""What the tests share.

- Builders of kag result trees written by hand, as PITFALLS.md's fixtures (:class:`Tree`).
- :func:`run_cli`: the command line in this process; :func:`run_process`: as a process.
- Sites built once per session (``site``, ``site_inputs``; ``mmlu_site``; ``examples_site``;
  ``notebook_site``; ``inspect_site``), for tests that read them, by whichever xdist worker asks
  first (:func:`once_per_session`).
- The marks: ``browser``, ``notebook``, ``signals`` and ``soak`` tests are ``slow`` too
  (``make test-fast`` runs ``-m "not slow"``; ``soak`` ones run only in ``make test-soak``).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import logging
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# PITFALLS.md "S": the smallest ok.stats object kag parses.
S: dict[str, Any] = {
    "prompt": "p",
    "retrieval": None,
    "config": {
        "augmented_generation": None,
        "provider": "stub",
        "model": "m",
        "temperature": 0.0,
        "tokens": None,
    },
    "time": {"secs": 1, "nanos": 0},
}


def mcq(answer: str | None, options: dict[str, str] | None = None) -> dict[str, Any]:
    """A datasets entry: PITFALLS.md MCQ(key)."""
    return {
        "input": "Q?",
        "output": {
            "type": "MCQ",
            "options": options or {"A": "a", "B": "b", "C": "c", "D": "d"},
            "answer": answer,
        },
    }


def stats(
    *,
    prompt: str = "p",
    secs: int = 1,
    nanos: int = 0,
    retrieval: tuple[int, int, int, int, int] | None = None,
) -> dict[str, Any]:
    """An ok.stats object; ``retrieval`` is (ret_secs, ret_nanos, vertices, relationships, properties)."""
    body = json.loads(json.dumps(S))
    body["prompt"] = prompt
    body["time"] = {"secs": secs, "nanos": nanos}
    if retrieval is not None:
        rs, rn, v, r, p = retrieval
        body["config"]["augmented_generation"] = {"retriever": "embedder", "database": "neo4j"}
        body["retrieval"] = {
            "result": "ctx",
            "stats": {
                "embedder": {
                    "embedding": {"document": "Q?", "vec": [0.25, -0.5, 1e-3]},
                    "database": {
                        "neo4j": {
                            "vertices": v,
                            "relationships": r,
                            "properties": p,
                            "time": {"secs": 0, "nanos": 1},
                        }
                    },
                    "time": {"secs": rs, "nanos": rn},
                }
            },
        }
    return body


class Tree:
    """A kag run written under a temporary folder: ``datasets.json`` and ``results/``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.results = root / "results"
        self.results.mkdir()
        self.datasets_path = root / "datasets.json"
        self.truth: dict[str, dict[str, Any]] = {}
        self.save_truth()

    def save_truth(self) -> None:
        self.datasets_path.write_text(json.dumps(self.truth, indent=2), encoding="utf-8")

    def question(self, dataset: str, question: str, entry: dict[str, Any]) -> None:
        self.truth.setdefault(dataset, {})[question] = entry
        self.save_truth()

    def raw(self, dataset: str, question: str, name: str, text: str | bytes) -> Path:
        folder = self.results / dataset / question
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def ok(self, dataset: str, question: str, setup: str, result: str, **kwargs: Any) -> Path:
        body = {"ok": {"result": result, "stats": stats(**kwargs)}}
        return self.raw(dataset, question, f"{setup}.json", json.dumps(body, indent=2))

    def error(self, dataset: str, question: str, setup: str, message: str = "boom") -> Path:
        return self.raw(dataset, question, f"{setup}.json", json.dumps({"error": message}))


# ---------------------------------------------------------------------- built once a session

REPO = Path(__file__).resolve().parents[1]


def once_per_session(
    factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """The folder ``name``, filled by ``make(folder)`` once in the whole test session.

    A session fixture runs once per process, and ``make test`` runs two pytest-xdist worker
    processes: each would build the same site. The workers' temporary folders share a parent
    (the session's), so the first worker to ask makes ``name`` there under a lock and the
    others wait for it, then read it. What is made is read, never changed (a test that
    changes a site copies it). A ``make`` that fails leaves nothing marked done: the next to
    ask makes it again (and fails in its own test).
    """
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    shared = root / "shared"
    shared.mkdir(exist_ok=True)
    folder = shared / name
    done = shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


# ---------------------------------------------------------------------- one shared site
# Built once per session (tests/site/test_site.py and whoever else only reads a site): a small
# simulated run whose texts carry markup, the bundled MMLU-Pro run, and two evaluation files.
# Tests that need a site of their own (another configuration, a build that fails) build it.

PAYLOAD = "</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)>"
LONG = 5000
BIG_INT = 9007199254740993  # 2**53 + 1: a double cannot hold it


def _poison_run(root: Path) -> tuple[Path, Path]:
    """A small simulated run whose responses, errors, prompts and options carry markup."""
    from kagreport.kag import simulate_run

    run = simulate_run(root, questions=6, datasets=2, seed=3, vector_dim=4, unparsable_files=0)
    results = Path(run.results_path)
    datasets = Path(run.datasets_path)
    truth = json.loads(datasets.read_text(encoding="utf-8"))
    for questions in truth.values():
        for entry in questions.values():
            output = entry.get("output")
            if output and output.get("options"):
                key = next(iter(output["options"]))
                output["options"][key] = PAYLOAD + output["options"][key]
    datasets.write_text(json.dumps(truth, indent=2), encoding="utf-8")
    files = sorted(results.glob("sim-*/*/*.json"))
    for n, path in enumerate(files):
        record = json.loads(path.read_text(encoding="utf-8"))
        if "ok" in record:
            record["ok"]["stats"]["prompt"] += PAYLOAD
            if n % 3 == 0:
                record["ok"]["result"] = PAYLOAD + record["ok"]["result"]
            if n == 0:
                record["ok"]["result"] = "x" * LONG
        else:
            record["error"] = PAYLOAD + record["error"]
        path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    return datasets, results


def _make_inputs(base: Path) -> None:
    """The shared site's inputs in ``base``: the run ``sim/``, two evaluation files."""
    from kagreport.evaluation import AnswerItem, evaluate_answers
    from kagreport.evaluation.judges import ExactMatch, TokenF1

    _poison_run(base / "sim")
    items = [
        AnswerItem("q1", "Which?", "Paris " + PAYLOAD, "Paris"),
        AnswerItem("q2", "Which?", "Lyon", "Paris"),
        AnswerItem("q3", "Which?", "Nice", "Nice"),
    ]
    judges = [ExactMatch(), TokenF1()]
    first = evaluate_answers(items, judges, metadata={"name": PAYLOAD, "ns_total": BIG_INT})
    second = evaluate_answers(
        [AnswerItem(i.identifier, i.question, i.reference or "", i.reference) for i in items],
        judges,
        metadata={"name": "perfect"},
    )
    first.write(base / "answers.json")
    second.compare(first, n_resamples=100).write(base / "comparison.json")


@pytest.fixture(scope="session")
def site_inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The shared site's configuration (``config``), its folder (``base``) and its run."""
    from kagreport.examples import mmlu_pro_philosophy
    from kagreport.site import RunConfig, SiteConfig

    base = once_per_session(tmp_path_factory, "inputs", _make_inputs)
    datasets, results = base / "sim" / "datasets.json", base / "sim" / "results"
    example = mmlu_pro_philosophy()
    config = SiteConfig(
        title="Test site " + PAYLOAD,
        runs=(
            RunConfig("Simulated " + PAYLOAD, datasets, results, compare="all-pairs"),
            RunConfig(example.name, example.datasets, example.results),
        ),
        evaluations=(base / "answers.json", base / "comparison.json"),
    )
    return {"base": base, "config": config, "datasets": datasets, "results": results}


@pytest.fixture(scope="session")
def site(site_inputs: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared site, built once per session from ``site_inputs``: read it, never change it."""
    from kagreport.site import build_site

    def make(folder: Path) -> None:
        index = build_site(site_inputs["config"], folder / "site")
        assert index == folder / "site" / "index.html"

    return once_per_session(tmp_path_factory, "site", make) / "site"


@pytest.fixture(scope="session")
def mmlu_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled MMLU-Pro philosophy run alone, as the run "mmlu", notebooks off: built once
    per session for the tests that read it (tests/site); read it, never change it."""
    from kagreport.examples import mmlu_pro_philosophy
    from kagreport.site import RunConfig, SiteConfig, build_site

    def make(folder: Path) -> None:
        example = mmlu_pro_philosophy()
        config = SiteConfig(runs=(RunConfig("mmlu", example.datasets, example.results),))
        build_site(config, folder / "site", execute_notebooks=False)

    return once_per_session(tmp_path_factory, "mmlu", make) / "site"


@pytest.fixture(scope="session")
def examples_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled examples' site, built once per session by the CLI (``kagreport site
    build``, the analyst notebooks converted, not executed), for the tests that only read it:
    its runs (the SIMULATED kag run, MMLU-Pro, the Inspect logs), its evaluations (LLMBar,
    fast-graphrag, the SIMULATED RAG pair) and their systems pages."""

    def make(folder: Path) -> None:
        out = folder / "site"
        env = dict(os.environ)
        src = str(REPO / "src")
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        command = [sys.executable, "-m", "kagreport", "site", "build", "-q", "-o", str(out)]
        done = subprocess.run(
            [*command, "--with-notebooks", "--no-execute"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:  # no notebook front end installed: the site without them
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert (out / "index.html").is_file()

    return once_per_session(tmp_path_factory, "examples", make) / "site"


NOTEBOOK_OUTPUT_TEXT = "printed inside the Output widget"


def _write_notebook(path: Path) -> Path:
    """A small notebook: an Altair chart, a slider and an Output widget, math in Markdown."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Offline check\n\nAccuracy of two setups."),
        nbformat.v4.new_code_cell(
            "import altair as alt\n"
            "import pandas as pd\n"
            "frame = pd.DataFrame({'setup': ['small', 'large'], 'accuracy': [0.5, 0.7]})\n"
            "alt.Chart(frame).mark_bar().encode(x='setup:N', y='accuracy:Q')"
        ),
        nbformat.v4.new_code_cell(
            "import ipywidgets as widgets\n"
            "from IPython.display import display\n"
            # The source must not hold the texts the test looks for in the outputs.
            "slider = widgets.IntSlider(value=1 + 2, description='k')\n"
            "out = widgets.Output()\n"
            "display(slider, out)\n"
            "with out:\n"
            f"    print({NOTEBOOK_OUTPUT_TEXT[:10]!r} + {NOTEBOOK_OUTPUT_TEXT[10:]!r})"
        ),
        nbformat.v4.new_markdown_cell("The agreement is $\\alpha = 0.81$."),
    ]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, str(path))
    return path


@pytest.fixture(scope="session")
def notebook_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated run (30 questions x 2 datasets) and one small notebook
    (``notebooks/offline-check.html``, from :func:`_write_notebook`), executed on a real
    kernel: built once per session (the kernel is the slow part); read it, never change it."""
    from kagreport.kag import simulate_run
    from kagreport.site import RunConfig, SiteConfig, build_site

    def make(root: Path) -> None:
        sim = simulate_run(root / "run", questions=30, datasets=2)
        notebook = _write_notebook(root / "offline-check.ipynb")
        config = SiteConfig(
            title="Notebook site",
            runs=(RunConfig("Simulated run", Path(sim.datasets_path), Path(sim.results_path)),),
            notebooks=(notebook,),
        )
        try:
            index = build_site(config, root / "out", execute_notebooks=True)
        except Exception as error:
            cause = error.__cause__
            pytest.fail(
                f"B13: building a site with the notebook failed: {error}"
                + (f" (caused by {type(cause).__name__}: {cause})" if cause else "")
            )
        assert index == root / "out" / "index.html"

    return once_per_session(tmp_path_factory, "notebook", make) / "out"


@pytest.fixture(scope="session")
def inspect_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled Inspect logs alone, as the source "inspect" (its format named), notebooks
    off: four small pages. Read it, never change it."""
    from kagreport.examples import inspect_popularity
    from kagreport.site import SiteConfig, SourceConfig, build_site

    def make(folder: Path) -> None:
        path = inspect_popularity().logs[0].parent
        source = SourceConfig(path, name="inspect", format="inspect")
        build_site(SiteConfig(sources=(source,)), folder / "site", execute_notebooks=False)

    return once_per_session(tmp_path_factory, "inspect", make) / "site"


#: The modules that take longest (their setup and tests together, from ``--junitxml``'s
#: times: 20 s or more on a loaded 2-core machine), longest first: ``make test``'s two workers
#: take whole modules in collection order (``--no-loadscope-reorder``: xdist would otherwise
#: hand them out by their number of tests), and a long one collected last keeps one worker
#: busy while the other waits. The first two share no session site (the one that asks
#: second would wait for the other's build).
LONGEST_FIRST = (
    "site/test_site_signals.py",
    "site/test_site.py",
    "browser/test_site_ui.py",
    "test_notebooks.py",
    "site/test_site_sources.py",
    "widgets/test_widgets.py",
    "sources/test_every_format.py",
    "test_ci_github.py",
    "site/test_site_pages.py",
    "test_readme.py",
    "browser/test_site_hostile_names.py",
    "browser/test_jupyterlab.py",
    "test_ci_gitlab.py",
    "site/test_site_hostile_names.py",
    "remote/test_dask_engine.py",
    "cli/test_cli_encoding.py",
    "evaluation/judges/test_hostile_endpoint.py",
    "browser/test_site_browser.py",
    "site/test_flipped_items_every_tool.py",
    "site/test_site_evaluations.py",
    "test_docs.py",
    "browser/test_site_pages.py",
    "remote/test_s3.py",
    "browser/test_site_charts.py",
    "browser/test_pages_take_over.py",
    "grading/test_pool_signals.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the tests' processes even when the suite was started in the background
    (`make test &`, `nohup`): a shell starts a background job with SIGINT ignored, every
    process inherits that, and Python then installs no handler, so each test that sends
    SIGINT to a kagreport command would see it ignored."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser, notebook, signals and soak tests are slow too: ``-m "not slow"`` leaves them
    out. The longest modules go first (:data:`LONGEST_FIRST`), each keeping its order."""
    for item in items:
        if any(
            item.get_closest_marker(name) for name in ("browser", "notebook", "signals", "soak")
        ):
            item.add_marker(pytest.mark.slow)
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}

    def weight(item: pytest.Item) -> int:
        try:
            relative = Path(str(item.path)).relative_to(REPO / "tests").as_posix()
        except ValueError:  # a test outside tests/ (a doctest run by hand)
            return len(rank)
        return rank.get(relative, len(rank))

    items.sort(key=weight)  # stable: the rest keep pytest's order


@pytest.fixture
def python_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Result files read by Python alone (``os.open``, ``os.read``), not by the compiled
    scanner's own calls: for tests that fake an OS error by patching those functions. (The
    scanner leaves any error to that path, so the message is the same.)"""
    from kagreport.grading import _chunk, _find
    from kagreport.kag import _tree

    monkeypatch.setattr(_tree, "scan_file", None)
    monkeypatch.setattr(_find, "scan_file", None)
    monkeypatch.setattr(_chunk, "grade_folder", None)


@pytest.fixture
def kag_log() -> Iterator[list[logging.LogRecord]]:
    """The records the ``kagreport.kag`` logger emits in the test, down to the trace level
    (level 5), caught at that logger: whatever an in-process command left on ``kagreport``
    (its own handler, no propagation) does not hide them."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(level=1)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("kagreport.kag")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(5)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("KAGREPORT_DEBUG", raising=False)


@dataclass
class Done:
    """What a run of the command line gave: the fields of ``subprocess.CompletedProcess``."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None) -> Done:
    """Run ``kagreport ARGS`` in this process, as the command would run on its own.

    ``kagreport.cli._main.main(args)`` writes to UTF-8 streams over temporary files (real file
    descriptors, not terminals), read back as ``subprocess.run(text=True)`` reads a pipe;
    the exit code is main's return value or the code of the SystemExit it raised (argparse's
    usage errors, ``--help``). Any other exception propagates and fails the test (the
    command would have printed a traceback). The ``kagreport`` logger's setup, which main
    replaces, is restored afterwards. Tests of what only a real process shows (signals,
    its exit status, closed pipes, the encoding of its stdout, the console script) run
    ``python -m kagreport`` themselves: see :func:`run_process`.
    """
    from kagreport.cli._main import main

    words = [os.fspath(arg) for arg in args]
    logger = logging.getLogger("kagreport")
    saved = (logger.handlers[:], logger.level, logger.propagate)
    with contextlib.ExitStack() as files:
        streams = [  # as Python sets up the streams of a pipe
            files.enter_context(
                io.TextIOWrapper(files.enter_context(tempfile.TemporaryFile()), "utf-8", errors)
            )
            for errors in ("strict", "backslashreplace")
        ]
        try:
            with contextlib.ExitStack() as stack:
                if cwd is not None:
                    stack.enter_context(contextlib.chdir(cwd))
                stack.enter_context(contextlib.redirect_stdout(streams[0]))
                stack.enter_context(contextlib.redirect_stderr(streams[1]))
                try:
                    code: object = main(words)
                except SystemExit as exit_:
                    code = exit_.code
                    if code is not None and not isinstance(code, int):  # as the interpreter
                        print(code, file=sys.stderr)
                        code = 1
        finally:
            logger.handlers[:], logger.level, logger.propagate = saved
        texts = []
        for stream in streams:
            stream.flush()
            stream.buffer.seek(0)
            data = stream.buffer.read()
            texts.append(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read())
    assert code is None or isinstance(code, int), code
    return Done(words, code or 0, texts[0], texts[1])


def run_process(
    *args: str | os.PathLike[str],
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m kagreport ARGS`` as a process of its own (``env``: its whole
    environment, default this one's); return the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "kagreport", *map(os.fspath, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=env,
        check=False,
        timeout=300,
    )


def hand_frame(points: dict[str, tuple[float, float]], cost: str = "avg_retrieval_secs") -> Any:
    """A stats-frame-like table made by hand for the charts: setup -> (cost, accuracy), the
    overall row of each setup, accuracy intervals +-0.05."""
    import pandas as pd

    from kagreport.frames._tables import OVERALL

    return pd.DataFrame(
        {
            "setup": list(points),
            "dataset": OVERALL,
            "accuracy": [a for _, a in points.values()],
            "accuracy_low": [a - 0.05 for _, a in points.values()],
            "accuracy_high": [a + 0.05 for _, a in points.values()],
            cost: [c for c, _ in points.values()],
        }
    )


def brute_frontier(points: dict[str, tuple[float, float]]) -> dict[str, bool]:
    """The Pareto frontier by its definition, pair by pair (an oracle for the tests).

    ``points`` maps a name to (cost, accuracy). A point is on the frontier unless another
    has cost <= and accuracy >=, one of them strictly; NaN points are never on it and
    dominate nothing.
    """
    valid = {k: p for k, p in points.items() if not (math.isnan(p[0]) or math.isnan(p[1]))}

    def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] <= b[0] and a[1] >= b[1] and (a[0] < b[0] or a[1] > b[1])

    return {
        k: k in valid and not any(dominates(q, valid[k]) for j, q in valid.items() if j != k)
        for k in points
    }
