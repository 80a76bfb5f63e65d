"""``kagreport stats`` and ``stats find`` against the real kag on one tree, in one run.

Usage (from the repository root; the tree holds ``datasets.json`` and ``results/``, e.g. one
that ``benchmarks/bench_stats.py --keep`` or ``kagreport simulate`` wrote)::

    .venv/bin/python benchmarks/race_kag.py --kag /path/to/kag --tree benchmarks/_data/stats-100000

The four commands run in turn, ``--repeats`` rounds (interleaved, so a change of load hits
both tools alike), each in a fresh process with its output discarded; printed are the
median wall time (spawn to exit) and CPU time (user + system of the child, from
``os.wait4``) of each, and kag / kagreport (above 1: kagreport is faster). Without
``--kag`` it prints a note and exits 0 (``../shared/kag-real`` builds a kag binary).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _run(command: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kag", help="the real kag binary")
    parser.add_argument("--tree", type=Path, required=True, help="holds datasets.json, results/")
    parser.add_argument("--pattern", default="cannot", help="find's pattern (default: cannot)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.kag:
        print("no --kag given: nothing to race (../shared/kag-real builds kag)")
        return 0
    datasets, results = str(args.tree / "datasets.json"), str(args.tree / "results")
    stats = ["stats", "-d", datasets, "-r", results, "--format", "json"]
    find = ["stats", "-r", results, "find", args.pattern, "--format", "json"]
    ours = [sys.executable, "-m", "kagreport"]
    commands = {
        ("stats", "kag"): [args.kag, *stats],
        ("stats", "kagreport"): [*ours, *stats],
        ("find", "kag"): [args.kag, *find],
        ("find", "kagreport"): [*ours, *find],
    }
    times: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in commands}
    for _ in range(args.repeats):
        for key, command in commands.items():
            times[key].append(_run(command))
    median = {
        key: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for key, v in times.items()
    }
    print(f"tree {args.tree}; medians of {args.repeats} interleaved rounds; {os.cpu_count()} CPUs")
    for (what, tool), (wall, cpu) in median.items():
        print(f"  {what:5s} {tool:9s}  wall {wall:7.3f} s   CPU {cpu:7.3f} s")
    for what in ("stats", "find"):
        (kw, kc), (ow, oc) = median[(what, "kag")], median[(what, "kagreport")]
        print(f"{what}: kag / kagreport = {kw / ow:.2f}x wall, {kc / oc:.2f}x CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
