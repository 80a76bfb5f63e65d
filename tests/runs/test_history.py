"""``runs.history``: values across runs in time order, each change tested paired (or
unpaired) and Holm-adjusted over the sequence; numbers from independent computations."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm

from kagreport import KagreportError
from kagreport.runs import Run, history, leaderboard


def _run(
    scores: dict[str, Sequence[float]],
    created: str | None,
    questions: Sequence[str] | None = None,
) -> Run:
    systems = tuple(scores)
    n = len(next(iter(scores.values())))
    names = tuple(questions) if questions is not None else tuple(f"q{i}" for i in range(n))
    values = np.concatenate([np.asarray(scores[s], dtype=np.float64) for s in systems])
    return Run(
        kind="answers",
        systems=systems,
        dataset_names=("d",),
        question_names=names,
        system=np.repeat(np.arange(len(systems)), n).astype(np.int32),
        dataset=np.zeros(len(values), dtype=np.int32),
        question=np.tile(np.arange(n), len(systems)).astype(np.int32),
        outcome=np.where(values == 1.0, 0, 1).astype(np.int8),
        metrics={"correct": values},
        metadata={} if created is None else {"created": created},
    )


def _flips(n: int, up: int, down: int, base: int) -> tuple[list[float], list[float]]:
    """Two 0/1 columns of n items: ``up`` items 0 -> 1, ``down`` 1 -> 0, ``base`` 1 -> 1."""
    before = [0.0] * up + [1.0] * down + [1.0] * base
    after = [1.0] * up + [0.0] * down + [1.0] * base
    rest = n - len(before)
    return before + [0.0] * rest, after + [0.0] * rest


def test_one_paired_step_is_mcnemars_exact_test() -> None:
    before, after = _flips(60, up=14, down=4, base=20)
    runs = {
        "old": _run({"A": before}, "2026-01-01T00:00:00Z"),
        "new": _run({"A": after}, "2026-01-02T00:00:00Z"),
    }
    frame = history(runs)
    assert list(frame["run"]) == ["old", "new"]
    step = frame.iloc[1]
    assert step["previous"] == "old"
    assert step["method"] == "paired sign-flip (exact-lattice)"
    assert step["n_pairs"] == 60
    assert step["change"] == pytest.approx((14 - 4) / 60, abs=1e-15)
    expected = binomtest(14, 18, 0.5).pvalue  # McNemar's exact test on the 18 discordant
    assert step["p_value"] == pytest.approx(expected, rel=1e-9)
    assert step["p_value_holm"] == pytest.approx(expected, rel=1e-9)  # a family of one
    assert bool(step["significant"]) is bool(expected < 0.05)
    first = frame.iloc[0]
    assert pd.isna(first["previous"])
    assert math.isnan(first["change"])
    assert first["significant"] is pd.NA
    assert first["n_pairs"] is pd.NA


def test_holm_over_three_steps_by_hand() -> None:
    # Four runs of one system: three steps with (up, down) discordant items.
    steps = [(12, 2), (3, 9), (10, 1)]
    columns = [[0.0] * 40]
    for up, down in steps:
        prev = columns[-1]
        ones = [i for i, v in enumerate(prev) if v == 1.0]
        zeros = [i for i, v in enumerate(prev) if v == 0.0]
        nxt = list(prev)
        for i in zeros[:up]:
            nxt[i] = 1.0
        for i in ones[:down]:
            nxt[i] = 0.0
        columns.append(nxt)
    # Discordant counts of each step, as built (the first run has no ones to lose).
    counts = [
        (sum(a > b for a, b in zip(new, old, strict=True)),
         sum(a < b for a, b in zip(new, old, strict=True)))
        for old, new in itertools.pairwise(columns)
    ]  # fmt: skip
    raw = [binomtest(u, u + d, 0.5).pvalue for u, d in counts]
    # Holm by hand: sort, multiply by 3, 2, 1, running maximum, capped at 1.
    order = sorted(range(3), key=lambda i: raw[i])
    holm, running = [0.0] * 3, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (3 - rank) * raw[i]))
        holm[i] = running
    runs = {f"r{k}": _run({"A": c}, f"2026-01-0{k + 1}T00:00:00Z") for k, c in enumerate(columns)}
    frame = history(runs)
    got = frame["p_value_holm"].tolist()[1:]
    assert got == pytest.approx(holm, rel=1e-9)
    assert frame["p_value"].tolist()[1:] == pytest.approx(raw, rel=1e-9)
    # The interval excludes 0 exactly when the Holm-adjusted test rejects.
    for _, row in frame.iloc[1:].iterrows():
        excludes = row["change_low"] > 0 or row["change_high"] < 0
        assert excludes is bool(row["significant"])
    assert "holm" in frame.attrs["adjustment"]


def test_values_are_the_leaderboards_and_wilsons() -> None:
    rng = np.random.default_rng(3)
    run = _run(
        {"A": (rng.random(80) < 0.6).astype(float), "B": (rng.random(80) < 0.4).astype(float)},
        "2026-01-01T00:00:00Z",
    )
    frame = history({"only": run})
    for row in leaderboard(run):
        got = frame[frame["system"] == row.system].iloc[0]
        assert (got["value"], got["low"], got["high"]) == (row.mean, *row.ci)
        # Wilson (1927) by hand at z = 1.959963984540054.
        k, n, z = row.mean * row.n_defined, row.n_defined, 1.959963984540054
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        assert got["low"] == pytest.approx(centre - half, rel=1e-12)
        assert got["high"] == pytest.approx(centre + half, rel=1e-12)


def test_unpaired_step_is_the_normal_two_sample_test() -> None:
    a = [1.0] * 30 + [0.0] * 20
    b = [1.0] * 18 + [0.0] * 22
    runs = {
        "x": _run({"A": a}, "2026-01-01T00:00:00Z", [f"x{i}" for i in range(50)]),
        "y": _run({"A": b}, "2026-01-02T00:00:00Z", [f"y{i}" for i in range(40)]),
    }
    step = history(runs).iloc[1]
    assert step["method"] == "two-sample normal"
    assert step["n_pairs"] == 0
    change = np.mean(b) - np.mean(a)
    se = math.sqrt(np.var(a, ddof=1) / 50 + np.var(b, ddof=1) / 40)
    assert step["change"] == pytest.approx(change, rel=1e-12)
    assert step["p_value"] == pytest.approx(2 * norm.sf(abs(change) / se), rel=1e-9)


def test_input_order_does_not_matter() -> None:
    rng = np.random.default_rng(7)
    pairs: list[tuple[str, Run]] = []
    for k in range(6):
        scores = {s: (rng.random(30) < 0.5).astype(float) for s in ("B", "A", "C")}
        created = None if k == 4 else f"2026-01-0{k + 1}T00:00:00Z"
        pairs.append((f"run-{k}", _run(scores, created)))
    pairs.append(("tie", _run({"A": (rng.random(30) < 0.5).astype(float)}, "2026-01-02T00:00:00Z")))
    expected = history(pairs)
    for seed in range(5):
        shuffled = list(pairs)
        random.Random(seed).shuffle(shuffled)
        pd.testing.assert_frame_equal(history(shuffled), expected)
        pd.testing.assert_frame_equal(history(dict(shuffled)), expected)
    # Equal times by name ("run-1" before "tie"); the run with no time last.
    order = expected.drop_duplicates("run").sort_values("position")["run"].tolist()
    assert order == ["run-0", "run-1", "tie", "run-2", "run-3", "run-5", "run-4"]
    assert expected[expected["run"] == "run-4"]["time_source"].isna().all()


def test_fallback_time_is_used_and_marked() -> None:
    runs = {
        "recorded": _run({"A": [1.0, 0.0]}, "2026-03-01T00:00:00Z"),
        "untimed": _run({"A": [1.0, 1.0]}, None),
    }
    frame = history(runs, fallback_times={"untimed": "2026-02-01T00:00:00+00:00"})
    assert frame["run"].tolist() == ["untimed", "recorded"]
    assert frame["time_source"].tolist() == ["file", "recorded"]
    assert frame["time"].iloc[0] == pd.Timestamp("2026-02-01", tz="UTC")
    # A recorded time wins over a fallback.
    again = history(runs, fallback_times={"recorded": 0.0, "untimed": 1.0})
    assert again["time_source"].tolist() == ["file", "recorded"]


def test_a_file_time_kept_by_convert_is_a_file_time_and_wins_over_a_fallback() -> None:
    kept = _run({"A": [1.0, 0.0]}, "2026-01-05T00:00:00Z")
    kept = dataclasses.replace(kept, metadata={**kept.metadata, "created_from": "file"})
    runs = {"kept": kept, "recorded": _run({"A": [1.0, 1.0]}, "2026-01-04T00:00:00Z")}
    frame = history(runs, fallback_times={"kept": "2026-01-01T00:00:00Z"})
    assert frame["run"].tolist() == ["recorded", "kept"]
    assert frame["time_source"].tolist() == ["recorded", "file"]
    assert frame["time"].iloc[1] == pd.Timestamp("2026-01-05", tz="UTC")


@pytest.mark.parametrize(
    ("runs", "options", "message"),
    [
        ([("a", 1)], {}, "mapping of name -> Run"),
        ({"a": None}, {}, "mapping of name -> Run"),
        ({}, {"fallback_times": {"z": 0}}, "fallback time of no run"),
        ({}, {"metrics": ["nope"]}, "no run has the metric"),
        ({}, {"alpha": 1.5}, "alpha"),
    ],
)
def test_bad_input_is_one_clear_error(runs: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(KagreportError, match=message):
        history(runs, **options)


def test_two_runs_of_one_name_are_refused() -> None:
    run = _run({"A": [1.0]}, None)
    with pytest.raises(KagreportError, match="two runs are named 'a'"):
        history([("a", run), ("a", run)])


def _without_rows(run: Run, drop: Sequence[int]) -> Run:
    from kagreport.runs._columns import TEXTS
    from kagreport.runs._texts import take_texts

    rows = np.setdiff1d(np.arange(len(run)), np.asarray(drop, dtype=np.intp))
    return dataclasses.replace(
        run,
        system=run.system[rows],
        dataset=run.dataset[rows],
        question=run.question[rows],
        outcome=run.outcome[rows],
        metrics={k: v[rows] for k, v in run.metrics.items()},
        costs={k: v[rows] for k, v in run.costs.items()},
        **{name: take_texts(getattr(run, name), rows) for name in TEXTS},
    )


def test_promptfoo_repeats_pair_by_the_test_whichever_repeat_a_system_holds() -> None:
    # The real promptfoo run (8 tests x 3 repeats per system); a later run of it lost the
    # first repeat of every test of one system. Its items are still the 8 tests: the history
    # pairs them as the gate does (an item keyed by its first held row paired none).
    from pathlib import Path

    from kagreport.gates import gate
    from kagreport.sources import read_run

    path = Path(__file__).parents[1] / "data" / "sources" / "promptfoo" / "real" / "results.json"
    run = read_run(path)
    repeat_of = run.metadata["repeat_of"]
    system = run.systems[1]
    firsts = [
        int(row)
        for row in np.flatnonzero(run.system == 1)
        if repeat_of[run.item_label(int(row))] == run.item_label(int(row))
    ]
    assert len(firsts) == 8
    later = _without_rows(run, firsts)
    later = dataclasses.replace(
        later, metadata=later.metadata | {"created": "2099-01-01T00:00:00Z"}
    )
    frame = history({"before": run, "after": later})
    step = frame[(frame["system"] == system) & (frame["metric"] == "correct")].iloc[-1]
    assert step["n_pairs"] == 8
    held = next(h for h in gate(later, run).hypotheses if h.candidate_system == system)
    assert held.n_pairs == 8
