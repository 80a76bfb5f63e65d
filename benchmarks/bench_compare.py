"""Speed and memory of the paired comparison against ``scipy.stats.permutation_test``.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_compare.py                  # 100,000 items, 10,000 resamples
    .venv/bin/python benchmarks/bench_compare.py --items 20000    # smaller run
    .venv/bin/python benchmarks/bench_compare.py --skip-scipy     # ours only (scipy takes minutes)

Three SIMULATED data sets of paired per-item scores (no model was run), all seeded:

* **binary**: 0/1 correctness of a baseline (60% right) and a candidate whose
  outcome is redrawn (61% right) on a random 12% of the items (differences in
  {-1, 0, 1}): the p-value is exact (``method`` "exact-lattice", the binomial), and
  is checked against ``scipy.stats.binomtest`` on the discordant pairs;
* **likert**: a 1-5 judge score mapped to [0, 1] as (s - 1) / 4, the candidate's
  redrawn (slightly better) on a random 30% of the items: differences are multiples
  of 1/4, and the p-value is exact by convolution on that lattice;
* **continuous**: scores in [0, 1] (Beta(2, 2)) and a candidate = baseline +
  N(0.0005, 0.1), clipped (practically every difference distinct and non-zero).

For each, on the SAME differences, it measures

* ``sign_flip_test(d, n_resamples=R)``;
* ``compare_items(candidate, baseline, kind="answers", n_resamples=R)`` on two small
  objects with ``.items`` (``AnswerItem``), ``.judges`` and ``.metadata``: pairing by
  identifier, building the score columns, the sign-flip test AND the bootstrap interval;
* ``scipy.stats.permutation_test((d,), statistic=np.mean, permutation_type="samples",
  vectorized=True, n_resamples=R, alternative="two-sided", rng=0, batch=B)``. ``batch``
  only sets how many resamples scipy evaluates at once; without it scipy builds all R
  resamples in one (R, n, 2) index array, 16 GB at the default size.

Every measurement runs in a fresh child process (``sys.executable`` running this file
with ``--child``), so no measurement inherits another's caches or memory. In the child,
time is ``time.perf_counter`` around the call alone (data generation and building the
items are not timed); ours is called once untimed on a 1,000-item slice first (imports
and first-call costs), then ``--repeats`` times, and the minimum and median are printed;
scipy runs once. Memory of ours is measured twice, in separate fresh children:

* **traced peak**: ``tracemalloc`` peak of the call alone (numpy reports its buffers to
  tracemalloc), i.e. the extra memory the call needs beyond its inputs;
* **RSS growth**: the child's ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` after the call
  minus before it (high-water mark of the whole process, which already includes the data).

Each timing line names the method of the p-value (exact-lattice or monte-carlo): the
binary and likert lines are the time of an EXACT comparison at ``--items`` items.

Finally it checks that ours and scipy give the same exact p-value where both enumerate
every assignment: the first 12 non-zero differences of each data set and its first two
zeros (if any), ours with ``n_resamples=2**len`` and scipy with ``n_resamples=np.inf``
(scipy flips the zeros too, which changes no share). The exit status is 1 if an exact
p-value differs (binary: also from binomtest by more than 1e-9 relative) or ours is
less than 5x faster than scipy (when scipy ran), else 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

__all__ = ["main"]

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_SPEEDUP = 5.0
SCIPY_BATCH = 250
EXACT_NONZERO = 12
KINDS = ("binary", "likert", "continuous")
SEEDS = {"binary": 20240611, "continuous": 20240612, "likert": 20240613}


# --------------------------------------------------------------------------- data


def simulate(kind: str, n: int) -> tuple[Any, Any]:
    """Seeded (baseline, candidate) score arrays of length ``n``."""
    import numpy as np

    rng = np.random.default_rng(SEEDS[kind])
    if kind == "likert":
        scale = np.arange(1, 6)
        baseline = rng.choice(scale, size=n, p=[0.1, 0.2, 0.3, 0.25, 0.15])
        changed = rng.random(n) < 0.30
        redrawn = rng.choice(scale, size=n, p=[0.09, 0.2, 0.3, 0.25, 0.16])
        candidate = np.where(changed, redrawn, baseline)
        return (baseline - 1) / 4, (candidate - 1) / 4
    if kind == "binary":
        baseline = (rng.random(n) < 0.60).astype(np.float64)
        changed = rng.random(n) < 0.12
        redrawn = (rng.random(n) < 0.61).astype(np.float64)
        candidate = np.where(changed, redrawn, baseline)
    else:
        baseline = rng.beta(2.0, 2.0, size=n)
        candidate = np.clip(baseline + rng.normal(0.0005, 0.1, size=n), 0.0, 1.0)
    return baseline, candidate


def evaluations(kind: str, n: int) -> tuple[Any, Any]:
    """Two minimal evaluation objects over the same ``n`` items (baseline in reverse order)."""
    from types import SimpleNamespace

    from kagreport.evaluation import AnswerItem

    baseline, candidate = simulate(kind, n)
    metric = {"binary": "correct", "likert": "judge"}.get(kind, "score")

    def build(scores: Any, order: range) -> Any:
        items = tuple(
            AnswerItem(f"q{i}", "?", "a", scores={metric: float(scores[i])}) for i in order
        )
        return SimpleNamespace(items=items, judges={}, metadata={})

    return build(candidate, range(n)), build(baseline, range(n - 1, -1, -1))


# --------------------------------------------------------------------------- children


def child(what: str, kind: str, n: int, resamples: int, repeats: int, trace: bool) -> None:
    """Run one measurement and print its JSON result on stdout."""
    import resource
    import statistics
    import tracemalloc

    import numpy as np

    from kagreport.evaluation._compare import compare_items
    from kagreport.stats import sign_flip_test

    baseline, candidate = simulate(kind, n)
    d = candidate - baseline
    result: dict[str, Any] = {"what": what, "kind": kind, "n": n, "resamples": resamples}
    call: Any
    if what == "sign_flip":

        def call(small: bool = False) -> Any:
            return sign_flip_test(d[:1000] if small else d, n_resamples=resamples)

    elif what == "compare":
        pair = evaluations(kind, n)
        few = evaluations(kind, 1000)

        def call(small: bool = False) -> Any:
            first, second = few if small else pair
            return compare_items(first, second, kind="answers", n_resamples=resamples)

    elif what == "scipy":
        from scipy import stats

        def call(small: bool = False) -> Any:
            return stats.permutation_test(
                (d,),
                statistic=np.mean,
                permutation_type="samples",
                vectorized=True,
                n_resamples=resamples,
                alternative="two-sided",
                rng=0,
                batch=SCIPY_BATCH,
            )

        repeats = 1
    elif what == "exact":
        from scipy import stats

        # The first EXACT_NONZERO non-zero differences and the first two zeros, if any.
        small = np.concatenate((d[d != 0][:EXACT_NONZERO], d[d == 0][:2]))
        result["pairs"] = int(small.size)
        ours = sign_flip_test(small, n_resamples=2**small.size)
        theirs = stats.permutation_test(
            (small,), np.mean, permutation_type="samples", n_resamples=np.inf
        )
        result.update(ours=ours.p_value, scipy=float(theirs.pvalue), exact=ours.exact)
        # Independent reference for the full data: under the sign-flip null S = sum(s_i d_i)
        # has variance sum(d_i^2) and is close to normal at these sizes (CLT).
        z = abs(float(d.sum())) / float(np.sqrt((d**2).sum()))
        result["normal_p"] = float(2 * stats.norm.sf(z))
        if kind == "binary":
            # The exact reference at full size: the binomial test of the discordant pairs.
            wins, m = int((d > 0).sum()), int((d != 0).sum())
            result["binomtest"] = float(stats.binomtest(wins, m, 0.5).pvalue)
            result["full"] = sign_flip_test(d, n_resamples=resamples).p_value
        print(json.dumps(result))
        return
    else:
        raise SystemExit(f"unknown child {what!r}")

    if what != "scipy":
        call(small=True)  # imports and first-call costs, untimed
    if trace:
        tracemalloc.start()
        tracemalloc.reset_peak()
        call()
        result["traced_peak_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            out = call()
            times.append(time.perf_counter() - start)
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result["seconds_min"] = min(times)
        result["seconds_median"] = statistics.median(times)
        result["rss_growth_bytes"] = (rss_after - rss_before) * 1024  # Linux: KiB
        if what == "sign_flip":
            result["p_value"] = out.p_value
            result["n_nonzero"] = out.n_nonzero
            result["method"] = out.method
        elif what == "compare":
            (row,) = out.metrics.values()
            result["p_value"] = row.p_value
            result["ci"] = [row.ci_low, row.ci_high]
            result["method"] = row.method
        else:
            result["p_value"] = float(out.pvalue)
    print(json.dumps(result))


def run_child(what: str, kind: str, args: Any, *, trace: bool = False) -> dict[str, Any]:
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        what,
        "--kind",
        kind,
        "--items",
        str(args.items),
        "--resamples",
        str(args.resamples),
        "--repeats",
        str(args.repeats),
    ]
    if trace:
        command.append("--trace")
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child {what} {kind} failed:\n{out.stderr}")
    data: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


# --------------------------------------------------------------------------- main


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:7.1f} MiB"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-scipy", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="binary", help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.kind, args.items, args.resamples, args.repeats, args.trace)
        return 0

    print(
        f"paired comparison: {args.items:,} items, {args.resamples:,} resamples, "
        f"SIMULATED data; python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )
    print(
        "times: perf_counter around the call in a fresh child; ours: min / median of "
        f"{args.repeats}; scipy: 1 run, batch={SCIPY_BATCH}"
    )
    print(
        "memory of ours: traced peak = tracemalloc peak of the call (fresh child); "
        "RSS growth = ru_maxrss after - before the call (fresh child)"
    )
    failed = False
    for kind in KINDS:
        print(f"\n== {kind} ==")
        rows: dict[str, dict[str, Any]] = {}
        for what in ("sign_flip", "compare"):
            rows[what] = run_child(what, kind, args)
            traced = run_child(what, kind, args, trace=True)
            row = rows[what]
            label = "sign_flip_test" if what == "sign_flip" else "compare_items"
            extra = f", n_nonzero {row['n_nonzero']:,}" if "n_nonzero" in row else ""
            extra += f", {row['method']}"
            print(
                f"{label:<16} {row['seconds_min']:8.3f} s min {row['seconds_median']:8.3f} s "
                f"median | traced peak {_mib(traced['traced_peak_bytes'])} | RSS growth "
                f"{_mib(row['rss_growth_bytes'])} | p {row['p_value']:.6f}{extra}"
            )
        if not args.skip_scipy:
            theirs = run_child("scipy", kind, args)
            rows["scipy"] = theirs
            print(
                f"{'scipy':<16} {theirs['seconds_min']:8.3f} s        | RSS growth "
                f"{_mib(theirs['rss_growth_bytes'])} | p {theirs['p_value']:.6f}"
            )
            for what in ("sign_flip", "compare"):
                ratio = theirs["seconds_min"] / rows[what]["seconds_min"]
                verdict = "PASS" if ratio >= TARGET_SPEEDUP else "MISS"
                failed |= ratio < TARGET_SPEEDUP
                print(
                    f"  scipy / {what}: {ratio:7.1f}x (target >= {TARGET_SPEEDUP:.0f}x) {verdict}"
                )
        exact = run_child("exact", kind, args)
        # Each Monte Carlo p against the normal approximation, in its own standard errors:
        # ours is one share of B assignments, sqrt(p (1 - p) / B); scipy's two-sided p is
        # twice a one-sided share, sqrt(4 (p/2) (1 - p/2) / B) = sqrt(p (2 - p) / B).
        p_ref, b = exact["normal_p"], args.resamples
        p_ours = rows["sign_flip"]["p_value"]
        if rows["sign_flip"]["method"] == "monte-carlo":
            line = f"  Monte Carlo p vs normal approximation {p_ref:.6f}: ours {p_ours:.6f} "
            line += f"({(p_ours - p_ref) / max(p_ref * (1 - p_ref) / b, 1e-12) ** 0.5:+.1f} SE)"
        else:
            line = f"  exact p vs normal approximation {p_ref:.6g}: ours {p_ours:.6g} "
            line += f"(relative {(p_ours - p_ref) / p_ref:+.1%}, the approximation's error)"
        if "scipy" in rows:
            p_theirs = rows["scipy"]["p_value"]
            se_theirs = max(p_ref * (2 - p_ref) / b, 1e-12) ** 0.5
            line += f", scipy {p_theirs:.6f} ({(p_theirs - p_ref) / se_theirs:+.1f} SE)"
        print(line)
        if "binomtest" in exact:
            relative = abs(exact["full"] - exact["binomtest"]) / exact["binomtest"]
            close = relative <= 1e-9
            failed |= not close
            print(
                f"  exact p, all {args.items:,} items: ours {exact['full']!r}, "
                f"scipy.stats.binomtest {exact['binomtest']!r}: relative difference "
                f"{relative:.1e} {'PASS' if close else 'FAIL'} (<= 1e-9)"
            )
        same = exact["ours"] == exact["scipy"] and exact["exact"]
        failed |= not same
        print(
            f"  exact p, {exact['pairs']} pairs (2^{exact['pairs']} assignments): ours "
            f"{exact['ours']!r}, scipy {exact['scipy']!r}: {'identical' if same else 'DIFFERENT'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
