"""kagreport.sources: Every Eval Ever (EEE) schema 0.3, read and written.

The EEE fixtures here are hand-made from the schemas (tests/data/sources/eee, SOURCE.md);
no EEE data file is copied. Expected numbers are the hand-made files' own values, or
means computed here with plain loops over the run's rows.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kagreport
from conftest import run_cli
from kagreport import DocumentError, UsageError
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import Run, compare_setups, leaderboard
from kagreport.sources import convert_run, read_run
from kagreport.sources._eee import is_eee
from kagreport.sources._eee_write import write_eee
from kagreport.sources._registry import detect_format

DATA = Path(__file__).parent.parent / "data" / "sources"
SCHEMAS = DATA / "eee"


@pytest.fixture(scope="module")
def kag_run() -> Run:
    example = mmlu_pro_philosophy()
    return Run.from_stats(kagreport.grade(example.datasets, example.results))


@pytest.fixture(scope="module")
def kag_eee(kag_run: Run, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_eee(kag_run, tmp_path_factory.mktemp("eee") / "kag.eee", timestamp=1)


def _value(x: float) -> float | None:
    return None if math.isnan(x) else x


def _rows(run: Run) -> dict[tuple[str, str, str], Any]:
    """Each row by (system, dataset, question): what a round trip must keep."""
    out = {}
    for r in range(len(run)):
        key = (
            run.systems[run.system[r]],
            run.dataset_names[run.dataset[r]],
            run.question_names[run.question[r]],
        )
        out[key] = (
            int(run.outcome[r]),
            {m: _value(float(v[r])) for m, v in run.metrics.items()},
            {c: _value(float(v[r])) for c, v in run.costs.items()},
            *(None if t is None else t[r] for t in (run.responses, run.references, run.errors)),
        )
    return out


def _aggregates(folder: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    found = []
    for path in sorted(folder.glob("data/*/*/*/*.json")):
        samples = path.with_name(f"{path.stem}_samples.jsonl")
        lines = [json.loads(x) for x in samples.read_text(encoding="utf-8").splitlines()]
        found.append((json.loads(path.read_text(encoding="utf-8")), lines))
    return found


def _same_run(back: Run, run: Run) -> None:
    assert back.systems == run.systems
    assert back.kind == run.kind
    assert list(back.metrics) == list(run.metrics)
    assert sorted(back.costs) == sorted(run.costs)
    assert (back.responses is None, back.references is None, back.errors is None) == (
        run.responses is None,
        run.references is None,
        run.errors is None,
    )
    assert _rows(back) == _rows(run)


def test_a_kag_run_round_trips(kag_run: Run, kag_eee: Path) -> None:
    assert is_eee(kag_eee)
    assert detect_format(kag_eee).name == "eee"
    back = read_run(kag_eee)
    _same_run(back, kag_run)
    assert len(back) == 2986
    # Retrieval costs travel exactly, in the lines' performance.additional_details.
    assert {"retrieval_secs", "vertices", "context_bytes"} <= set(back.costs)
    assert Run.loads(back.dumps()) == back
    assert back.metadata["written_from"] == dict(kag_run.metadata)


def test_undefined_scores_and_unknown_outcomes_round_trip(tmp_path: Path) -> None:
    nan = math.nan
    run = Run(
        kind="answers",
        systems=("b", "org/a"),
        dataset_names=("", "d"),
        question_names=("q1", "q2"),
        system=np.array([0, 0, 1], dtype=np.int32),
        dataset=np.array([0, 1, 1], dtype=np.int32),
        question=np.array([0, 1, 0], dtype=np.int32),
        outcome=np.array([-1, 2, 0], dtype=np.int8),
        metrics={"score": np.array([nan, nan, 0.25]), "f1": np.array([nan, 0.5, nan])},
        costs={"cost_usd": np.array([0.001, nan, nan]), "input_tokens": np.array([nan, 3, 4])},
        responses=("x", None, ""),
        errors=(None, "boom", None),
    )
    folder = write_eee(run, tmp_path / "out.eee")
    _same_run(read_run(folder), run)
    assert _validate(folder) == 2
    empty = Run(
        kind="answers",
        systems=("s",),
        dataset_names=("",),
        question_names=("q",),
        system=np.zeros(1, dtype=np.int32),
        dataset=np.zeros(1, dtype=np.int32),
        question=np.zeros(1, dtype=np.int32),
        outcome=np.zeros(1, dtype=np.int8),
        metrics={},
    )
    with pytest.raises(UsageError, match="without metrics"):
        write_eee(empty, tmp_path / "empty.eee")


def test_aggregate_scores_are_the_runs_means(kag_run: Run, kag_eee: Path) -> None:
    sums: dict[tuple[str, str], list[float]] = {}
    for r in range(len(kag_run)):
        key = (kag_run.systems[kag_run.system[r]], kag_run.dataset_names[kag_run.dataset[r]])
        sums.setdefault(key, []).append(float(kag_run.metrics["correct"][r]))
    seen = set()
    for aggregate, lines in _aggregates(kag_eee):
        system = aggregate["model_info"]["id"]
        for result in aggregate["evaluation_results"]:
            values = sums[system, result["evaluation_name"]]
            assert result["metric_config"]["metric_id"] == "correct"
            assert math.isclose(result["score_details"]["score"], sum(values) / len(values))
            assert result["score_details"]["uncertainty"]["num_samples"] == len(values)
            seen.add((system, result["evaluation_name"]))
        assert aggregate["detailed_evaluation_results"]["total_rows"] == len(lines)
    assert seen == set(sums)


def _validate(*folders: Path) -> int:
    """Check every aggregate and sample line in ``folders`` against EEE's schemas."""
    jsonschema = pytest.importorskip("jsonschema")
    aggregate_schema, line_schema = (
        jsonschema.Draft7Validator(json.loads((SCHEMAS / name).read_text(encoding="utf-8")))
        for name in ("eval.schema.json", "instance_level_eval.schema.json")
    )
    checked = 0
    for folder in folders:
        for aggregate, lines in _aggregates(folder):
            aggregate_schema.validate(aggregate)
            for line in lines:
                line_schema.validate(line)
                assert line["evaluation_id"] == aggregate["evaluation_id"]
            checked += 1
    return checked


