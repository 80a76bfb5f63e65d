"""Issue 25, fault 8: a metric equal to another on every item is one hypothesis.

An Inspect multiple-choice log holds the ``choice`` scorer and the ``correct`` derived
from it, the same per-sample scores. Counted twice, Holm doubles every p-value (the
comparison below had p = 0.5 instead of 0.25 before the fix).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from kagreport import read_run
from kagreport.evaluation import EvaluationComparison
from kagreport.evaluation._compare import compare_scores, same_hypotheses
from kagreport.runs import compare_setups

REAL = Path(__file__).parent.parent / "data" / "sources" / "inspect" / "inspect-0.3.285"


@pytest.fixture(scope="module")
def mc_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("mc")
    for log in REAL.glob("*_tiny-mc_*.eval"):
        shutil.copy(log, folder)
    return read_run(folder)


def test_choice_and_correct_of_a_real_log_are_tested_once(mc_run) -> None:  # type: ignore[no-untyped-def]
    # expected.txt: alpha answers m1-m4 right (choice 0.8), beta m2 only (0.2). The paired
    # differences are -1 on m1, m3, m4 and 0 elsewhere: the exact two-sided sign-flip p
    # is 2 / 2**3 = 0.25, and a family of one hypothesis leaves it as it is.
    found = compare_setups(mc_run, metrics=["choice", "correct"])
    (pair,) = found.comparisons
    assert found.same_as == {"correct": "choice"}
    assert pair.family_size == 1
    assert pair.p_values_family == {"choice": 0.25, "correct": 0.25}
    assert pair.comparison.family == ("choice",)
    assert pair.comparison.same_as == {"correct": "choice"}
    assert pair.comparison.metrics["correct"].p_value_holm == 0.25
    assert "Holm family of 1, correct = choice" in repr(found)


def test_metrics_that_differ_on_one_item_stay_two_hypotheses() -> None:
    c = {"a": [1.0, 1.0, 1.0, 0.0], "b": [1.0, 1.0, 1.0, 1.0]}
    base = {"a": [0.0, 0.0, 0.0, 0.0], "b": [0.0, 0.0, 0.0, 0.0]}
    result = compare_scores(c, base)
    assert result.family == ("a", "b")
    assert result.same_as == {}
    # a: three differences of +1, exact p = 2/8; b: four, 2/16. Holm: 2 * 0.125, then
    # max(0.25, 0.25).
    assert result.metrics["b"].p_value_holm == pytest.approx(0.25)
    assert result.metrics["a"].p_value_holm == pytest.approx(0.25)


def test_equal_columns_with_nan_are_one_hypothesis_and_round_trip(tmp_path: Path) -> None:
    nan = float("nan")
    c = {"x": [1.0, nan, 1.0, 1.0], "y": [1.0, nan, 1.0, 1.0], "z": [0.5, 0.5, 0.5, 0.5]}
    b = {"x": [0.0, 0.0, 0.0, 1.0], "y": [0.0, 0.0, 0.0, 1.0], "z": [0.5, 0.5, 0.5, 0.5]}
    result = compare_scores(c, b)
    assert result.same_as == {"y": "x"}
    # x: item 2 has no pair; differences +1, +1, 0: exact p = 2 / 2**2.
    assert result.metrics["y"].p_value == result.metrics["x"].p_value == 0.5
    assert result.metrics["y"].p_value_holm == result.metrics["x"].p_value_holm
    rows = {row["metric"]: row for row in result.to_rows()}
    assert rows["y"]["same_as"] == "x"
    assert rows["y"]["in_family"]
    path = tmp_path / "comparison.json"
    result.write(path)
    assert EvaluationComparison.read(path).same_as == {"y": "x"}


def test_same_hypotheses_keeps_the_first_of_each_group() -> None:
    ones, zeros = np.ones(3), np.zeros(3)
    columns = {"p": (ones,), "q": (zeros,), "r": (ones,), "s": (zeros,), "t": (ones[:2],)}
    assert same_hypotheses(columns, ["r", "p", "q", "s", "t"]) == {"p": "r", "s": "q"}
