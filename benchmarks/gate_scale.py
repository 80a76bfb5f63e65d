"""Time ``kagreport gate`` on 1,000,000 paired items (issue #29: within 5 s).

Usage (from the repository root)::

    .venv/bin/python benchmarks/gate_scale.py [--items 1000000]

SIMULATED 0/1 outcomes (p = 0.6, candidate and baseline independent). Times (1) the gate
on two ``Run`` objects built in memory, one system, one dataset (one hypothesis), and with
the items split over 10 datasets (10 hypotheses, Holm); (2) the command line on two
kagreport.run documents written to a temporary folder, with the time to read one document
alone beside it (what the command spends outside the gate). Exits 1 if (1) takes 5 s or
more.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LIMIT = 5.0


def _run(system: str, outcomes: np.ndarray, datasets: int):  # type: ignore[no-untyped-def]
    from kagreport.runs import Run

    n = outcomes.size
    return Run(
        kind="answers",
        systems=(system,),
        dataset_names=tuple(f"d{k}" for k in range(datasets)),
        question_names=tuple(f"q{i}" for i in range(n)),
        system=np.zeros(n, dtype=np.int32),
        dataset=(np.arange(n) % datasets).astype(np.int32),
        question=np.arange(n, dtype=np.int32),
        outcome=np.full(n, -1, dtype=np.int8),
        metrics={"correct": outcomes.astype(np.float64)},
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    from kagreport.gates import gate
    from kagreport.runs import Run

    rng = np.random.default_rng(0)
    n = args.items
    base_outcomes, cand_outcomes = rng.random(n) < 0.6, rng.random(n) < 0.6
    bad = 0
    print(f"SIMULATED: {n:,} paired 0/1 items")
    for datasets in (1, 10):
        base, cand = _run("s", base_outcomes, datasets), _run("s", cand_outcomes, datasets)
        start = time.perf_counter()
        result = gate(cand, base)
        took = time.perf_counter() - start
        methods = sorted({h.method for h in result.hypotheses})
        bad += took >= LIMIT
        print(
            f"  in memory, {datasets:2} dataset(s): {took:.2f} s ({result.verdict}, "
            f"{len(result.hypotheses)} hypotheses, {', '.join(methods)})"
            f"{'  BAD' if took >= LIMIT else ''}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "cand.json", Path(tmp) / "base.json"
        _run("s", cand_outcomes, 1).write(a)
        _run("s", base_outcomes, 1).write(b)
        start = time.perf_counter()
        Run.read(a)
        read = time.perf_counter() - start
        command = [sys.executable, "-m", "kagreport", "gate", str(a), "--baseline", str(b)]
        command += ["-o", str(Path(tmp) / "out")]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        took = time.perf_counter() - start
        print(
            f"  command line on two kagreport.run documents: {took:.2f} s (exit "
            f"{done.returncode}); reading one document alone: {read:.2f} s"
        )
    print(f"{bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
