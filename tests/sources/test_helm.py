"""kagreport.sources helm: HELM run folders and suite folders."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kagreport import DocumentError, UsageError
from kagreport.runs import Run, compare_setups, leaderboard
from kagreport.sources import read_run
from kagreport.sources._helm import is_helm
from kagreport.sources._registry import detect_format

SUITE = Path(__file__).parent.parent / "data" / "sources" / "helm" / "v1"
GPT2 = SUITE / "anatomy:subject=anatomy,model=openai_gpt2"
LLAMA = SUITE / "anatomy:subject=anatomy,model=meta_llama-7b"
BOOLQ = SUITE / "boolq:model=openai_gpt2"
ANATOMY = "anatomy:subject=anatomy"


@pytest.fixture(scope="module")
def run() -> Run:
    return read_run(SUITE)


def _json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def _column(run: Run, name: str) -> np.ndarray[Any, Any]:
    costs = {
        "num_prompt_tokens": "input_tokens",
        "num_output_tokens": "output_tokens",
        "inference_runtime": "generation_secs",
    }
    return run.costs[costs[name]] if name in costs else run.metrics[name]


def test_run_folders_suite_folders_and_their_files_are_detected(tmp_path: Path) -> None:
    for path in (SUITE, GPT2, GPT2 / "run_spec.json", GPT2 / "stats.json"):
        assert detect_format(path).name == "helm"
    assert not is_helm(tmp_path)
    assert not is_helm(tmp_path / "missing")
    (tmp_path / "run_spec.json").write_text("{}", encoding="utf-8")
    assert not is_helm(tmp_path)  # no per_instance_stats.json
    with pytest.raises(UsageError, match="not a run of any format"):
        detect_format(tmp_path)
    with pytest.raises(DocumentError, match="no HELM run folder"):
        read_run(tmp_path, format="helm")


@pytest.mark.parametrize("folder", [GPT2, LLAMA])
def test_helms_own_stats_json_means_are_reproduced_bit_for_bit(folder: Path) -> None:
    run = read_run(folder)
    checked = 0
    fsum_differs = False
    for stat in _json(folder / "stats.json"):
        name = stat["name"]
        perturbation = name.get("perturbation")
        if name["split"] != "test" or (perturbation or {}).get("computed_on", "perturbed") != (
            "perturbed"
        ):
            continue
        label = ANATOMY if perturbation is None else f"{ANATOMY} [{perturbation['name']}]"
        rows = run.dataset == run.dataset_names.index(label)
        # HELM merges the per-instance Stats in instance order (sum += value), then
        # divides by the count; with one train trial stats.json stores that mean.
        values = _column(run, name["name"])[rows].tolist()
        total = 0.0
        for value in values:
            total += value
        assert total / len(values) == stat["mean"]
        fsum_differs |= math.fsum(values) / len(values) != stat["mean"]
        assert stat["count"] == 1
        checked += 1
    assert checked == 2 * 6  # 6 stats, unperturbed and typos
    # The in-order float sum is HELM's; the exactly rounded sum misses llama's
    # inference_runtime by one ulp.
    assert fsum_differs == (folder == LLAMA)


def test_train_trials_are_averaged_as_helm_averages_them() -> None:
    run = read_run(BOOLQ)
    assert run.metadata["runs"][BOOLQ.name]["num_train_trials"] == 2
    trials = {}
    for entry in _json(BOOLQ / "per_instance_stats.json"):
        for stat in entry["stats"]:
            trials.setdefault(stat["name"]["name"], {}).setdefault(entry["instance_id"], []).append(
                stat["mean"]
            )
    for stat in _json(BOOLQ / "stats.json"):
        name = stat["name"]["name"]
        values = _column(run, name)
        per_instance = [sum(v) / 2 for v in trials[name].values()]
        assert values.tolist() == per_instance
        # stats.json: the mean over the 2 trials of the mean over instances; the same
        # number up to rounding (the sums are taken in another order).
        assert float(values.mean()) == pytest.approx(stat["mean"], rel=1e-15)
        assert stat["count"] == 2
    # exact_match averaged over trials is 0.5 for id8: not a 0/1 `correct`.
    assert run.metadata["runs"][BOOLQ.name]["correct"] is None
    assert "correct" not in run.metrics
    assert (run.outcome == -1).all()


def test_items_texts_outcomes_and_costs(run: Run) -> None:
    assert run.systems == ("meta/llama-7b", "openai/gpt2")
    assert run.dataset_names == (ANATOMY, f"{ANATOMY} [typos]", "boolq")
    # The valid-split instance id3 is not an item: HELM evaluates the test split.
    assert "id3" not in run.question_names
    assert len(run) == 7 + 7 + 3
    assert run.metadata["runs"][GPT2.name]["correct"] == "exact_match"
    assert run.metadata["runs"][GPT2.name]["split"] == "test"
    assert run.responses is not None
    assert run.references is not None
    assert run.errors is not None
    states = _json(GPT2 / "scenario_state.json")["request_states"]
    gpt2 = run.systems.index("openai/gpt2")
    for state in states:
        instance = state["instance"]
        if instance["split"] != "test":
            continue
        dataset = ANATOMY if "perturbation" not in instance else f"{ANATOMY} [typos]"
        (row,) = np.flatnonzero(
            (run.system == gpt2)
            & (run.dataset == run.dataset_names.index(dataset))
            & (run.question == run.question_names.index(instance["id"]))
        )
        result = state["result"]
        assert run.costs["generation_secs"][row] == result["request_time"]
        assert run.errors[row] == result.get("error")
        if result["success"]:
            assert run.responses[row] == result["completions"][0]["text"]
            assert run.outcome[row] == (0 if run.metrics["correct"][row] == 1.0 else 1)
        else:
            assert run.responses[row] is None
            assert run.outcome[row] == 2
        correct = [r["output"]["text"] for r in instance["references"] if "correct" in r["tags"]]
        assert run.references[row] == "\n".join(correct)
    assert int((run.outcome == 2).sum()) == 1  # id14: "Timeout after 30 s"


def test_the_run_drives_the_views(run: Run, tmp_path: Path) -> None:
    expected = {}
    for system, folder in (("openai/gpt2", GPT2), ("meta/llama-7b", LLAMA)):
        means = {
            "perturbation" in s["name"]: s["mean"]
            for s in _json(folder / "stats.json")
            if s["name"]["name"] == "exact_match"
            and s["name"]["split"] == "test"
            and s["name"].get("perturbation", {}).get("computed_on", "perturbed") == "perturbed"
        }
        # 5 unperturbed and 2 typos items; boolq has no 0/1 `correct`.
        expected[system] = (5 * means[False] + 2 * means[True]) / 7
    board = leaderboard(run, "correct")  # the headline is EM on every item, boolq's too
    assert [row.system for row in board] == ["meta/llama-7b", "openai/gpt2"]
    for row in board:
        assert row.mean == pytest.approx(expected[row.system], abs=1e-15)
        assert row.n_defined == 7
    assert board[1].n_errors == 1
    (comparison,) = compare_setups(run, metrics=["correct"], baseline="openai/gpt2")
    assert comparison.candidate == "meta/llama-7b"
    assert comparison.only_candidate == 0
    assert comparison.only_baseline == 3  # the boolq items
    # gpt2 answered " Heart" (id12) and " three" (id13); llama got both right.
    assert [flip[0] for flip in comparison.flips] == [f"{ANATOMY}/id12", f"{ANATOMY}/id13"]
    path = tmp_path / "run.json"
    run.write(path)
    assert Run.read(path) == run
    assert read_run(path) == run


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "v1"
    shutil.copytree(SUITE, target)
    return target


def test_missing_stats_json_and_scenario_state(tmp_path: Path) -> None:
    folder = _copy(tmp_path) / GPT2.name
    (folder / "stats.json").unlink()
    run = read_run(folder)
    assert run.metadata["runs"][GPT2.name]["stats_json"] is False
    assert len(run) == 7
    (folder / "scenario_state.json").unlink()
    bare = read_run(folder)
    assert bare.responses is None
    assert bare.errors is None
    # The time is HELM's inference_runtime stat, which needs no scenario_state.json.
    assert np.array_equal(bare.costs["generation_secs"], run.costs["generation_secs"])
    assert np.array_equal(bare.metrics["correct"], run.metrics["correct"])
    # Without the requests the failed request is not known: its outcome is incorrect.
    assert int((bare.outcome == 2).sum()) == 0


def test_malformed_files_are_one_line_each(tmp_path: Path) -> None:
    folder = _copy(tmp_path) / GPT2.name
    stats_file = folder / "per_instance_stats.json"
    entries = _json(stats_file)

    stats_file.write_text(json.dumps(entries)[:200], encoding="utf-8")
    with pytest.raises(DocumentError, match=r"per_instance_stats\.json: not valid JSON") as e:
        read_run(folder)
    assert "\n" not in str(e.value)

    broken = [dict(entries[0], train_trial_index="zero"), *entries[1:]]
    stats_file.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(
        DocumentError, match=r"per_instance_stats\.json: .* at `\$\[0\]\.train_trial_index`"
    ):
        read_run(folder)

    stats_file.write_text(json.dumps([entries[0], *entries]), encoding="utf-8")
    with pytest.raises(DocumentError, match="instance_id 'id11' train_trial_index 0 appears twice"):
        read_run(folder)

    stats_file.write_text(json.dumps(entries), encoding="utf-8")
    (folder / "run_spec.json").write_text('{"name": "x", "adapter_spec": []}', encoding="utf-8")
    with pytest.raises(DocumentError, match=r"run_spec\.json: .*\$\.adapter_spec"):
        read_run(folder)


def test_two_runs_of_one_model_on_one_dataset_are_two_systems(tmp_path: Path) -> None:
    suite = _copy(tmp_path)
    # Another deployment of the same model: the same dataset once the model arguments go.
    again = suite / "anatomy:subject=anatomy,model=openai_gpt2,model_deployment=openai_gpt2"
    shutil.copytree(suite / GPT2.name, again)
    spec = _json(again / "run_spec.json")
    spec["name"] = again.name
    (again / "run_spec.json").write_text(json.dumps(spec), encoding="utf-8")
    run = read_run(suite)
    assert run.systems == ("meta/llama-7b", "openai/gpt2", f"openai/gpt2 [{again.name}]")
    assert run.metadata["runs"][again.name]["dataset"] == ANATOMY
    assert len(run) == 7 + 7 + 7 + 3


def test_a_stat_helm_dropped_is_nan_and_a_valid_only_run_reads_valid(tmp_path: Path) -> None:
    folder = _copy(tmp_path) / GPT2.name
    stats_file = folder / "per_instance_stats.json"
    entries = _json(stats_file)
    # HELM drops NaN stats from the file (runner.remove_per_instance_stats_nans).
    entries[0]["stats"] = [s for s in entries[0]["stats"] if s["name"]["name"] != "exact_match"]
    stats_file.write_text(json.dumps(entries), encoding="utf-8")
    run = read_run(folder)
    (row,) = np.flatnonzero(
        (run.question == run.question_names.index("id11"))
        & (run.dataset == run.dataset_names.index(ANATOMY))
    )
    assert np.isnan(run.metrics["correct"][row])
    assert run.outcome[row] == -1
    valid = [e for e in entries if e["instance_id"] == "id3"]
    stats_file.write_text(json.dumps(valid), encoding="utf-8")
    run = read_run(folder)
    assert run.metadata["runs"][GPT2.name]["split"] == "valid"
    assert run.question_names == ("id3",)
    assert run.responses == (" skull",)
    assert run.metrics["correct"].tolist() == [1.0]


REAL = Path(__file__).parent.parent / "data" / "sources" / "helm" / "real" / "tiny25"


def test_bookkeeping_stats_are_not_metrics() -> None:
    """HELM's counts, finish reasons, training costs and run-level inputs (crfm-helm
    0.5.16's own output) are neither tested nor ranked: runtime and tokens are costs, the
    rest per-system metadata."""
    run = read_run(REAL)
    scores = {"exact_match", "quasi_exact_match", "prefix_exact_match"}
    scores |= {"quasi_prefix_exact_match", "f1_score", "correct"}
    assert set(run.metrics) == scores
    assert set(run.costs) == {"input_tokens", "output_tokens", "generation_secs"}
    kept = run.metadata["bookkeeping"]
    for name in ("batch_size", "num_references", "num_train_trials", "finish_reason_stop",
                 "training_co2_cost", "training_energy_cost", "num_completion_tokens"):  # fmt: skip
        assert name in kept, name
        assert name not in run.metrics, name


@pytest.mark.parametrize(
    ("folder", "dataset", "stat"),
    [
        ("tiny25_qa:model=tiny25_scripted", "tiny25_qa", "exact_match"),
        ("tiny25_qa:model=tiny25_scripted", "tiny25_qa", "f1_score"),
        ("tiny25_mc:model=tiny25_scripted", "tiny25_mc", "exact_match"),
        ("tiny25_qa:model=simple_model1", "tiny25_qa", "exact_match"),
    ],
)
def test_a_real_runs_headline_is_helms_own(folder: str, dataset: str, stat: str) -> None:
    """stats.json's test-split mean (the mean over 3 train trials of the mean over the
    instances) equals the run's mean of the per-instance trial means (every instance has
    every trial)."""
    run = read_run(REAL)
    (expected,) = [
        s["mean"]
        for s in _json(REAL / folder / "stats.json")
        if s["name"]["name"] == stat
        and s["name"]["split"] == "test"
        and "perturbation" not in s["name"]
    ]
    system = "tiny25/scripted" if "scripted" in folder else "simple/model1"
    rows = (run.system == run.systems.index(system)) & (
        run.dataset == run.dataset_names.index(dataset)
    )
    assert run.metrics[stat][rows].mean() == pytest.approx(expected, abs=1e-12)


# helm-summarize's own leaderboard (crfm-helm 0.5.16, expected.txt: groups/tiny25.json and
# groups/tiny25_qa.json), per model: the group's main metric pooled over the model's runs in
# the group, HELM's way (a run with 3 train trials weighs 3 times the 1-trial robustness run).
SUMMARIZE = {
    "simple/model1": {
        ("tiny25_qa", "f1_score"): 0.0,
        ("tiny25_qa", "f1_score [robustness/worst]"): 0.0,
        ("tiny25_mc", "exact_match"): 0.0,
        ("tiny25_qa", "inference_runtime"): 5.1657358805338544e-06,
        ("tiny25_mc", "inference_runtime"): 4.079606797960069e-06,
        ("tiny25_qa", "num_prompt_tokens"): 226.83333333333334,
        ("tiny25_mc", "num_prompt_tokens"): 295.3333333333333,
        ("tiny25_qa", "num_output_tokens"): 1.0,
    },
    "tiny25/scripted": {
        ("tiny25_qa", "f1_score"): 0.75,
        ("tiny25_qa", "f1_score [robustness/worst]"): 0.7083333333333333,
        ("tiny25_mc", "exact_match"): 0.5555555555555555,
        ("tiny25_qa", "inference_runtime"): 1.1006991068522135e-05,
        ("tiny25_mc", "inference_runtime"): 1.049041748046875e-05,
        ("tiny25_qa", "num_prompt_tokens"): 226.83333333333334,
        ("tiny25_mc", "num_prompt_tokens"): 295.3333333333333,
        ("tiny25_mc", "num_output_tokens"): 1.0,
    },
}


def test_the_headline_per_model_is_helm_summarizes() -> None:
    """Each run group's numbers per model equal helm-summarize's leaderboard (Accuracy,
    Robustness, Efficiency, General information), and the group's main metric is the
    schema's (schema.json, written by helm-summarize)."""
    groups = read_run(REAL).metadata["groups"]
    assert groups["tiny25_qa"]["main"] == "f1_score"
    assert groups["tiny25_mc"]["main"] == "exact_match"
    for system, expected in SUMMARIZE.items():
        for (group, stat), value in expected.items():
            assert groups[group]["systems"][system][stat] == pytest.approx(value, rel=1e-12)
    # Not the mean of the two QA runs' own means ((0.7222 + 0.8333) / 2 = 0.7778).
    runs = read_run(REAL).metadata["runs"]
    robust = runs["tiny25_qa:model=tiny25_scripted,data_augmentation=robustness"]["stats"]
    main = runs["tiny25_qa:model=tiny25_scripted"]["stats"]
    assert (main["f1_score"], robust["f1_score"]) == (0.7222222222222222, 0.8333333333333334)


