"""kagreport.gate: verdicts on real runs, and every number against an independent computation."""

from __future__ import annotations

import itertools
import math
import re
import statistics
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from gate_runs import make_run, one_system
from scipy.stats import binomtest

import kagreport
from kagreport import InputError, read_run
from kagreport.examples import inspect_popularity, mmlu_pro_philosophy
from kagreport.gates import GateResult, gate
from kagreport.gates._pairs import task_of
from kagreport.runs import Run

NORMAL = statistics.NormalDist()
BEST, WEAK = "gemini-1-5-pro-002", "llama-2-7b-hf"
CLOSE = ("gemini-1-5-flash-002", "meta-llama-3-1-70b-instruct")  # 60.5% and 61.7%


@cache
def mmlu() -> Run:
    example = mmlu_pro_philosophy()
    return read_run(example.results, datasets=example.datasets)


def _brute_force_p(x: list[float]) -> float:
    """Two-sided sign-flip p-value by enumerating all 2**n sign assignments."""
    observed = abs(math.fsum(x))
    tolerance = 1e-9 * sum(abs(v) for v in x)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(x))))
    sums = np.abs(signs @ np.array(x))
    return float(np.count_nonzero(sums >= observed - tolerance)) / len(signs)


def test_the_root_gives_the_gate_lazily() -> None:
    assert kagreport.gate is gate
    assert kagreport.GateResult is GateResult


def test_a_run_against_itself_passes_with_an_interval_of_zero() -> None:
    result = gate(mmlu(), mmlu())
    assert result.verdict == "pass"
    assert result.exit_code() == 0
    assert len(result.hypotheses) == len(mmlu().systems) == 6
    for h in result.hypotheses:
        assert h.candidate_system == h.baseline_system
        assert (h.low, h.high, h.difference) == (0.0, 0.0, 0.0)
        # All 499 (491) differences are +margin: only the two all-one-sign assignments.
        assert h.p_value == pytest.approx(2.0 / 2.0**h.n_pairs, rel=1e-9)
    assert result.junit().count("<failure") == 0


def test_a_large_real_regression_fails() -> None:
    run = mmlu()
    result = gate(run.select([WEAK]), run.select([BEST]))
    assert result.verdict == "fail"
    assert result.exit_code() == 1
    (h,) = result.hypotheses
    assert (h.candidate_system, h.baseline_system) == (WEAK, BEST)
    best = run.metrics["correct"][run.system == run.systems.index(BEST)]
    weak = run.metrics["correct"][run.system == run.systems.index(WEAK)]
    assert h.baseline_mean == pytest.approx(best.mean())
    assert h.candidate_mean == weak.mean()
    assert h.high < -0.02
    # Where the test and the normal interval agree (far from -margin), the interval is
    # the normal one at Holm's level (here alpha: one hypothesis).
    d = (weak - best).tolist()
    se = statistics.stdev(d) / math.sqrt(len(d))
    z = NORMAL.inv_cdf(1 - 0.05 / 2)
    assert (h.low, h.high) == pytest.approx(
        (statistics.fmean(d) - z * se, statistics.fmean(d) + z * se)
    )
    assert result.junit().count("<failure") == 1


def test_two_close_systems_are_inconclusive_with_the_mde_and_items_needed() -> None:
    run = mmlu()
    result = gate(run.select([CLOSE[0]]), run.select([CLOSE[1]]))
    assert result.verdict == "inconclusive"
    assert result.exit_code() == 3
    assert result.exit_code("pass") == 0
    assert result.exit_code("fail") == 1
    (h,) = result.hypotheses
    assert h.low < -0.02 < h.high
    c = run.metrics["correct"][run.system == run.systems.index(CLOSE[0])]
    b = run.metrics["correct"][run.system == run.systems.index(CLOSE[1])]
    d = (c - b).tolist()
    v, n = statistics.variance(d), len(d)
    z = NORMAL.inv_cdf(1 - 0.05 / 2) + NORMAL.inv_cdf(0.8)
    assert h.mde == pytest.approx(z * math.sqrt(v / n), rel=1e-12)
    assert h.n_needed == math.ceil(v * z * z / 0.02**2)
    assert h.power == pytest.approx(NORMAL.cdf(0.02 / math.sqrt(v / n) - NORMAL.inv_cdf(0.975)))
    text = result.markdown()
    assert f"{100 * h.mde:.1f} pp" in text
    assert f"| {h.n_needed:,} |" in text  # the Items needed column


