"""Calibration of ``kagreport gate`` by simulation (issue #29's acceptance).

Usage (from the repository root)::

    .venv/bin/python benchmarks/gate_calibration.py [--repeats 1000] [--scale 1 10]

SIMULATED data: per-item probabilities of a right answer are fixed from the bundled REAL
MMLU-Pro philosophy run (each question's share of the six models that got it right, so
items differ in difficulty as in a real benchmark), then candidate and baseline outcomes
are drawn independently, ``--repeats`` times per scenario, at margin 0.02 and alpha 0.05:

(a) true change 0 (the same system): the fail rate must be at most alpha; and true change
    -margin (the non-inferiority boundary): the pass rate must be at most alpha / 2 (the
    one-sided error of a two-sided test at alpha);
(b) true change -2 x margin: the measured fail rate beside the mean power the gate
    predicted (``GateHypothesis.power``).

``--scale k`` repeats the 499 items k times (a benchmark k times larger, the same
difficulties), where the power is no longer small. The candidate's probabilities are the
baseline's times (1 - shift / mean), so the true change is exactly -shift and every
probability stays in [0, 1].
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np


def _probabilities() -> np.ndarray:
    from kagreport import read_run
    from kagreport.examples import mmlu_pro_philosophy

    example = mmlu_pro_philosophy()
    run = read_run(example.results, datasets=example.datasets)
    sums = np.zeros(len(run.question_names))
    counts = np.zeros(len(run.question_names))
    np.add.at(sums, run.question, run.metrics["correct"])
    np.add.at(counts, run.question, 1.0)
    return sums / counts


def _run(system: str, outcomes: np.ndarray):  # type: ignore[no-untyped-def]
    from kagreport.runs import Run

    n = outcomes.size
    return Run(
        kind="answers",
        systems=(system,),
        dataset_names=("sim",),
        question_names=tuple(f"q{i}" for i in range(n)),
        system=np.zeros(n, dtype=np.int32),
        dataset=np.zeros(n, dtype=np.int32),
        question=np.arange(n, dtype=np.int32),
        outcome=np.full(n, -1, dtype=np.int8),
        metrics={"correct": outcomes.astype(np.float64)},
    )


def scenario(p: np.ndarray, shift: float, repeats: int, seed: int) -> dict[str, float]:
    from kagreport.gates import gate

    rng = np.random.default_rng(seed)
    candidate_p = p * (1.0 - shift / p.mean())
    verdicts = {"pass": 0, "fail": 0, "inconclusive": 0}
    powers = []
    start = time.perf_counter()
    for _ in range(repeats):
        base = _run("base", rng.random(p.size) < p)
        cand = _run("cand", rng.random(p.size) < candidate_p)
        result = gate(cand, base, margin=0.02, alpha=0.05)
        verdicts[result.verdict] += 1
        (h,) = result.hypotheses
        powers.append(h.power)
    took = time.perf_counter() - start
    rates = {k: v / repeats for k, v in verdicts.items()}
    return rates | {"power": float(np.nanmean(powers)), "seconds": took}


def _se(rate: float, n: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-12) / n)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1000)
    parser.add_argument("--scale", type=int, nargs="+", default=[1, 10])
    args = parser.parse_args(argv)
    n = args.repeats
    base_p = _probabilities()
    bad = 0
    print("SIMULATED outcomes; per-item probabilities from the REAL MMLU-Pro philosophy run")
    print(f"margin 0.02, alpha 0.05, {n:,} simulated pairs of runs per scenario\n")
    for k in args.scale:
        p = np.tile(base_p, k)
        print(f"{p.size:,} items (mean probability {p.mean():.3f}):")
        null = scenario(p, 0.0, n, seed=1)
        ok = null["fail"] <= 0.05
        bad += not ok
        print(
            f"  (a) true change 0:        fail rate {null['fail']:.4f} (must be <= 0.05)"
            f"{'' if ok else '  BAD'}; pass rate {null['pass']:.3f}  [{null['seconds']:.1f} s]"
        )
        edge = scenario(p, 0.02, n, seed=2)
        ok = edge["pass"] <= 0.025 + 2 * _se(0.025, n)
        bad += not ok
        print(
            f"      true change -margin:  pass rate {edge['pass']:.4f} (must be <= 0.025, "
            f"±{_se(0.025, n):.4f} by chance){'' if ok else '  BAD'}; fail rate "
            f"{edge['fail']:.4f}"
        )
        regression = scenario(p, 0.04, n, seed=3)
        print(
            f"  (b) true change -2 margin: fail rate {regression['fail']:.3f} "
            f"(±{_se(regression['fail'], n):.3f}); predicted power {regression['power']:.3f}\n"
        )
    print(f"{bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
