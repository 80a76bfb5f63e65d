"""The gate at its edges: a dataset in one run only, a difference of exactly -margin in
floating point, tied p-values in either row order, too few pairs to reject, a tiny alpha,
and a p-value equal to alpha. Found by trying to break it; each once failed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gate_runs import make_run, one_system

from conftest import run_cli
from kagreport.gates import gate


def test_a_dataset_in_one_run_only_is_an_inconclusive_row_not_a_crash(tmp_path) -> None:
    shared = {("A", f"q{i}"): float(i % 2) for i in range(100)}
    make_run({"s": shared | {("NEW", "z"): 1.0}}).write(tmp_path / "c.json")
    make_run({"s": shared}).write(tmp_path / "b.json")
    done = run_cli("gate", tmp_path / "c.json", "--baseline", tmp_path / "b.json")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    result = gate(str(tmp_path / "c.json"), str(tmp_path / "b.json"))
    rows = {h.slice: h for h in result.hypotheses}
    assert rows["NEW"].n_pairs == 0
    assert rows["NEW"].candidate_only == 1
    assert rows["NEW"].verdict == "inconclusive"
    assert rows["A"].verdict == "pass"


@pytest.mark.parametrize("baseline", [0.3, 0.5, 0.54, 0.7, 0.9])
def test_a_difference_of_exactly_minus_the_margin_is_inconclusive(baseline: float) -> None:
    # 0.48 - 0.50 + 0.02 is -1.7e-17 in floating point: every x_i would share that sign and
    # the test would reject at p = 2 / 2**30. In exact arithmetic every x_i is 0 (p = 1).
    candidate = one_system("c", [baseline - 0.02] * 30, metric="f1")
    result = gate(candidate, one_system("b", [baseline] * 30, metric="f1"), metrics=["f1"])
    (h,) = result.hypotheses
    assert h.p_value == 1.0
    assert h.verdict == "inconclusive"
    assert h.low <= -0.02 <= h.high


def _two_datasets(order: list[int]) -> tuple[object, object]:
    """Two datasets, each with 12 of 60 items flipped 0 -> 1: equal p-values. ``order``
    permutes the rows the runs are built from."""
    base: dict[tuple[str, str], float] = {}
    cand: dict[tuple[str, str], float] = {}
    keys = [(d, f"q{i}") for d in ("X", "Y") for i in range(60)]
    for at in order:
        dataset, question = keys[at]
        base[(dataset, question)] = 0.0
        cand[(dataset, question)] = 1.0 if int(question[1:]) < 12 else 0.0
    return make_run({"s": cand}), make_run({"s": base})


def test_tied_p_values_give_the_same_numbers_in_any_row_order() -> None:
    forward = gate(*_two_datasets(list(range(120))), margin=0.0).to_dict()["hypotheses"]
    backward = gate(*_two_datasets(list(range(119, -1, -1))), margin=0.0).to_dict()
    assert [h["slice"] for h in forward] == ["X", "Y"]
    assert backward["hypotheses"] == forward
    # Holm rejects equal p-values together, at the first one's step: alpha / 2 for both.
    assert [h["level"] for h in forward] == [0.025, 0.025]


def test_too_few_pairs_to_reject_promise_no_power() -> None:
    # Four pairs: the sign-flip test's smallest p-value is 2 / 16 = 0.125 > 0.05.
    result = gate(one_system("c", [0.0, 1.0, 0.0, 1.0]), one_system("b", [1.0, 1.0, 0.0, 0.0]))
    (h,) = result.hypotheses
    assert h.power == 0.0
    assert h.mde is None or math.isnan(h.mde)
    assert h.n_needed is not None
    assert h.n_needed >= 6  # 2 / 2**6 < 0.05


def test_a_tiny_alpha_is_a_level_not_a_crash() -> None:
    values = [1.0] * 40 + [0.0] * 40
    result = gate(one_system("c", values), one_system("b", values), alpha=1e-17)
    (h,) = result.hypotheses
    assert h.low <= h.difference <= h.high


def test_a_p_value_equal_to_alpha_does_not_reject_and_the_interval_says_so() -> None:
    rng = np.random.default_rng(4)
    base = rng.integers(0, 2, 200).astype(float)
    cand = np.where(rng.random(200) < 0.1, 1.0 - base, base)
    c, b = one_system("c", cand.tolist()), one_system("b", base.tolist())
    (probe,) = gate(c, b).hypotheses
    p = probe.p_value
    (at,) = gate(c, b, alpha=p).hypotheses  # p < alpha is False: not rejected
    assert at.verdict == "inconclusive"
    assert at.low <= -0.02 <= at.high
    (above,) = gate(c, b, alpha=math.nextafter(p, 1.0)).hypotheses
    assert above.verdict in ("pass", "fail")
    assert not (above.low <= -0.02 <= above.high)
