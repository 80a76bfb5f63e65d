"""kagreport.sources lm-eval: lm-evaluation-harness --log_samples folders."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import kagreport
from kagreport import DocumentError
from kagreport.frames import stats_frame
from kagreport.runs import Run, compare_setups, leaderboard
from kagreport.sources import read_run
from kagreport.sources._registry import detect_format

DATA = Path(__file__).parent.parent / "data" / "sources" / "lm-eval"
MODELS = ("EleutherAI/pythia-14m", "EleutherAI/pythia-70m")


@pytest.fixture(scope="module")
def run() -> Run:
    return read_run(DATA)


def _results(model: str) -> dict[str, dict[str, float]]:
    (file,) = (DATA / model.replace("/", "__")).glob("results_*.json")
    results: dict[str, dict[str, float]] = json.loads(file.read_text("utf-8"))["results"]
    return results


def test_a_folder_is_detected_as_lm_eval_and_each_model_is_a_system(run: Run) -> None:
    assert detect_format(DATA).name == "lm-eval"
    assert run.systems == MODELS
    assert run.dataset_names == ("arc_easy", "gsm8k")
    assert len(run) == 2 * (10 + 5)
    assert {"acc", "acc_norm", "exact_match,strict-match", "exact_match,flexible-extract"} <= set(
        run.metrics
    )


def test_lm_evals_own_acc_and_stderr_are_reproduced_from_the_samples(run: Run) -> None:
    checked = 0
    for s, model in enumerate(run.systems):
        results = _results(model)
        for d, task in enumerate(run.dataset_names):
            rows = (run.system == s) & (run.dataset == d)
            for key, value in results[task].items():
                if "," not in key or "_stderr," in key:
                    continue
                metric, filter_key = key.split(",")
                column = metric if filter_key == "none" else key
                values = run.metrics[column][rows]
                n = len(values)
                mean = float(values.sum()) / n
                stderr = math.sqrt(float(((values - mean) ** 2).sum()) / (n - 1)) / math.sqrt(n)
                assert mean == pytest.approx(value, abs=1e-12)
                stderr_key = f"{metric}_stderr,{filter_key}"
                assert stderr == pytest.approx(results[task][stderr_key], abs=1e-12)
                checked += 1
    assert checked == 2 * (2 + 2)


def test_correct_and_outcome_follow_acc_then_the_first_exact_match_filter(run: Run) -> None:
    arc = run.dataset == run.dataset_names.index("arc_easy")
    gsm = ~arc
    assert np.array_equal(run.metrics["correct"][arc], run.metrics["acc"][arc])
    assert np.array_equal(run.metrics["correct"][gsm], run.metrics["exact_match,strict-match"][gsm])
    assert np.array_equal(run.outcome == 0, run.metrics["correct"] == 1.0)
    assert np.array_equal(run.outcome == 1, run.metrics["correct"] == 0.0)
    # pythia-70m, gsm8k doc 0: "#### 7" strict-matches the target "... #### 7".
    row = int(np.flatnonzero((run.system == 1) & gsm & (run.question == 0))[0])
    assert run.responses is not None
    assert run.references is not None
    assert run.responses[row] == "7"
    assert run.references[row] == "... #### 7"


def test_the_run_drives_the_views(run: Run) -> None:
    # The results files' own aggregates, weighted by their "n-samples" (10 and 5).
    expected = {}
    for model in MODELS:
        results = _results(model)
        arc, gsm = results["arc_easy"]["acc,none"], results["gsm8k"]["exact_match,strict-match"]
        expected[model] = (arc * 10 + gsm * 5) / 15
    board = leaderboard(run, "correct")
    assert [row.system for row in board] == sorted(MODELS, key=lambda m: -expected[m])
    for row in board:
        assert row.mean == pytest.approx(expected[row.system], abs=1e-12)
        assert row.n_items == 15
    # By default the first metric lm-eval prints: arc_easy's acc (its tasks sorted by name).
    assert run.headline == "acc"
    for row in leaderboard(run):
        assert row.mean == pytest.approx(_results(row.system)["arc_easy"]["acc,none"], abs=1e-12)
        assert row.n_defined == 10
    (comparison,) = compare_setups(run, baseline=MODELS[0])
    assert comparison.candidate == MODELS[1]
    assert comparison.only_candidate == comparison.only_baseline == 0
    frame = stats_frame(run)
    by_task = frame.set_index(["setup", "dataset"])["accuracy"]
    for model in MODELS:
        results = _results(model)
        assert by_task[(model, "arc_easy")] == pytest.approx(results["arc_easy"]["acc,none"])
        assert by_task[(model, "gsm8k")] == pytest.approx(
            results["gsm8k"]["exact_match,strict-match"]
        )
    assert kagreport.read_run(DATA, format="lm-eval") == run


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "out"
    shutil.copytree(DATA, target)
    return target


def test_malformed_files_are_one_line_each(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    model = folder / "EleutherAI__pythia-14m"
    (results,) = model.glob("results_*.json")
    (samples,) = model.glob("samples_arc_easy_*.jsonl")
    lines = samples.read_text("utf-8").splitlines()

    samples.write_text(lines[0] + "\n" + lines[1][:40] + "\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"samples_arc_easy_.*: line 2: not valid JSON") as e:
        read_run(folder)
    assert "\n" not in str(e.value)

    samples.write_text(lines[0] + "\n" + lines[0] + "\n", encoding="utf-8")
    with pytest.raises(DocumentError, match="doc_id 0 filter 'none' appears twice"):
        read_run(folder)

    broken = json.loads(lines[0])
    broken["doc_id"] = "zero"
    samples.write_text(json.dumps(broken) + "\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"line 1: Expected `int`, got `str` - at `\$.doc_id`"):
        read_run(folder)

    del broken["acc"]
    broken["doc_id"] = 0
    samples.write_text(json.dumps(broken) + "\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"line 1: \$.acc is missing"):
        read_run(folder)

    results.write_text('{"results": [1]}', encoding="utf-8")
    with pytest.raises(DocumentError, match=r"results_.*\.json: Expected `object`.*\$.results"):
        read_run(folder)


def test_nan_and_non_numeric_metrics_are_nan_and_unknown_outcomes(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (samples,) = (folder / "EleutherAI__pythia-14m").glob("samples_arc_easy_*.jsonl")
    lines = samples.read_text("utf-8").splitlines()
    first = json.loads(lines[0])
    first["acc"] = None
    first["acc_norm"] = [1, 2]
    samples.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    run = read_run(folder)
    row = int(np.flatnonzero((run.system == 0) & (run.dataset == 0) & (run.question == 0))[0])
    assert math.isnan(run.metrics["acc"][row])
    assert math.isnan(run.metrics["acc_norm"][row])
    assert run.outcome[row] == -1


def test_a_single_model_folder_and_a_results_file_read_alone(tmp_path: Path) -> None:
    model = DATA / "EleutherAI__pythia-70m"
    (results,) = model.glob("results_*.json")
    assert read_run(model).systems == ("EleutherAI/pythia-70m",)
    assert read_run(results).systems == ("EleutherAI/pythia-70m",)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DocumentError, match="no results_"):
        read_run(empty, format="lm-eval")


def test_the_same_model_twice_is_two_systems_named_by_date(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    source = DATA / "EleutherAI__pythia-14m"
    shutil.copytree(source, folder / "a")
    shutil.copytree(source, folder / "b")
    for path in (folder / "b").iterdir():
        path.rename(path.with_name(path.name.replace("10-00-00", "12-00-00")))
    run = read_run(folder)
    assert run.systems == (
        "EleutherAI/pythia-14m",
        "EleutherAI/pythia-14m (2024-06-01T12-00-00.000000)",
    )
    assert np.array_equal(
        run.metrics["correct"][run.system == 0], run.metrics["correct"][run.system == 1]
    )


def test_a_json_file_without_results_is_not_lm_eval(tmp_path: Path) -> None:
    other = tmp_path / "results_x.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    assert detect_format(DATA / "EleutherAI__pythia-14m").name == "lm-eval"
    with pytest.raises(kagreport.UsageError, match="not a run of any format"):
        read_run(other)


def test_a_multiple_choice_response_is_the_chosen_options_text(run: Run) -> None:
    # From the sample lines: the option of the highest log-likelihood (lm-eval's acc picks
    # it), its continuation's text; the gold option is the document's target index.
    assert run.responses is not None
    assert run.references is not None
    assert run.options is not None
    assert run.explanations is not None
    for model in MODELS:
        (file,) = (DATA / model.replace("/", "__")).glob("samples_arc_easy_*.jsonl")
        for line in file.read_text("utf-8").splitlines():
            sample = json.loads(line)
            likelihoods = [float(r[0]) for r in sample["filtered_resps"]]
            texts = [a["gen_args_0"]["arg_1"].strip() for a in sample["arguments"]]
            chosen = likelihoods.index(max(likelihoods))
            row = next(
                i
                for i in range(len(run))
                if run.systems[run.system[i]] == model
                and run.item_label(i) == f"arc_easy/{sample['doc_id']}"
            )
            letters = "ABCDEFGHIJ"
            assert run.responses[row] == f"{letters[chosen]}: {texts[chosen]}"
            assert run.references[row] == letters[sample["target"]]
            assert run.options[row] == tuple(zip(letters, texts, strict=False))
            # Right exactly when lm-eval's acc is 1; the log-likelihoods are kept as data.
            assert (chosen == sample["target"]) == (sample["acc"] == 1.0)
            assert run.explanations[row].startswith("log-likelihoods: A ")
    # A generation's response stays its filtered text.
    gsm = [i for i in range(len(run)) if run.item_label(i).startswith("gsm8k/")]
    assert all(run.options[i] is None for i in gsm)