def test_what_is_written_is_valid_eee(kag_eee: Path, tmp_path: Path) -> None:
    lm_eval = DATA / "lm-eval" / "lm-eval-0.4.13" / "output"  # 3 systems
    written = write_eee(read_run(lm_eval), tmp_path / "lm.eee", timestamp=1)
    assert _validate(kag_eee, written) == 6 + 3


@pytest.mark.parametrize(
    "source",
    [
        "promptfoo/real/results.json",
        "promptfoo/two-prompts.jsonl",
        "lm-eval/lm-eval-0.4.13/output",
        "openai-evals/evals-3.0.1/records",
        "helm/real/tiny25",
        "inspect/inspect-0.3.285",
    ],
)
def test_other_tools_runs_round_trip(source: str, tmp_path: Path) -> None:
    run = read_run(DATA / source)
    back = read_run(write_eee(run, tmp_path / "out.eee"))
    _same_run(back, run)


def test_the_run_drives_the_views(kag_eee: Path) -> None:
    run = read_run(kag_eee)
    board = leaderboard(run, "correct")
    assert len(board) == 6
    assert compare_setups(run, metrics=("correct",), n_resamples=100) is not None


# ---------------------------------------------------------------- hand-made EEE files


def _aggregate(**changes: Any) -> dict[str, Any]:
    aggregate: dict[str, Any] = {
        "schema_version": "0.3.0",
        "evaluation_id": "toy/org/m1/100",
        "retrieved_timestamp": "100",
        "source_metadata": {
            "source_type": "evaluation_run",
            "source_organization_name": "org",
            "evaluator_relationship": "third_party",
        },
        "model_info": {
            "name": "m1",
            "id": "org/m1",
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "eval_library": {"name": "lm_eval", "version": "0.4.9"},
        "evaluation_results": [
            {
                "evaluation_result_id": "toy-acc",
                "evaluation_name": "toy",
                "source_data": {"dataset_name": "toy", "source_type": "other"},
                "metric_config": {"metric_id": "accuracy", "lower_is_better": False},
                "score_details": {"score": 0.5},
            },
            {
                "evaluation_result_id": "toy-f1",
                "evaluation_name": "toy",
                "source_data": {"dataset_name": "toy", "source_type": "other"},
                "metric_config": {"metric_name": "F1", "lower_is_better": False},
                "score_details": {"score": 0.75},
            },
        ],
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": "data/toy/org/m1/0b0c8e8e-0d6b-4d5e-9e3c-1d2f3a4b5c6d_samples.jsonl",
            "total_rows": 4,
        },
    }
    aggregate.update(changes)
    return aggregate