def test_p_values_against_enumeration_and_holm_by_hand() -> None:
    rng = np.random.default_rng(7)
    base = rng.uniform(0, 1, 24).round(3)
    cand = (base + rng.normal(-0.01, 0.05, 24)).round(3)
    # Two datasets of 12 items: two hypotheses.
    scores = {"s": {("a" if i < 12 else "b", f"q{i}"): float(v) for i, v in enumerate(cand)}}
    baseline = {"s": {("a" if i < 12 else "b", f"q{i}"): float(v) for i, v in enumerate(base)}}
    result = gate(make_run(scores, "score"), make_run(baseline, "score"), margin=0.03)
    raw = []
    for h, part in zip(result.hypotheses, (slice(0, 12), slice(12, 24)), strict=True):
        x = [c - b + 0.03 for c, b in zip(cand[part], base[part], strict=True)]
        raw.append(_brute_force_p(x))
        assert h.method == "exact-enumeration"
        assert h.p_value == pytest.approx(raw[-1], rel=1e-12)
    low, high = sorted(raw)
    holm = {low: min(1, 2 * low), high: min(1, max(2 * low, high))}
    assert [h.p_value_holm for h in result.hypotheses] == pytest.approx([holm[p] for p in raw])


def test_zero_one_outcomes_at_margin_zero_are_the_exact_sign_test() -> None:
    # 40 discordant pairs, 28 against the candidate: McNemar's exact test (binomial).
    cand = [0.0] * 28 + [1.0] * 12 + [1.0] * 30
    base = [1.0] * 28 + [0.0] * 12 + [1.0] * 30
    result = gate(one_system("x", cand), one_system("y", base), margin=0.0)
    (h,) = result.hypotheses
    assert h.p_value == pytest.approx(binomtest(12, 40, 0.5).pvalue, rel=1e-12)
    assert h.verdict == "fail"  # 0.0117 < 0.05 and the difference is below 0


def test_zero_one_outcomes_at_the_margin_against_enumeration() -> None:
    cand = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0]
    base = [1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1]
    result = gate(one_system("x", cand), one_system("y", base), margin=0.05)
    (h,) = result.hypotheses
    x = [c - b + 0.05 for c, b in zip(cand, base, strict=True)]
    assert h.p_value == pytest.approx(_brute_force_p(x), rel=1e-12)


def test_items_in_one_run_are_left_out_and_counted() -> None:
    cand = make_run({"s": {("d", f"q{i}"): 1.0 for i in range(10)}})
    base = make_run({"s": {("d", f"q{i}"): 1.0 for i in range(2, 14)}})
    (h,) = gate(cand, base).hypotheses
    assert (h.n_pairs, h.candidate_only, h.baseline_only) == (8, 2, 4)
    assert "Items left out" in gate(cand, base).markdown()


def test_too_few_paired_items_are_refused_naming_the_share() -> None:
    cand = one_system("s", [1.0] * 10)
    base = make_run({"s": {("ds", f"q{i}"): 1.0 for i in range(6, 20)}})
    with pytest.raises(InputError, match=r"only 20\.0% of the items \(4 of 20\).*at least 50\.0%"):
        gate(cand, base)
    assert gate(cand, base, min_paired=0.2).hypotheses[0].n_pairs == 4


