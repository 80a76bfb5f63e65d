"""Time ``evaluation_from_stats`` over every setup of a graded run (issue #10 item 6).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_bridge.py   # 29 setups x 3 x 1,000 questions
    .venv/bin/python benchmarks/bench_bridge.py --questions 200   # smaller run

Writes a SIMULATED run (no model was run; 29 setups, half native and half KAG, 8-float
vectors) to ``benchmarks/_data/bridge-<questions>`` (git-ignored; reused when present),
grades it, then times the conversion of every setup, with ``answers=False`` (the table
alone) and ``answers=True`` (each result file read again for its response). It also
checks that every setup's ``metrics["correct"]`` equals its accuracy bit for bit and
exits 1 if one does not. Only uses public functions, so it runs against older versions
of the package too (for a before/after comparison).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000, help="per dataset (3 datasets)")
    args = parser.parse_args(argv)
    from kagreport import grade
    from kagreport.evaluation import evaluation_from_stats
    from kagreport.kag import SimulatedSetup, simulate_run

    root = Path(__file__).resolve().parent / "_data" / f"bridge-{args.questions}"
    if not (root / "datasets.json").is_file():
        setups = [
            SimulatedSetup(f"setup-{i:02d}", "m", 0.4 + 0.015 * i, 0.03, i % 2 == 0, 1.0)
            for i in range(29)
        ]
        simulate_run(root, questions=args.questions, datasets=3, setups=setups, vector_dim=8)
    report = grade(root / "datasets.json", root / "results")
    print(f"{len(report.items)} graded results, {len(report.setups)} setups")
    failed = 0
    for answers in (False, True):
        start = time.perf_counter()
        evaluations = {
            s: evaluation_from_stats(report, s, answers=answers) for s in report.setup_names
        }
        seconds = time.perf_counter() - start
        wrong = [
            s for s, e in evaluations.items() if e.metrics["correct"] != report[s].overall.accuracy
        ]
        failed += len(wrong)
        print(
            f"answers={answers}: {seconds:.2f} s for all setups; accuracy differs in {len(wrong)}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
