"""``kagreport convert`` and sources.convert_run: a run read and written as a kagreport.run."""

from __future__ import annotations

from pathlib import Path

import pytest

import kagreport
from conftest import run_cli
from kagreport import UsageError
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import Run
from kagreport.sources import convert_run


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    example = mmlu_pro_philosophy()
    run = Run.from_stats(kagreport.grade(example.datasets, example.results))
    path = tmp_path_factory.mktemp("convert") / "in.json"
    run.write(path)
    return path, run


def test_convert_writes_the_run_it_read(document: tuple[Path, Run], tmp_path: Path) -> None:
    path, run = document
    out = tmp_path / "out.json"
    done = run_cli("convert", path, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"read {path} as kagreport: 6 systems, {len(run):,} rows written to {out}\n"
    )
    assert Run.read(out) == run
    assert out.read_bytes() == path.read_bytes()  # the same document, byte for byte


def test_convert_refuses_bad_outputs_before_reading(
    document: tuple[Path, Run], tmp_path: Path
) -> None:
    path, _ = document
    before = path.read_bytes()
    for output, message in (
        (path, "is the run being read"),
        (tmp_path / "out.txt", "ends in .json"),
        (tmp_path, "ends in .json"),
    ):
        with pytest.raises(UsageError, match=message):
            convert_run(path, output)
        done = run_cli("convert", path, "-o", output)
        assert done.returncode == 2
        assert done.stderr.splitlines()[-1].startswith("kagreport: error: ")
        assert "Traceback" not in done.stderr
    assert path.read_bytes() == before
    done = run_cli("convert", tmp_path / "missing", "-o", tmp_path / "x.json")
    assert done.returncode == 2
    assert "no such file or folder" in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_convert_says_which_format_it_detected(tmp_path: Path) -> None:
    source = Path(__file__).parent.parent / "data" / "sources" / "promptfoo" / "results.json"
    out = tmp_path / "out.json"
    done = run_cli("convert", source, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"read {source} as promptfoo: ")


def test_convert_keeps_the_systems_named(document: tuple[Path, Run], tmp_path: Path) -> None:
    path, run = document
    out = tmp_path / "two.json"
    done = run_cli("convert", path, "-o", out, "--system", "yi-34b", "--system", "llama-2-7b-hf")
    assert done.returncode == 0, done.stderr
    assert "2 systems" in done.stdout
    kept = Run.read(out)
    assert kept.systems == ("yi-34b", "llama-2-7b-hf")
    expected = run.select(["yi-34b", "llama-2-7b-hf"])
    assert len(kept) == len(expected) == 499 + 499  # both answered all 499 questions (kag stats)
    assert (kept.metrics["correct"] == expected.metrics["correct"]).all()
    assert convert_run(path, tmp_path / "one.json", systems=["yi-34b"]).systems == ("yi-34b",)
    done = run_cli("convert", path, "-o", tmp_path / "x.json", "--system", "gpt-5")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr  # one line, no usage text
    assert "holds no system 'gpt-5'" in done.stderr
    assert "systems: gemini-1-5-pro-002, meta-llama-3-1-70b-instruct" in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_an_empty_file_is_said_to_be_empty_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_bytes(b"")
    done = run_cli("convert", tmp_path / "empty.json", "-o", tmp_path / "x.json")
    assert done.returncode == 2
    assert (
        done.stderr
        == f"kagreport: error: {tmp_path / 'empty.json'}: the file is empty, not a run\n"
    )
    with pytest.raises(UsageError, match="the file is empty"):
        kagreport.read_run(tmp_path / "empty.json")
