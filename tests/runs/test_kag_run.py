"""A kag tree as a run on a simulated tree (unparsable files, errors, free-form and
unlabelled questions), its memory, the coercion at the views' edge and the run document's
per-item texts.

Expected texts are read from the tree's files with ``json`` here, not through kagreport.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kagreport import DocumentError, InputError, KagreportError, UsageError, as_run, read_run
from kagreport.evaluation import AnswerEvaluation, AnswerItem, evaluation_from_stats
from kagreport.examples import mmlu_pro_philosophy
from kagreport.grading import StatsReport, grade
from kagreport.kag import SimulatedRun
from kagreport.kag._simulate import write_simulated_run
from kagreport.runs import Run
from kagreport.runs._texts import LazyTexts

EXAMPLE = mmlu_pro_philosophy()


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> SimulatedRun:
    return write_simulated_run(tmp_path_factory.mktemp("sim") / "run", questions=30, seed=7)


@pytest.fixture(scope="module")
def sim_report(sim: SimulatedRun) -> StatsReport:
    return grade(sim.datasets_path, sim.results_path)


@pytest.fixture(scope="module")
def sim_run(sim: SimulatedRun) -> Run:
    return read_run(sim.results_path, format="kag", datasets=sim.datasets_path)


def _result_file(root: str | Path, run: Run, row: int, prefix: str = "") -> Path:
    return (
        Path(root)
        / run.dataset_names[run.dataset[row]]
        / run.question_names[run.question[row]]
        / f"{prefix}{run.systems[run.system[row]]}.json"
    )


def test_a_simulated_tree_read_as_a_run_equals_the_run_of_its_grade(
    sim_run: Run, sim_report: StatsReport, sim: SimulatedRun
) -> None:
    assert sim_run == Run.from_stats(sim_report)
    assert sim_run.systems == sim_report.setup_names
    assert len(sim_run) == len(sim_report.items)
    assert sim_report.unparsable_files  # the tree has some: they are no rows
    assert sim_run.metadata["simulated"] is True
    assert sim_run.metadata["prefix"] == ""
    # Each setup's accuracy is kag's: correct rows over graded rows.
    for setup in sim_report.setups:
        correct = sim_run.metrics["correct"][sim_run.system == sim_run.systems.index(setup.setup)]
        assert setup.overall.accuracy == pytest.approx(correct.mean())
    for name in ("generation_secs", "retrieval_secs", "properties", "context_bytes"):
        np.testing.assert_array_equal(sim_run.costs[name], sim_report.items.column(name))


def test_texts_of_a_simulated_tree_come_from_its_files(sim_run: Run, sim: SimulatedRun) -> None:
    truth = json.loads(Path(sim.datasets_path).read_text(encoding="utf-8"))
    assert sim_run.question_texts is not None
    assert sim_run.options is not None
    assert sim_run.references is not None
    assert sim_run.responses is not None
    assert sim_run.errors is not None
    seen = {"error": 0, "ok": 0}
    for row in range(len(sim_run)):
        entry = truth[sim_run.dataset_names[sim_run.dataset[row]]][
            sim_run.question_names[sim_run.question[row]]
        ]
        assert sim_run.question_texts[row] == entry["input"]
        output = entry.get("output")
        assert sim_run.options[row] == (tuple(output["options"].items()) if output else None)
        assert sim_run.references[row] == (output or {}).get("answer")
        envelope = json.loads(_result_file(sim.results_path, sim_run, row).read_text("utf-8"))
        if "ok" in envelope:
            seen["ok"] += 1
            assert sim_run.responses[row] == envelope["ok"]["result"]
            assert sim_run.errors[row] is None
        else:
            seen["error"] += 1
            assert sim_run.responses[row] is None
            assert sim_run.errors[row] == envelope["error"]
    assert seen["ok"]
    assert seen["error"]


def test_a_prefixed_tree_is_read_with_its_prefix(tmp_path: Path) -> None:
    sim = write_simulated_run(tmp_path / "run", questions=6, prefix="p1-", unparsable_files=0)
    run = read_run(sim.results_path, datasets=sim.datasets_path, prefix="p1-")
    assert run == Run.from_stats(grade(sim.datasets_path, sim.results_path, "p1-"))
    assert run.metadata["prefix"] == "p1-"
    assert run.responses is not None
    row = len(run) - 1
    envelope = json.loads(_result_file(sim.results_path, run, row, "p1-").read_text("utf-8"))
    assert run.responses[row] == (envelope["ok"]["result"] if "ok" in envelope else None)


def test_a_result_file_gone_since_grading_says_so(tmp_path: Path) -> None:
    sim = write_simulated_run(tmp_path / "run", questions=6, unparsable_files=0)
    run = read_run(sim.results_path, datasets=sim.datasets_path)
    _result_file(sim.results_path, run, 0).unlink()
    assert run.responses is not None
    assert run.errors is not None
    assert run.responses[0] is None
    assert run.errors[0] is not None
    assert "cannot read the result file again" in run.errors[0]


def test_a_kag_run_holds_no_texts(tmp_path: Path) -> None:
    """Building the run allocates far less than its texts weigh: they stay in the files."""
    sim = write_simulated_run(tmp_path / "run", questions=20, unparsable_files=0)
    long = "x" * 20_000
    for path in Path(sim.results_path).rglob("*.json"):
        envelope = json.loads(path.read_text(encoding="utf-8"))
        if "ok" in envelope:
            envelope["ok"]["result"] = long
            path.write_text(json.dumps(envelope), encoding="utf-8")
    report = grade(sim.datasets_path, sim.results_path)
    tracemalloc.start()
    try:
        run = Run.from_stats(report)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(run.responses, LazyTexts)
    texts = sum(len(t or "") for t in run.responses)
    assert texts > 100 * len(long)
    assert peak < texts / 50, (peak, texts)


def test_keep_text_keeps_the_grading_pass_texts(sim: SimulatedRun, sim_run: Run) -> None:
    kept = read_run(sim.results_path, datasets=sim.datasets_path, keep_text=True)
    assert isinstance(kept.responses, tuple)
    assert isinstance(kept.errors, tuple)
    assert kept == sim_run  # the same texts, read in the grading pass


# ---------------------------------------------------------------- read_run's options


def test_read_run_names_what_a_kag_tree_lacks_or_a_format_refuses(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="read with its datasets file") as caught:
        read_run(EXAMPLE.results, format="kag")
    assert "\n" not in str(caught.value)
    # Found without a format: a folder like a kag tree asks for its datasets file.
    with pytest.raises(UsageError, match="looks like a kag result tree"):
        read_run(EXAMPLE.results)
    promptfoo = Path(__file__).parents[1] / "data/sources/promptfoo/results.json"
    with pytest.raises(UsageError, match=r"promptfoo format takes no option 'prefix'"):
        read_run(promptfoo, prefix="x")
    with pytest.raises(UsageError, match="kag format takes no option 'colour'"):
        read_run(EXAMPLE.results, datasets=EXAMPLE.datasets, colour="red")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a run of any format"):
        read_run(tmp_path / "empty")


# ---------------------------------------------------------------- as_run


def test_as_run_takes_every_kind_of_source(
    sim_run: Run, sim_report: StatsReport, sim: SimulatedRun, tmp_path: Path
) -> None:
    assert as_run(sim_run) is sim_run
    assert as_run(sim_report) == sim_run
    assert as_run(sim_report, storage_options={}) == sim_run
    assert as_run(sim.results_path, datasets=sim.datasets_path) == sim_run
    assert as_run(Path(sim.results_path), datasets=sim.datasets_path) == sim_run
    document = tmp_path / "run.json"
    sim_run.write(document)
    assert as_run(document) == sim_run
    assert as_run(str(document)) == sim_run
    first, second = (evaluation_from_stats(sim_report, s) for s in sim_report.setup_names[:2])
    one = as_run(first)
    assert one.systems == (sim_report.setup_names[0],)
    assert len(one) == len(first.items)
    both = as_run((first, second))  # a system may lack an item (an unparsable file)
    assert both.systems == sim_report.setup_names[:2]
    assert len(both) == len(first.items) + len(second.items)
    assert as_run([first, second]) == both


def test_as_run_names_what_it_cannot_take(sim_run: Run, sim_report: StatsReport) -> None:
    for wrong, name in (({"a": 1}, "dict"), (3, "int"), ([], "list"), ([sim_run], "list")):
        with pytest.raises(InputError, match=f"not {name}$"):
            as_run(wrong)
    with pytest.raises(KagreportError):  # the package's error tree
        as_run(None)
    with pytest.raises(InputError, match="options datasets are for a path; got a Run"):
        as_run(sim_run, datasets="x")
    with pytest.raises(InputError, match="options prefix are for a path; got a StatsReport"):
        as_run(sim_report, prefix="x")


# ---------------------------------------------------------------- the run document


def test_item_texts_are_stored_once_per_item(sim_run: Run) -> None:
    document = json.loads(sim_run.dumps())
    items = document["item_texts"]
    pairs = list(zip(document["dataset"], document["question"], strict=True))
    first = list(dict.fromkeys(pairs))
    assert list(zip(items["dataset"], items["question"], strict=True)) == first
    for name in ("question_texts", "options", "references"):
        assert document[name] is None
        assert len(items[name]) == len(first) < len(pairs)
    assert document["responses"] is not None  # a system's own: per row
    assert Run.loads(sim_run.dumps()) == sim_run


def _toy(**texts: Any) -> Run:
    return Run(
        kind="answers",
        systems=("A", "B"),
        dataset_names=("d",),
        question_names=("q1", "q2"),
        system=np.array([0, 0, 1, 1], dtype=np.int32),
        dataset=np.zeros(4, dtype=np.int32),
        question=np.array([0, 1, 1, 0], dtype=np.int32),
        outcome=np.array([0, 1, 1, -1], dtype=np.int8),
        metrics={"correct": np.array([1.0, 0.0, 0.0, math.nan])},
        **texts,
    )


def test_texts_that_differ_by_system_are_stored_per_row() -> None:
    # Prompts differ by system (promptfoo's prompt variants); options and gold answers not.
    run = _toy(
        question_texts=("Q: 1?", "Q: 2?", "Please: 2?", "Please: 1?"),
        options=((("a", "one"),), None, None, (("a", "one"),)),
        references=("a", None, None, "a"),
        explanations=(None, "wrong", "wrong", None),
    )
    document = json.loads(run.dumps())
    assert document["question_texts"] == ["Q: 1?", "Q: 2?", "Please: 2?", "Please: 1?"]
    assert document["explanations"] == [None, "wrong", "wrong", None]
    items = document["item_texts"]
    assert (items["dataset"], items["question"]) == ([0, 0], [0, 1])
    assert items["options"] == [[["a", "one"]], None]
    assert items["references"] == ["a", None]
    assert items["question_texts"] is None
    again = Run.loads(run.dumps())
    assert again == run
    assert again.options == run.options
    assert _toy() == Run.loads(_toy().dumps())
    assert json.loads(_toy().dumps())["item_texts"] is None


def test_a_document_with_bad_item_texts_says_where() -> None:
    document = json.loads(_toy(references=("a", None, None, "a")).dumps())
    twice = {**document, "references": ["a", None, None, "a"]}
    with pytest.raises(DocumentError, match="references: given per row and in item_texts"):
        Run.from_dict(twice)
    short = {**document, "item_texts": {**document["item_texts"], "references": ["a"]}}
    with pytest.raises(DocumentError, match=r"item_texts.references: 1 values for 2 items"):
        Run.from_dict(short)
    missing = {**document, "item_texts": {**document["item_texts"], "question": [0, 0]}}
    with pytest.raises(DocumentError, match=r"an item \(dataset, question\) twice"):
        Run.from_dict(missing)


def test_evaluations_bring_their_texts_and_verdicts() -> None:
    def evaluation(name: str, verdicts: dict[str, Any]) -> AnswerEvaluation:
        item = AnswerItem(
            "q1", "What is 2+2?", "4", reference="four", scores={"correct": 1.0}, verdicts=verdicts
        )
        return AnswerEvaluation(
            metrics={"correct": 1.0},
            items=(item,),
            judges={"judge": {"kind": "llm"}} if verdicts else {},
            agreement={},
            usage={},
            errors={},
            settings={"keep_verdicts": True},
            metadata={"name": name},
        )

    run = Run.from_evaluations(
        [evaluation("one", {"judge": "PASS: same number"}), evaluation("two", {})]
    )
    assert run.question_texts == ("What is 2+2?", "What is 2+2?")
    assert (run.responses, run.references) == (("4", "4"), ("four", "four"))
    assert run.explanations == ("PASS: same number", None)
    several = Run.from_evaluations(
        [evaluation("one", {"a": "yes", "b": {"score": 1}}), evaluation("two", {})]
    )
    assert several.explanations == ('a: yes\nb: {"score": 1}', None)