def _line(sample: str, result: str, score: float, correct: bool, **changes: Any) -> dict:
    line: dict[str, Any] = {
        "schema_version": "0.3.0",
        "evaluation_id": "toy/org/m1/100",
        "model_id": "org/m1",
        "evaluation_name": "toy",
        "evaluation_result_id": result,
        "sample_id": sample,
        "interaction_type": "single_turn",
        "input": {"raw": f"question {sample}", "reference": [f"ref {sample}"]},
        "output": {"raw": [f"answer {sample}"]},
        "answer_attribution": [],
        "evaluation": {"score": score, "is_correct": correct},
    }
    line.update(changes)
    return line


def _lines() -> list[dict[str, Any]]:
    return [
        _line(
            "q1",
            "toy-acc",
            1.0,
            True,
            token_usage={"input_tokens": 12, "output_tokens": 3, "total_tokens": 15},
            performance={"latency_ms": 250.0},
        ),
        _line("q1", "toy-f1", 1.0, True),
        _line("q2", "toy-acc", 0.0, False, error="timeout", output={"raw": []}),
        _line("q2", "toy-f1", 0.5, False),
    ]


def _write(
    folder: Path, aggregate: dict[str, Any], lines: list[dict[str, Any]] | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "0b0c8e8e-0d6b-4d5e-9e3c-1d2f3a4b5c6d.json"
    path.write_text(json.dumps(aggregate), encoding="utf-8")
    if lines is not None:
        text = "".join(json.dumps(x) + "\n" for x in lines)
        path.with_name(f"{path.stem}_samples.jsonl").write_text(text, encoding="utf-8")
    return path


def test_a_hand_made_aggregate_and_its_samples(tmp_path: Path) -> None:
    path = _write(tmp_path, _aggregate(), _lines())
    assert detect_format(path).name == "eee"
    assert detect_format(tmp_path).name == "eee"
    run = read_run(path)
    assert run.systems == ("org/m1",)
    assert run.dataset_names == ("toy",)
    assert run.question_names == ("q1", "q2")
    assert list(run.metrics) == ["correct", "accuracy", "F1"]
    assert list(run.metrics["correct"]) == [1.0, 0.0]
    assert list(run.metrics["accuracy"]) == [1.0, 0.0]
    assert list(run.metrics["F1"]) == [1.0, 0.5]
    assert list(run.outcome) == [0, 2]  # q2 carries an error
    assert run.errors == (None, "timeout")
    assert run.responses == ("answer q1", None)
    assert run.references == ("ref q1", "ref q2")
    assert run.costs["input_tokens"][0] == 12
    assert math.isnan(run.costs["input_tokens"][1])
    assert run.costs["generation_secs"][0] == 0.25
    assert run.metadata["tool"] == "every_eval_ever"
    # The file's own aggregate (accuracy 0.5, F1 0.75) from its samples:
    assert math.fsum(run.metrics["accuracy"]) / 2 == 0.5
    assert math.fsum(run.metrics["F1"]) / 2 == 0.75


def test_a_folder_of_aggregates_is_one_system_each(tmp_path: Path) -> None:
    _write(tmp_path / "data/toy/org/m1", _aggregate(), _lines())
    other = _aggregate(
        evaluation_id="toy/org/m2/100",
        model_info={**_aggregate()["model_info"], "id": "org/m2", "name": "m2"},
    )
    lines = [{**x, "evaluation_id": "toy/org/m2/100", "model_id": "org/m2"} for x in _lines()]
    _write(tmp_path / "data/toy/org/m2", other, lines)
    run = read_run(tmp_path)
    assert run.systems == ("org/m1", "org/m2")
    assert len(run) == 4


def test_agentic_lines_and_a_file_path_elsewhere(tmp_path: Path) -> None:
    aggregate = _aggregate()
    aggregate["detailed_evaluation_results"]["file_path"] = "data/x/y/z/other_samples.jsonl"
    lines = _lines()
    lines[0].update(
        interaction_type="agentic",
        output=None,
        messages=[
            {"turn_idx": 0, "role": "user", "content": "go"},
            {"turn_idx": 1, "role": "assistant", "content": "first"},
            {"turn_idx": 2, "role": "tool", "content": "42"},
            {"turn_idx": 3, "role": "assistant", "content": "final 42"},
        ],
    )
    run = read_run(_write(tmp_path, aggregate, lines))  # the <uuid>_samples.jsonl beside it
    assert run.responses == ("final 42", None)


def test_lines_without_a_result_id_take_the_evaluations_metric(tmp_path: Path) -> None:
    aggregate = _aggregate()
    aggregate["evaluation_results"] = aggregate["evaluation_results"][:1]
    aggregate["detailed_evaluation_results"]["total_rows"] = 1
    line = _line("q1", "x", 1.0, True)
    del line["evaluation_result_id"]
    run = read_run(_write(tmp_path, aggregate, [line]))
    assert list(run.metrics) == ["correct", "accuracy"]


def test_aggregates_without_samples_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, _aggregate())
    with pytest.raises(DocumentError, match="no instance-level file") as caught:
        read_run(path)
    assert str(path) in str(caught.value)
    aggregate = _aggregate()
    del aggregate["detailed_evaluation_results"]
    with pytest.raises(DocumentError, match=r"_samples\.jsonl"):
        read_run(_write(tmp_path / "b", aggregate))


