"""``kagreport convert`` that cannot write its output: one line and exit 1, nothing made
(the adversarial trial of #14 found tracebacks and left-behind folders)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import Tree, mcq, run_cli
from kagreport import grade
from kagreport.runs import Run


def _run_file(tree: Tree, tmp_path: Path, system: str = "alpha") -> Path:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "alpha", "A")
    run = Run.from_stats(grade(tree.datasets_path, tree.results))
    run = dataclasses.replace(run, systems=(system,))
    path = tmp_path / "in.run.json"
    run.write(path)
    return path


def test_convert_into_a_missing_folder_is_one_line(tree: Tree, tmp_path: Path) -> None:
    source = _run_file(tree, tmp_path)
    for target in ("nodir/x.json", "nodir/x.eee"):
        done = run_cli("convert", source, "-o", tmp_path / target)
        assert done.returncode == 1, done
        assert done.stderr.count("\n") == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert "nodir" in done.stderr
        assert "does not exist" in done.stderr
        assert not (tmp_path / "nodir").exists()  # nothing made on the way


def test_a_name_too_long_for_the_file_system_is_one_line(tree: Tree, tmp_path: Path) -> None:
    source = _run_file(tree, tmp_path, system="X" * 300)
    done = run_cli("convert", source, "-o", tmp_path / "out.eee")
    assert done.returncode == 1, done
    assert done.stderr.startswith("kagreport: error: cannot write"), done.stderr
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.eee").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.eee")] == []
