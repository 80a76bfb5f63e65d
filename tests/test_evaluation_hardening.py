"""Regressions from adversarial testing of the evaluation layer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from kagreport.evaluation import (
    AnswerEvaluation,
    AnswerItem,
    Judgement,
    OptionExtraction,
    TokenF1,
    evaluate_answers,
)


@dataclass
class Returns:
    name: str
    value: Any
    criteria: tuple[str, ...] = ("score",)
    identity: Mapping[str, Any] = field(default_factory=lambda: {"kind": "returns"})

    def judge(self, item: AnswerItem) -> Judgement:
        return Judgement({"score": self.value})


def test_a_failed_judgement_leaves_no_stale_score() -> None:
    items = [
        AnswerItem("q1", "Q", "Paris", None, scores={"token_f1": 1.0}),  # no reference: fails
        AnswerItem("q2", "Q", "x", "Paris"),
    ]
    ev = evaluate_answers(items, [TokenF1()], agreement_resamples=0)
    assert ev.errors["token_f1"] == 1
    assert "token_f1" not in ev.items[0].scores
    assert ev.metrics["token_f1"] == 0.0
    assert ev.coverage["token_f1"] == 1


@pytest.mark.parametrize("value", ["0.7", 10**400, [1], True])
def test_bad_scores_from_a_custom_judge_are_failed_judgements(value: Any) -> None:
    ev = evaluate_answers([AnswerItem("q", "Q", "A")], [Returns("j", value)], agreement_resamples=0)
    assert ev.errors["j"] == 1
    assert ev.items[0].scores == {}


def test_inputs_are_validated() -> None:
    with pytest.raises(ValueError, match=r"both produce the metric 'a\.b\.x'"):
        evaluate_answers(
            [AnswerItem("q", "Q", "A")],
            [Returns("a.b", 1.0, ("x", "y")), Returns("a", 1.0, ("b.x", "z"))],
        )
    with pytest.raises(ValueError, match="agreement_level"):
        evaluate_answers([AnswerItem("q", "Q", "A")], [TokenF1()], agreement_level="bogus")
    with pytest.raises(ValueError, match="seed"):
        evaluate_answers([AnswerItem("q", "Q", "A")], [TokenF1()], seed=-1)
    with pytest.raises(TypeError, match="is not a judge"):
        evaluate_answers([AnswerItem("q", "Q", "A")], ["token_f1"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="non-empty string"):
        TokenF1(name="")
    with pytest.raises(ValueError, match="letters"):
        OptionExtraction(letters="")
    with pytest.raises(ValueError, match="answer must be a string"):
        AnswerItem("q", "Q", 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be a finite number"):
        AnswerItem.from_dict({"identifier": "q", "scores": {"s": "0.5"}})
    import numpy as np

    assert AnswerItem("q", "Q", "A", scores={"s": np.float32(0.5), "t": np.int64(1)}).scores == {
        "s": 0.5,
        "t": 1.0,
    }


def test_means_of_huge_scores_do_not_overflow() -> None:
    items = [AnswerItem(f"q{i}", "Q", "A", scores={"s": 1e308}) for i in range(2)]
    assert evaluate_answers(items, [], agreement_resamples=0).metrics["s"] == 1e308


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
    assert "each judge must be a [[judges]] table" in done.stderr
    judges.write_text('[[judges]]\nkind = "regex"\npattern = "x"\nignore_case = "no"\n')
    done = run_cli(
        "evaluate", "--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "r.json")
    )
    assert done.returncode == 1
    assert "ignore_case must be true or false" in done.stderr
    judges.write_text('[[judges]]\nkind = "token_f1"\n')
    items.write_text('{"identifier": "q1", "question": "Q", "answer": "A", "refrence": "A"}\n')
    done = run_cli(
        "evaluate", "--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "r.json")
    )
    assert done.returncode == 1
    assert f"{items}:1: unknown key(s) ['refrence']" in done.stderr
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