def test_repeated_lines_are_averaged_and_unknown_results_named(tmp_path: Path) -> None:
    # Inspect's epochs and HELM's trials: one sample's lines for one result repeat; a line
    # may point to a result its aggregate does not summarise (EEE's lm-eval groups).
    lines = [*_lines(), _line("q1", "toy-acc", 0.0, False), _line("q2", "toy-bleu", 0.25, False)]
    aggregate = _aggregate()
    aggregate["detailed_evaluation_results"]["total_rows"] = len(lines)
    run = read_run(_write(tmp_path, aggregate, lines))
    assert list(run.metrics["accuracy"]) == [0.5, 0.0]  # q1: (1 + 0) / 2
    assert list(run.metrics["F1"]) == [1.0, 0.5]
    assert math.isnan(run.metrics["toy-bleu"][0])
    assert run.metrics["toy-bleu"][1] == 0.25
    assert [a["repeats"] for a in run.metadata["aggregates"]] == [2]


def test_a_kagreport_write_scored_twice_is_refused(kag_run: Run, tmp_path: Path) -> None:
    folder = write_eee(kag_run.select(systems=kag_run.systems[:1]), tmp_path / "k.eee")
    samples = next(folder.glob("data/*/*/*/*_samples.jsonl"))
    text = samples.read_text(encoding="utf-8")
    samples.write_text(text + text.split("\n")[0] + "\n", encoding="utf-8")
    with pytest.raises(DocumentError, match="is scored for 'correct' twice"):
        read_run(folder)


