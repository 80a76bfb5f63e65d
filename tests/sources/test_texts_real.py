"""Issue 25, fault 10: every reader supplies the question, target, response and explanation
the tool recorded, for every row of the tools' real outputs (made by Inspect AI 0.3.285,
promptfoo 0.123.1 and crfm-helm 0.5.16 with their mock models; SOURCE.md
beside each; evals 3.0.1 is checked event by event in test_openai_evals.py). The expected texts are read here from the tools' files with ``json``."""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from kagreport import read_run
from kagreport.runs import Run

DATA = Path(__file__).parent.parent / "data" / "sources"


def _rows(run: Run) -> dict[tuple[str, str], int]:
    return {(run.systems[run.system[r]], run.item_label(r)): r for r in range(len(run))}


def _member(path: Path, info: zipfile.ZipInfo) -> Any:
    """A .eval member's JSON, read from its local header (zstd is method 93)."""
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        skip = struct.unpack("<HH", handle.read(30)[26:30])
        handle.seek(info.header_offset + 30 + sum(skip))
        raw = handle.read(info.compress_size)
    if info.compress_type == 93:
        raw = pytest.importorskip("zstandard").ZstdDecompressor().decompressobj().decompress(raw)
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        raw = zlib.decompress(raw, -15)
    return json.loads(raw)


def test_inspect_texts_of_every_sample() -> None:
    folder = DATA / "inspect" / "inspect-0.3.285"
    checked = 0
    for log in folder.glob("*.eval"):
        run = read_run(log)
        rows = _rows(run)
        assert run.question_texts is not None
        assert run.references is not None
        assert run.responses is not None
        assert run.explanations is not None
        with zipfile.ZipFile(log) as archive:
            infos = {i.filename: i for i in archive.infolist()}
        header = _member(log, infos["header.json"])
        model, task = header["eval"]["model"], header["eval"]["task"]
        for name, info in infos.items():
            if not (name.startswith("samples/") and name.endswith("_epoch_1.json")):
                continue
            sample = _member(log, info)
            row = rows[model, f"{task}/{sample['id']}"]
            text = sample["input"]
            if isinstance(text, list):  # chat messages: multiple_choice() keeps a str here
                text = "\n\n".join(m["content"] for m in text if m["role"] == "user")
            assert run.question_texts[row] == text
            target = sample["target"]
            target = [target] if isinstance(target, str) else target
            assert run.references[row] == "\n".join(t.strip() for t in target)
            choices = (sample.get("output") or {}).get("choices") or []
            if choices:
                assert run.responses[row] == choices[0]["message"]["content"]
            scores = sample.get("scores") or {}
            if scores:
                assert run.explanations[row] == next(iter(scores.values())).get("explanation")
            checked += 1
    assert checked == 24  # (7 + 5) samples x 2 models


def test_promptfoo_texts_of_every_result() -> None:
    path = DATA / "promptfoo" / "real" / "results.json"
    results = json.loads(path.read_text("utf-8"))["results"]["results"]
    run = read_run(path)
    rows = _rows(run)
    assert run.question_texts is not None
    assert run.responses is not None
    assert run.explanations is not None
    for result in results:
        row = rows[result["provider"]["label"], f"test {result['testIdx']}"]
        assert run.question_texts[row] == result["prompt"]["raw"]
        response = result.get("response") or {}
        if "output" in response:
            assert run.responses[row] == str(response["output"])
        grading = result.get("gradingResult") or {}
        if grading.get("reason"):
            assert run.explanations[row] == grading["reason"]
    assert len(results) == len(run)


def test_helm_texts_of_every_request_state() -> None:
    folder = DATA / "helm" / "real" / "tiny25" / "tiny25_qa:model=simple_model1"
    state = json.loads((folder / "scenario_state.json").read_text("utf-8"))
    run = read_run(folder)
    assert run.question_texts is not None
    assert run.references is not None
    assert run.responses is not None
    by_id = {run.question_names[run.question[r]]: r for r in range(len(run))}
    # num_train_trials 3: the trials are repeats of one prompt; texts are trial 0's.
    first = [r for r in state["request_states"] if r["train_trial_index"] == 0]
    for request in first:
        instance = request["instance"]
        row = by_id[instance["id"]]
        correct = [r["output"]["text"] for r in instance["references"] if "correct" in r["tags"]]
        assert run.question_texts[row] == instance["input"]["text"]
        assert run.references[row] == "\n".join(correct)
        assert run.responses[row] == request["result"]["completions"][0]["text"]
    assert len(first) == len(run)
