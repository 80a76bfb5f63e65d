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
from kagreport.sources import detect_format, read_run

DATA = Path(__file__).parent.parent / "data" / "sources" / "openai-evals"
LOGS = (DATA / "gpt-3.5-turbo.jsonl", DATA / "gpt-4.jsonl")
REAL = DATA / "real" / "self_prompting-oriprompt.log"


def _report(path: Path) -> dict:
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "final_report" in row:
            return row["final_report"]
    raise AssertionError(f"{path} has no final report")


def test_the_final_reports_accuracy_is_reproduced() -> None:
    for path in LOGS:
        assert detect_format(path).name == "openai-evals"
        run = read_run(path)
        assert len(run.systems) == 1
        assert math.isclose(float(np.nanmean(run.metrics["correct"])), _report(path)["accuracy"])
        assert run.metadata["final_report"] == _report(path)
        assert run.dataset_names == ("test-match.s1.simple-v0",)
        assert sorted(run.question_names) == [f"test-match.s1.{i}" for i in range(5)]


def test_texts_and_outcomes() -> None:
    run = read_run(LOGS[0])
    row = run.question_names.index("test-match.s1.2")
    assert run.metrics["correct"][row] == 0.0
    assert run.outcome[row] == 1
    assert run.responses is not None
    assert run.responses[row] == "7"
    assert run.references is not None
    assert run.references[row] == "6"


def test_a_real_log_without_events() -> None:
    assert detect_format(REAL).name == "openai-evals"
    run = read_run(REAL)
    assert run.systems == ("self_prompting/oriprompt/baseline",)
    assert len(run) == 0
    assert run.metadata["final_report"]["n_samples"] == 1500


def test_a_folder_is_one_system_per_log() -> None:
    run = read_run(DATA)
    assert run.systems == ("gpt-3.5-turbo", "gpt-4")
    board = leaderboard(run)
    assert [row.system for row in board] == ["gpt-4", "gpt-3.5-turbo"]
    assert [row.mean for row in board] == [
        _report(LOGS[1])["accuracy"],
        _report(LOGS[0])["accuracy"],
    ]
    comparisons = compare_setups(run, n_resamples=200)
    assert comparisons is not None
    assert len(stats_frame(run)) >= 2


def test_malformed_logs_are_one_line_each(tmp_path: Path) -> None:
    lines = LOGS[0].read_text(encoding="utf-8").splitlines()
    cases = {
        "truncated.jsonl": ("\n".join([*lines[:3], lines[3][:40]]), "line 4: not JSON"),
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
    lines = LOGS[1].read_text(encoding="utf-8").splitlines()
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
    assert math.isclose(float(np.nanmean(run.metrics["correct"])), _report(LOGS[1])["accuracy"])


RECORDS = DATA / "evals-3.0.1" / "records"  # evals 3.0.1's own logs (SOURCE.md)
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
