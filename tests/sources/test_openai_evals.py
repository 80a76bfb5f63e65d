"""kagreport.sources: OpenAI evals record logs (evals/record.py's LocalRecorder)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kagreport import DocumentError
from kagreport.frames import stats_frame
from kagreport.runs import compare_setups, leaderboard
from kagreport.sources import read_run
from kagreport.sources._registry import detect_format

DATA = Path(__file__).parent.parent / "data" / "sources" / "openai-evals"
RECORDS = DATA / "evals-3.0.1" / "records"  # evals 3.0.1's own logs (SOURCE.md)
REAL = DATA / "real" / "self_prompting-oriprompt.log"


def _report(path: Path) -> dict:
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "final_report" in row:
            return row["final_report"]
    raise AssertionError(f"{path} has no final report")


def test_each_logs_final_report_is_reproduced() -> None:
    """One log read alone: a system, its eval's samples, and the final report's accuracy
    (evals 3.0.1's own, written by oaieval) as the mean of correct."""
    for path in sorted(RECORDS.glob("*.jsonl")):
        assert detect_format(path).name == "openai-evals"
        run = read_run(path)
        assert len(run.systems) == 1
        assert run.metadata["final_report"] == _report(path)
        assert float(np.nanmean(run.metrics["correct"])) == pytest.approx(
            _report(path)["accuracy"], abs=1e-15
        )
        (eval_name,) = run.dataset_names
        assert all(q.startswith(eval_name.rsplit(".", 1)[0]) for q in run.question_names)
    run = read_run(RECORDS / "test-match.tiny25-scripted.jsonl")
    row = run.question_names.index("test-match.s1.1")
    assert run.metrics["correct"][row] == 0.0
    assert run.outcome[row] == 1
    assert run.responses is not None
    assert run.references is not None
    assert (run.responses[row], run.references[row]) == ("Abraham Lincoln", "George Washington")


def test_a_real_log_without_events() -> None:
    assert detect_format(REAL).name == "openai-evals"
    run = read_run(REAL)
    assert run.systems == ("self_prompting/oriprompt/baseline",)
    assert len(run) == 0
    assert run.metadata["final_report"]["n_samples"] == 1500


def test_the_folder_drives_the_views() -> None:
    run = read_run(RECORDS)
    board = leaderboard(run)
    # Over the 16 samples of the 4 evals: 0 for the dummy, 11 of 16 for the scripted fn
    # (oaieval's accuracies 2/3, 3/5, 3/4, 3/4 of 3, 5, 4, 4 samples).
    assert [(row.system, row.mean) for row in board] == [
        ("tiny25-scripted", 11 / 16),
        ("dummy", 0.0),
    ]
    comparisons = compare_setups(run, n_resamples=200)
    assert comparisons is not None
    assert len(stats_frame(run)) >= 2


def test_malformed_logs_are_one_line_each(tmp_path: Path) -> None:
    lines = (RECORDS / "test-match.tiny25-scripted.jsonl").read_text(encoding="utf-8").split("\n")
    cases = {
        "truncated.jsonl": ("\n".join([*lines[:3], lines[3][:40]]), "line 4: not valid JSON"),
        "nospec.jsonl": ("\n".join(lines[1:]), "no spec line"),
        "twospecs.jsonl": ("\n".join([lines[0], *lines]), "line 2: a second spec line"),
        "badevent.jsonl": (
            "\n".join([lines[0], json.dumps({"run_id": "x", "event_id": "one"})]),
            "line 2: not an evals record line",
        ),
        "badcorrect.jsonl": (
            "\n".join(
                [
                    lines[0],
                    json.dumps(
                        {
                            "run_id": "x",
                            "event_id": 1,
                            "sample_id": "s.0",
                            "type": "match",
                            "data": {"correct": 1},
                        }
                    ),
                ]
            ),
            "data.correct",
        ),
    }
    for name, (text, fragment) in cases.items():
        path = tmp_path / name
        path.write_text(text + "\n", encoding="utf-8")
        with pytest.raises(DocumentError) as info:
            read_run(path, format="openai-evals")
        message = str(info.value)
        assert "\n" not in message
        assert str(path) in message
        assert fragment in message


def test_an_event_without_data_is_read(tmp_path: Path) -> None:
    # Recorder._create_event's data defaults to None.
    log = RECORDS / "test-match.tiny25-scripted.jsonl"
    lines = log.read_text(encoding="utf-8").split("\n")
    extra = {
        "run_id": "x",
        "event_id": 99,
        "sample_id": "test-match.s1.9",
        "type": "metrics",
        "data": None,
        "created_by": "",
        "created_at": "",
    }
    path = tmp_path / "nodata.jsonl"
    path.write_text("\n".join([*lines, json.dumps(extra)]) + "\n", encoding="utf-8")
    run = read_run(path)
    row = run.question_names.index("test-match.s1.9")
    assert np.isnan(run.metrics["correct"][row])
    assert run.outcome[row] == -1
    assert math.isclose(float(np.nanmean(run.metrics["correct"])), _report(log)["accuracy"])


# oaieval's own final reports (evals 3.0.1; expected.txt): accuracy per (fn, eval).
ACCURACY = {
    ("dummy", "test-match.s1.simple-v0"): 0.0,
    ("dummy", "tiny25-match.dev.v0"): 0.0,
    ("dummy", "tiny25-fuzzy-match.dev.v0"): 0.0,
    ("dummy", "tiny25-includes.dev.v0"): 0.0,
    ("tiny25-scripted", "test-match.s1.simple-v0"): 0.6666666666666666,
    ("tiny25-scripted", "tiny25-match.dev.v0"): 0.6,
    ("tiny25-scripted", "tiny25-fuzzy-match.dev.v0"): 0.75,
    ("tiny25-scripted", "tiny25-includes.dev.v0"): 0.75,
}


def test_a_folder_of_several_evals_per_completion_fn_is_one_run() -> None:
    """oaieval writes a log per (completion fn, eval): the folder is one run, a system per
    completion fn, an item per (eval, sample), each eval's accuracy oaieval's own."""
    run = read_run(RECORDS)
    assert run.systems == ("dummy", "tiny25-scripted")
    assert len(run) == 2 * 16
    for (system, eval_name), accuracy in ACCURACY.items():
        rows = (run.system == run.systems.index(system)) & (
            run.dataset == run.dataset_names.index(eval_name)
        )
        assert run.metrics["correct"][rows].mean() == pytest.approx(accuracy, abs=1e-15)
    # Responses from the sampled text, also where only match events record it.
    assert run.responses is not None
    text = (RECORDS / "tiny25-includes.tiny25-scripted.jsonl").read_text(encoding="utf-8")
    lines = [json.loads(x) for x in text.split("\n") if x.strip()]
    sampled = {x["sample_id"]: x["data"] for x in lines if x.get("type") == "match"}
    for row in np.flatnonzero(run.dataset == run.dataset_names.index("tiny25-includes.dev.v0")):
        if run.systems[run.system[row]] == "tiny25-scripted":
            data = sampled[run.question_names[run.question[row]]]
            assert run.responses[row] == data.get("sampled"), data


# oaieval's own final reports (expected.txt): FuzzyMatch's f1_score per completion fn.
F1 = {"dummy": 0.0, "tiny25-scripted": 0.5833333333333333}


def test_a_metrics_events_scores_are_metrics_as_oaieval_reports_them() -> None:
    """FuzzyMatch records each sample's f1_score in a metrics event; the eval's report
    is their mean, and the run's f1_score per system and eval equals it. The events'
    accuracy is the match's result, so no second column holds it."""
    run = read_run(RECORDS)
    assert set(run.metrics) == {"correct", "f1_score"}
    fuzzy = run.dataset == run.dataset_names.index("tiny25-fuzzy-match.dev.v0")
    for system, f1 in F1.items():
        rows = fuzzy & (run.system == run.systems.index(system))
        assert run.metrics["f1_score"][rows].mean() == pytest.approx(f1, abs=1e-15)
    # Evals without metrics events hold no f1_score.
    assert np.isnan(run.metrics["f1_score"][~fuzzy]).all()


def test_a_real_runs_texts_are_the_events() -> None:
    """Question text (the sampling prompt's user message), reference (the match's
    expected), response (the sampled text) per sample, where the log records them: the
    dummy completion fn records no sampling event, so its questions take the prompt the
    other completion fn's log recorded for the same eval and sample."""
    run = read_run(RECORDS)
    prompts: dict[tuple[str, str], str] = {}
    for path in sorted(RECORDS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            event = json.loads(line) if line else {}
            if "spec" in event:
                name = event["spec"]["eval_name"]
            if event.get("type") == "sampling":
                (user,) = [m["content"] for m in event["data"]["prompt"] if m["role"] == "user"]
                prompts[name, event["sample_id"]] = user
    assert run.question_texts is not None
    assert run.responses is not None
    assert run.references is not None
    checked = 0
    for path in sorted(RECORDS.glob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").split("\n") if x]
        system = lines[0]["spec"]["completion_fns"][0]
        eval_name = lines[0]["spec"]["eval_name"]
        events = [x for x in lines if "type" in x]
        for event in events:
            row = int(
                np.flatnonzero(
                    (run.system == run.systems.index(system))
                    & (run.dataset == run.dataset_names.index(eval_name))
                    & (run.question == run.question_names.index(event["sample_id"]))
                )[0]
            )
            data = event["data"]
            if event["type"] == "sampling":
                (user,) = [m["content"] for m in data["prompt"] if m["role"] == "user"]
                assert run.question_texts[row] == user
                assert run.responses[row] == data["sampled"]
                checked += 1
            elif event["type"] == "match":
                expected = data["expected"]
                if isinstance(expected, list) and len(expected) == 1:
                    expected = expected[0]
                if isinstance(expected, list):  # several accepted answers: one a line
                    expected = "\n".join(expected)
                assert run.references[row] == expected
                if not any(e["type"] == "sampling" for e in events):
                    # The prompt another completion function's log recorded for the sample.
                    assert run.question_texts[row] == prompts.get((eval_name, event["sample_id"]))
                    assert run.responses[row] == data.get("sampled")
    assert checked == 16  # every sample of the tiny25-scripted logs
