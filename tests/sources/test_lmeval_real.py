"""kagreport.sources lm-eval on real lm-eval 0.4.13 output (its dummy model, three seeds).

The expected numbers are lm-eval's own: its printed results tables (``expected.txt``, the
console output of ``lm_eval run``) and the metric fields of its ``samples_*.jsonl`` lines.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from kagreport.runs import Run, leaderboard
from kagreport.sources import read_run
from kagreport.sources._registry import detect_format

FIXTURE = Path(__file__).parent.parent / "data" / "sources" / "lm-eval" / "lm-eval-0.4.13"
OUTPUT = FIXTURE / "output"
SYSTEMS = ("mock/dummy-seed0", "mock/dummy-seed1", "mock/dummy-seed3")
LETTERS = "ABCDEFGHIJ"

Row = tuple[str, str, str, float | None, float | None]


def _printed_tables() -> dict[str, dict[str, list[Row]]]:
    """expected.txt parsed on its own: per model, the "Tasks" and "Groups" tables as
    (name, filter, metric, value, stderr) rows; a blank name repeats the row above, the
    indentation " - " of a subtask is dropped, "N/A" is None."""
    tables: dict[str, dict[str, list[Row]]] = {}
    model = table = ""
    name = ""
    for line in (FIXTURE / "expected.txt").read_text("utf-8").splitlines():
        if line.startswith("dummy ({'pretrained': '"):
            model = line.split("'")[3]
            tables[model] = {}
            continue
        if not line.startswith("|") or line.startswith("|--"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] in ("Tasks", "Groups"):
            table = cells[0]
            tables[model][table] = []
            continue
        assert len(cells) == 9, line
        name = cells[0].removeprefix("- ") or name
        value = float(cells[6])
        stderr = None if cells[8] in ("", "N/A") else float(cells[8])
        tables[model][table].append((name, cells[2], cells[4], value, stderr))
    return tables


PRINTED = _printed_tables()


@pytest.fixture(scope="module")
def run() -> Run:
    return read_run(OUTPUT)


def _samples(system: str) -> dict[str, list[dict[str, Any]]]:
    folder = OUTPUT / system.replace("/", "__")
    out = {}
    for file in sorted(folder.glob("samples_*.jsonl")):
        task = file.name[len("samples_") :].rsplit("_", 1)[0]
        out[task] = [json.loads(line) for line in file.read_text("utf-8").splitlines()]
    return out


def _row(run: Run, system: str, task: str, doc_id: int) -> int:
    (row,) = [
        i
        for i in range(len(run))
        if run.systems[run.system[i]] == system and run.item_label(i) == f"{task}/{doc_id}"
    ]
    return row


def _four(value: float | None) -> float | None:
    """A number as lm-eval prints it (4 decimals), read back."""
    return None if value is None else float(f"{value:.4f}")


def test_the_printed_tables_parse_as_expected() -> None:
    # The parser of the test itself, on rows read off expected.txt by eye.
    assert set(PRINTED) == set(SYSTEMS)
    seed0 = PRINTED["mock/dummy-seed0"]
    assert seed0["Tasks"][0] == ("tiny25", "none", "acc", 0.2727, 0.1468)
    assert seed0["Tasks"][2] == ("tiny25_free", "take-first", "exact_match", 0.4, 0.2449)
    assert seed0["Groups"] == [("tiny25", "none", "acc", 0.2727, 0.1468)]
    assert PRINTED["mock/dummy-seed1"]["Groups"] == [("tiny25", "none", "acc", 0.0, 0.0)]
    assert all(len(t["Tasks"]) == 7 for t in PRINTED.values())


def test_a_folder_of_three_results_files_is_three_systems(run: Run) -> None:
    assert detect_format(OUTPUT).name == "lm-eval"
    assert run.systems == SYSTEMS
    assert run.dataset_names == ("tiny25_free", "tiny25_mc_general", "tiny25_mc_science")
    assert len(run) == 3 * (5 + 5 + 6)


@pytest.mark.parametrize("system", SYSTEMS)
def test_lm_evals_own_tables_are_in_the_metadata_row_for_row(run: Run, system: str) -> None:
    entry = run.metadata["systems"][system]
    for table, key in (("Tasks", "results"), ("Groups", "groups")):
        ours = [
            (r["alias"], r["filter"], r["metric"], _four(r["value"]), _four(r["stderr"]))
            for r in entry[key]
        ]
        assert ours == PRINTED[system][table], (system, table)


def test_the_headline_is_the_first_metric_lm_eval_prints(run: Run) -> None:
    # tiny25 (the group) acc under the filter none: its column is "acc".
    assert run.metadata["headline"] == "acc"
    assert run.headline == "acc"
    # The leaderboard's own mean over the items (each document weighs the same) equals
    # lm-eval's group value here, because the group aggregates acc weighted by size.
    board = {row.system: row for row in leaderboard(run)}
    for system in SYSTEMS:
        name, _, metric, value, _ = PRINTED[system]["Groups"][0]
        assert (name, metric) == ("tiny25", "acc")
        assert _four(board[system].mean) == value
        assert board[system].n_defined == 11  # the multiple-choice documents only


@pytest.mark.parametrize("system", SYSTEMS)
def test_kagreports_own_means_are_labelled_beside_lm_evals(run: Run, system: str) -> None:
    for row in run.metadata["systems"][system]["results"]:
        assert row["kagreport_mean"] == pytest.approx(row["value"], abs=1e-12), row


def test_a_group_value_is_lm_evals_even_when_kagreports_mean_differs(tmp_path: Path) -> None:
    # As if the group had been aggregated without weight_by_size (the mean of the task
    # means); lm-eval's stderr "N/A" (what it writes when a stderr is undefined) is None.
    folder = tmp_path / "seed0"
    shutil.copytree(OUTPUT / "mock__dummy-seed0", folder)
    (file,) = folder.glob("results_*.json")
    data = json.loads(file.read_text("utf-8"))
    science, general = (
        data["results"][t]["acc,none"] for t in ("tiny25_mc_science", "tiny25_mc_general")
    )
    for section in ("results", "groups"):
        data[section]["tiny25"]["acc,none"] = (science + general) / 2
        data[section]["tiny25"]["acc_stderr,none"] = "N/A"
    file.write_text(json.dumps(data), encoding="utf-8")
    run = read_run(folder)
    (group,) = run.metadata["systems"]["mock/dummy-seed0"]["groups"]
    assert group["value"] == pytest.approx((1 / 3 + 1 / 5) / 2)
    assert group["stderr"] is None
    assert group["kagreport_mean"] == pytest.approx(3 / 11)


@pytest.mark.parametrize("system", SYSTEMS)
def test_per_sample_scores_are_the_samples_files_own(run: Run, system: str) -> None:
    checked = 0
    for task, lines in _samples(system).items():
        for line in lines:
            row = _row(run, system, task, line["doc_id"])
            for metric in line["metrics"]:
                column = metric if line["filter"] == "none" else f"{metric},{line['filter']}"
                assert run.metrics[column][row] == line[metric], (task, line["doc_id"], column)
                checked += 1
    assert checked == 2 * 5 + 2 * 5 + 2 * 6  # two (metric, filter) per document


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_multiple_choice_response_is_the_option_the_dummy_chose(run: Run, system: str) -> None:
    assert run.responses is not None
    assert run.references is not None
    assert run.options is not None
    assert run.explanations is not None
    loglikelihoods = run.metadata["systems"][system]["loglikelihoods"]
    for task, lines in _samples(system).items():
        if task == "tiny25_free":
            continue
        for line in lines:
            row = _row(run, system, task, line["doc_id"])
            choices = line["doc"]["choices"]
            lls = [float(pair[0]) for pair in line["filtered_resps"]]
            chosen = max(range(len(lls)), key=lls.__getitem__)
            # acc_norm divides by the option's length (lm-eval: len(choice), characters).
            normed = max(range(len(lls)), key=lambda k: lls[k] / len(choices[k]))
            gold = line["doc"]["label"]
            # The dummy's scores agree with these picks: lm-eval's acc and acc_norm.
            assert line["acc"] == float(chosen == gold)
            assert line["acc_norm"] == float(normed == gold)
            assert run.responses[row] == f"{LETTERS[chosen]}: {choices[chosen]}"
            assert run.references[row] == LETTERS[gold]
            assert run.options[row] == tuple(zip(LETTERS, choices, strict=False))
            assert run.question_texts is not None
            assert run.question_texts[row] == f"Question: {line['doc']['question']}\nAnswer:"
            explanation = run.explanations[row]
            assert explanation is not None
            assert f"acc picks {LETTERS[chosen]}" in explanation
            assert f"acc_norm picks {LETTERS[normed]}" in explanation
            assert loglikelihoods[task][str(line["doc_id"])] == lls
    # A generation answers with its filtered text.
    free = _row(run, system, "tiny25_free", 0)
    assert run.responses[free] == "lol"
    assert run.references[free] == "Paris"
    assert run.options[free] is None


def test_the_log_likelihoods_are_numbers_not_the_response(run: Run) -> None:
    assert run.responses is not None
    for response in run.responses:
        assert response is not None
        assert not _is_number(response), response


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def test_a_target_given_as_option_text_and_older_argument_lists_read(tmp_path: Path) -> None:
    # doc_to_target may give the option's text; lm-eval before 0.4.3 wrote the requests
    # as a list of (context, continuation) pairs rather than {"gen_args_<i>": ...}.
    folder = tmp_path / "seed0"
    shutil.copytree(OUTPUT / "mock__dummy-seed0", folder)
    (file,) = folder.glob("samples_tiny25_mc_science_*.jsonl")
    lines = [json.loads(line) for line in file.read_text("utf-8").splitlines()]
    first = lines[0]  # "Which gas do plants absorb from the air?", gold 1: Carbon dioxide
    first["target"] = "Carbon dioxide"
    first["arguments"] = [[a["arg_0"], a["arg_1"]] for a in first["arguments"].values()]
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = read_run(folder)
    row = _row(run, "mock/dummy-seed0", "tiny25_mc_science", 0)
    assert run.references is not None
    assert run.responses is not None
    assert run.references[row] == "B"
    lls = [float(pair[0]) for pair in first["filtered_resps"]]
    chosen = max(range(4), key=lls.__getitem__)
    assert run.responses[row] == f"{LETTERS[chosen]}: {first['doc']['choices'][chosen]}"
