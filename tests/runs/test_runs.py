"""The run model: built from a kag run and from evaluations, its views, its document."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats

from kagreport import KagreportError
from kagreport.evaluation import (
    AnswerEvaluation,
    DifferentItemsError,
    EvaluationComparison,
    evaluation_from_stats,
)
from kagreport.evaluation._compare import compare_scores
from kagreport.grading import StatsReport
from kagreport.runs import Run, compare_setups, cost_frontier, leaderboard

N = 500  # resamples: Monte Carlo on the larger pairs, so the seed's use is exercised


@pytest.fixture(scope="module")
def report() -> StatsReport:
    from kagreport.examples import mmlu_pro_philosophy
    from kagreport.grading import grade

    example = mmlu_pro_philosophy()
    return grade(example.datasets, example.results, keep_text=200)


@pytest.fixture(scope="module")
def run(report: StatsReport) -> Run:
    return Run.from_stats(report)


def _correct_by_item(report: StatsReport) -> dict[str, dict[str, float]]:
    """Setup -> item -> correctness, read row by row (independent of the run's columns)."""
    found: dict[str, dict[str, float]] = {}
    for row in report.items:
        found.setdefault(row.setup, {})[f"{row.dataset}/{row.question}"] = float(
            row.outcome.label == "correct"
        )
    return found


def _holm(p: list[float]) -> list[float]:
    """Holm (1979) step-down by hand: the i-th smallest times (k - i), running maximum."""
    order = sorted(range(len(p)), key=p.__getitem__)
    adjusted, running = [0.0] * len(p), 0.0
    for i, at in enumerate(order):
        running = max(running, min(1.0, (len(p) - i) * p[at]))
        adjusted[at] = running
    return adjusted


def _holm_levels(p: list[float], alpha: float = 0.05) -> list[float]:
    """The level Holm (1979) tests each hypothesis at, by hand: alpha / (k - i) at step i
    while it rejects, then the level of the first step that does not, for the rest."""
    order = sorted(range(len(p)), key=p.__getitem__)
    levels, stopped, first_step = [0.0] * len(p), None, {}
    for i, at in enumerate(order):
        step = first_step.setdefault(p[at], alpha / (len(p) - i))  # ties: the first's step
        if stopped is None and p[at] >= alpha / (len(p) - i):
            stopped = alpha / (len(p) - i)
        levels[at] = step if stopped is None else min(step, stopped)
    return levels


def _unadjusted(comparison: EvaluationComparison) -> dict[str, Any]:
    """A comparison without what the run's family sets: each row's Holm p-value and
    interval, and the settings naming them (issue #28: one family per comparison)."""
    data = comparison.to_dict()
    for row in data["metrics"]:
        for key in ("p_value_holm", "ci_low", "ci_high"):
            row.pop(key)
    for key in ("interval", "adjustment", "family_alpha", "margin", "confidence", "levels"):
        data["settings"].pop(key, None)
    return data


def test_from_stats_keeps_the_report(report: StatsReport, run: Run) -> None:
    assert run.systems == report.setup_names
    assert len(run) == len(report.items)
    assert run.responses is not None
    assert run.references is not None
    # The answer key of each row, as the kag bridge gives it.
    bridge = evaluation_from_stats(report, report.setup_names[0])
    keys = {i.identifier: i.reference for i in bridge.items}
    for r in range(len(run)):
        if run.systems[run.system[r]] == report.setup_names[0]:
            assert run.references[r] == keys[run.item_label(r)]
    assert run.errors is not None
    by_item = _correct_by_item(report)
    for row in leaderboard(run):
        values = list(by_item[row.system].values())
        assert row.n_items == len(values)
        assert row.mean == pytest.approx(sum(values) / len(values), abs=1e-15)
    means = [row.mean for row in leaderboard(run)]
    assert means == sorted(means, reverse=True)


def test_a_metric_by_name(report: StatsReport, run: Run) -> None:
    # kag's outcome: 1 for a correct record, 0 for a wrong one or an error.
    correct = [1.0 if o == "correct" else 0.0 for o in report.items.column("outcome")]
    assert run.metric("correct").tolist() == correct
    with pytest.raises(KagreportError, match=r"^the run has no metric 'speed'; metrics: correct$"):
        run.metric("speed")


@pytest.mark.parametrize("pairs", ["baseline", "all-pairs"])
def test_comparisons_match_a_direct_compare(report: StatsReport, run: Run, pairs: str) -> None:
    by_item = _correct_by_item(report)
    found = compare_setups(run, pairs=pairs, n_resamples=N)  # type: ignore[arg-type]
    names = list(report.setup_names)
    expected_pairs = (
        [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
        if pairs == "all-pairs"
        else [(s, names[0]) for s in names[1:]]
    )
    assert [(c.candidate, c.baseline) for c in found.comparisons] == expected_pairs
    assert found.family == tuple(f"{a} vs {b}" for a, b in expected_pairs)
    p_values, null_ses = [], []
    for c in found.comparisons:
        mine, theirs = by_item[c.candidate], by_item[c.baseline]
        shared = sorted(set(mine) & set(theirs), key=lambda i: tuple(i.split("/", 1)))
        direct = compare_scores(
            {"correct": [mine[i] for i in shared]},
            {"correct": [theirs[i] for i in shared]},
            n_resamples=N,
            candidate_label=c.candidate,
            baseline_label=c.baseline,
        )
        # The test is the direct one; the Holm p-value and the interval are the run's family's
        # (issue #28: no bootstrap interval beside a run-level p-value), checked below.
        assert _unadjusted(c.comparison) == _unadjusted(direct)
        assert (c.only_candidate, c.only_baseline) == (
            len(set(mine) - set(theirs)),
            len(set(theirs) - set(mine)),
        )
        label = {1.0: "correct"}
        flips = {i for i in shared if mine[i] != theirs[i]}
        assert {f[0] for f in c.flips} == flips
        assert all(label.get(mine[i]) in (f[1], None) for f in c.flips for i in [f[0]])
        assert list(c.flips) == sorted(c.flips)
        p_values.append(direct.metrics["correct"].p_value)
        null_ses.append(math.sqrt(sum((mine[i] - theirs[i]) ** 2 for i in shared)) / len(shared))
    family = _holm(p_values)
    got = [c.p_values_family["correct"] for c in found.comparisons]
    assert got == pytest.approx(family, rel=1e-12, abs=0)
    # The interval at the level Holm tested the pair at: the mean difference ± z times the
    # sign-flip statistic's null standard error, sqrt(sum d^2) / n (quantiles from SciPy),
    # its bound nearest 0 on the test's side of 0 where the two disagree.
    levels = _holm_levels(p_values)
    for c, level, null_se in zip(found.comparisons, levels, null_ses, strict=True):
        m = c.comparison.metrics["correct"]
        assert m.p_value_holm == c.p_values_family["correct"]
        half = scipy_stats.norm.isf(level / 2) * null_se
        rejects = m.p_value_holm < 0.05
        if rejects == (half < abs(m.mean_difference)):
            assert (m.ci_low, m.ci_high) == pytest.approx(
                (m.mean_difference - half, m.mean_difference + half), rel=1e-9
            )
        assert (m.ci_low > 0 or m.ci_high < 0) == (m.p_value_holm < 0.05)


def _evaluations(report: StatsReport, a: str, b: str) -> list[AnswerEvaluation]:
    """The two setups as evaluations, cut to the items both hold."""
    first = evaluation_from_stats(report, a)
    second = evaluation_from_stats(report, b)
    shared = {i.identifier for i in first.items} & {i.identifier for i in second.items}
    return [
        dataclasses.replace(e, items=tuple(i for i in e.items if i.identifier in shared))
        for e in (first, second)
    ]


def test_from_evaluations_drives_the_same_comparison(report: StatsReport, run: Run) -> None:
    from_stats = {c.candidate: c for c in compare_setups(run, n_resamples=N).comparisons}
    baseline = report.setup_names[0]
    for candidate in report.setup_names[1:]:
        evaluations = _evaluations(report, candidate, baseline)
        pair = Run.from_evaluations(evaluations)
        assert pair.systems == (candidate, baseline)
        (c,) = compare_setups(pair, baseline=baseline, n_resamples=N).comparisons
        # The same test; the Holm family differs (one pair here, the run's pairs there).
        assert _unadjusted(c.comparison) == _unadjusted(from_stats[candidate].comparison)
        assert c.flips == from_stats[candidate].flips
        # The independent route: the evaluations' own paired comparison.
        direct = evaluations[0].compare(evaluations[1], n_resamples=N, metrics=["correct"])
        assert c.comparison.metrics["correct"].p_value == direct.metrics["correct"].p_value
        by_hand = [
            math.fsum(i.scores["correct"] for i in e.items) / len(e.items) for e in evaluations
        ]
        assert [r.mean for r in leaderboard(pair)] == sorted(by_hand, reverse=True)


def test_from_evaluations_refuses_different_items(report: StatsReport) -> None:
    short = "deepseek-coder-v2"  # has no output for some questions
    other = next(n for n in report.setup_names if n != short)
    evaluations = [evaluation_from_stats(report, n) for n in (short, other)]
    with pytest.raises(DifferentItemsError) as caught:
        Run.from_evaluations(evaluations)
    assert caught.value.only_candidate + caught.value.only_baseline > 0
    assert short in str(caught.value)
    assert other in str(caught.value)
    twice = dataclasses.replace(evaluations[0], items=evaluations[0].items * 2)
    with pytest.raises(KagreportError, match="twice"):
        Run.from_evaluations([twice])
    with pytest.raises(KagreportError, match="labels repeat"):
        Run.from_evaluations(evaluations, labels=["a", "a"])
    with pytest.raises(KagreportError, match="at least one"):
        Run.from_evaluations([])


def _shuffled(run: Run, seed: int) -> Run:
    """The same run with its rows and its systems in another order."""
    rng = np.random.default_rng(seed)
    rows = rng.permutation(len(run))
    systems = list(rng.permutation(len(run.systems)))
    remap = np.array([systems.index(s) for s in range(len(run.systems))], dtype=np.int32)

    def texts(t: Any) -> Any:
        return None if t is None else tuple(t[i] for i in rows.tolist())

    return dataclasses.replace(
        run,
        systems=tuple(run.systems[s] for s in systems),
        system=remap[run.system[rows]],
        dataset=run.dataset[rows],
        question=run.question[rows],
        outcome=run.outcome[rows],
        metrics={k: v[rows] for k, v in run.metrics.items()},
        costs={k: v[rows] for k, v in run.costs.items()},
        responses=texts(run.responses),
        references=texts(run.references),
        errors=texts(run.errors),
    )


def test_order_does_not_change_the_results(run: Run) -> None:
    baseline = run.systems[2]
    shuffled = _shuffled(run, 7)
    assert shuffled.systems != run.systems
    one = compare_setups(run, baseline=baseline, n_resamples=N)
    two = compare_setups(shuffled, baseline=baseline, n_resamples=N)
    by_candidate = {c.candidate: c for c in two.comparisons}
    assert set(by_candidate) == {c.candidate for c in one.comparisons}
    for c in one.comparisons:
        other = by_candidate[c.candidate]
        assert other.comparison == c.comparison
        assert other.p_values_family == c.p_values_family
        assert other.flips == c.flips
    ranks = {r.system: (r.mean, r.n_items) for r in leaderboard(run)}
    assert {r.system: (r.mean, r.n_items) for r in leaderboard(shuffled)} == ranks


def test_json_round_trip(run: Run, tmp_path: Any) -> None:
    text = run.dumps()
    document = json.loads(text)
    assert (document["schema"], document["version"]) == ("kagreport.run", 2)
    again = Run.loads(text)
    assert again == run
    assert again.systems == run.systems
    np.testing.assert_array_equal(again.costs["generation_secs"], run.costs["generation_secs"])
    path = tmp_path / "run.json"
    run.write(path)
    assert Run.read(path) == run
    one = compare_setups(run, n_resamples=N)
    two = compare_setups(Run.read(path), n_resamples=N)
    assert [c.comparison for c in one.comparisons] == [c.comparison for c in two.comparisons]


def _small() -> Run:
    # Three systems x two items; costs by hand: A 1 s, B 2 s, C 3 s; correct A 0.5, B 1, C 0.5.
    return Run(
        kind="answers",
        systems=("A", "B", "C"),
        dataset_names=("d",),
        question_names=("q1", "q2"),
        system=np.array([0, 0, 1, 1, 2, 2], dtype=np.int32),
        dataset=np.zeros(6, dtype=np.int32),
        question=np.array([0, 1, 0, 1, 0, 1], dtype=np.int32),
        outcome=np.array([0, 1, 0, 0, 1, 0], dtype=np.int8),
        metrics={"correct": np.array([1, 0, 1, 1, 0, 1], dtype=np.float64)},
        costs={"generation_secs": np.array([1, 1, 2, 2, 3, math.nan])},
    )


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("schema", "other", "schema"),
        ("version", 3, "version"),
        ("kind", "x", "kind"),
        ("systems", [1], "systems"),
        ("system", [0, 0, 1, 1, 2, 9], "system"),
        ("system", [0, 0, 1, 1, 2, 2**40], "system"),
        ("outcome", [0, 1], "outcome"),
        ("metrics", {"correct": ["x"] * 6}, "metrics.correct"),
        ("costs", [], "costs"),
        ("responses", [1] * 6, "responses"),
        ("metadata", [], "metadata"),
    ],
)
def test_bad_documents_name_the_field(field: str, value: Any, named: str) -> None:
    document = json.loads(_small().dumps())
    document[field] = value
    with pytest.raises(KagreportError, match=named.replace(".", r"\.")) as caught:
        Run.loads(json.dumps(document), "run.json")
    assert "run.json" in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        # Row 5 (C, d/q2) made a second row of C's d/q1: every view pairs rows by item.
        ("question", [0, 1, 0, 1, 0, 0], "'C' holds item 'd/q1' in two rows"),
        ("question_names", ["q1", "q1"], "question names hold 'q1' twice"),
        ("dataset_names", ["d", "d"], "dataset names hold 'd' twice"),
    ],
)
def test_a_repeated_item_or_name_is_refused(field: str, value: Any, named: str) -> None:
    document = json.loads(_small().dumps())
    document[field] = value
    if field == "dataset_names":
        document["dataset"] = [0, 0, 0, 1, 1, 1]  # both codes used, items still distinct
    with pytest.raises(KagreportError, match=named) as caught:
        Run.loads(json.dumps(document), "run.json")
    assert "run.json" in str(caught.value)


