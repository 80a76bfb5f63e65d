"""The history at scale: 100 runs x 20 systems x 5,000 items, ``site build --history``.

Usage (from the repository root)::

    .venv/bin/python benchmarks/history_scale.py              # 100 runs x 20 x 5,000
    .venv/bin/python benchmarks/history_scale.py --runs 20    # smaller

Writes the runs as ``kagreport.run`` documents into a temporary folder, each with a recorded
time (``metadata["created"]``, a day apart) and SIMULATED outcomes: each item has a
difficulty (a logit drawn once, shared by every run and system) and each system an ability
that drifts a little from run to run (a few systems take a real step up or down now and
then), so the paired tests see the correlation real reruns have. No model was run.

Measures, each in a child process (imports included, as for the CLI):

* ``kagreport site build --history DIR -o OUT``: wall time and peak resident memory;
* :func:`kagreport.runs.history` of the runs read with :func:`kagreport.sources.read_run`:
  wall time of reading and of the history alone, and the peak memory.

Target (issue 29): the build within 60 s on the 2-core machine. Exit status 0 when met.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

TARGET_SECS = 60.0

_HISTORY_ALONE = """
import resource, sys, time
from pathlib import Path
from kagreport.sources import read_run
from kagreport.runs import history
t = time.perf_counter()
runs = {p.stem: read_run(p) for p in sorted(Path(sys.argv[1]).iterdir())}
t_read = time.perf_counter() - t
t = time.perf_counter()
frame = history(runs)
t_history = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{t_read:.2f} {t_history:.2f} {len(frame)} {int(frame['significant'].sum())} {peak:.0f}")
"""


def write_runs(folder: Path, n_runs: int, n_systems: int, n_items: int, seed: int = 0) -> None:
    """``n_runs`` kagreport.run documents of SIMULATED outcomes into ``folder``."""
    from kagreport.runs import Run

    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.5, n_items)
    ability = rng.normal(0.8, 0.8, n_systems)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    systems = tuple(f"system-{s:02d}" for s in range(n_systems))
    questions = tuple(f"q{i:05d}" for i in range(n_items))
    codes = np.repeat(np.arange(n_systems), n_items).astype(np.int32)
    question = np.tile(np.arange(n_items), n_systems).astype(np.int32)
    for k in range(n_runs):
        ability = ability + rng.normal(0.0, 0.02, n_systems)
        step = rng.random(n_systems) < 0.03  # now and then a real change
        ability = ability + step * rng.choice([-0.4, 0.4], n_systems)
        logit = ability[:, None] - difficulty[None, :]
        correct = (rng.random((n_systems, n_items)) < 1.0 / (1.0 + np.exp(-logit))).ravel()
        values = correct.astype(np.float64)
        created = (start + timedelta(days=k)).isoformat().replace("+00:00", "Z")
        run = Run(
            kind="answers",
            systems=systems,
            dataset_names=("bench",),
            question_names=questions,
            system=codes,
            dataset=np.zeros(len(values), dtype=np.int32),
            question=question,
            outcome=np.where(correct, 0, 1).astype(np.int8),
            metrics={"correct": values},
            metadata={"tool": "SIMULATED", "created": created, "simulated": True},
        )
        run.write(folder / f"run-{k:03d}.json")


def _measured(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB of the largest child so far, its stdout) of ``command``
    (run first, the build's own peak)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is the largest of them: the earlier ones were smaller or it
    # would show theirs; it is in KiB on Linux.
    return wall, max(peak, before) / 1024, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--items", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kagreport-history-") as tmp:
        folder = Path(tmp) / "runs"
        folder.mkdir()
        start = time.perf_counter()
        write_runs(folder, args.runs, args.systems, args.items)
        size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
        print(
            f"wrote {args.runs} runs x {args.systems} systems x {args.items:,} items "
            f"({size:.0f} MiB) in {time.perf_counter() - start:.1f} s"
        )
        env_python = sys.executable
        wall, peak, _ = _measured(
            [env_python, "-m", "kagreport", "site", "build", "--history", str(folder),
             "-o", str(Path(tmp) / "site")]
        )  # fmt: skip
        pages = len(list((Path(tmp) / "site" / "history").glob("*.html")))
        print(f"site build --history: {wall:.1f} s, peak {peak:.0f} MiB, {pages} history pages")
        alone_wall, _, out = _measured([env_python, "-c", _HISTORY_ALONE, str(folder)])
        read, hist, rows, marked, alone_peak = out.split()
        print(
            f"read_run x {args.runs}: {read} s; runs.history alone: {hist} s "
            f"({rows} rows, {marked} significant changes); process {alone_wall:.1f} s, "
            f"peak {alone_peak} MiB"
        )
        met = wall <= TARGET_SECS
        verdict = "PASS" if met else "MISS"
        print(f"{verdict}: build within {TARGET_SECS:.0f} s ({os.cpu_count()} cores)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
