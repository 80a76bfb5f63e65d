"""kagreport.sources: promptfoo's results.json (version 3) and JSONL output."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kagreport import DocumentError
from kagreport.frames import stats_frame
from kagreport.runs import Run, compare_setups, cost_frontier, leaderboard
from kagreport.sources import read_run
from kagreport.sources._registry import detect_format

DATA = Path(__file__).parent.parent / "data" / "sources" / "promptfoo"
RESULTS = DATA / "results.json"
JSONL = DATA / "two-prompts.jsonl"


@pytest.fixture(scope="module")
def run() -> Run:
    return read_run(RESULTS)


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_both_outputs_are_detected() -> None:
    assert detect_format(RESULTS).name == "promptfoo"
    assert detect_format(JSONL).name == "promptfoo"


def test_stats_are_promptfoos_own(run: Run, raw: dict) -> None:
    # stats.successes/failures/errors as promptfoo computed them, from the rows.
    stats = raw["results"]["stats"]
    assert int((run.outcome == 0).sum()) == stats["successes"]
    assert int((run.outcome == 1).sum()) == stats["failures"]
    assert int((run.outcome == 2).sum()) == stats["errors"]
    assert len(run) == len(raw["results"]["results"])


def test_per_prompt_metrics_are_promptfoos_own(run: Run, raw: dict) -> None:
    # Each prompts[i] (one per provider x prompt) holds promptfoo's own totals.
    prompts = raw["results"]["prompts"]
    assert sorted(run.systems) == sorted(p["provider"] for p in prompts)
    for index, prompt in enumerate(prompts):
        name = prompt["provider"]
        assert run.metadata["prompt_index"][name] == index
        rows = run.system == run.systems.index(name)
        metrics = prompt["metrics"]
        assert int(run.metrics["correct"][rows].sum()) == metrics["testPassCount"]
        assert int((run.outcome[rows] == 1).sum()) == metrics["testFailCount"]
        assert int((run.outcome[rows] == 2).sum()) == metrics["testErrorCount"]
        assert math.isclose(run.metrics["score"][rows].sum(), metrics["score"])
        assert math.isclose(
            run.costs["generation_secs"][rows].sum() * 1000, metrics["totalLatencyMs"]
        )
        assert run.costs["input_tokens"][rows].sum() == metrics["tokenUsage"]["prompt"]
        assert run.costs["output_tokens"][rows].sum() == metrics["tokenUsage"]["completion"]
        assert math.isclose(run.costs["cost_usd"][rows].sum(), metrics["cost"])
    usage = raw["results"]["stats"]["tokenUsage"]
    assert run.costs["input_tokens"].sum() == usage["prompt"]
    assert run.costs["output_tokens"].sum() == usage["completion"]


def test_items_texts_and_metadata(run: Run) -> None:
    assert run.question_names == ("test 0", "test 1")
    assert run.dataset_names == ("",)
    assert run.responses is not None
    assert "An echo." in run.responses
    assert run.errors is not None
    assert run.explanations is not None
    # A failed assertion: an explanation, not an error.
    assert run.errors[0] is None
    assert run.explanations[0] == "Latency 5794ms is greater than threshold 3000ms"
    assert run.metadata["version"] == "0.118.10"
    assert run.metadata["eval_id"] == "eval-WJi-2025-10-01T20:08:11"


def test_the_run_drives_the_views(run: Run) -> None:
    board = leaderboard(run, "score")
    # gpt-5-mini: (0.75 + 2/3) / 2, gpt-5: (0.5 + 2/3) / 2, from the file's scores.
    assert [row.system for row in board] == ["openai:gpt-5-mini", "openai:gpt-5"]
    assert math.isclose(board[0].mean, (0.75 + 2 / 3) / 2)
    comparisons = compare_setups(run, metrics=("score",), n_resamples=200)
    assert comparisons is not None
    points = cost_frontier(run, "cost_usd", "score")
    assert len(points) == 2
    frame = stats_frame(run)
    assert len(frame) >= 2


def test_jsonl_with_several_prompts(tmp_path: Path) -> None:
    jrun = read_run(JSONL)
    assert jrun.systems == ("mini / terse", "mini / polite")
    assert list(jrun.outcome) == [0, 1, 0, 2]
    assert list(jrun.metrics["correct"]) == [1.0, 0.0, 1.0, 0.0]
    assert np.isnan(jrun.metrics["score"][2])
    assert list(jrun.metrics["accuracy"][:2]) == [1.0, 0.0]
    assert np.isnan(jrun.metrics["accuracy"][2:]).all()
    assert np.isnan(jrun.costs["input_tokens"][2:]).all()
    assert np.isnan(jrun.costs["cost_usd"][2:]).all()
    assert jrun.responses is not None
    assert jrun.responses[2] == '{"answer": 6}'
    assert jrun.errors is not None
    assert jrun.errors[3] == "API error: 429 Too Many Requests"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_malformed_files_are_one_line_each(tmp_path: Path, raw: dict) -> None:
    text = RESULTS.read_text(encoding="utf-8")
    truncated = _write(tmp_path, "truncated.json", text[: len(text) // 2])
    newer = json.loads(text)
    newer["results"]["version"] = 4
    unknown = _write(tmp_path, "v4.json", json.dumps(newer))
    bad = json.loads(text)
    bad["results"]["results"][2]["testIdx"] = "one"
    badfield = _write(tmp_path, "bad.json", json.dumps(bad))
    twice = json.loads(text)
    twice["results"]["results"].append(twice["results"]["results"][0])
    duplicated = _write(tmp_path, "dup.json", json.dumps(twice))
    lines = JSONL.read_text(encoding="utf-8").splitlines()
    badline = _write(tmp_path, "bad.jsonl", "\n".join([lines[0], '{"provider": {}}']))
    cases = [
        (truncated, "not valid JSON"),
        (unknown, "results.version is 4"),
        (badfield, "results.results[2].testIdx"),
        (duplicated, "holds testIdx 0 twice"),
        (badline, "line 2"),
    ]
    for path, fragment in cases:
        with pytest.raises(DocumentError) as info:
            read_run(path, format="promptfoo")
        message = str(info.value)
        assert "\n" not in message
        assert str(path) in message
        assert fragment in message


REAL = DATA / "real"  # promptfoo 0.123.1's own output (SOURCE.md): repeat 3, a provider error


@pytest.mark.parametrize("name", ["results.json", "results.jsonl"])
def test_a_real_run_counts_as_promptfoo_counts(name: str) -> None:
    """Per provider, passes / failures / errors and the pass rate equal promptfoo's own
    aggregates (results.json -> results.prompts[].metrics; expected.txt)."""
    raw = json.loads((REAL / "results.json").read_text(encoding="utf-8"))
    run = read_run(REAL / name)
    for prompt in raw["results"]["prompts"]:
        metrics = prompt["metrics"]
        system = run.systems.index(prompt["provider"].removeprefix("file://make/"))
        rows = run.system == system
        outcomes = run.outcome[rows].tolist()
        assert outcomes.count(0) == metrics["testPassCount"]
        assert outcomes.count(1) == metrics["testFailCount"]
        assert outcomes.count(2) == metrics["testErrorCount"]
    # The headline: promptfoo's pass rate, errors in the denominator (14 of 48 overall).
    board = {row.system: row for row in leaderboard(run)}
    assert sum(round(row.mean * row.n_items) for row in board.values()) == 14
    assert sum(row.n_items for row in board.values()) == 48


def test_a_failed_assertion_is_an_explanation_not_an_error() -> None:
    """promptfoo writes a failed assertion's reason into `error` as well; only its three
    provider failures (failureReason 2) are errors."""
    raw = json.loads((REAL / "results.json").read_text(encoding="utf-8"))
    run = read_run(REAL / "results.json")
    assert run.errors is not None
    assert run.explanations is not None
    by_row = raw["results"]["results"]
    assert len(by_row) == len(run)
    for row, result in enumerate(by_row):
        if result["failureReason"] == 2:
            assert run.outcome[row] == 2
            assert run.errors[row] == result["error"]
        else:
            assert run.errors[row] is None
        if result["failureReason"] == 1:
            assert run.outcome[row] == 1
            assert run.explanations[row] == result["gradingResult"]["reason"]
    assert sum(e is not None for e in run.errors) == 3


# promptfoo 0.123.1's own numbers (real/expected.txt: results.prompts[].metrics):
# (passes, failures, errors) per provider of the prompt qa-prompt, over 8 tests x repeat 3.
COUNTS = {"echo": (3, 21, 0), "mock-scripted": (11, 10, 3)}


@pytest.mark.parametrize("name", ["results.json", "results.jsonl"])
def test_the_headline_per_provider_is_promptfoos_pass_rate(name: str) -> None:
    """The leaderboard's mean is promptfoo's pass rate per prompt x provider: passes over
    every run of every test, errors included in the denominator."""
    board = {row.system: row for row in leaderboard(read_run(REAL / name))}
    assert set(board) == set(COUNTS)
    for system, (passes, failures, errors) in COUNTS.items():
        total = passes + failures + errors
        assert board[system].mean == passes / total
        assert board[system].n_items == total == 24
        assert board[system].n_errors == errors


@pytest.mark.parametrize("name", ["results.json", "results.jsonl"])
def test_repeats_of_a_test_are_marked(name: str) -> None:
    """repeat: 3 gives each of the 8 tests 3 consecutive testIdx values: every run stays an
    item (promptfoo counts each), and repeat_of ties the 3 runs of a test together."""
    raw = json.loads((REAL / "results.json").read_text(encoding="utf-8"))
    repeat = raw["config"]["evaluateOptions"]["repeat"]
    tests = raw["config"]["tests"]
    run = read_run(REAL / name)
    if name == "results.json":
        assert run.metadata["repeat"] == repeat == 3
    repeat_of = run.metadata["repeat_of"]
    clusters: dict[str, list[str]] = {}
    for item, first in repeat_of.items():
        clusters.setdefault(first, []).append(item)
    assert len(clusters) == len(tests) == 8
    assert all(len(items) == repeat for items in clusters.values())
    assert set(repeat_of) == set(run.question_names)
    # The runs of one test share its description (promptfoo's own test identity).
    by_index = {r["testIdx"]: r["testCase"]["description"] for r in raw["results"]["results"]}
    for first, items in clusters.items():
        assert len({by_index[int(item.split()[1])] for item in items}) == 1, first
    # The hand-made fixtures repeat no test.
    assert "repeat_of" not in read_run(RESULTS).metadata


def test_a_real_runs_texts_are_promptfoos() -> None:
    """Question (the rendered prompt), target (the assertions that compare with a text),
    response and explanation (the grading reason) of each row, as results.json holds them."""
    raw = json.loads((REAL / "results.json").read_text(encoding="utf-8"))
    run = read_run(REAL / "results.json")
    assert run.question_texts is not None
    assert run.responses is not None
    assert run.references is not None
    assert run.explanations is not None
    for row, result in enumerate(raw["results"]["results"]):
        vars_ = result["vars"]
        assert run.question_texts[row] == f"Question: {vars_['question']}\nAnswer:"
        assert run.question_texts[row] == result["prompt"]["raw"]
        assert run.responses[row] == result["response"].get("output")
        grading = result["gradingResult"]  # null for a provider error: nothing was graded
        assert run.explanations[row] == (grading["reason"] if grading else None)
        texts = [
            f"{a['type']}: {a['value']}"
            for a in result["testCase"]["assert"]
            if a["type"] in ("equals", "contains", "icontains")
        ]
        assert run.references[row] == ("\n".join(texts) or None)
    capital = run.question_names.index("test 0")
    assert run.references[capital] == "equals: Paris\ncontains: Paris"


def test_a_test_keeps_its_key_when_a_run_lacks_its_first_repeat(tmp_path: Path) -> None:
    """With the config's repeat recorded, each run of a test is keyed by the test's first
    testIdx even where that first run is missing (a provider failure promptfoo dropped, a
    filtered file): the test pairs with the same test of a complete run."""
    raw = json.loads((REAL / "results.json").read_text(encoding="utf-8"))
    repeat = raw["config"]["evaluateOptions"]["repeat"]
    dropped = repeat  # test 1's first run
    raw["results"]["results"] = [r for r in raw["results"]["results"] if r["testIdx"] != dropped]
    trimmed = tmp_path / "results.json"
    trimmed.write_text(json.dumps(raw), encoding="utf-8")
    full = read_run(REAL / "results.json").metadata["repeat_of"]
    cut = read_run(trimmed).metadata["repeat_of"]
    assert f"test {dropped}" not in cut
    assert cut == {item: first for item, first in full.items() if item != f"test {dropped}"}
    assert cut[f"test {dropped + 1}"] == f"test {dropped}"