def test_malformed_files_are_one_line_each(tmp_path: Path) -> None:
    samples = "0b0c8e8e-0d6b-4d5e-9e3c-1d2f3a4b5c6d_samples.jsonl"
    no_id = _aggregate()
    del no_id["model_info"]["id"]
    bad_score = _lines()
    bad_score[1]["evaluation"]["score"] = "high"
    foreign = _lines()
    foreign[2]["evaluation_id"] = "other"
    older = _aggregate(schema_version="0.2.0")
    del older["eval_library"]
    cases: list[tuple[str, dict[str, Any], list[dict[str, Any]] | None, str, str]] = [
        ("no-id", no_id, _lines(), ".json", "model_info"),
        ("score", _aggregate(), bad_score, f"{samples}:2", "evaluation.score"),
        ("foreign", _aggregate(), foreign, f"{samples}:3", "evaluation_id 'other'"),
        ("rows", _aggregate(), _lines()[:3], ".json", "total_rows is 4"),
        ("old", _aggregate(schema_version="0.2.2"), _lines(), ".json", "'0.2.2' is not 0.3"),
        # A 0.2 aggregate lacks eval_library: the version is what is named, not the field.
        ("older", older, _lines(), ".json", "'0.2.0' is not 0.3"),
    ]
    old_line = _lines()
    old_line[0]["schema_version"] = "1.0"
    cases.append(("old-line", _aggregate(), old_line, f"{samples}:1", "'1.0' is not 0.3"))
    for name, aggregate, lines, where, field in cases:
        path = _write(tmp_path / name, aggregate, lines)
        with pytest.raises(DocumentError) as caught:
            read_run(path)
        message = str(caught.value)
        assert "\n" not in message
        assert f"{tmp_path / name}" in message, message
        assert where in message, message
        assert field in message, message
    truncated = _write(tmp_path / "cut", _aggregate(), _lines())
    truncated.write_text(truncated.read_text(encoding="utf-8")[:100], encoding="utf-8")
    with pytest.raises(DocumentError, match="not valid JSON"):
        read_run(truncated)


def test_other_files_are_not_eee() -> None:
    assert not is_eee(DATA / "promptfoo" / "results.json")
    assert not is_eee(DATA / "lm-eval")
    assert not is_eee(SCHEMAS / "eval.schema.json")
    assert not is_eee(DATA / "missing")


# ---------------------------------------------------------------- writing, convert


def test_writing_replaces_an_earlier_write_only(kag_run: Run, tmp_path: Path) -> None:
    small = kag_run.select(kag_run.systems[:1])
    target = write_eee(kag_run, tmp_path / "out.eee")
    write_eee(small, target)  # replaced whole, no stale system left
    assert read_run(target).systems == small.systems
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("keep", encoding="utf-8")
    for bad in (tmp_path / "other", tmp_path / "other" / "notes.txt"):
        with pytest.raises(UsageError):
            write_eee(small, bad)
    assert (tmp_path / "other" / "notes.txt").read_text(encoding="utf-8") == "keep"


def test_convert_writes_eee_by_name_or_flag(kag_run: Run, tmp_path: Path) -> None:
    document = tmp_path / "in.json"
    kag_run.write(document)
    done = run_cli("convert", document, "-o", tmp_path / "run.eee")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"read {document} as kagreport: 6 systems, {len(kag_run):,} rows written to "
        f"{tmp_path / 'run.eee'}\n"
    )
    done = run_cli("convert", document, "--to", "eee", "-o", tmp_path / "folder")
    assert done.returncode == 0, done.stderr
    back = tmp_path / "back.json"
    done = run_cli("convert", tmp_path / "folder", "-o", back)
    assert done.returncode == 0, done.stderr
    _same_run(Run.read(back), kag_run)
    with pytest.raises(UsageError, match="holds the run being read"):
        convert_run(tmp_path / "folder" / "data", tmp_path, to="eee")
    with pytest.raises(UsageError, match="'xml'"):
        convert_run(document, tmp_path / "x.json", to="xml")


def test_a_system_name_the_folder_cannot_spell_keeps_its_name(tmp_path: Path) -> None:
    """Two Inspect logs of one model are systems ``"mockllm/alpha (<task id>)"``: the EEE
    folder and ``model_info.id`` spell it ``mockllm/alpha_<task id>`` (EEE's validator wants
    the two to agree: it warned before), and reading the files back gives the name again."""
    run = read_run(DATA / "inspect" / "inspect-0.3.285")
    assert any(" (" in system for system in run.systems)
    write_eee(run, tmp_path / "out.eee")
    for aggregate in (tmp_path / "out.eee").glob("data/*/*/*/*.json"):
        document = json.loads(aggregate.read_text("utf-8"))
        folder = "/".join(aggregate.parent.parts[-2:])
        assert document["model_info"]["id"] == folder
    again = read_run(tmp_path / "out.eee")
    assert sorted(again.systems) == sorted(run.systems)
    assert again.metrics.keys() == run.metrics.keys()
