"""``kagreport site build`` stopped by SIGTERM or SIGINT at any moment: exit 143 or 130 soon,
no traceback, the previous site byte for byte, no build folder and no process left behind.

The builds run as real subprocesses in a session of their own; signals go to the whole process
group, as a terminal's Ctrl-C or a job runner's stop does. Nothing is mocked: the kernels are
real processes started by jupyter_client.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kagreport.evaluation import AnswerItem, evaluate_answers
from kagreport.evaluation.judges import ExactMatch
from kagreport.kag import simulate_run
from kagreport.site import RunConfig, SiteConfig, build_site

pytestmark = [
    pytest.mark.signals,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc"),
]

#: Seconds a stopped build may take to exit: generous for a loaded 2-core machine (the
#: measured figures are printed; they are well under a second or two).
STOP_BOUND = 20.0
#: Seconds to wait for a build to reach the moment a test stops it at.
REACH_BOUND = 120.0
EXIT_CODES = {signal.SIGTERM: 143, signal.SIGINT: 130}


# ---------------------------------------------------------------------- helpers


def _notebook(path: Path, source: str, kernel: str = "python3") -> Path:
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source}  # fmt: skip
    document = {
        "cells": [cell],
        "metadata": {"kernelspec": {"name": kernel, "display_name": kernel, "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _stat(pid: int) -> tuple[str, int, str] | None:
    """(state, parent pid, start time) of a live process, None if there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), fields[19]


def _descendants(root: int) -> dict[int, str]:
    """Every process below ``root``: pid -> its start time (to tell a reused pid apart)."""
    parents: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                parents[int(entry)] = (stat[1], stat[2])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child, (parent, started) in parents.items():
            if parent == pid and child not in found:
                found[child] = started
                frontier.append(child)
    return found


def _left_running(seen: dict[int, str]) -> list[str]:
    """Those of ``seen`` still running (a zombie runs nothing; a reused pid is another)."""
    left = []
    for pid, started in seen.items():
        stat = _stat(pid)
        if stat is not None and stat[0] != "Z" and stat[2] == started:
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            left.append(f"{pid}: {command.decode(errors='replace')[:200]}")
    return left


