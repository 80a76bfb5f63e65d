"""The kag bridge (issue #10): items in dataset order, kag's accuracy bit for bit, one index."""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path
from typing import Any

import pytest

import kagreport.evaluation._kag as bridge
import kagreport.kag._walk as walk
from conftest import Tree, mcq, run_cli
from kagreport import grade
from kagreport.evaluation import (
    AnswerEvaluation,
    AnswerItem,
    evaluate_answers,
    evaluation_from_stats,
)
from kagreport.evaluation._kag import answer_items_from_run
from kagreport.evaluation._report import mean_scores
from kagreport.evaluation.judges import OptionExtraction
from kagreport.grading._items import ItemTable
from kagreport.kag import load_datasets

# ------------------------------------------------------------------------------ dataset order

#: Datasets in a non-alphabetical file order, questions in a non-sorted file order.
TRUTH = {
    "zeta": {"q-b": mcq("A"), "q-c": mcq("B"), "q-a": mcq("A"), "q-10": mcq("A")},
    "alpha": {"x2": mcq("A"), "x10": mcq("B"), "x1": mcq("A"), "open": {"input": "Why?"}},
    "mid": {"m": mcq("A")},
}


def _expected_order(path: Path, *, free_form: bool = False) -> list[str]:
    """Dataset order from the JSON alone: datasets as the file lists them, questions sorted by
    name (kag reads the file into a BTreeMap; names are ASCII, so str order is byte order)."""
    truth = json.loads(path.read_text(encoding="utf-8"))  # dicts keep the file's order
    return [
        f"{dataset}/{question}"
        for dataset, entries in truth.items()
        for question in sorted(entries)
        if free_form or entries[question].get("output") is not None
    ]


def _order_tree(tree: Tree) -> None:
    tree.truth = json.loads(json.dumps(TRUTH))
    tree.save_truth()
    # Folders created in reverse of the expected order, so a listing in creation order (or
    # its reverse, or a hash order) is unlikely to be the dataset order by accident.
    for dataset in reversed(list(TRUTH)):
        for question in reversed(list(TRUTH[dataset])):
            for setup in ("s2", "s1"):
                if question == "open":
                    tree.ok(dataset, question, setup, "because")
                elif question.endswith("c") and setup == "s2":
                    tree.error(dataset, question, setup)
                else:
                    tree.ok(dataset, question, setup, "A")


@pytest.fixture(params=["listed", "reversed", "shuffled"])
def listing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The file system's listing order, forced: as listed, reversed, or shuffled."""
    scandir = walk._scandir
    rng = random.Random(3)

    def listed(path: str) -> list[os.DirEntry[str]]:
        entries = scandir(path)
        if request.param == "reversed":
            entries.reverse()
        elif request.param == "shuffled":
            rng.shuffle(entries)
        return entries

    monkeypatch.setattr(walk, "_scandir", listed)
    return str(request.param)


def test_evaluation_items_come_in_dataset_order(tree: Tree, listing: str) -> None:
    _order_tree(tree)
    expected = _expected_order(tree.datasets_path)
    assert expected[:4] == ["zeta/q-10", "zeta/q-a", "zeta/q-b", "zeta/q-c"]  # by hand
    report = grade(tree.datasets_path, tree.results)
    for setup in ("s1", "s2"):
        for answers in (False, True):
            ev = evaluation_from_stats(report, setup, answers=answers)
            assert [i.identifier for i in ev.items] == expected, (listing, setup)
            for item in ev.items:  # every setup answered "A"; s2 erred on the "…c" questions
                dataset, question = item.identifier.split("/")
                right = TRUTH[dataset][question]["output"]["answer"] == "A"
                erred = setup == "s2" and question.endswith("c")
                assert item.scores["correct"] == float(right and not erred), item.identifier
    # The order does not depend on the walk: it is the same for every listing.
    assert [i.identifier for i in ev.items] == _expected_order(tree.datasets_path)


