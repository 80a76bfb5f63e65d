"""The bootstrap interval of a mean cost (runs._intervals.cost_intervals).

The reference computation below re-implements the documented resampling scheme with NumPy
alone: the costs are sorted; with more than 64 distinct values each resample draws n indices
``rng.integers(0, n, size=(n_resamples, n))`` into them; with at most 64, the counts of each
distinct value ``rng.multinomial(n, counts / n, size=n_resamples)``; the bounds are the
2.5% and 97.5% quantiles (NumPy's linear interpolation) of the resampled means.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from kagreport import KagreportError
from kagreport.runs import Run
from kagreport.runs._intervals import cost_intervals

SEED = 0
N = 1000


def _run(costs: dict[str, np.ndarray], systems: int, items: int, **extra: np.ndarray) -> Run:
    """``systems`` systems x ``items`` items of one dataset, every answer correct."""
    n = systems * items
    return Run(
        kind="answers",
        systems=tuple(f"s{k}" for k in range(systems)),
        dataset_names=("d",),
        question_names=tuple(f"q{k}" for k in range(items)),
        system=np.repeat(np.arange(systems, dtype=np.int32), items),
        dataset=np.zeros(n, dtype=np.int32),
        question=np.tile(np.arange(items, dtype=np.int32), systems),
        outcome=extra.get("outcome", np.zeros(n, dtype=np.int8)),
        metrics={"correct": np.ones(n)},
        costs=costs,
    )


def _reference(values: np.ndarray, n_resamples: int = N, seed: int = SEED) -> tuple[float, float]:
    d = np.sort(np.asarray(values, dtype=np.float64))
    n = d.size
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(d, return_counts=True)
    if distinct.size <= 64:
        means = rng.multinomial(n, counts / n, size=n_resamples) @ distinct / n
    else:
        means = d[rng.integers(0, n, size=(n_resamples, n))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def test_matches_an_independent_numpy_bootstrap_of_continuous_costs() -> None:
    rng = np.random.default_rng(42)
    seconds = rng.gamma(2.0, 0.3, size=200)  # 200 distinct values: the index scheme
    (found,) = cost_intervals(_run({"retrieval_secs": seconds}, 1, 200), "retrieval")
    low, high = _reference(seconds)
    assert found.mean == pytest.approx(math.fsum(seconds) / 200, rel=1e-15)
    assert (found.low, found.high) == pytest.approx((low, high), rel=1e-12)
    assert found.low < found.mean < found.high
    assert (found.n, found.level) == (200, 0.95)


def test_matches_an_independent_numpy_bootstrap_of_few_distinct_costs() -> None:
    # Graph elements: integers with 6 distinct values, the multinomial scheme.
    rng = np.random.default_rng(3)
    vertices = rng.integers(0, 6, size=90).astype(np.float64)
    costs = {
        "retrieval_secs": np.full(90, 0.5),
        "vertices": vertices,
        "relationships": np.zeros(90),
        "properties": np.zeros(90),
    }
    (found,) = cost_intervals(_run(costs, 1, 90), "graph")
    assert (found.low, found.high) == pytest.approx(_reference(vertices), rel=1e-12)
    assert found.low <= found.mean <= found.high


def test_the_order_of_the_rows_does_not_matter() -> None:
    rng = np.random.default_rng(5)
    tokens = rng.integers(10, 5000, size=(2, 80)).astype(np.float64)
    run = _run({"input_tokens": tokens.ravel()}, 2, 80)
    order = rng.permutation(len(run))
    shuffled = dataclasses.replace(
        run,
        system=run.system[order],
        dataset=run.dataset[order],
        question=run.question[order],
        outcome=run.outcome[order],
        metrics={k: v[order] for k, v in run.metrics.items()},
        costs={k: v[order] for k, v in run.costs.items()},
    )
    one = cost_intervals(run, "input_tokens")
    assert cost_intervals(shuffled, "input_tokens") == one
    assert cost_intervals(run, "input_tokens") == one  # and again: fixed seed
    for interval, row in zip(one, tokens, strict=True):
        assert interval.low < interval.mean < interval.high
        assert (interval.low, interval.high) == pytest.approx(_reference(row), rel=1e-12)


def test_one_item_and_identical_costs_give_a_point() -> None:
    (one,) = cost_intervals(_run({"cost_usd": np.array([0.25])}, 1, 1), "money")
    assert (one.mean, one.low, one.high, one.n) == (0.25, 0.25, 0.25, 1)
    (same,) = cost_intervals(_run({"cost_usd": np.full(7, 0.1)}, 1, 7), "money")
    assert same.low == same.mean == same.high == pytest.approx(0.1)


def test_kag_means_average_the_committed_answers() -> None:
    # Four items: correct (1 s), incorrect (3 s), error (9 s, not averaged), correct without
    # a retrieval time (not a retrieval sample). Mean retrieval time (1 + 3) / 2 = 2 s.
    run = _run(
        {"retrieval_secs": np.array([1.0, 3.0, 9.0, math.nan])},
        1,
        4,
        outcome=np.array([0, 1, 2, 0], dtype=np.int8),
    )
    (found,) = cost_intervals(run, "retrieval")
    assert (found.mean, found.n) == (2.0, 2)
    assert (found.low, found.high) == pytest.approx(_reference(np.array([1.0, 3.0])))


def test_a_system_that_retrieves_nothing_costs_zero_and_undefined_stays_nan() -> None:
    run = _run(
        {"retrieval_secs": np.array([math.nan, math.nan, 1.0, 2.0, math.nan, math.nan])},
        3,
        2,
        outcome=np.array([0, 1, 0, 0, 2, 2], dtype=np.int8),
    )
    native, kag, failed = cost_intervals(run, "retrieval")
    assert (native.mean, native.low, native.high, native.n) == (0.0, 0.0, 0.0, 0)
    assert kag.mean == 1.5
    assert np.isnan([failed.mean, failed.low, failed.high]).all()


def test_per_dataset_and_errors() -> None:
    run = _run({"generation_secs": np.arange(1.0, 7.0)}, 1, 6)
    run = dataclasses.replace(
        run,
        dataset_names=("b", "a"),
        dataset=np.array([0, 0, 0, 1, 1, 1], dtype=np.int32),
    )
    found = cost_intervals(run, "generation", per_dataset=True)
    assert [(c.dataset, c.mean) for c in found] == [("a", 5.0), ("b", 2.0)]
    with pytest.raises(KagreportError, match="no cost column 'cost_usd'"):
        cost_intervals(run, "money")
    with pytest.raises(ValueError, match="confidence"):
        cost_intervals(run, "generation", confidence=1.5)