class _Build:
    """``kagreport site build`` in a session of its own, its descendants watched."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.out = Path(args[args.index("-o") + 1])
        self.building = False  # whether its build folder was seen
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kagreport", "site", "build", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.seen: dict[int, str] = {}

    def watch(self) -> None:
        self.seen.update(_descendants(self.process.pid))
        self.building = self.building or any(self.out.parent.glob(f".{self.out.name}.build-*"))

    def wait_for(self, ready: Any, what: str) -> None:
        """Poll (watching the descendants) until ``ready()``; fail if the build ends first."""
        deadline = time.monotonic() + REACH_BOUND
        while not ready():
            self.watch()
            if self.process.poll() is not None:
                pytest.fail(f"the build ended before {what}: {self.reap()}")
            if time.monotonic() > deadline:
                pytest.fail(f"the build never reached {what}: {self.reap()}")
            time.sleep(0.02)
        self.watch()

    def stop(self, sig: int) -> tuple[int, str, str, float]:
        """Send ``sig`` to the build's process group; (exit code, stdout, stderr, seconds)."""
        self.watch()
        sent = time.monotonic()
        with contextlib.suppress(ProcessLookupError):  # the build may have ended
            os.killpg(self.process.pid, sig)
        try:
            out, err = self.process.communicate(timeout=STOP_BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the build did not stop within {STOP_BOUND} s: {self.reap()[1][-2000:]}")
        return self.process.returncode, out, err, time.monotonic() - sent

    def reap(self) -> tuple[str, str]:
        """Kill the build and everything it started, then read its output (stdout, stderr).

        A failing test must not wait on its own: a kernel left running holds the pipes open,
        and ``communicate()`` without a bound would wait for it (up to its 600 s sleep)."""
        self.watch()
        alive = [
            pid for pid, started in self.seen.items() if (_stat(pid) or ("", 0, ""))[2] == started
        ]
        for pid in [self.process.pid, *alive]:  # only the very processes seen (no reused pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        try:
            return self.process.communicate(timeout=STOP_BOUND)
        except subprocess.TimeoutExpired:
            return "", "(its output could not be read: a process still holds its pipes)"


def _assert_clean_stop(
    sig: int, code: int, err: str, out_dir: Path, before: dict[str, bytes], build: _Build
) -> None:
    # -N, ended by the signal itself (a shell reports 128 + N as well), is what Python does
    # for a SIGTERM before the command line's handler exists (nothing is built yet), and for
    # a Ctrl-C that main() caught in an import but that CPython still counts as unhandled.
    codes = [EXIT_CODES[sig]]
    if sig == signal.SIGINT or not build.building:
        codes.append(-sig)
    assert code in codes, err
    assert "Traceback" not in err, err
    line = ["kagreport: interrupted" if sig == signal.SIGINT else "kagreport: terminated"]
    # Ended by the signal itself: before the handler exists there is no line; a caught
    # Ctrl-C that CPython re-raises at exit has printed it.
    allowed = [line] if code == EXIT_CODES[sig] else [line, []]
    assert err.splitlines()[-1:] in allowed, err
    assert _tree(out_dir) == before, "the previous site changed"
    assert not list(out_dir.parent.glob(f".{out_dir.name}.*")), "a build folder was left behind"
    assert not _left_running(build.seen), _left_running(build.seen)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small simulated run, an evaluation file, and a site built from them (the old site)."""
    base = tmp_path_factory.mktemp("signals")
    run = simulate_run(
        base / "sim", questions=6, datasets=2, seed=5, vector_dim=4, unparsable_files=0
    )
    items = [AnswerItem(f"q{i}", "Which?", a, "Paris") for i, a in enumerate(["Paris", "Lyon"])]
    evaluation = base / "answers.json"
    evaluate_answers(items, [ExactMatch()]).write(evaluation)
    old = base / "old-site"
    config = SiteConfig(
        title="old", runs=(RunConfig("sim", Path(run.datasets_path), Path(run.results_path)),)
    )
    build_site(config, old)
    return {
        "datasets": Path(run.datasets_path),
        "results": Path(run.results_path),
        "evaluation": evaluation,
        "old": old,
    }


def _site_copy(small_run: dict[str, Path], folder: Path) -> tuple[Path, dict[str, bytes]]:
    out = folder / "site"
    shutil.copytree(small_run["old"], out)
    return out, _tree(out)


def _notebook_only(notebook: Path, out: Path) -> list[str]:
    """Arguments of a build of ``notebook`` alone (the quickest way to its kernel)."""
    config = notebook.with_suffix(".toml")
    config.write_text(f'title = "new"\nnotebooks = [{json.dumps(str(notebook))}]\n', "utf-8")
    return [str(config), "-o", str(out)]


def _args(small_run: dict[str, Path], out: Path, *notebooks: Path) -> list[str]:
    args = ["-r", str(small_run["results"]), "-d", str(small_run["datasets"]), "--title", "new"]
    args += ["--evaluation", str(small_run["evaluation"])]
    for notebook in notebooks:
        args += ["--notebook", str(notebook)]
    return [*args, "-o", str(out)]


# ---------------------------------------------------------------------- stops at set moments


@pytest.fixture
def slow_kernel(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A kernelspec whose kernel process writes its pid to a file, then never gets ready:
    a build that uses it waits for the kernel to start for as long as the test wants."""
    marker = tmp_path / "kernel-started"
    launcher = tmp_path / "slow_kernel.py"
    launcher.write_text(
        "import os, sys, time\n"
        "with open(sys.argv[1] + '.tmp', 'w') as f:\n"
        "    f.write(str(os.getpid()))\n"
        "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
        "time.sleep(600)\n",
        encoding="utf-8",
    )
    spec = tmp_path / "jupyter" / "kernels" / "slow-start"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, str(launcher), str(marker), "-f", "{connection_file}"],
                "display_name": "slow start",
                "language": "python",
            }
        ),
        encoding="utf-8",
    )
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (str(tmp_path / "jupyter"), env.get("JUPYTER_PATH", "")) if p
    )
    return env, marker


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stop_while_the_kernel_starts(
    sig: int,
    small_run: dict[str, Path],
    slow_kernel: tuple[dict[str, str], Path],
    tmp_path: Path,
) -> None:
    """Issue #10 item 10: a stop while nbclient waits for the kernel to start ended in an
    asyncio.CancelledError traceback and exit 1 (nbclient took the signal)."""
    env, marker = slow_kernel
    notebook = _notebook(tmp_path / "starting.ipynb", "print(1)", kernel="slow-start")
    out, before = _site_copy(small_run, tmp_path)
    build = _Build(_notebook_only(notebook, out), env=env)
    build.wait_for(marker.exists, "the kernel's start")
    kernel = int(marker.read_text())
    assert kernel in build.seen
    code, _, err, secs = build.stop(sig)
    print(f"stopped {secs:.2f} s after {signal.Signals(sig).name} while the kernel started")
    _assert_clean_stop(sig, code, err, out, before, build)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stop_while_a_cell_runs(sig: int, small_run: dict[str, Path], tmp_path: Path) -> None:
    """CI runners stop jobs with SIGTERM: the build folder goes, the old site stays, the
    kernel goes. The cell writes a file once it runs (no sleep to guess when it does)."""
    marker = tmp_path / "cell-running"
    source = (
        f"import os, time\nopen({str(marker) + '.tmp'!r}, 'w').close()\n"
        f"os.replace({str(marker) + '.tmp'!r}, {str(marker)!r})\ntime.sleep(120)"
    )
    notebook = _notebook(tmp_path / "sleeping.ipynb", source)
    out, before = _site_copy(small_run, tmp_path)
    build = _Build(_notebook_only(notebook, out))
    build.wait_for(marker.exists, "the sleeping cell")
    assert build.seen, "no kernel process was seen"
    code, _, err, secs = build.stop(sig)
    print(f"stopped {secs:.2f} s after {signal.Signals(sig).name} while a cell ran")
    _assert_clean_stop(sig, code, err, out, before, build)


