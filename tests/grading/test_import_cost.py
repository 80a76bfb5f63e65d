"""What ``kagreport stats`` and ``stats find`` import: a module they never use costs every run.

NumPy (about 0.1 s to import, a third of the time the 50,000-file benchmark tree takes to
read in C) is needed only with a grade store; asyncio only for a remote tree; hashlib (OpenSSL's
start-up) only with a grade store (issue #31).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import Tree, mcq

REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import os, runpy, sys
def loaded():
    heavy = ("numpy", "asyncio", "hashlib")
    print("LOADED", *sorted(m for m in heavy if m in sys.modules), file=sys.stderr, flush=True)
end = os._exit
def _exit(code):  # a finished `stats` ends its process at once (cli._stop.end_process)
    loaded()
    end(code)
os._exit = _exit
sys.argv[0] = "kagreport"
try:
    runpy.run_module("kagreport", run_name="__main__")
except SystemExit:
    pass
loaded()
"""


def _loaded(*args: str) -> list[str]:
    env = dict(os.environ)
    src = str(REPO / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.startswith("LOADED")]
    assert lines, done.stderr
    return lines[-1].split()[1:]


def test_stats_and_find_import_neither_numpy_asyncio_nor_hashlib(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "base", "A")
    datasets, results = str(tree.root / "datasets.json"), str(tree.results)
    assert _loaded("stats", "-d", datasets, "-r", results, "--format", "json") == []
    assert _loaded("stats", "-r", results, "find", "A", "--format", "json") == []
