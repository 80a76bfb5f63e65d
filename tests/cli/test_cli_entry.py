"""The ``kagreport`` console command as pip installs it: Ctrl-C while it loads, missing deps.

The console-script wrapper imports its entry module outside any ``try``; a Ctrl-C there, or
a core dependency that cannot be imported, must still end in one line and an exit code.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import Tree, mcq

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
MODULE, _, FUNCTION = PYPROJECT["project"]["scripts"]["kagreport"].partition(":")

# What pip writes as bin/kagreport (pip's distlib script template), with a prelude.
WRAPPER = """{prelude}
import re
import sys
from {module} import {function}
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit({function}())
"""

# Stops the import of module TARGET: says "ready" on stdout, then waits (at most 30 s)
# until the test has sent its SIGINT (it then makes the file SENT): the signal is held until
# the command line has loaded, or, once its handlers are set, arrives as KeyboardInterrupt
# inside that import.
HOLD = """
import importlib.abc, os, sys, time
TARGET, SENT = {target!r}, {sent!r}
class Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == TARGET:
            sys.meta_path.remove(self)
            sys.stdout.write("ready\\n"); sys.stdout.flush()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not os.path.exists(SENT):
                time.sleep(0.01)
            if not os.path.exists(SENT):
                sys.stderr.write("no SIGINT came\\n")
        return None
sys.meta_path.insert(0, Hold())
"""


def _wrapper(prelude: str) -> str:
    return WRAPPER.format(prelude=prelude, module=MODULE, function=FUNCTION)


def _command(tree: Tree, package: str) -> list[str]:
    # `stats find` needs ry (and msgspec), the demo NumPy, grading msgspec.
    if package == "ry":
        return ["stats", "find", "A", "-r", str(tree.results)]
    if package == "numpy":
        return ["demo"]
    return ["stats", "-d", str(tree.datasets_path), "-r", str(tree.results)]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env["PYTHONPATH"]]) if "PYTHONPATH" in env else src
    return env


@pytest.fixture
def run_tree(tree: Tree) -> Tree:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "s", "A")
    return tree


# Early moments: while the command line's modules and the core dependencies import (before
# kagreport.cli._main.main sets its handlers), and one import inside the command (ry, at the
# regex), after.
MOMENTS = ["kagreport.cli", "argparse", "kagreport.cli._main", "kagreport.grading", "msgspec",
           "numpy", "kagreport.cli._evaluation", "ry"]  # fmt: skip


@pytest.mark.parametrize("target", MOMENTS)
def test_ctrl_c_while_the_command_loads_is_one_line_and_exit_130(
    target: str, run_tree: Tree
) -> None:
    sent = run_tree.root / "sent"
    script = _wrapper(HOLD.format(target=target, sent=str(sent)))
    argv = [sys.executable, "-c", script, *_command(run_tree, target)]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == "ready\n"  # the import is held: a known moment
            child.send_signal(signal.SIGINT)
            sent.touch()
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
    assert (child.returncode, err) == (130, "kagreport: interrupted\n"), err
    assert out == ""


def test_the_entry_module_imports_nothing_heavy() -> None:
    code = (
        f"import sys, {MODULE};"
        "print(sorted(m for m in ('argparse', 'msgspec', 'numpy', 'ry', 'kagreport.cli')"
        " if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("package", ["msgspec", "numpy", "ry"])
def test_a_missing_core_dependency_is_one_line(package: str, run_tree: Tree) -> None:
    # None in sys.modules: "import <package>" raises ModuleNotFoundError, as if not installed.
    script = _wrapper(f"import sys; sys.modules[{package!r}] = None")
    done = subprocess.run(
        [sys.executable, "-c", script, *_command(run_tree, package)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"kagreport: error: the package {package} "), done.stderr
    assert "pip install kagreport" in done.stderr
    assert done.stdout == ""


def test_core_dependencies_are_the_projects() -> None:
    from kagreport._entry import CORE_DEPENDENCIES

    declared = {re.split(r"[<>=!~ \[;]", spec, maxsplit=1)[0].lower().replace("-", "_")
                for spec in PYPROJECT["project"]["dependencies"]}  # fmt: skip
    assert set(CORE_DEPENDENCIES) == declared


_IRI_CHECKS = r"""
import sys
if sys.argv[1] == "deferred":
    from kagreport._optional import defer_iri_grammar

    defer_iri_grammar()
