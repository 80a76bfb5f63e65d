"""Speed of ``kagreport stats find`` on SIMULATED kag result trees, beside the real kag's.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_find.py                       # 500 and 2000 questions
    .venv/bin/python benchmarks/bench_find.py --kag /path/to/kag    # with the real kag beside
    .venv/bin/python benchmarks/bench_find.py --questions 8000 --keep

For each size, a tree is written with :func:`kagreport.kag.simulate_run`
(``--datasets`` topic datasets of ``--questions`` scorable questions, every default
setup; kept under ``--work`` with ``--keep`` and reused when its marker matches),
read once whole to warm the page cache (and kagreport run once untimed, which also
writes its byte-code cache as an installed package has it), and then searched ONCE
by each command, in a fresh process, with ``--format json`` (kagreport reads a
large tree with its worker pool, as by default; CPU time counts its workers too):

* **kagreport**: ``<this python> -m kagreport stats -r RESULTS find PATTERN``
  (whatever ``kagreport`` this interpreter imports: run it with another
  ``PYTHONPATH`` for a before/after figure);
* **kag** (with ``--kag``): ``kag stats -r RESULTS find PATTERN``.

Printed: wall time of each (``time.perf_counter`` from spawn to exit) and its CPU
time (user + system, from ``RUSAGE_CHILDREN`` around it: steadier than wall time on a
shared, loaded machine), the ratios kagreport / kag (below 1: kagreport is faster),
the in-process time of :func:`kagreport.find` alone (no interpreter start or
imports), and whether both commands found the same matches (kag's paths are in
file-system order and kagreport's sorted: they are compared as sets).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PATTERN = r"Answer: [a-d]$"


def _tree(work: str, questions: int, datasets: int) -> str:
    from kagreport.kag import simulate_run

    root = os.path.join(work, f"find-{questions}x{datasets}")
    marker = os.path.join(root, "BENCH_FIND_DONE")
    if not os.path.exists(marker):
        simulate_run(root, questions=questions, datasets=datasets)
        with open(marker, "w", encoding="utf-8") as out:
            out.write(f"{questions} {datasets}\n")
    return os.path.join(root, "results")


def _warm(results: str) -> int:
    files = 0
    for folder, _, names in os.walk(results):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                handle.read()
            files += 1
    return files


def _cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: list[str]) -> tuple[float, float, dict[str, object]]:
    """Wall time, CPU time (user + system, the child's own) and the JSON printed."""
    # As an installed package runs: byte-code is cached (written by the untimed warm-up).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cpu = _cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - start
    cpu = _cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed, cpu, json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kag", help="the real kag binary (shared/kag-real builds one)")
    parser.add_argument("--questions", default="500,2000", help="sizes, comma-separated")
    parser.add_argument("--datasets", type=int, default=3)
    parser.add_argument("--pattern", default=PATTERN)
    parser.add_argument("--work", default=None, help="where the trees go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the trees for reruns")
    args = parser.parse_args(argv)

    from kagreport import find

    work = args.work or (
        os.path.join(tempfile.gettempdir(), "kagreport-bench-find")
        if args.keep
        else tempfile.mkdtemp(prefix="bench-find-")
    )
    os.makedirs(work, exist_ok=True)
    print(f"pattern {args.pattern!r}; one run of each; work {work}")
    print(
        f"{'files':>8} {'kagreport s':>12} {'kag s':>8} {'ratio':>6}"
        f" {'CPU s':>6} {'kag CPU':>8} {'ratio':>6} {'find() s':>9}  same"
    )
    try:
        for questions in (int(q) for q in args.questions.split(",")):
            results = _tree(work, questions, args.datasets)
            files = _warm(results)
            ours_cmd = [sys.executable, "-m", "kagreport", "stats", "-r", results, "find"]
            _run([*ours_cmd, "--format", "json", "--", "^$"])
            ours, ours_cpu, doc = _run([*ours_cmd, "--format", "json", "--", args.pattern])
            start = time.perf_counter()
            find(args.pattern, results)
            inside = time.perf_counter() - start
            theirs = ratio = theirs_cpu = cpu_ratio = same = "-"
            if args.kag:
                kag_cmd = [args.kag, "stats", "-r", results, "find", "--format", "json"]
                kag_s, kag_cpu, kag_doc = _run([*kag_cmd, "--", args.pattern])
                theirs, ratio = f"{kag_s:.3f}", f"{ours / kag_s:.2f}"
                theirs_cpu, cpu_ratio = f"{kag_cpu:.3f}", f"{ours_cpu / kag_cpu:.2f}"
                same = str(
                    (kag_doc["matches"], kag_doc["total"]) == (doc["matches"], doc["total"])
                    and set(kag_doc["paths"]) == set(doc["paths"])  # type: ignore[call-overload]
                )
            print(
                f"{files:>8} {ours:>12.3f} {theirs:>8} {ratio:>6} {ours_cpu:>6.3f}"
                f" {theirs_cpu:>8} {cpu_ratio:>6} {inside:>9.3f}  {same}"
            )
    finally:
        if not args.keep and args.work is None:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