# ---------------------------------------------------------------------- stops at any moment


#: The random stops of ``make test``: one in each third of the build's length, so that three
#: stops still reach its early, middle and late parts (five uniform ones need not).
STRATA = ((0.05, 0.35), (0.35, 0.7), (0.7, 1.0))


def test_stops_at_random_moments(small_run: dict[str, Path], tmp_path: Path) -> None:
    """A full small build (a run, an evaluation, a notebook) stopped at a seeded random moment
    in each third of its length: each stop is clean, or the build had already finished (then
    the new site is there, whole). ``make test-soak`` stops it at many more moments."""
    _stop_at_random_moments(small_run, tmp_path, STRATA)


@pytest.mark.soak
def test_stops_at_random_moments_soak(small_run: dict[str, Path], tmp_path: Path) -> None:
    """As :func:`test_stops_at_random_moments`, at ``$KAGREPORT_SIGNAL_TRIES`` (default 30)
    moments drawn anywhere from 5% of the build's length to its end."""
    tries = int(os.environ.get("KAGREPORT_SIGNAL_TRIES", "30"))
    _stop_at_random_moments(small_run, tmp_path, [(0.05, 1.0)] * tries)


def _stop_at_random_moments(
    small_run: dict[str, Path], tmp_path: Path, strata: Sequence[tuple[float, float]]
) -> None:
    """Stop a build once at a random moment of each ``(start, end)`` fraction of its length."""
    notebook = _notebook(tmp_path / "quick.ipynb", "print('notebook ran')")
    reference = tmp_path / "reference"
    reference.mkdir()
    out, _ = _site_copy(small_run, reference)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kagreport", "site", "build", *_args(small_run, out, notebook)],
        capture_output=True,
        text=True,
        check=False,
    )
    duration = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    new_files = sorted(_tree(out))
    rng = random.Random(10)  # seeded: the same moments (relative to the build's length) each run
    stops: list[float] = []
    finished = 0
    for attempt, (low, high) in enumerate(strata):
        folder = tmp_path / f"try-{attempt}"
        folder.mkdir()
        out, before = _site_copy(small_run, folder)
        sig = rng.choice([signal.SIGTERM, signal.SIGINT])
        # From 5% of the way in: before that Python is still importing the kagreport
        # package, where a Ctrl-C ends in Python's own traceback (as for any program).
        delay = rng.uniform(low * duration, high * duration)
        build = _Build(_args(small_run, out, notebook))
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and build.process.poll() is None:
            build.watch()
            time.sleep(0.02)
        code, _, err, secs = build.stop(sig)
        name = signal.Signals(sig).name
        print(f"try {attempt}: {name} at {delay:.2f} s of {duration:.2f}: exit {code} {secs:.2f} s")
        if _tree(out) != before:  # the stop came after the swap: the new site is whole
            # A signal while the interpreter exits (its handlers are back to the defaults by
            # then) ends the finished process by the signal itself.
            finished += 1
            assert code in (0, EXIT_CODES[sig], -sig), err
            assert "Traceback" not in err, err
            assert sorted(_tree(out)) == new_files
            assert not list(folder.glob(".site.*")), "a build folder was left behind"
            assert not _left_running(build.seen), _left_running(build.seen)
            continue
        stops.append(secs)
        _assert_clean_stop(sig, code, err, out, before, build)
    print(f"longest stop: {max(stops, default=0.0):.2f} s; {finished} builds had finished")
    assert stops, "no try stopped a running build"


