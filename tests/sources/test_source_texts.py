"""Each reader's texts: the question (input), target, response and explanation of a known
sample, as the tool's own file holds them (read here with ``json`` / ``zipfile``)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from kagreport import read_run
from kagreport.runs import Run
from kagreport.sources._eee_write import write_eee

DATA = Path(__file__).parent.parent / "data" / "sources"


def _row(run: Run, system: str, dataset: str, question: str) -> int:
    for row in range(len(run)):
        if (
            run.systems[run.system[row]] == system
            and run.dataset_names[run.dataset[row]] == dataset
            and run.question_names[run.question[row]] == question
        ):
            return row
    raise AssertionError(f"no row {system} {dataset} {question}")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_inspect_texts_are_the_samples() -> None:
    path = DATA / "inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
    with zipfile.ZipFile(path) as log:
        sample = json.loads(log.read("samples/9_epoch_1.json"))
        header = json.loads(log.read("header.json"))
    run = read_run(path)
    row = _row(run, header["eval"]["model"], header["eval"]["task"], "9")
    assert run.question_texts is not None
    assert run.references is not None
    assert run.responses is not None
    assert run.explanations is not None
    assert run.question_texts[row] == sample["input"]
    assert run.references[row] == sample["target"].strip()  # as Inspect's scorers take it
    assert run.responses[row] == sample["output"]["choices"][0]["message"]["content"]
    assert run.explanations[row] == sample["scores"]["match"]["explanation"]


def test_inspect_choices_are_lettered_options() -> None:
    path = DATA / "inspect/mmlu-summary-choices.eval"
    with zipfile.ZipFile(path) as log:
        sample = json.loads(log.read("samples/1_epoch_1.json"))
    run = read_run(path)
    assert run.options is not None
    assert run.references is not None
    assert run.options[0] == tuple(zip("ABCD", sample["choices"], strict=True))
    assert run.references[0] == sample["target"]


def test_lm_eval_texts_are_the_logged_samples() -> None:
    # lm-eval 0.4.13's own output (lm-eval-0.4.13/SOURCE.md): every logged generation.
    folder = DATA / "lm-eval" / "lm-eval-0.4.13" / "output"
    run = read_run(folder)
    assert run.question_texts is not None
    assert run.references is not None
    assert run.responses is not None
    checked = 0
    for results in folder.glob("*/results_*.json"):
        system = json.loads(results.read_text("utf-8"))["model_name"]
        for samples in results.parent.glob("samples_tiny25_free_*.jsonl"):
            for line in _jsonl(samples):
                row = _row(run, system, "tiny25_free", str(line["doc_id"]))
                assert run.question_texts[row] == line["arguments"]["gen_args_0"]["arg_0"]
                assert run.references[row] == line["target"]
                assert run.responses[row] == line["filtered_resps"][0]
                checked += 1
    assert checked >= 15  # 5 documents x 3 seeds (a line per filter)


def test_promptfoo_texts_are_the_results() -> None:
    path = DATA / "promptfoo/results.json"
    result = json.loads(path.read_text(encoding="utf-8"))["results"]["results"][0]
    run = read_run(path)
    system = result["provider"]["label"] or result["provider"]["id"]
    row = _row(run, system, "", f"test {result['testIdx']}")
    assert run.question_texts is not None
    assert run.explanations is not None
    assert run.responses is not None
    assert run.question_texts[row] == result["prompt"]["raw"]
    assert run.responses[row] == result["response"]["output"]
    assert run.explanations[row] == result["gradingResult"]["reason"]
    assert run.references is None  # the cut fixture keeps no assertion


def test_promptfoo_targets_are_the_expected_outputs_of_its_assertions() -> None:
    path = DATA / "promptfoo/two-prompts.jsonl"
    first = _jsonl(path)[0]
    (check,) = [a for a in first["testCase"]["assert"] if "value" in a]
    run = read_run(path)
    assert run.references is not None
    targets = {run.question_names[run.question[r]]: run.references[r] for r in range(len(run))}
    assert targets == {"test 0": f"{check['type']}: {check['value']}", "test 1": None}


def _eee_line(sample: str, attribution: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema_version": "0.3.0",
        "evaluation_id": "toy/org/m1/100",
        "model_id": "org/m1",
        "evaluation_name": "toy",
        "evaluation_result_id": "toy-acc",
        "sample_id": sample,
        "interaction_type": "single_turn",
        "input": {"raw": f"question {sample}", "reference": ["B"], "choices": ["x", "y"]},
        "output": {"raw": ["The answer is B."]},
        "answer_attribution": attribution,
        "evaluation": {"score": 1.0, "is_correct": True},
    }


def test_eee_texts_are_the_lines_and_their_answer_attribution(tmp_path: Path) -> None:
    aggregate = {
        "schema_version": "0.3.0",
        "evaluation_id": "toy/org/m1/100",
        "retrieved_timestamp": "100",
        "model_info": {"name": "m1", "id": "org/m1"},
        "eval_library": {"name": "lm_eval", "version": "0.4.9"},
        "evaluation_results": [
            {
                "evaluation_result_id": "toy-acc",
                "evaluation_name": "toy",
                "metric_config": {"metric_id": "accuracy", "lower_is_better": False},
                "score_details": {"score": 1.0},
            }
        ],
    }
    picked = {
        "turn_idx": 0,
        "source": "output.raw",
        "extracted_value": "B",
        "extraction_method": "regex",
        "is_terminal": True,
    }
    lines = [_eee_line("q1", [picked]), _eee_line("q2", [])]
    path = tmp_path / "0b0c8e8e.json"
    path.write_text(json.dumps(aggregate), encoding="utf-8")
    (tmp_path / "0b0c8e8e_samples.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
    )
    run = read_run(path)
    assert run.question_texts == (lines[0]["input"]["raw"], lines[1]["input"]["raw"])
    assert run.references == ("B", "B")
    assert run.responses == ("The answer is B.", "The answer is B.")
    assert run.explanations == ("regex: B", None)


def test_explanations_travel_through_eee(tmp_path: Path) -> None:
    run = read_run(DATA / "promptfoo/results.json")
    assert run.explanations is not None
    back = read_run(write_eee(run, tmp_path / "out.eee"))
    mine = {
        (run.systems[run.system[r]], run.question_names[run.question[r]]): run.explanations[r]
        for r in range(len(run))
    }
    assert back.explanations is not None
    theirs = {
        (back.systems[back.system[r]], back.question_names[back.question[r]]): back.explanations[r]
        for r in range(len(back))
    }
    assert theirs == mine
