"""``kagreport evaluate`` and ``kagreport compare`` as subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from kagreport.evaluation import (
    AnswerEvaluation,
)
from kagreport.kag import simulate_run

JUDGES = """
[[judges]]
kind = "exact_match"

[[judges]]
kind = "token_f1"
name = "f1"
"""


def _items(path: Path, answers: list[str | None]) -> Path:
    refs = ["Paris", "Rome", "Madrid", "Lima"]
    with open(path, "w", encoding="utf-8") as f:
        for i, (answer, ref) in enumerate(zip(answers, refs, strict=True)):
            f.write(json.dumps({"identifier": f"q{i}", "question": "Capital?", "answer": answer,
                                "reference": ref}) + "\n")  # fmt: skip
    return path


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "judges.toml").write_text(JUDGES)
    _items(tmp_path / "a.jsonl", ["Paris", "Rome", "Madrid", "Lima"])
    _items(tmp_path / "b.jsonl", ["Paris", "Milan", None, "the city of Lima"])
    return tmp_path


def test_evaluate_and_compare(files: Path) -> None:
    a = run_cli("evaluate", "--items", str(files / "a.jsonl"), "--judges",
                str(files / "judges.toml"), "-o", str(files / "a.json"))  # fmt: skip
    assert a.returncode == 0, a.stderr
    assert "exact_match" in a.stdout
    assert "report written to" in a.stdout
    b = run_cli("evaluate", "--items", str(files / "b.jsonl"), "--judges",
                str(files / "judges.toml"), "-o", str(files / "b.yaml"))  # fmt: skip
    assert b.returncode == 0, b.stderr
    report = AnswerEvaluation.read(files / "b.yaml")
    assert report.errors == {"system": 1, "exact_match": 0, "f1": 0}
    assert report.metrics["exact_match"] == pytest.approx(1 / 3)
    assert report.metadata == {"name": "b"}
    text = run_cli("compare", str(files / "a.json"), str(files / "b.yaml"))
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("a vs b: 4 paired items")
    assert "exact_match" in text.stdout
    js = run_cli("compare", str(files / "a.json"), str(files / "b.yaml"), "--format", "json",
                 "-o", str(files / "cmp.toml"))  # fmt: skip
    data = json.loads(js.stdout)
    assert data["schema"] == "kagreport.EvaluationComparison"
    # exact_match pairs: q0 (1,1), q1 (1,0), q3 (1,0); q2 undefined for b.
    rows = {m["metric"]: m for m in data["metrics"]}
    assert rows["exact_match"]["n_pairs"] == 3
    assert (files / "cmp.toml").is_file()


def test_evaluate_a_kag_run(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=6, datasets=1)
    (tmp_path / "j.toml").write_text('[[judges]]\nkind = "option_extraction"\n')
    done = run_cli("evaluate", "-d", run.datasets_path, "-r", run.results_path, "--setup",
                   "kag-small", "--questions", "mcq", "--judges", str(tmp_path / "j.toml"),
                   "-o", str(tmp_path / "ev.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    ev = AnswerEvaluation.read(tmp_path / "ev.json")
    assert ev.metadata["name"] == "kag-small"
    assert all(i.identifier.startswith("sim-") for i in ev.items)


def test_evaluate_exits_1_when_a_judge_fails_on_every_answer_of_a_kag_run(tmp_path: Path) -> None:
    # The free-form questions of a kag run have no reference, so token_f1 fails on every
    # answer; one item has no answer at all (an error record), is not judged, and must not
    # hide the error. The report is written all the same (issue #27).
    run = simulate_run(tmp_path / "sim", questions=6, datasets=1)
    (tmp_path / "j.toml").write_text('[[judges]]\nkind = "token_f1"\n')
    done = run_cli("evaluate", "-d", run.datasets_path, "-r", run.results_path, "--setup",
                   "kag-large", "--judges", str(tmp_path / "j.toml"),
                   "-o", str(tmp_path / "ev.json"))  # fmt: skip
    assert done.returncode == 1, done.stderr
    ev = AnswerEvaluation.read(tmp_path / "ev.json")
    answered = sum(item.answer is not None for item in ev.items)
    assert 0 < answered < len(ev.items)  # the case: some item has no answer
    assert ev.errors == {"system": len(ev.items) - answered, "token_f1": answered}
    assert done.stderr.splitlines() == [
        f"kagreport: error: judge 'token_f1' failed on every item ({answered} of {answered}); "
        f"most common cause ({answered} items): the item has no reference answer (free-form "
        "questions have no reference: --questions mcq takes the MCQ ones)"
    ]
    assert ev.failed_judges == ("token_f1",)
    assert ev.error_causes == {"token_f1": {"the item has no reference answer": answered}}
    # The MCQ answers have references: no judge fails everywhere, no warning.
    mcq = run_cli("evaluate", "-d", run.datasets_path, "-r", run.results_path, "--setup",
                  "kag-large", "--questions", "mcq", "--judges", str(tmp_path / "j.toml"),
                  "-o", str(tmp_path / "mcq.json"))  # fmt: skip
    assert mcq.returncode == 0, mcq.stderr
    assert "failed on every item" not in mcq.stderr
    assert AnswerEvaluation.read(tmp_path / "mcq.json").failed_judges == ()


def test_evaluate_exits_1_when_a_judge_fails_on_every_answered_item(tmp_path: Path) -> None:
    # Through --items too: an item without an answer is not judged, and without any
    # answer there is nothing a judge failed on.
    lines = [
        {"identifier": "q1", "question": "Q", "answer": "Paris", "reference": None},
        {"identifier": "q2", "question": "Q", "answer": None, "reference": "Rome"},
    ]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "j.toml").write_text('[[judges]]\nkind = "exact_match"\n')
    done = run_cli("evaluate", "--items", str(items), "--judges", str(tmp_path / "j.toml"),
                   "-o", str(tmp_path / "ev.json"))  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        "kagreport: error: judge 'exact_match' failed on every item (1 of 1); most common "
        "cause (1 item): the item has no reference answer"
    ]
    assert AnswerEvaluation.read(tmp_path / "ev.json").errors["exact_match"] == 1
    none = tmp_path / "none.jsonl"
    none.write_text(json.dumps(lines[1]) + "\n")
    done = run_cli("evaluate", "--items", str(none), "--judges", str(tmp_path / "j.toml"),
                   "-o", str(tmp_path / "none.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "failed on every item" not in done.stderr


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        ('[[judges]]\nkind = "magic"\n', "`judges[0].kind` must be one of option_match,"),
        ("[[judges]\n", "is not valid TOML"),
        ("x = 1\n", "`x` is not a known key; known keys: judges"),
        ("", "`judges` is required"),
        ('[[judges]]\nkind = "regex"\npattern = "("\n', "invalid regular expression"),
        (
            '[[judges]]\nkind = "exact_match"\ncolour = "red"\n',
            "`judges[0].colour` is not a known key; known keys: kind, name",
        ),
        (
            '[[judges]]\nkind = "llm"\nmodel = "m"\nbase_url = "http://x"\nprompt = "p"\n'
            'api_key = "sk-secret"\n',
            "do not write API keys",
        ),
        (
            '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://x"\n'
            'prompt_file = "nope.j2"\n',
            "cannot read prompt_file",
        ),
    ],
)
def test_bad_judges_files(files: Path, judges: str, message: str) -> None:
    (files / "bad.toml").write_text(judges)
    done = run_cli("evaluate", "--items", str(files / "a.jsonl"), "--judges",
                   str(files / "bad.toml"), "-o", str(files / "x.json"))  # fmt: skip
    assert done.returncode == 1
    assert message in done.stderr
    assert str(files / "bad.toml") in done.stderr
    assert "Traceback" not in done.stderr
    assert not (files / "x.json").exists()


def test_bad_items_and_outputs(files: Path) -> None:
    (files / "bad.jsonl").write_text('{"identifier": "q1", "question": "Q", "answer": "A"}\n[1]\n')
    done = run_cli("evaluate", "--items", str(files / "bad.jsonl"), "--judges",
                   str(files / "judges.toml"), "-o", str(files / "x.json"))  # fmt: skip
    assert done.returncode == 1
    assert f"{files / 'bad.jsonl'}:2: not a JSON object" in done.stderr
    suffix = run_cli("evaluate", "--items", str(files / "a.jsonl"), "--judges",
                     str(files / "judges.toml"), "-o", str(files / "x.txt"))  # fmt: skip
    assert suffix.returncode == 2
    assert "suffix" in suffix.stderr
    missing = run_cli("compare", str(files / "nope.json"), str(files / "a.jsonl"))
    assert missing.returncode == 1
    assert "cannot read" in missing.stderr


def test_compare_refuses_mismatched_or_foreign_files(files: Path) -> None:
    run_cli("evaluate", "--items", str(files / "a.jsonl"), "--judges", str(files / "judges.toml"),
            "-o", str(files / "a.json"))  # fmt: skip
    _items(files / "c.jsonl", ["x", "y", "z", "w"])
    lines = (files / "c.jsonl").read_text().replace('"q3"', '"q9"')
    (files / "c.jsonl").write_text(lines)
    run_cli("evaluate", "--items", str(files / "c.jsonl"), "--judges", str(files / "judges.toml"),
            "-o", str(files / "c.json"))  # fmt: skip
    done = run_cli("compare", str(files / "a.json"), str(files / "c.json"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "different items (1 only in the candidate, 1 only in the baseline)" in done.stderr
    assert "--shared" in done.stderr
    # --shared: q0..q2 are paired (q3 and q9 left out, and said).
    shared = run_cli("compare", str(files / "a.json"), str(files / "c.json"), "--shared",
                     "--format", "json")  # fmt: skip
    assert shared.returncode == 0, shared.stderr
    document = json.loads(shared.stdout)
    assert document["n_items"] == 3
    assert document["metadata"] == {
        "items_in_candidate": 4,
        "items_in_baseline": 4,
        "items_only_in_candidate": 1,
        "items_only_in_baseline": 1,
    }
    text = run_cli("compare", str(files / "a.json"), str(files / "c.json"), "--shared")
    assert "left out (not in both): 1 only in" in text.stdout
    (files / "other.json").write_text('{"schema": "something-else"}')
    foreign = run_cli("compare", str(files / "a.json"), str(files / "other.json"))
    assert foreign.returncode == 1
    assert "is not an evaluation report" in foreign.stderr


def test_compare_of_reports_that_share_no_item_is_one_usage_error(files: Path) -> None:
    run_cli("evaluate", "--items", str(files / "a.jsonl"), "--judges", str(files / "judges.toml"),
            "-o", str(files / "a.json"))  # fmt: skip
    lines = (files / "a.jsonl").read_text().replace('"identifier": "q', '"identifier": "x')
    (files / "d.jsonl").write_text(lines)
    run_cli("evaluate", "--items", str(files / "d.jsonl"), "--judges", str(files / "judges.toml"),
            "-o", str(files / "d.json"))  # fmt: skip
    for shared in ([], ["--shared"]):
        done = run_cli("compare", str(files / "a.json"), str(files / "d.json"), *shared)
        assert done.returncode == 2
        assert done.stderr == (
            f"kagreport: error: cannot compare {files / 'a.json'} with {files / 'd.json'}: "
            "the two reports share no item\n"
        )


def test_evaluate_without_answers_of_that_kind_names_the_other_kind(tmp_path: Path) -> None:
    # The bundled MMLU-Pro run has only MCQ questions: the default (free-form) finds nothing,
    # and the message says which flag takes the MCQ answers.
    from kagreport.examples import mmlu_pro_philosophy

    example = mmlu_pro_philosophy()
    judges = tmp_path / "judges.toml"
    judges.write_text('[[judges]]\nkind = "option_match"\n', encoding="utf-8")
    done = run_cli("evaluate", "--judges", str(judges), "-d", str(example.datasets),
                   "-r", str(example.results), "--setup", "yi-34b",
                   "-o", str(tmp_path / "ev.json"))  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "no free-form answers of setup 'yi-34b'" in done.stderr
    assert "--questions mcq" in done.stderr


def _files(tmp_path: Path) -> tuple[Path, Path]:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"identifier": "q1", "question": "Q", "answer": "Paris",
                                 "reference": "Paris"}) + "\n")  # fmt: skip
    judges = tmp_path / "judges.toml"
    judges.write_text('[[judges]]\nkind = "token_f1"\n')
    return items, judges


def test_cli_refuses_bad_outputs_before_judging(tmp_path: Path) -> None:
    items, judges = _files(tmp_path)
    for output, message in [
        (tmp_path / "no" / "such" / "r.json", "does not exist"),
        (tmp_path, "is a folder"),
        (items, "would replace the input"),
        (tmp_path / "r.txt", "suffix"),
    ]:
        done = run_cli(
            "evaluate", "--items", str(items), "--judges", str(judges), "-o", str(output)
        )
        assert done.returncode == 2, output
        assert message in done.stderr
        assert "Traceback" not in done.stderr
    same = tmp_path / "items.json"
    same.write_text("{}")
    done = run_cli("evaluate", "--items", str(same), "--judges", str(judges), "-o", str(same))
    assert done.returncode == 2
    assert "would replace the input" in done.stderr
    assert same.read_text() == "{}"


def test_cli_rejects_malformed_judges_and_items(tmp_path: Path) -> None:
    items, judges = _files(tmp_path)
    judges.write_text("judges = [1, 2]\n")
    done = run_cli(
        "evaluate", "--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "r.json")
    )
    assert done.returncode == 1
    assert "judges.toml: `judges[0]` must be a table, not 1" in done.stderr
    judges.write_text('[[judges]]\nkind = "regex"\npattern = "x"\nignore_case = "no"\n')
    done = run_cli(
        "evaluate", "--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "r.json")
    )
    assert done.returncode == 1
    assert "`judges[0].ignore_case` must be true or false" in done.stderr
    judges.write_text('[[judges]]\nkind = "token_f1"\n')
    items.write_text('{"identifier": "q1", "question": "Q", "answer": "A", "refrence": "A"}\n')
    done = run_cli(
        "evaluate", "--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "r.json")
    )
    assert done.returncode == 1
    assert f"{items}:1: unknown key ['refrence']" in done.stderr
    items.write_text("\n")
    done = run_cli(
        "evaluate", "--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "r.json")
    )
    assert done.returncode == 1
    assert "holds no items" in done.stderr


def test_compare_usage_errors_and_terminal_safe_names(tmp_path: Path) -> None:
    items, judges = _files(tmp_path)
    run_cli("evaluate", "--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "a.json"),
            "--name", "evil\x1b[2J")  # fmt: skip
    report = AnswerEvaluation.read(tmp_path / "a.json")
    assert report.metadata["name"] == "evil\x1b[2J"
    done = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "a.json"), "--seed", "-1")
    assert done.returncode == 2
    text = run_cli("compare", str(tmp_path / "a.json"), str(tmp_path / "a.json"))
    assert text.returncode == 0, text.stderr
    assert "\x1b" not in text.stdout
    assert "evil\\x1b[2J" in text.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": ["x"], "schema_version": 1}))
    done = run_cli("compare", str(bad), str(tmp_path / "a.json"))
    assert done.returncode == 1
    assert "is not an evaluation report" in done.stderr
    bad.write_text(json.dumps({"schema": "kagreport.AnswerEvaluation", "schema_version": 1,
                               "metrics": [1, 2], "items": []}))  # fmt: skip
    done = run_cli("compare", str(bad), str(tmp_path / "a.json"))
    assert done.returncode == 1
    assert "not a valid AnswerEvaluation" in done.stderr