# ---------------------------------------------------------------------- in this process


def test_a_stop_between_the_renames_waits_for_the_swap(
    small_run: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C once the old site is moved aside, before the new one is moved in, left no
    site folder at all (the old one sat in a hidden .site.old-* folder)."""
    from kagreport.site import _output

    out, _ = _site_copy(small_run, tmp_path)
    real_rename = os.rename

    def rename(source: Any, target: Any) -> None:
        real_rename(source, target)
        if Path(source) == out:  # the old site is aside: the stop arrives now
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(_output.os, "rename", rename)
    config = SiteConfig(
        title="new", runs=(RunConfig("sim", small_run["datasets"], small_run["results"]),)
    )
    with pytest.raises(KeyboardInterrupt):
        build_site(config, out)
    assert "new" in (out / "index.html").read_text(encoding="utf-8")  # the swap was finished
    assert not list(tmp_path.glob(".site.*")), "a build or old folder was left behind"


def test_deferred_signals_deliver_the_first_stop_after_the_block() -> None:
    from kagreport.site._signals import deferred_signals

    seen: list[int] = []

    def handler(signum: int, frame: object) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        notified: list[int] = []
        with deferred_signals(notified.append):
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGTERM)
            assert seen == []
            assert notified == [signal.SIGTERM]  # once, for the first
        assert seen == [signal.SIGTERM]  # the first, delivered once the block is over
        assert signal.getsignal(signal.SIGTERM) is handler
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with deferred_signals(notified.append):
            signal.raise_signal(signal.SIGTERM)  # ignored signals stay ignored
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        assert notified == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_notebooks_run_inside_a_running_event_loop(tmp_path: Path) -> None:
    """The caller's own loop may run in this thread (Jupyter, Playwright's synchronous API):
    the notebook then runs in a loop of its own in another thread."""
    import asyncio

    from kagreport.site._notebooks import convert_notebook
    from kagreport.site._templates import package_templates

    notebook = _notebook(tmp_path / "inside.ipynb", "print(6 * 7)")

    async def convert() -> str:
        return convert_notebook(
            notebook,
            execute=True,
            template_dirs=[package_templates()],
            header="",
            footer="",
            root="../",
            title="inside",
        )

    # In a thread of its own: in the whole suite, Playwright's synchronous API (the browser
    # tests' session) may already run a loop in the main thread, where asyncio.run refuses.
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        page = pool.submit(asyncio.run, convert()).result(timeout=300)
    assert "42" in page


# ---------------------------------------------------------------------- --history


@pytest.fixture(scope="module")
def history_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twenty run documents (10 systems x 2,000 items): a history build of a second or two
    once its build folder exists (reading the runs, the history, the pages)."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    try:
        from history_scale import write_runs
    finally:
        sys.path.pop(0)
    folder = tmp_path_factory.mktemp("history-signals") / "runs"
    folder.mkdir()
    write_runs(folder, 20, 10, 2000)
    return folder


@pytest.mark.parametrize(
    ("sig", "delay"),
    [(signal.SIGTERM, 0.3), (signal.SIGINT, 0.1)],
    ids=["SIGTERM", "SIGINT"],
)
def test_stop_during_a_history_build(
    sig: int, delay: float, small_run: dict[str, Path], history_folder: Path, tmp_path: Path
) -> None:
    out, before = _site_copy(small_run, tmp_path)
    build = _Build(["--history", str(history_folder), "-o", str(out)])
    build.wait_for(lambda: build.building, "its build folder")
    time.sleep(delay)
    if build.process.poll() is not None:
        pytest.fail(f"the history build ended before the stop: {build.reap()}")
    code, _, err, secs = build.stop(sig)
    print(f"{signal.Signals(sig).name} {delay} s into the build: exit {code} in {secs:.2f} s")
    assert secs < 2.0, f"the stop took {secs:.2f} s"
    _assert_clean_stop(sig, code, err, out, before, build)