def test_systems_pair_by_name_when_runs_hold_several() -> None:
    cand = make_run({"a": {("d", "q"): 1.0}, "b": {("d", "q"): 1.0}, "new": {("d", "q"): 1}})
    base = make_run({"b": {("d", "q"): 0.0}, "a": {("d", "q"): 1.0}, "old": {("d", "q"): 1}})
    result = gate(cand, base)
    assert [(h.candidate_system, h.baseline_system, h.verdict) for h in result.hypotheses][2:] == [
        ("old", "old", "inconclusive")
    ]  # in the baseline only: see the test below
    assert [(h.candidate_system, h.baseline_system) for h in result.hypotheses][:2] == [
        ("a", "a"),
        ("b", "b"),
    ]
    assert result.candidate_only_systems == ("new",)
    assert result.baseline_only_systems == ("old",)
    with pytest.raises(InputError, match=r"no system of candidate .* is in baseline"):
        gate(cand.select(["new"]).select(["new"]), base.select(["old", "a"]))


def test_every_bad_setting_names_itself() -> None:
    run = one_system("s", [1.0, 0.0])
    for keywords, name in (
        ({"margin": -0.1}, "margin"),
        ({"margin": math.inf}, "margin"),
        ({"alpha": 1.0}, "alpha"),
        ({"min_paired": 0.0}, "min_paired"),
        ({"slice": "item"}, "slice"),
        ({"metrics": ["nope"]}, "nope"),
    ):
        with pytest.raises(InputError, match=name):
            gate(run, run, **keywords)  # type: ignore[arg-type]


def test_slices_by_task_dataset_or_none() -> None:
    scores = {"m": {(f"mmlu:subject={s},method=x", f"q{i}"): 1.0 for s in "ab" for i in range(3)}}
    helm = make_run(scores, metadata={"tool": "helm"})
    assert task_of(helm, "mmlu:subject=a,method=x [typos]") == "mmlu"
    assert [h.slice for h in gate(helm, helm, slice="task").hypotheses] == ["mmlu"]
    assert len(gate(helm, helm, slice="dataset").hypotheses) == 2
    assert [h.slice for h in gate(helm, helm, slice="none").hypotheses] == ["all"]
    plain = make_run(scores)  # any other source: the task is the dataset
    assert len(gate(plain, plain, slice="task").hypotheses) == 2


def test_an_inspect_log_against_itself_and_a_worse_copy() -> None:
    path = next(p for p in inspect_popularity().logs if "popularity_" in p.name)
    run = read_run(path)
    same = gate(path, path, margin=0.0 + 0.02)
    assert same.candidate == str(path)
    assert [h.slice for h in same.hypotheses] == ["popularity"]  # the Inspect task
    # Ten items all ties: p = 2 / 2**10 < 0.05.
    assert same.verdict == "pass"
    worse = Run.from_dict(run.to_dict() | {"metrics": {"match": [0.0] * len(run)}})
    result = gate(worse, run, metrics=["match"])
    (h,) = result.hypotheses
    base = run.metrics["match"]
    assert h.difference == pytest.approx(-base.mean()) == pytest.approx(-0.8)
    assert h.p_value == pytest.approx(_brute_force_p([0.02 - v for v in base]), rel=1e-12)
    assert h.verdict == result.verdict == "fail"  # 8 of 10 lost: p = 8 / 1024


def test_promptfoo_repeats_are_one_item_each() -> None:
    path = Path(__file__).parents[1] / "data" / "sources" / "promptfoo" / "real" / "results.json"
    run = read_run(path)
    same = gate(run, run)
    assert all(h.n_pairs == 8 for h in same.hypotheses)  # 24 rows: 8 tests x 3 repeats
    assert same.verdict == "pass"  # 8 items of +margin per system, Holm over 2: 2 * 2/2**8
    zero = dict(run.metrics) | {"correct": np.where(run.system == 1, 0.0, run.metrics["correct"])}
    worse = Run.from_dict(run.to_dict() | {"metrics": {k: v.tolist() for k, v in zero.items()}})
    result = gate(worse, run)
    h = next(h for h in result.hypotheses if h.candidate_system == run.systems[1])
    # Independent: each test's mean over its repeats, then the mean over tests.
    repeat_of = run.metadata["repeat_of"]
    groups: dict[str, list[float]] = {}
    for row in np.flatnonzero(run.system == 1):
        label = run.item_label(int(row))
        groups.setdefault(repeat_of[label], []).append(float(run.metrics["correct"][row]))
    assert h.baseline_mean == pytest.approx(
        statistics.fmean(map(statistics.fmean, groups.values()))
    )
    assert h.difference == pytest.approx(-h.baseline_mean)


