"""The bundled examples: the real MMLU-Pro run and the simulated KAG run."""

from __future__ import annotations

import csv
import filecmp
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kagreport import grade
from kagreport.examples import mmlu_pro_philosophy
from kagreport.kag import SimulatedSetup, simulate_run

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "examples" / "sources" / "mmlu-pro-philosophy"
SETUPS = {
    "gemini-1.5-pro-002_5shots": "gemini-1-5-pro-002",
    "gemini-1.5-flash-002_5shots": "gemini-1-5-flash-002",
    "DeepSeek-Coder-V2_5shots": "deepseek-coder-v2",
    "Meta-Llama-3_1-70B-Instruct_5shots": "meta-llama-3-1-70b-instruct",
    "Yi-34B_5shots": "yi-34b",
    "Llama-2-7b-hf_5shots": "llama-2-7b-hf",
}


def test_mmlu_pro_accuracies_match_an_independent_count_from_the_csv() -> None:
    answers = {}
    with open(SOURCE / "questions.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            answers[row["question_id"]] = row["answer"]
    correct: Counter[str] = Counter()
    present: Counter[str] = Counter()
    with open(SOURCE / "predictions.csv", encoding="utf-8", newline="") as table:
        for row in csv.DictReader(table):
            for column in SETUPS:
                if row[column] == "MISSING":
                    continue
                present[column] += 1
                correct[column] += row[column] == answers[row["question_id"]]
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    assert len(answers) == 499
    assert report.scorable_questions == 499
    assert set(report.setup_names) == set(SETUPS.values())
    for column, setup in SETUPS.items():
        metrics = report[setup].overall
        assert metrics.correct == correct[column], setup
        assert metrics.total == present[column], setup
        assert metrics.accuracy == correct[column] / present[column], setup
        assert metrics.errors == 0
    # DeepSeek-Coder-V2 has 8 questions without output: 491 results, no file for the others.
    assert report["deepseek-coder-v2"].overall.total == 491
    # Spot values from the CSV counted by hand for the top model: 361 of 499.
    assert report["gemini-1-5-pro-002"].overall.correct == 361


def test_mmlu_pro_unparsable_predictions_are_incorrect_results() -> None:
    example = mmlu_pro_philosophy()
    record = json.loads(
        (example.results / "mmlu-pro-philosophy" / "10780" / "yi-34b.json").read_text()
    )
    assert record["ok"]["result"] == ""
    assert not (
        example.results / "mmlu-pro-philosophy" / "10816" / "deepseek-coder-v2.json"
    ).exists()
    assert "TIGER-AI-Lab/MMLU-Pro" in (example.datasets.parent / "README.md").read_text()


@pytest.mark.slow
def test_bundled_mmlu_pro_run_is_what_the_build_script_writes(tmp_path: Path) -> None:
    out = tmp_path / "rebuilt"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "examples" / "build_mmlu_pro_philosophy.py"),
            str(SOURCE),
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    # The repository's tree (tests/examples/test_example_archive.py: the archive holds it).
    bundled = REPO / "examples" / "mmlu-pro-philosophy"
    mismatches = []
    for folder, _, names in os.walk(out):
        for name in names:
            rebuilt = Path(folder) / name
            shipped = bundled / rebuilt.relative_to(out)
            if not shipped.is_file() or not filecmp.cmp(rebuilt, shipped, shallow=False):
                mismatches.append(str(rebuilt.relative_to(out)))
    count = sum(len(names) for _, _, names in os.walk(bundled))
    assert not mismatches
    assert count == sum(len(names) for _, _, names in os.walk(out))