elif sys.argv[1] == "site":  # the cell the site runs first in each notebook's kernel
    exec(sys.argv[2])
import altair, jsonschema  # what a command that draws a chart imports
before = "rfc3987_syntax.syntax_helpers" in sys.modules  # its parsers built
check = jsonschema.FormatChecker()
verdicts = [check.conforms(text, "iri") for text in ("http://a.example/ä", "http://a b", "x")]
print(before, verdicts, "rfc3987_syntax.syntax_helpers" in sys.modules)
"""


def test_the_iri_grammar_is_built_at_its_first_use_with_the_same_verdicts() -> None:
    # rfc3987-syntax builds its parsers as it is imported (1.4 s); the command line defers
    # that to the first use, which then gives the verdicts the real module gives.
    pytest.importorskip("rfc3987_syntax")
    from kagreport.site._notebooks import SETUP_SOURCE

    out = {}
    for mode in ("deferred", "direct", "site"):
        done = subprocess.run(
            [sys.executable, "-c", _IRI_CHECKS, mode, SETUP_SOURCE],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        out[mode] = done.stdout.split(" ", 1)
    assert out["direct"] == ["True", "[True, False, False] True\n"]  # the module's own answers
    assert out["deferred"] == ["False", "[True, False, False] True\n"]
    assert out["site"] == out["deferred"]  # and in the kernels that run a site's notebooks


# Registered in the command's process: the interpreter's teardown runs atexit callbacks.
_TEARDOWN = 'import atexit, sys; atexit.register(lambda: sys.stderr.write("TEARDOWN\\n"))'


@pytest.mark.parametrize(
    "args",
    [
        ["-d", "{d}", "-r", "{r}", "--format", "json", "-vv"],
        ["-d", "{d}", "-r", "{r}", "--workers", "2", "-vv"],
        ["-r", "{r}", "find", "A", "--format", "json"],
        ["-r", "{r}", "find", "A"],
        ["-r", "{r}", "find", "no-such-text"],
    ],
)
def test_a_finished_stats_ends_its_process_at_once_with_its_output_whole(
    tree: Tree, args: list[str]
) -> None:
    for q in range(40):
        tree.question("ds", f"q{q}", mcq("A"))
        for setup in ("s", "t"):
            tree.ok("ds", f"q{q}", setup, "A" if q % 3 else "B")
    answered_a = 2 * sum(1 for q in range(40) if q % 3)  # files whose response is "A"
    argv = [a.format(d=tree.datasets_path, r=tree.results) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", _wrapper(_TEARDOWN), "stats", *argv],
        capture_output=True, text=True, env=_env(), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The teardown (freeing every object, atexit callbacks) is skipped; what was written is
    # whole: the report, the logs (-vv), find's summary.
    assert "TEARDOWN" not in done.stderr
    if "find" not in args:
        assert "kagreport: INFO: read 80 result files" in done.stderr
        if "json" in args:
            assert len(json.loads(done.stdout)["setups"]) == 2
        else:
            assert "Datasets: 1 | Scorable questions: 40" in done.stdout
    elif "json" in args:
        assert json.loads(done.stdout)["matches"] == answered_a
    elif "A" in args:
        assert len(done.stdout.splitlines()) == answered_a
        assert f"{answered_a} occurrence(s) out of 80" in done.stderr  # the summary
    else:
        assert done.stdout == ""
        assert done.stderr.strip()  # "no match" summary


def test_a_command_on_dask_or_called_in_a_process_takes_the_usual_way_out(tree: Tree) -> None:
    from kagreport.cli._main import main

    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "s", "A")
    # main() called with arguments (a caller's process, a test): it returns.
    assert main(["stats", "-d", str(tree.datasets_path), "-r", str(tree.results), "-q"]) == 0