def test_not_json_and_unreadable(tmp_path: Any) -> None:
    with pytest.raises(KagreportError, match="not a JSON document"):
        Run.loads("{", "run.json")
    with pytest.raises(KagreportError, match="cannot read"):
        Run.read(tmp_path / "missing.json")


def test_a_fifo_or_a_file_not_utf8_is_one_error(tmp_path: Any) -> None:
    # A FIFO with no writer is refused at once (open() would wait for a writer for ever):
    # read in a child process, so that a hang fails the test instead of stalling it.
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    script = (
        "import sys\nfrom kagreport.runs import Run\n"
        "try:\n    Run.read(sys.argv[1])\nexcept Exception as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert (
        done.stdout
        == f"cannot read run document {fifo}: not a regular file (a FIFO, socket or device)\n"
    )
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"schema": "caf\xe9"}')  # the first bad byte at offset 15
    with pytest.raises(KagreportError, match=f"{latin} is not UTF-8 at byte 15"):
        Run.read(latin)


def test_cost_frontier_and_leaderboard_by_hand() -> None:
    run = _small()
    points = {p.system: p for p in cost_frontier(run, "generation_secs")}
    # Mean costs A 1, B 2, C 3 (its NaN skipped); values A .5, B 1, C .5: C is dominated.
    assert [(p.cost, p.value) for p in points.values()] == [(1, 0.5), (2, 1.0), (3, 0.5)]
    assert {s for s, p in points.items() if p.on_frontier} == {"A", "B"}
    board = leaderboard(run)
    assert [(r.system, r.rank, r.mean) for r in board] == [
        ("B", 1, 1.0),
        ("A", 2, 0.5),
        ("C", 3, 0.5),
    ]
    with pytest.raises(KagreportError, match="no cost"):
        cost_frontier(run, "tokens")
    with pytest.raises(KagreportError, match="no metric"):
        leaderboard(run, "f1")
    with pytest.raises(KagreportError, match="all-pairs"):
        compare_setups(run, pairs="every")  # type: ignore[arg-type]
    with pytest.raises(KagreportError, match="no system"):
        compare_setups(run, baseline="Z")


