"""``kagreport stats`` and ``stats find`` against the real kag and the C read floor, in one run.

Usage (from the repository root; the tree holds ``datasets.json`` and ``results/``, e.g. one
that ``benchmarks/bench_stats.py --keep`` or ``kagreport simulate`` wrote)::

    .venv/bin/python benchmarks/race_kag.py --kag /path/to/kag --tree benchmarks/_data/stats-100000

Five commands run in turn, ``--repeats`` rounds (interleaved, so a change of load hits every
tool alike), each in a fresh process: kag's and kagreport's ``stats --format json`` and
``stats find PATTERN --format json``, and the C floor (``bench_stats.C_FLOOR_SOURCE``, compiled
here with ``cc -O2``: ``nftw`` and ``read()`` of every file, one thread). Printed: the median
wall time (spawn to exit) and CPU time (user + system of the child and its workers, from
``os.wait4``) of each, the load average before and after, and the two targets of issue #31:
kag / kagreport for ``stats`` and ``find`` (above 1: kagreport is faster; the target for
``find`` is 1.5) and kagreport / C floor for ``stats`` (target: at most 1.5). The outputs are
checked: ``stats`` byte for byte against kag's, ``find``'s paths as a set (kag prints them in
file-system order, kagreport sorted) and its counts; the run fails (exit 1) on a difference.
Without ``--kag`` only the floor ratio is measured. The children get a bytecode cache as an
installed package has (``bench_stats.child_env``). ``--baseline SRC`` adds another version of
kagreport (its ``src`` folder) to the rounds, for a before/after figure under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench_stats: a sibling script
from bench_stats import c_floor_argv, child_env

#: As an installed package runs: with a bytecode cache (see ``bench_stats.child_env``).
_ENV = child_env()


def _run(command: list[str], out: str, env: dict[str, str] = _ENV) -> tuple[float, float]:
    with open(out, "wb") as stdout:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=stdout, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"race_kag: {command} exited with status {status}")
    return wall, usage.ru_utime + usage.ru_stime


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _same(what: str, kag: bytes, ours: bytes) -> bool:
    if what == "stats":
        return kag == ours
    a, b = json.loads(kag), json.loads(ours)
    return (a["matches"], a["total"], sorted(a["paths"])) == (
        b["matches"],
        b["total"],
        b["paths"],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kag", help="the real kag binary")
    parser.add_argument("--tree", type=Path, required=True, help="holds datasets.json, results/")
    parser.add_argument("--pattern", default="cannot", help="find's pattern (default: cannot)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--baseline",
        metavar="SRC",
        help="also time the kagreport whose package is in SRC (its `src` folder, e.g. from "
        "`git archive REV src`), interleaved: a before/after figure on the same load",
    )
    args = parser.parse_args()
    datasets, results = str(args.tree / "datasets.json"), str(args.tree / "results")
    stats = ["stats", "-d", datasets, "-r", results, "--format", "json"]
    find = ["stats", "-r", results, "find", args.pattern, "--format", "json"]
    ours = [sys.executable, "-m", "kagreport"]
    work = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data", "c-floor")
    floor, label = c_floor_argv(work)
    commands = {("stats", "kagreport"): [*ours, *stats], ("floor", "C"): [*floor, results]}
    if args.kag:
        commands[("stats", "kag")] = [args.kag, *stats]
        commands[("find", "kag")] = [args.kag, *find]
        commands[("find", "kagreport")] = [*ours, *find]
    else:
        print("no --kag given: only the floor ratio (../shared/kag-real builds kag)")
    envs = {key: _ENV for key in commands}
    if args.baseline:
        base = {**_ENV, "PYTHONPATH": os.path.abspath(args.baseline)}
        for what, command in (("stats", stats), ("find", find)):
            if (what, "kagreport") in commands:
                commands[(what, "baseline")] = [*ours, *command]
                envs[(what, "baseline")] = base
    times: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in commands}
    load_before = _load()
    with tempfile.TemporaryDirectory() as scratch:
        outputs = {key: os.path.join(scratch, "-".join(key)) for key in commands}
        for key, command in commands.items():  # untimed: page cache, bytecode caches
            _run(command, outputs[key], envs[key])
        for _ in range(args.repeats):
            for key, command in commands.items():
                times[key].append(_run(command, outputs[key], envs[key]))
        printed = {key: Path(path).read_bytes() for key, path in outputs.items()}
    load_after = _load()
    median = {
        key: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for key, v in times.items()
    }
    print(f"tree {args.tree}; medians of {args.repeats} interleaved rounds; {os.cpu_count()} CPUs")
    print(f"load average (1, 5, 15 min): before {load_before}, after {load_after}")
    print(label)
    for (what, tool), (wall, cpu) in median.items():
        print(f"  {what:5s} {tool:9s}  wall {wall:7.3f} s   CPU {cpu:7.3f} s")
    ok = True
    if args.kag:
        for what in ("stats", "find"):
            (kw, kc), (ow, oc) = median[(what, "kag")], median[(what, "kagreport")]
            same = _same(what, printed[(what, "kag")], printed[(what, "kagreport")])
            ok &= same
            print(
                f"{what}: kag / kagreport = {kw / ow:.2f}x wall, {kc / oc:.2f}x CPU; "
                f"output {'identical' if same else 'DIFFERENT'}"
            )
        for what in ("stats", "find"):
            if (what, "baseline") in median:
                (bw, bc), (ow, oc) = median[(what, "baseline")], median[(what, "kagreport")]
                same = printed[(what, "baseline")] == printed[(what, "kagreport")]
                ok &= same
                print(
                    f"{what}: baseline / kagreport = {bw / ow:.2f}x wall, {bc / oc:.2f}x CPU; "
                    f"output {'identical' if same else 'DIFFERENT'}"
                )
    ow, fw = median[("stats", "kagreport")][0], median[("floor", "C")][0]
    print(f"stats: kagreport / C floor = {ow / fw:.2f}x wall (target: at most 1.5x)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