def test_the_document_round_trips(tmp_path: Path) -> None:
    run = mmlu()
    result = gate(run.select([CLOSE[0], BEST]), run.select([BEST, CLOSE[0]]))
    result.write(tmp_path / "out")
    read = GateResult.read(tmp_path / "out" / "gate.json")
    assert read == result
    assert GateResult.from_dict(result.to_dict()) == result
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match=r"file is a file, not a folder"):
        result.write(tmp_path / "file")
    frame = result.to_frame()
    assert list(frame["verdict"]) == [h.verdict for h in result.hypotheses]


def _shuffled(run: Run, seed: int) -> Run:
    """The same run with its rows, its systems' order and its names' codes permuted."""
    import dataclasses

    rng = np.random.default_rng(seed)
    rows = rng.permutation(len(run))
    questions = rng.permutation(len(run.question_names))  # new code of each old code
    names = [""] * len(questions)
    for old, new in enumerate(questions):
        names[new] = run.question_names[old]
    return dataclasses.replace(
        run,
        question_names=tuple(names),
        system=run.system[rows],
        dataset=run.dataset[rows],
        question=questions[run.question[rows]].astype(np.int32),
        outcome=run.outcome[rows],
        metrics={k: v[rows] for k, v in run.metrics.items()},
        costs={k: v[rows] for k, v in run.costs.items()},
        responses=None, references=None, errors=None, question_texts=None, options=None,
        explanations=None,
    )  # fmt: skip


def test_the_result_does_not_depend_on_the_order_of_rows_or_codes() -> None:
    run = mmlu()
    candidate, baseline = run.select(list(CLOSE[:1])), run.select(list(CLOSE[1:]))
    expected = gate(candidate, baseline, margin=0.013).to_dict()
    for seed in range(3):
        shuffled = gate(_shuffled(candidate, seed), _shuffled(baseline, seed + 10), margin=0.013)
        got = shuffled.to_dict()
        assert got["hypotheses"] == expected["hypotheses"]


def test_an_interval_of_scores_in_0_1_stays_within_the_possible_differences() -> None:
    # Four items, every one a full regression: the normal width would reach below -100 pp.
    result = gate(one_system("s", [0.0] * 4), one_system("s", [1.0] * 4), min_paired=0.5)
    (h,) = result.hypotheses
    assert h.difference == -1.0
    assert -1.0 <= h.low <= h.high <= 1.0


def test_a_baseline_system_missing_from_the_candidate_is_inconclusive_not_a_pass() -> None:
    # Two multi-system runs; the candidate lost "crashed" (it crashed entirely in CI).
    same = {(d, f"q{i}"): 1.0 for d in ("d1", "d2") for i in range(20)}
    cand = make_run({"a": same, "b": same, "new": same})
    base = make_run({"a": same, "b": same, "crashed": dict(list(same.items())[:30])})
    result = gate(cand, base)
    assert result.verdict == "inconclusive"
    assert result.exit_code() == 3
    assert result.baseline_only_systems == ("crashed",)
    assert result.candidate_only_systems == ("new",)  # new systems stay left out
    tested = [h for h in result.hypotheses if h.baseline_system != "crashed"]
    assert len(tested) == 4
    assert {h.verdict for h in tested} == {"pass"}
    (missing,) = [h for h in result.hypotheses if h.baseline_system == "crashed"]  # per metric
    assert (missing.verdict, missing.reason) == ("inconclusive", "not in the candidate run")
    assert (missing.n_pairs, missing.candidate_only, missing.baseline_only) == (0, 0, 30)
    assert math.isnan(missing.p_value)
    assert math.isnan(missing.p_value_holm)
    # Outside the Holm family: the four tested rows are adjusted over four, not five.
    # Each p is 2 / 2**20 (all 20 differences +margin); Holm's smallest: 4 * that.
    assert min(h.p_value_holm for h in tested) == pytest.approx(4 * 2.0 / 2.0**20, rel=1e-9)
    assert "not in the candidate run" in result.markdown()
    assert "not in the candidate run" in result.junit()
    # A dataset in one run only is an inconclusive row with its reason too.
    base2 = make_run({"s": {("d1", f"q{i}"): 1.0 for i in range(30)}})
    cand2 = make_run({"s": {**{("d1", f"q{i}"): 1.0 for i in range(30)}, ("d9", "x"): 1.0}})
    rows = {h.slice: h for h in gate(cand2, base2, min_paired=0.9).hypotheses}
    assert rows["d9"].reason == "not in the baseline run"
    assert rows["d1"].reason == ""


