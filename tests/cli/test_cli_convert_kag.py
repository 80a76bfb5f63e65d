"""``kagreport convert`` of a kag result tree: read with its datasets file like any other
run, or a usage error whose line says it needs one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import run_cli
from kagreport import read_run
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import Run

EXAMPLE = mmlu_pro_philosophy()


def test_a_kag_tree_converts_with_its_datasets_file(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = run_cli("convert", EXAMPLE.results, "-d", EXAMPLE.datasets, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"read {EXAMPLE.results} as kag: 6 systems, 2,986 rows")
    written = Run.read(out)
    expected = read_run(EXAMPLE.results, datasets=EXAMPLE.datasets)
    # A kag tree records no time: the document keeps the tree's, said to be a file time.
    assert written.metadata["created_from"] == "file"
    kept = {k: v for k, v in written.metadata.items() if k not in ("created", "created_from")}
    assert dataclasses.replace(written, metadata=kept) == expected
    assert written.responses is not None  # read from the result files into the document
    # The same with an explicit format and an empty prefix.
    again = tmp_path / "again.json"
    done = run_cli(
        "convert", EXAMPLE.results, "--from", "kag", "-d", EXAMPLE.datasets, "--prefix", "",
        "-o", again,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert Run.read(again) == written


def test_a_kag_tree_without_its_datasets_file_is_a_usage_error(tmp_path: Path) -> None:
    for extra in ((), ("--from", "kag")):
        done = run_cli("convert", EXAMPLE.results, *extra, "-o", tmp_path / "run.json")
        assert done.returncode == 2, done
        # A usage error: the command's usage, then one line saying what is missing.
        last = done.stderr.splitlines()[-1]
        assert last.startswith("kagreport: error: "), done.stderr
        assert "read it with its datasets file" in last or "read with its datasets file" in last
        assert "Traceback" not in done.stderr
    done = run_cli("convert", EXAMPLE.results, "--prefix", "p-", "-o", tmp_path / "run.json")
    assert done.returncode == 2, done
    assert "--prefix goes with --datasets" in done.stderr
    assert not (tmp_path / "run.json").exists()
