"""kagreport.sources: format detection and read_run's dispatch."""

from __future__ import annotations

from pathlib import Path

import pytest

import kagreport
from kagreport import UsageError
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import Run
from kagreport.sources import read_run
from kagreport.sources._registry import FORMATS, detect_format


@pytest.fixture(scope="module")
def run() -> Run:
    example = mmlu_pro_philosophy()
    return Run.from_stats(kagreport.grade(example.datasets, example.results))


def test_a_run_document_is_detected_and_read_back(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run.write(path)
    assert detect_format(path).name == "kagreport"
    assert read_run(path) == run
    assert kagreport.read_run(path, format="kagreport") == run


def test_unknown_paths_and_formats_are_one_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or folder"):
        read_run(tmp_path / "missing.json")
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(UsageError, match="not a run of any format kagreport reads; formats: "):
        read_run(other)
    with pytest.raises(UsageError, match="unknown run format 'nope'"):
        read_run(other, format="nope")
    assert next(iter(FORMATS)) == "kagreport"


def test_read_run_takes_a_bundled_kag_example_and_refuses_what_is_no_path() -> None:
    # A new user's first try: read_run(examples.simulated_kag_run()) raised a raw TypeError.
    import kagreport
    from kagreport.examples import mmlu_pro_philosophy

    example = mmlu_pro_philosophy()
    run = kagreport.read_run(example)
    assert len(run) == 2986  # one row per result file: the 2,986 `stats find` counts (grading.md)
    same = kagreport.read_run(example.results, datasets=example.datasets)
    assert run.systems == same.systems
    with pytest.raises(kagreport.UsageError, match="read_run takes a path, not int"):
        kagreport.read_run(3)  # type: ignore[arg-type]
