"""Exact McNemar p-values, tie groups and rank sets (kagreport.stats._ranks).

Oracles: scipy.stats.binomtest (the real tool's two-sided p-value), hand-worked binomial
tails, and a brute-force loop over pairs written here independently of the matrix product.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest

from kagreport import KagreportError
from kagreport.stats import holm_adjust, rank_sets
from kagreport.stats._ranks import mcnemar_p_values, tie_groups


def test_hand_worked_p_values() -> None:
    # 1 of 10 discordant: 2 * (C(10,0) + C(10,1)) / 2^10 = 22 / 1024.
    assert mcnemar_p_values(1, 9)[()] == pytest.approx(22 / 1024, rel=1e-14)
    # 0 of 5: 2 / 32. Equal counts, one apart (n odd), no pair: 1.
    assert mcnemar_p_values(0, 5)[()] == pytest.approx(1 / 16, rel=1e-14)
    assert mcnemar_p_values([3, 4, 0], [3, 3, 0]).tolist() == [1.0, 1.0, 1.0]


def test_against_scipy_binomtest() -> None:
    rng = np.random.default_rng(28)
    pairs = [(b, c) for b in range(30) for c in range(30)]
    drawn = rng.integers(0, 4000, (200, 2)).tolist()
    pairs += [(int(x), int(y)) for x, y in drawn]
    pairs += [(4990, 5010), (2400, 2600), (12, 20_000), (49_900, 50_100)]
    b, c = np.array(pairs).T
    ours = mcnemar_p_values(b, c)
    for (x, y), p in zip(pairs, ours.tolist(), strict=True):
        expected = 1.0 if x + y == 0 else binomtest(x, x + y, 0.5).pvalue
        if expected > 1e-290:
            assert p == pytest.approx(expected, rel=1e-10, abs=0), (x, y)
        else:
            assert p < 1e-280


def _brute(correct: np.ndarray, names: list[str], alpha: float) -> tuple[object, object]:
    """tie_groups and rank_sets by loops over pairs, with scipy's binomtest."""
    n_sys = len(names)

    def p_of(i: int, j: int) -> tuple[float, int, int]:
        b = int(((correct[:, i] == 1) & (correct[:, j] == 0)).sum())
        c = int(((correct[:, i] == 0) & (correct[:, j] == 1)).sum())
        return (1.0 if b + c == 0 else binomtest(b, b + c).pvalue), b, c

    acc = correct.mean(axis=0)
    order = sorted(range(n_sys), key=lambda s: (-acc[s], names[s]))
    adjacent = holm_adjust([p_of(i, j)[0] for i, j in itertools.pairwise(order)])
    groups = [[names[order[0]]]]
    for p, s in zip(adjacent, order[1:], strict=True):
        groups.append([names[s]]) if p < alpha else groups[-1].append(names[s])
    pairs = list(itertools.combinations(range(n_sys), 2))
    tests = [p_of(i, j) for i, j in pairs]
    adjusted = holm_adjust([t[0] for t in tests])
    better, worse = [0] * n_sys, [0] * n_sys
    for (i, j), (_, b, c), p in zip(pairs, tests, adjusted, strict=True):
        if p < alpha and b != c:
            winner, loser = (i, j) if b > c else (j, i)
            better[loser] += 1
            worse[winner] += 1
    sets = {names[s]: (1 + better[s], n_sys - worse[s]) for s in range(n_sys)}
    return groups, sets


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rates = rng.uniform(0.3, 0.9, 8)
    correct = (rng.random((300, 8)) < rates).astype(int)
    names = [f"system-{k}" for k in range(8)]
    groups, sets = _brute(correct, names, 0.05)
    assert tie_groups(correct, names) == groups
    assert rank_sets(correct, names) == sets
    assert sum(len(g) for g in groups) == 8


def test_hand_worked_ranks() -> None:
    # a: 20/20, b: 10/20, c: 10/20 on other items, d: 0/20. a vs b: 10 vs 0 discordant,
    # p = 2/1024; b vs c: 10 vs 10, p = 1; c vs d: 10 vs 0. Holm over 3 adjacent pairs:
    # 3 * 2/1024 < 0.05, so groups [a], [b, c], [d] (b before c by name, equal accuracy).
    correct = np.zeros((20, 4), dtype=int)
    correct[:, 0] = 1
    correct[:10, 1] = 1
    correct[10:, 2] = 1
    assert tie_groups(correct, ["a", "b", "c", "d"]) == [["a"], ["b", "c"], ["d"]]
    # All 6 pairs: a-d 20 vs 0 and the 10-vs-0 pairs all survive Holm (6 * 2/1024 < 0.05);
    # b and c share competition rank 2 at best and 3 at worst.
    assert rank_sets(correct, ["a", "b", "c", "d"]) == {
        "a": (1, 1), "b": (2, 3), "c": (2, 3), "d": (4, 4)
    }  # fmt: skip


def test_close_systems_are_one_group() -> None:
    # HELM #4336's observation on HELM Lite, qualitatively: neighbours a fraction of a point
    # apart on a thousand items are never separable, so the leaderboard is one group.
    rng = np.random.default_rng(4336)
    rates = np.linspace(0.70, 0.72, 10)
    correct = (rng.random((1000, 10)) < rates).astype(int)
    names = [f"m{k}" for k in range(10)]
    assert len(tie_groups(correct, names)) == 1
    assert all(low < high for low, high in rank_sets(correct, names).values())


def test_edge_cases() -> None:
    assert tie_groups(np.zeros((0, 0)), []) == []
    assert rank_sets(np.zeros((0, 0)), []) == {}
    # No item: nothing separates anything.
    assert rank_sets(np.zeros((0, 2)), ["a", "b"]) == {"a": (1, 2), "b": (1, 2)}
    assert tie_groups(np.ones((5, 1)), ["only"]) == [["only"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([[1, 2]], ["a", "b"]), "`correct` must hold 0 and 1 only"),
        (([[1, np.nan]], ["a", "b"]), "`correct` must hold 0 and 1 only"),
        (([[1, 0]], ["a"]), r"`correct` must be items x systems, shape \(n, 1\)"),
        (([[1, 0]], ["a", "a"]), "`systems` must be distinct"),
        (([1, 0], ["a", "b"]), "`correct` must be items x systems"),
    ],
)
def test_each_message(args: tuple[object, list[str]], message: str) -> None:
    with pytest.raises(KagreportError, match=message):
        tie_groups(*args)  # type: ignore[arg-type]
    with pytest.raises(KagreportError, match=message):
        rank_sets(*args)  # type: ignore[arg-type]
    with pytest.raises(KagreportError, match=r"`alpha` must be in \(0, 1\)"):
        rank_sets([[1]], ["a"], alpha=0)
    with pytest.raises(KagreportError, match="`b` must hold whole numbers"):
        mcnemar_p_values(-1, 2)