def test_the_inconclusive_policy_is_a_setting_every_output_states() -> None:
    run = mmlu()
    cand, base = run.select([CLOSE[0]]), run.select([CLOSE[1]])
    default = gate(cand, base)
    assert default.settings["inconclusive"] == "exit"
    assert default.exit_code() == 3
    strict = gate(cand, base, inconclusive="fail")
    assert strict.verdict == "inconclusive"
    assert strict.settings["inconclusive"] == "fail"
    assert strict.exit_code() == 1
    assert strict.exit_code("exit") == 3  # the parameter still overrides
    assert gate(cand, base, inconclusive="pass").exit_code() == 0
    assert "count as a failure here (--inconclusive fail)" in strict.markdown()
    assert (
        "count as a pass here (--inconclusive pass)"
        in gate(cand, base, inconclusive="pass").markdown()
    )
    assert "exits 3" in default.markdown()
    root = ET.fromstring(strict.junit().split("\n", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None
    (case,) = suite.iter("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert case.find("skipped") is None
    assert "inconclusive, counted as a failure" in failure.get("message", "")
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "0")
    assert (root.get("failures"), suite.get("tests")) == ("1", "1")
    for policy in ("exit", "pass"):
        suite = ET.fromstring(gate(cand, base, inconclusive=policy).junit().split("\n", 1)[1])
        assert (suite.get("failures"), suite.find("testsuite").get("skipped")) == ("0", "1")  # type: ignore[union-attr]
    with pytest.raises(InputError, match="inconclusive"):
        gate(cand, base, inconclusive="maybe")
    assert GateResult.from_dict(strict.to_dict()) == strict
    # A version-1 document (no policy recorded) reads as "exit".
    old = strict.to_dict() | {"version": 1}
    old["settings"] = {k: v for k, v in old["settings"].items() if k != "inconclusive"}
    old["hypotheses"] = [{k: v for k, v in h.items() if k != "reason"} for h in old["hypotheses"]]
    assert GateResult.from_dict(old).exit_code() == 3


def test_the_wording_agrees_in_number() -> None:
    one = gate(one_system("s", [1.0] * 30), one_system("s", [1.0] * 30))
    text = one.markdown() + one.text() + repr(one)
    for wrong in ("1 hypotheses", "any of 1 hypothesis", "all 1 hypothes"):
        assert wrong not in text, wrong
    assert "1 hypothesis" in repr(one)
    run = mmlu()
    close = gate(run.select([CLOSE[0]]), run.select([CLOSE[1]]))
    (case,) = ET.fromstring(close.junit().split("\n", 1)[1]).iter("testcase")
    message = case.find("skipped").get("message", "")  # type: ignore[union-attr]
    assert not re.search(r"items needed [\d,]+ items", message), message
    assert re.search(r"[\d,]+ items needed", message), message
    md = close.markdown()
    assert "Δ = −margin" in md.split("|---")[0]  # the header says what the p tests
    assert "means over the paired items" in md.lower()
