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