def test_a_million_rows_fit() -> None:
    n = 1_000_000
    rows = np.arange(n, dtype=np.int32)
    run = Run(  # one system over 1,000 datasets x 1,000 questions: each item once
        kind="answers",
        systems=("A",),
        dataset_names=tuple(f"d{i}" for i in range(1000)),
        question_names=tuple(f"q{i}" for i in range(1000)),
        system=np.zeros(n, dtype=np.int32),
        dataset=rows // 1000,
        question=rows % 1000,
        outcome=np.zeros(n, dtype=np.int8),
        metrics={"correct": np.ones(n)},
        costs={name: np.ones(n) for name in ("generation_secs", "retrieval_secs")},
    )
    print(f"bytes per row: {run.nbytes / n:.1f}")
    # 3 int32 codes + 1 int8 outcome + 3 float64 columns = 12 + 1 + 24 = 37 bytes.
    assert run.nbytes == 37 * n


def test_the_site_computes_no_statistics_of_its_own() -> None:
    """The site's pairings, flips and run-level Holm come from kagreport.runs."""
    import ast
    from pathlib import Path

    import kagreport.site

    statistics = {"compare_scores", "compare_items", "holm_adjust", "sign_flip_test"}
    statistics |= {"bootstrap_mean_interval", "paired_differences"}
    for path in Path(kagreport.site.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                used = statistics & {alias.name for alias in node.names}
                assert not used, f"{path.name} imports {used}"


def test_retrieval_evaluations_family_over_pairs_and_metrics() -> None:
    from kagreport.examples import fast_graphrag_2wiki

    evaluations = fast_graphrag_2wiki()
    names = list(evaluations)
    run = Run.from_evaluations(list(evaluations.values()), labels=names)
    assert run.kind == "retrieval"
    metrics = ("mrr", "recall@5")
    found = compare_setups(run, pairs="all-pairs", metrics=metrics, n_resamples=N)
    p_values, got = [], []
    for c in found.comparisons:
        direct = evaluations[c.candidate].compare(
            evaluations[c.baseline], n_resamples=N, metrics=list(metrics)
        )
        for m in metrics:
            assert c.comparison.metrics[m].p_value == direct.metrics[m].p_value
            p_values.append(direct.metrics[m].p_value)
            got.append(c.p_values_family[m])
    # The run-level family: every pair (4 systems: 6) x metric (2) = 12 hypotheses.
    assert len(got) == 12
    assert got == pytest.approx(_holm(p_values), rel=1e-12, abs=0)


def test_pairs_without_a_shared_item_are_skipped() -> None:
    # A and C answer q1, B only q2: B vs A shares nothing and is left out of the family.
    run = Run(
        kind="answers",
        systems=("A", "B", "C"),
        dataset_names=("d",),
        question_names=("q1", "q2"),
        system=np.array([0, 1, 2], dtype=np.int32),
        dataset=np.zeros(3, dtype=np.int32),
        question=np.array([0, 1, 0], dtype=np.int32),
        outcome=np.array([0, 0, 1], dtype=np.int8),
        metrics={"correct": np.array([1.0, 1.0, 0.0])},
    )
    found = compare_setups(run, n_resamples=N)
    assert found.skipped == (("B", "A", 1, 1),)
    assert found.family == ("C vs A",)
    (c,) = found.comparisons
    assert c.flips == (("d/q1", "incorrect", "correct"),)
    # One pair, one item: the exact two-sided sign-flip p-value is 2/2 = 1.
    assert c.p_values_family["correct"] == 1.0


def test_select_keeps_the_rows_of_the_systems_and_datasets_asked_for(run: Run) -> None:
    systems = [run.systems[2], run.systems[0]]
    dataset = run.dataset_names[0]
    cut = run.select(systems, [dataset])
    assert cut.systems == tuple(systems)
    # By hand: every row of the run whose system and dataset were asked for, in row order.
    want = [
        (run.systems[s], run.dataset_names[d], run.question_names[q])
        for s, d, q in zip(run.system, run.dataset, run.question, strict=True)
        if run.systems[s] in systems and run.dataset_names[d] == dataset
    ]
    got = [
        (cut.systems[s], cut.dataset_names[d], cut.question_names[q])
        for s, d, q in zip(cut.system, cut.dataset, cut.question, strict=True)
    ]
    assert got == want
    with pytest.raises(KagreportError, match="no system 'nope'"):
        run.select(["nope"])
