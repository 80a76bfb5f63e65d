"""Speed of the clustered statistics of issue #28 at leaderboard scale.

Usage (from the repository root)::

    .venv/bin/python benchmarks/stats_scale.py               # 100 systems x 10,000 items x 5
    .venv/bin/python benchmarks/stats_scale.py --items 1000  # smaller run
    .venv/bin/python benchmarks/stats_scale.py --runs 5      # more timed runs on a noisy host

The data are SIMULATED (no model was run), seeded: each item has a difficulty drawn from
Beta(2, 2), each system a skill; a trial succeeds with probability
``clip(difficulty + skill, 0, 1)``, so the repeats of an item are correlated (the design
effect is well above 1) and systems differ a little.

One timed run computes, for every system,

* ``clustered_mean(values, clusters)``: its 0/1 scores (items x trials values) with the
  item as the cluster (CR1 standard error, t interval on G - 1 degrees of freedom);
* ``paired_difference(a, b, clusters)`` against the next system in the list (99 pairs for
  100 systems): the paired t test on per-item mean differences;
* ``pass_at_k`` and ``pass_hat_k`` for k = 1 .. trials, from per-item success counts;
* ``power``, ``minimum_detectable_effect`` and ``required_sample_size`` of each pair
  (variance: the pair's discordance rate on the first trial);

and once for the run:

* ``tie_groups`` and ``rank_sets`` of the items x systems 0/1 matrix (first trial);
* ``ppi_mean`` of the first system's mean with the second's scores as the judge and
  1,000 items (or a tenth, if fewer) as the human-labelled subset.

It first calls each function once, untimed, on a small slice (imports, SciPy's first
load), then times ``--runs`` runs with ``time.perf_counter`` and prints the minimum and
median of each part and of the total, and PASS or MISS against the issue's 2 s for all
of #28 at 100 x 10,000 x 5 (every statistic of the issue, items 1 to 6). The exit status
is 1 on a MISS.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from kagreport.stats import (
    clustered_mean,
    minimum_detectable_effect,
    paired_difference,
    power,
    ppi_mean,
    rank_sets,
    required_sample_size,
)
from kagreport.stats._passk import pass_at_k, pass_hat_k
from kagreport.stats._ranks import tie_groups

#: The issue's budget for all of #28 at 100 systems x 10,000 items x 5 repeats (seconds).
TARGET = 2.0


def simulate(systems: int, items: int, trials: int, seed: int = 0) -> np.ndarray:
    """0/1 outcomes, shape (systems, items, trials)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2.0, 2.0, size=items)
    skill = rng.normal(0.0, 0.05, size=systems)
    chance = np.clip(difficulty[None, :] + skill[:, None], 0.0, 1.0)
    draws = rng.random((systems, items, trials))
    return (draws < chance[:, :, None]).astype(np.float64)


def one_run(outcomes: np.ndarray) -> dict[str, float]:
    """Seconds spent in each part of one pass over every system."""
    systems, items, trials = outcomes.shape
    clusters = np.repeat(np.arange(items), trials)
    flat = outcomes.reshape(systems, items * trials)
    successes = outcomes.sum(axis=2).astype(np.int64)
    per_item_trials = np.full(items, trials)
    spent = {
        "clustered_mean": 0.0,
        "paired_difference": 0.0,
        "pass_at_k + pass_hat_k": 0.0,
        "power + MDE + n needed": 0.0,
    }
    first = outcomes[:, :, 0]
    for s in range(systems):
        start = time.perf_counter()
        clustered_mean(flat[s], clusters)
        middle = time.perf_counter()
        if s + 1 < systems:
            paired_difference(flat[s], flat[s + 1], clusters)
        end = time.perf_counter()
        for k in range(1, trials + 1):
            pass_at_k(successes[s], per_item_trials, k)
            pass_hat_k(successes[s], per_item_trials, k)
        spent["clustered_mean"] += middle - start
        spent["paired_difference"] += end - middle
        spent["pass_at_k + pass_hat_k"] += time.perf_counter() - end
        start = time.perf_counter()
        if s + 1 < systems:
            discordance = float(np.mean(first[s] != first[s + 1]))
            effect = float(np.mean(first[s]) - np.mean(first[s + 1]))
            if discordance > 0:
                power(effect, discordance, items)
                minimum_detectable_effect(discordance, items)
                required_sample_size(discordance, 0.01)
        spent["power + MDE + n needed"] += time.perf_counter() - start
    names = [f"system-{s:03d}" for s in range(systems)]
    start = time.perf_counter()
    tie_groups(first.T, names)
    middle = time.perf_counter()
    rank_sets(first.T, names)
    end = time.perf_counter()
    labelled = max(1, min(1000, items // 10))
    ppi_mean(first[0, :labelled], first[1 % systems, :labelled], first[1 % systems, labelled:])
    spent["tie_groups"] = middle - start
    spent["rank_sets"] = end - middle
    spent["ppi_mean"] = time.perf_counter() - end
    spent["total"] = sum(spent.values())
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=5, help="repeats of each item")
    parser.add_argument("--runs", type=int, default=3, help="timed runs")
    args = parser.parse_args(argv)

    outcomes = simulate(args.systems, args.items, args.trials)
    one_run(outcomes[:2, : min(args.items, 100)])  # untimed: imports, SciPy's first load
    runs = [one_run(outcomes) for _ in range(args.runs)]

    shape = f"{args.systems} systems x {args.items:,} items x {args.trials} trials"
    print(f"kagreport.stats (#28) on {shape} (simulated), {args.runs} runs")
    for part in runs[0]:
        times = [run[part] for run in runs]
        print(f"  {part:<24} min {min(times):7.3f} s   median {statistics.median(times):7.3f} s")
    example = clustered_mean(outcomes[0].ravel(), np.repeat(np.arange(args.items), args.trials))
    print(f"  (system 0: mean {example.mean:.4f}, design effect {example.design_effect:.2f})")
    best = min(run["total"] for run in runs)
    at_scale = (args.systems, args.items, args.trials) == (100, 10_000, 5)
    if not at_scale:
        print(f"  total {best:.3f} s (the {TARGET:.0f} s target is for 100 x 10,000 x 5)")
        return 0
    verdict = "PASS" if best <= TARGET else "MISS"
    print(f"  {verdict}: total {best:.3f} s against {TARGET:.1f} s")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
