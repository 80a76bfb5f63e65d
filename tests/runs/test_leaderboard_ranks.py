"""The leaderboard's rank intervals and tie groups (kagreport.runs.leaderboard).

Checked against an independent computation: item labels matched by hand, discordant pairs
counted in a loop, scipy.stats.binomtest for the exact McNemar test and Holm written out.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest

from kagreport.evaluation import evaluation_from_stats
from kagreport.examples import mmlu_pro_philosophy
from kagreport.grading import grade
from kagreport.runs import Run, leaderboard


def _holm(p: list[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - step) * p[i]))
        out[i] = running
    return out


@pytest.fixture(scope="module")
def run() -> Run:
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    # deepseek-coder-v2 lacks 8 of the 499 items: the ranks use the items all hold.
    return Run.from_evaluations(
        [evaluation_from_stats(report, s) for s in report.setup_names], same_items=False
    )


def test_rank_intervals_and_groups_by_hand(run: Run) -> None:
    values = run.metric("correct")
    by_system: dict[str, dict[str, float]] = {}
    for r in range(len(values)):
        if not np.isnan(values[r]):
            system = run.systems[run.system[r]]
            by_system.setdefault(system, {})[run.item_label(r)] = float(values[r])
    shared = set.intersection(*(set(v) for v in by_system.values()))
    assert 0 < len(shared) < max(len(v) for v in by_system.values())
    names = list(by_system)

    def test(a: str, b: str) -> tuple[float, int, int]:
        x = sum(1 for i in shared if by_system[a][i] == 1 and by_system[b][i] == 0)
        y = sum(1 for i in shared if by_system[a][i] == 0 and by_system[b][i] == 1)
        return (1.0 if x + y == 0 else binomtest(x, x + y).pvalue), x, y

    pairs = list(itertools.combinations(names, 2))
    tests = [test(a, b) for a, b in pairs]
    adjusted = _holm([t[0] for t in tests])
    better = dict.fromkeys(names, 0)
    worse = dict.fromkeys(names, 0)
    for (a, b), (_, x, y), p in zip(pairs, tests, adjusted, strict=True):
        if p < 0.05 and x != y:
            win, lose = (a, b) if x > y else (b, a)
            better[lose] += 1
            worse[win] += 1
    accuracy = {s: sum(by_system[s][i] for i in shared) for s in names}
    order = sorted(names, key=lambda s: (-accuracy[s], s))
    cuts = _holm([test(a, b)[0] for a, b in itertools.pairwise(order)])
    group, expected_group = 1, {order[0]: 1}
    for p, s in zip(cuts, order[1:], strict=True):
        group += p < 0.05
        expected_group[s] = group

    board = leaderboard(run, "correct")
    for row in board:
        assert (row.rank_low, row.rank_high) == (
            1 + better[row.system],
            len(names) - worse[row.system],
        )
        assert row.tie_group == expected_group[row.system]
        assert row.ci == (row.low, row.high)
    # Some pairs separate and some do not: the check is not vacuous.
    assert any(r.rank_low == r.rank_high for r in board)
    assert any(r.rank_low != r.rank_high for r in board)


def test_a_score_metric_has_no_ranks(run: Run) -> None:
    values = run.metric("correct") * 0.5  # scores 0 and 0.5: not a proportion
    scored = Run.from_dict({**run.to_dict(), "metrics": {"half": values.tolist()}})
    assert all(r.rank_low is None and r.tie_group is None for r in leaderboard(scored, "half"))
