"""kag stats grading rules (KAG_STATS_SPEC.md sections 2 and 4, PITFALLS.md B1 and B2).

Every expected number here is worked out by hand from the spec, not taken from the code.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from conftest import Tree, mcq
from kagreport import ResultTreeError, grade
from kagreport.grading import Outcome
from kagreport.grading._rule import grade_response


def overall(report, setup):  # type: ignore[no-untyped-def]
    return report[setup].overall.to_dict()


def test_b1_kag_rule_is_exact(tree: Tree) -> None:
    responses = {
        "q1": "B",
        "q2": " b\n",
        "q3": "\u00a0B\u2003",
        "q4": "B.",
        "q5": "(B)",
        "q6": "Answer: B",
        "q7": "\uff22",
        "q8": "",
        "q9": "\u212a",
        "q10": "\u001fB",
    }
    for q, result in responses.items():
        entry = mcq("k", {"j": "x", "k": "y"}) if q == "q9" else mcq("B")
        tree.question("ds", q, entry)
        tree.ok("ds", q, "base", result)
    report = grade(tree.datasets_path, tree.results)
    assert overall(report, "base") == {
        "total": 10,
        "correct": 3,
        "incorrect": 7,
        "errors": 0,
        "parsed": 10,
        "accuracy": 0.3,
        "precision": 0.3,
        "coverage": 1.0,
        "avg_generation_secs": 1.0,
        "total_generation_secs": 10.0,
        "avg_context_length": 1.0,
        "retrieval": None,
    }
    graded = {
        report.items.question_names[int(code)]: Outcome(int(outcome))
        for code, outcome in zip(
            report.items.codes("question"), report.items.codes("outcome"), strict=True
        )
    }
    assert {q for q, o in graded.items() if o is Outcome.CORRECT} == {"q1", "q2", "q3"}


@pytest.mark.parametrize(
    ("response", "answer", "expected"),
    [
        ("B", "b", True),
        ("b", "B", True),
        ("b.", "b", False),
        ("Answer: b", "b", False),
        ("\u00e9", "\u00c9", False),  # non-ASCII letters are not case-folded
        ("\u0085b\u3000", "b", True),  # NEL and IDEOGRAPHIC SPACE are White_Space
        ("\u200bb", "b", False),  # ZERO WIDTH SPACE is not White_Space
        ("\u001cb", "b", False),  # str.strip() would remove U+001C; Rust trim does not
        ("b", " b", False),  # the answer is not trimmed
        ("ab", "AB", True),  # multi-character keys compare as wholes
    ],
)
def test_grade_response(response: str, answer: str, expected: bool) -> None:
    assert grade_response(response, answer) is expected


def test_b2_zero_denominators_and_no_partial_credit(tree: Tree) -> None:
    for q in ("q1", "q2", "q3"):
        tree.question("ds", q, mcq("A"))
        tree.error("ds", q, "allerr", "request timed out")
    tree.ok("ds", "q1", "mixed", "A")
    tree.ok("ds", "q2", "mixed", "I cannot tell")
    tree.error("ds", "q3", "mixed", "x")
    report = grade(tree.datasets_path, tree.results)
    assert [s.setup for s in report.setups] == ["mixed", "allerr"]
    assert overall(report, "allerr") == {
        "total": 3,
        "correct": 0,
        "incorrect": 0,
        "errors": 3,
        "parsed": 0,
        "accuracy": 0.0,
        "precision": None,
        "coverage": 0.0,
        "avg_generation_secs": None,
        "total_generation_secs": 0.0,
        "avg_context_length": None,
        "retrieval": None,
    }
    mixed = overall(report, "mixed")
    assert mixed["accuracy"] == 0.3333333333333333
    assert mixed["precision"] == 0.5
    assert mixed["coverage"] == 0.6666666666666666
    assert (mixed["correct"], mixed["incorrect"], mixed["errors"]) == (1, 1, 1)
    row = next(line for line in report.to_text().splitlines() if line.startswith("allerr"))
    assert row.split() == ["allerr", "0.00", "-", "0.00", "0", "0", "3", "3", "-", "-"]


def test_ties_in_accuracy_are_broken_by_name(tree: Tree) -> None:
    # zeta: 1/3; alpha: 2/6. Equal as floats; alpha ranks first by name.
    for i in range(6):
        tree.question("ds", f"q{i}", mcq("A"))
        tree.ok("ds", f"q{i}", "alpha", "A" if i < 2 else "B")
        if i < 3:
            tree.ok("ds", f"q{i}", "zeta", "A" if i == 0 else "B")
    tree.ok("ds", "q5", "beta", "A")  # 1/1 ranks above both
    report = grade(tree.datasets_path, tree.results)
    assert report.setup_names == ("beta", "alpha", "zeta")


def test_prefix_selects_the_run(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "run1-a", "A")
    tree.ok("ds", "q1", "a", "B")
    tree.ok("ds", "q1", "run2-a", "B")
    with_prefix = grade(tree.datasets_path, tree.results, prefix="run1-")
    assert with_prefix.setup_names == ("a",)
    assert with_prefix["a"].overall.correct == 1
    without = grade(tree.datasets_path, tree.results)
    # Without a prefix, run1-a and run2-a are setups of their own.
    assert set(without.setup_names) == {"a", "run1-a", "run2-a"}


def test_file_names_that_are_not_results(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "good", "A")
    good = (tree.results / "ds" / "q1" / "good.json").read_text()
    for name in ("Upper.json", "x.json.tmp", "under_score.json", ".json", "notes.txt", "a.JSON"):
        tree.raw("ds", "q1", name, good)
    (tree.results / "ds" / "q1" / "dir.json").mkdir()
    os.symlink(tree.results / "ds" / "q1" / "good.json", tree.results / "ds" / "q1" / "link.json")
    report = grade(tree.datasets_path, tree.results)
    assert report.setup_names == ("good",)
    assert report.skipped_files == 0
    assert not report.unparsable_files


def test_levels_one_and_two_only_directories_with_valid_names(
    tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "s", "A")
    tree.ok("Bad_Name", "q1", "s", "A")  # invalid dataset folder: warned, skipped, not counted
    tree.ok("ds", "Q_1", "s", "A")  # invalid question folder: warned, skipped
    (tree.results / "stray.json").write_text("{}")  # a file at level 1 is ignored
    (tree.results / "ds" / "stray.json").write_text("{}")  # and at level 2
    deep = tree.results / "ds" / "q1" / "deeper"
    deep.mkdir()
    (deep / "s.json").write_text('{"error": "never read"}')  # level 4 is never visited
    os.symlink(tree.results / "ds", tree.results / "linked")  # symlinked dataset: not followed
    os.symlink(tree.results / "ds" / "q1", tree.results / "ds" / "q2")
    tree.question("ds", "q2", mcq("A"))
    with caplog.at_level(logging.WARNING, logger="kagreport"):
        report = grade(tree.datasets_path, tree.results)
    assert report.datasets == 1
    assert report["s"].overall.to_dict()["total"] == 1
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert "Bad_Name" in warnings
    assert "Q_1" in warnings


def test_every_valid_dataset_folder_counts(tree: Tree) -> None:
    tree.question("known", "q1", mcq("A"))
    (tree.results / "known").mkdir()
    (tree.results / "unknown-ds").mkdir()
    (tree.results / "empty").mkdir()
    report = grade(tree.datasets_path, tree.results)
    assert report.datasets == 3
    assert report.setups == ()


def test_free_form_unknown_and_unanswered_questions(tree: Tree) -> None:
    tree.question("ds", "scored", mcq("A"))
    tree.question("ds", "open", {"input": "Why?", "output": None})
    tree.question("ds", "open2", {"input": "Why?"})
    tree.question("ds", "noanswer", mcq(None))
    tree.question("ds", "noanswer2", {"input": "Q?", "output": {"type": "MCQ", "options": {}}})
    tree.ok("ds", "scored", "s", "A")
    for q in ("open", "open2", "unknown-q"):
        tree.ok("ds", q, "s", "A")
    tree.ok("unknown-ds", "q1", "s", "A")
    # MCQ without answer: each file with a valid setup name counts, parsed or not.
    tree.ok("ds", "noanswer", "s", "A")
    tree.error("ds", "noanswer", "t")
    tree.raw("ds", "noanswer", "u.json", "not json")
    tree.raw("ds", "noanswer", "Bad.json", "{}")
    tree.raw("ds", "noanswer", "v.json.tmp", "{}")
    tree.ok("ds", "noanswer2", "s", "A")
    report = grade(tree.datasets_path, tree.results)
    assert report.skipped_files == 4
    assert report.scorable_questions == 1
    assert report.datasets == 2
    assert report["s"].overall.total == 1
    assert report.setup_names == ("s",)
    assert not report.unparsable_files  # the unanswered question's files are not parsed


def test_scorable_questions_counts_the_datasets_file_only(tree: Tree) -> None:
    tree.question("a", "q1", mcq("A"))
    tree.question("a", "q2", mcq(None))
    tree.question("b", "q1", mcq("C"))
    tree.question("b", "q2", {"input": "Why?", "output": None})
    report = grade(tree.datasets_path, tree.results)
    assert (report.datasets, report.scorable_questions, report.skipped_files) == (0, 2, 0)


def test_unparsable_files_are_warned_and_skipped(
    tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "good", "A")
    bad = {
        "truncated": '{"ok": {"result": "A", "stats": ',
        "both": '{"ok": {"result": "A", "stats": {}}, "error": "x"}',
        "neither": "{}",
        "extra-key": '{"error": "x", "note": 1}',
        "no-prompt": '{"ok": {"result": "A", "stats": {"config": {"provider": "p", "model": "m",'
        ' "temperature": 0}, "time": {"secs": 1, "nanos": 0}}}}',
        "bad-duration": '{"ok": {"result": "A", "stats": {"prompt": "", "config": {"provider":'
        ' "p", "model": "m", "temperature": 0}, "time": {"secs": -1, "nanos": 0}}}}',
        "float-secs": '{"ok": {"result": "A", "stats": {"prompt": "", "config": {"provider":'
        ' "p", "model": "m", "temperature": 0}, "time": {"secs": 1.5, "nanos": 0}}}}',
        "result-not-string": '{"ok": {"result": 1, "stats": {}}}',
        "error-null": '{"error": null}',
        "lone-surrogate": '{"error": "\\ud800"}',
    }
    for setup, text in bad.items():
        tree.raw("ds", "q1", f"{setup}.json", text)
    tree.raw("ds", "q1", "latin1.json", b'{"error": "caf\xe9"}')
    with caplog.at_level(logging.WARNING, logger="kagreport"):
        report = grade(tree.datasets_path, tree.results)
    assert report.setup_names == ("good",)
    assert len(report.unparsable_files) == len(bad) + 1
    assert sum("failed to parse" in r.getMessage() for r in caplog.records) == len(bad) + 1


def test_lenient_about_unknown_keys_and_optional_fields(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    text = (
        '{"ok": {"result": "A", "extra": [1, 2], "stats": {"prompt": "pp", "future": null,'
        ' "config": {"provider": "p", "model": "m", "temperature": 1, "other": true},'
        ' "time": [2, 1500000000]}}}'
    )
    tree.raw("ds", "q1", "s.json", text)
    report = grade(tree.datasets_path, tree.results)
    metrics = report["s"].overall
    # [2, 1.5e9] carries into 3.5 s, as serde's Duration does.
    assert metrics.total_generation_secs == 3.5
    assert metrics.avg_context_length == 2.0


def test_errors_add_no_samples_and_retrieval_means_use_samples(tree: Tree) -> None:
    for q in ("q1", "q2", "q3", "q4"):
        tree.question("ds", q, mcq("A"))
    tree.ok("ds", "q1", "kag", "A", secs=2, retrieval=(1, 0, 10, 4, 6))
    tree.ok("ds", "q2", "kag", "B", secs=4, retrieval=(0, 500_000_000, 2, 0, 0))
    tree.ok("ds", "q3", "kag", "A", secs=3)  # a successful KAG file without retrieval
    tree.error("ds", "q4", "kag")
    r = grade(tree.datasets_path, tree.results)["kag"].overall.to_dict()
    assert (r["total"], r["correct"], r["incorrect"], r["errors"]) == (4, 2, 1, 1)
    assert r["total_generation_secs"] == 9.0
    assert r["avg_generation_secs"] == 3.0  # over 3 samples, not 4 results
    assert r["retrieval"] == {
        "time_secs": 1.5,
        "vertices": 12,
        "relationships": 4,
        "properties": 6,
        "samples": 2,
        "avg_time_secs": 0.75,
        "avg_vertices": 6.0,
        "avg_relationships": 2.0,
        "avg_properties": 3.0,
    }


def test_mean_time_is_rounded_to_whole_nanoseconds_like_rust(tree: Tree) -> None:
    # 1 s over 3 samples: Duration::div_f64 gives 333,333,333 ns, so 0.333333333, not 1/3.
    for i, nanos in enumerate((333_333_333, 333_333_333, 333_333_334)):
        tree.question("ds", f"q{i}", mcq("A"))
        tree.ok("ds", f"q{i}", "s", "A", secs=0, nanos=nanos)
    metrics = grade(tree.datasets_path, tree.results)["s"].overall
    assert metrics.total_generation_secs == 1.0
    assert metrics.avg_generation_secs == 0.333333333
    assert (
        '"avg_generation_secs": 0.333333333,' in grade(tree.datasets_path, tree.results).to_json()
    )


def test_context_length_is_utf8_bytes_and_null_when_all_empty(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.question("ds", "q2", mcq("A"))
    tree.ok("ds", "q1", "s", "A", prompt="h\u00e9\u20ac")  # 1 + 2 + 3 bytes
    tree.ok("ds", "q2", "s", "A", prompt="\U0001f600")  # 4 bytes
    tree.ok("ds", "q1", "empty", "A", prompt="")
    report = grade(tree.datasets_path, tree.results)
    assert report["s"].overall.avg_context_length == 5.0
    assert report["empty"].overall.avg_context_length is None


def test_missing_results_root(tmp_path: Path, tree: Tree) -> None:
    with pytest.raises(ResultTreeError, match="does not exist") as info:
        grade(tree.datasets_path, tmp_path / "nope")
    assert info.value.path == str(tmp_path / "nope")


@pytest.mark.usefixtures("python_reads")
def test_unreadable_result_file_is_a_runtime_error(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree.question("ds", "q1", mcq("A"))
    victim = tree.ok("ds", "q1", "s", "A")
    real_open = os.open

    def failing_open(path: str, flags: int, *args: int) -> int:
        if os.fspath(path) == str(victim):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    # Tests run as root here, where chmod 000 cannot make a file unreadable.
    monkeypatch.setattr(os, "open", failing_open)
    with pytest.raises(ResultTreeError, match="Permission denied") as info:
        grade(tree.datasets_path, tree.results)
    assert info.value.path == str(victim)