def test_run_answers_come_in_dataset_order(tree: Tree, listing: str) -> None:
    _order_tree(tree)
    every = _expected_order(tree.datasets_path, free_form=True)
    for questions, expected in (
        ("all", every),
        ("mcq", _expected_order(tree.datasets_path)),
        ("free-form", ["alpha/open"]),
    ):
        items = answer_items_from_run(
            tree.datasets_path,
            tree.results,
            "s1",
            questions=questions,  # type: ignore[arg-type]
        )
        assert [i.identifier for i in items] == expected, (listing, questions)
    evaluation = evaluate_answers(
        answer_items_from_run(tree.datasets_path, tree.results, "s2", questions="mcq"),
        [OptionExtraction()],
        agreement_resamples=0,
    )
    assert [i.identifier for i in evaluation.items] == _expected_order(tree.datasets_path)


def test_evaluate_cli_writes_items_in_dataset_order(tree: Tree) -> None:
    _order_tree(tree)
    judges = tree.root / "j.toml"
    judges.write_text('[[judges]]\nkind = "option_extraction"\n', encoding="utf-8")
    out = tree.root / "ev.json"
    done = run_cli("evaluate", "-d", str(tree.datasets_path), "-r", str(tree.results),
                   "--setup", "s1", "--questions", "all", "--judges", str(judges),
                   "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    ev = AnswerEvaluation.read(out)
    assert [i.identifier for i in ev.items] == _expected_order(tree.datasets_path, free_form=True)


def test_dataset_order_ignores_the_input_order() -> None:
    truth = load_datasets_from(TRUTH)
    names = [(d, q) for d, entries in TRUTH.items() for q in entries]
    expected = [("zeta", "q-10"), ("zeta", "q-a"), ("zeta", "q-b"), ("zeta", "q-c"),
                ("alpha", "open"), ("alpha", "x1"), ("alpha", "x10"), ("alpha", "x2"),
                ("mid", "m")]  # fmt: skip
    for seed in range(5):
        random.Random(seed).shuffle(names)
        assert bridge.dataset_order(truth, names) == expected
    # Datasets the file does not know come last, by name; without a file, all by name.
    assert bridge.dataset_order(truth, [("b", "x"), ("mid", "m"), ("a", "y")]) == [
        ("mid", "m"), ("a", "y"), ("b", "x")
    ]  # fmt: skip
    assert bridge.dataset_order(None, [("zeta", "b"), ("alpha", "a"), ("zeta", "a")]) == [
        ("alpha", "a"), ("zeta", "a"), ("zeta", "b")
    ]  # fmt: skip


def load_datasets_from(data: dict[str, Any]) -> Any:
    from kagreport.kag._datasets import parse_datasets

    return parse_datasets(json.dumps(data))


# --------------------------------------------------------------------- accuracy bit for bit


def _random_run(tree: Tree, setups: int, questions: int, seed: int) -> dict[str, tuple[int, int]]:
    """Setups with random outcomes (and random missing files); setup -> (correct, total)."""
    rng = random.Random(seed)
    for q in range(questions):
        tree.truth.setdefault("ds", {})[f"q{q}"] = mcq("A")
    tree.save_truth()
    counts: dict[str, tuple[int, int]] = {}
    for s in range(setups):
        setup = f"s{s}"
        skill, missing = rng.random(), rng.random() * 0.5
        correct = total = 0
        for q in range(questions):
            if rng.random() < missing:
                continue  # no result file for this question
            draw = rng.random()
            if draw < 0.1:
                tree.error("ds", f"q{q}", setup)
            else:
                right = draw < skill
                tree.ok("ds", f"q{q}", setup, "A" if right else "B")
                correct += right
            total += 1
        if total:
            counts[setup] = (correct, total)
    return counts


@pytest.mark.slow
def test_correct_metric_equals_kag_accuracy_bit_for_bit(tree: Tree) -> None:
    counts = _random_run(tree, setups=40, questions=60, seed=11)
    report = grade(tree.datasets_path, tree.results)
    # The fault was real here: a sum of 1/n terms misses k/n in the last bit for some setups.
    assert any(math.fsum(1 / n for _ in range(k)) != k / n for k, n in counts.values())
    for setup, (correct, total) in counts.items():
        accuracy = correct / total  # Python float division, as kag's f64 division
        ev = evaluation_from_stats(report, setup, answers=False)
        assert ev.metrics["correct"] == accuracy, setup
        assert ev.metrics["correct"] == report[setup].overall.accuracy, setup
        assert len(ev.items) == total
        assert ev.errors["system"] == report[setup].overall.errors


@pytest.mark.slow
def test_mean_scores_keeps_exact_sums_exact() -> None:
    for n in range(1, 60):
        for k in range(n + 1):
            items = [
                AnswerItem(identifier=f"i{i}", question="q", answer="a",
                           scores={"m": 1.0 if i < k else 0.0})
                for i in range(n)
            ]  # fmt: skip
            assert mean_scores(items)["m"] == k / n, (k, n)
    # Integer scores too (a 1-5 scale): the sum is exact, so one rounding of sum / n.
    scale = [AnswerItem(identifier=f"i{i}", question="q", answer="a", scores={"m": float(v)})
             for i, v in enumerate([5, 3, 4, 4, 2, 5, 1])]  # fmt: skip
    assert mean_scores(scale)["m"] == 24 / 7
    # Scores near the float limit still have a finite mean.
    big = [AnswerItem(identifier=f"i{i}", question="q", answer="a", scores={"m": 1.7e308})
           for i in range(3)]  # fmt: skip
    assert mean_scores(big)["m"] == pytest.approx(1.7e308)


# -------------------------------------------------------------------------- one index per run


def test_every_setup_uses_one_index_of_the_table(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = _random_run(tree, setups=29, questions=30, seed=5)
    report = grade(tree.datasets_path, tree.results)
    built = []
    original = bridge._SetupIndex.__init__

    def counting(self: Any, table: ItemTable, truth: Any) -> None:
        built.append(table)
        original(self, table, truth)

    def no_scan(self: ItemTable) -> Any:
        raise AssertionError("a full row scan of the item table")

    monkeypatch.setattr(bridge._SetupIndex, "__init__", counting)
    monkeypatch.setattr(ItemTable, "__iter__", no_scan)
    evaluations = {s: evaluation_from_stats(report, s, answers=False) for s in counts}
    assert len(built) == 1  # indexed once for all 29 setups
    assert sum(len(e.items) for e in evaluations.values()) == len(report.items)
    for setup, (_, total) in counts.items():
        assert len(evaluations[setup].items) == total
    # Another datasets file (another order) is indexed again, not served a stale order.
    other = type(report)(**{**report.__dict__, "ground_truth": load_datasets(tree.datasets_path)})
    evaluation_from_stats(other, next(iter(counts)), answers=False)
    assert len(built) == 2


def test_item_fields_match_the_table(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.question("ds", "q2", mcq("B"))
    tree.ok("ds", "q1", "kag", " a ", secs=2, nanos=500, prompt="xyz", retrieval=(1, 5, 3, 4, 5))
    tree.error("ds", "q2", "kag", "timed out")
    report = grade(tree.datasets_path, tree.results)
    first, second = evaluation_from_stats(report, "kag").items
    assert first.identifier == "ds/q1"
    assert first.answer == " a "
    assert first.reference == "A"
    assert first.latency == 2.0000005
    assert first.metadata == {
        "dataset": "ds", "question": "q1", "outcome": "correct", "retrieval_secs": 1.000000005,
        "vertices": 3, "relationships": 4, "properties": 5, "context_bytes": 3,
    }  # fmt: skip
    assert (second.answer, second.error, second.latency) == (None, "timed out", None)
    assert second.metadata["outcome"] == "error"
    assert second.metadata["retrieval_secs"] is None
    assert second.scores == {"correct": 0.0}