def test_each_runs_stated_scores_are_its_stats_json() -> None:
    """metadata["runs"][...]["stats"]: stats.json's test-split means (expected.txt), the
    scores and costs only, perturbed ones labelled ``[<name>/<computed_on>]``."""
    runs = read_run(REAL).metadata["runs"]
    robust = runs["tiny25_qa:model=tiny25_scripted,data_augmentation=robustness"]["stats"]
    assert robust["exact_match"] == 0.8333333333333334
    assert robust["exact_match [mild_mix/perturbed]"] == 0.6666666666666666
    assert robust["f1_score [mild_mix/worst]"] == 0.6666666666666666
    assert robust["f1_score [fairness/worst]"] == 0.8333333333333334
    assert "num_instances" not in robust
    assert "batch_size" not in robust
    mc = runs["tiny25_mc:model=tiny25_scripted"]["stats"]
    assert mc["quasi_prefix_exact_match [robustness/worst]"] == 0.5555555555555555


def test_the_schema_says_which_stats_are_not_scores(tmp_path: Path) -> None:
    """A stat the suite's schema.json puts in its efficiency or general-information metric
    group is bookkeeping, whatever its name."""
    suite = tmp_path / "tiny25"
    shutil.copytree(REAL, suite)
    schema = _json(suite / "schema.json")
    for group in schema["metric_groups"]:
        if group["name"] == "general_information":
            group["metrics"].append({"name": "quasi_exact_match", "split": "${main_split}"})
    (suite / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    run = read_run(suite)
    assert "quasi_exact_match" not in run.metrics
    assert "quasi_exact_match" in run.metadata["bookkeeping"]
    assert "exact_match" in run.metrics
    (suite / "schema.json").unlink()
    assert "quasi_exact_match" in read_run(suite).metrics


def test_perturbed_instances_and_multiple_choice_texts() -> None:
    """The robustness run's perturbed instances are items of their own dataset; a
    multiple_choice_joint item shows the options HELM asked with (output_mapping), the
    letter the model answered and the correct letter; every item its question text."""
    run = read_run(REAL)
    perturbed = "tiny25_qa:data_augmentation=robustness [mild_mix]"
    assert perturbed in run.dataset_names
    assert run.question_texts is not None
    assert run.options is not None
    assert run.responses is not None
    assert run.references is not None
    folder = REAL / "tiny25_mc:model=tiny25_scripted"
    states = _json(folder / "scenario_state.json")["request_states"]
    system = run.systems.index("tiny25/scripted")
    checked = 0
    for state in states:
        if state["train_trial_index"] != 0 or state["instance"]["split"] != "test":
            continue
        instance = state["instance"]
        (row,) = np.flatnonzero(
            (run.system == system)
            & (run.dataset == run.dataset_names.index("tiny25_mc"))
            & (run.question == run.question_names.index(instance["id"]))
        )
        mapping = state["output_mapping"]
        assert run.options[row] == tuple(mapping.items())
        correct = [r["output"]["text"] for r in instance["references"] if "correct" in r["tags"]]
        assert run.references[row] == "\n".join(k for k, v in mapping.items() if v in correct)
        assert run.responses[row] == state["result"]["completions"][0]["text"]
        assert run.question_texts[row] == instance["input"]["text"]
        checked += 1
    assert checked == 6
    rows = run.dataset == run.dataset_names.index(perturbed)
    assert rows.sum() == 2 * 6
    texts = {run.question_texts[r] for r in np.flatnonzero(rows)}
    assert None not in texts


def test_the_headline_of_a_real_suite_is_helms_em_on_every_item() -> None:
    """crfm-helm 0.5.16's run with 3 train trials: `correct` is defined only where a run's
    values are all 0 or 1, so ranking by it put the systems on different items (12 of 24
    and 24 of 24). The headline is EM, on every item; per run it is stats.json's EM."""
    from kagreport.runs import leaderboard

    real = Path(__file__).parent.parent / "data" / "sources" / "helm" / "real" / "tiny25"
    run = read_run(real)
    assert run.headline == "exact_match"
    rows = leaderboard(run)
    assert {row.n_defined for row in rows} == {24}
    folder = real / "tiny25_mc:model=tiny25_scripted"
    stats = json.loads((folder / "stats.json").read_text("utf-8"))
    (stated,) = [s["mean"] for s in stats if s["name"] == {"name": "exact_match", "split": "test"}]
    mine = run.system == run.systems.index("tiny25/scripted")
    mc = run.dataset == run.dataset_names.index("tiny25_mc")
    assert run.metrics["exact_match"][mine & mc].mean() == pytest.approx(stated, abs=1e-12)