def _naive_grade(datasets: Path, results: Path) -> dict[str, dict[str, Any]]:
    """An independent grader (json.load, pathlib) for cross-checking the simulated run."""
    truth = json.loads(datasets.read_text())
    white = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(results.glob("*/*/*.json")):
        dataset, question, setup = path.parts[-3], path.parts[-2], path.stem
        entry = truth.get(dataset, {}).get(question)
        if not entry or not entry.get("output") or entry["output"].get("answer") is None:
            continue
        try:
            body = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        s = out.setdefault(setup, {"correct": 0, "incorrect": 0, "errors": 0, "gen_ns": 0,
                                   "ret_ns": 0, "vertices": 0, "samples": 0})  # fmt: skip
        if "error" in body:
            s["errors"] += 1
            continue
        ok = body["ok"]
        answer = entry["output"]["answer"]
        trimmed = ok["result"].strip(white)
        same = len(trimmed) == len(answer) and trimmed.encode().lower() == answer.encode().lower()
        s["correct" if same else "incorrect"] += 1
        t = ok["stats"]["time"]
        s["gen_ns"] += t["secs"] * 10**9 + t["nanos"]
        retrieval = ok["stats"]["retrieval"]
        if retrieval:
            e = retrieval["stats"]["embedder"]
            s["ret_ns"] += e["time"]["secs"] * 10**9 + e["time"]["nanos"]
            s["vertices"] += e["database"]["neo4j"]["vertices"]
            s["samples"] += 1
    return out


def test_simulated_run_agrees_with_an_independent_grader(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=30, datasets=3, seed=7)
    report = grade(run.datasets_path, run.results_path)
    naive = _naive_grade(Path(run.datasets_path), Path(run.results_path))
    assert set(report.setup_names) == set(naive)
    for setup, expected in naive.items():
        m = report[setup].overall
        assert (m.correct, m.incorrect, m.errors) == (
            expected["correct"], expected["incorrect"], expected["errors"]
        )  # fmt: skip
        assert m.generation_ns == expected["gen_ns"]
        if expected["samples"]:
            assert m.retrieval is not None
            assert (m.retrieval.time_ns, m.retrieval.vertices, m.retrieval.samples) == (
                expected["ret_ns"], expected["vertices"], expected["samples"]
            )  # fmt: skip
        else:
            assert m.retrieval is None
    assert len(report.unparsable_files) == 3
    assert report.skipped_files == 5 * 4  # sim-unlabelled: 5 questions x 4 setups
    assert report.datasets == 5


def test_simulated_run_is_deterministic_and_labelled(tmp_path: Path) -> None:
    a = simulate_run(tmp_path / "a", questions=5, datasets=2, seed=3)
    b = simulate_run(tmp_path / "b", questions=5, datasets=2, seed=3)
    files_a = sorted(p.relative_to(a.root) for p in Path(a.root).rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b.root) for p in Path(b.root).rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (Path(a.root) / rel).read_bytes() == (Path(b.root) / rel).read_bytes()
    assert any(str(p).endswith(".json.tmp") for p in files_a)
    assert "SIMULATED DATA" in (Path(a.root) / "SIMULATED.md").read_text()
    truth = json.loads(Path(a.datasets_path).read_text())
    assert all(name.startswith("sim-") for name in truth)
    sample = json.loads(
        (Path(a.results_path) / "sim-geography" / "q00001" / "kag-small.json").read_text()
    )
    if "ok" in sample:
        assert sample["ok"]["stats"]["config"]["provider"] == "simulated"
        vec = sample["ok"]["stats"]["retrieval"]["stats"]["embedder"]["embedding"]["vec"]
        assert len(vec) == 384


def test_simulate_is_pretty_json_like_kag(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "s", questions=2, datasets=1, unparsable_files=0,
                       setups=[SimulatedSetup("k", "m", 1.0, 0.0, kag=True)])  # fmt: skip
    text = (Path(run.results_path) / "sim-geography" / "q00001" / "k.json").read_text()
    # Same layout as a 2-space pretty print; numbers aside (ryu and repr differ: 1e-5 vs 1e-05).
    number = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")
    pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    assert number.sub("0", text) == number.sub("0", pretty)
    assert "e-05" not in text


def test_simulate_rejects_bad_sizes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="datasets"):
        simulate_run(tmp_path, datasets=9)
