"""``stats find`` (KAG_STATS_SPEC.md section 3): library and command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import Tree, run_cli
from kagreport import UsageError, find


@pytest.fixture
def run(tree: Tree) -> Tree:
    tree.ok("ds", "q1", "a", "The answer is B.\nBecause.")
    tree.ok("ds", "q2", "a", "  B  ")
    tree.ok("ds", "q2", "b", "C")
    tree.error("ds", "q3", "a", "B failed")  # error records are skipped silently
    tree.raw("ds", "q3", "b.json", "{broken")  # unparsable: warned, still counted
    tree.raw("ds", "q3", "c.json.tmp", "{}")  # not a .json name: not counted
    tree.raw("ds", "q3", "notes.txt", "B")
    deep = tree.results / "ds" / "q3" / "x" / "y"
    deep.mkdir(parents=True)
    (deep / "Deep_Name.json").write_text(json.dumps({"ok": {"result": "B", "stats": {}}}))
    return tree


def test_find_counts_and_matches(run: Tree) -> None:
    report = find("B", run.results)
    # Qualifying: q1/a, q2/a, q2/b, q3/a, q3/b, deep file (no name validation, any depth).
    assert report.total == 6
    root = str(run.results)
    assert [m.path for m in report] == [
        os.path.join(root, "ds", "q1", "a.json"),
        os.path.join(root, "ds", "q2", "a.json"),
    ]
    assert report.matches[1].response == "  B  "  # full response kept, search on trimmed text
    assert report.to_dict() == {"matches": 2, "total": 6, "paths": [m.path for m in report]}


def test_search_uses_the_trimmed_response(run: Tree) -> None:
    assert len(find("^B$", run.results)) == 1
    assert len(find(r"^\s", run.results)) == 0


def test_prefix_filters_names(tree: Tree) -> None:
    tree.ok("ds", "q1", "run1-a", "yes")
    tree.ok("ds", "q1", "a", "yes")
    report = find("yes", tree.results, prefix="run1-")
    assert (len(report), report.total) == (1, 1)


def test_invalid_regex_is_a_usage_error(run: Tree) -> None:
    with pytest.raises(UsageError, match="invalid regular expression"):
        find("(", run.results)


def test_cli_text_output(run: Tree) -> None:
    done = run_cli("stats", "-r", str(run.results), "find", "B")
    assert done.returncode == 0
    root = str(run.results)
    assert done.stdout == (
        f"{root}/ds/q1/a.json\tThe answer is B. ⏎ Because.\n{root}/ds/q2/a.json\t  B  \n"
    )
    assert done.stderr == (
        "kagreport: 2 result file(s) could not be read or parsed and were skipped; "
        "run with -v to list them.\n"
        "\n2 occurrence(s) out of 6 result file(s) matched the pattern.\n"
    )


def test_cli_no_match(run: Tree) -> None:
    done = run_cli("stats", "find", "zzz", "-r", str(run.results), "-q")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "No result matched the pattern.\n"


def test_cli_json_and_relative_default_root(run: Tree) -> None:
    done = run_cli("stats", "find", "^C$", "--format", "json", cwd=run.results)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        '{\n  "matches": 1,\n  "total": 6,\n  "paths": [\n    "./ds/q2/b.json"\n  ]\n}\n'
    )


def test_cli_warns_about_unparsable_files_with_v(run: Tree) -> None:
    quiet = run_cli("stats", "find", "B", "-r", str(run.results), "--format", "json")
    assert "b.json" not in quiet.stderr
    loud = run_cli("stats", "find", "B", "-r", str(run.results), "--format", "json", "-v")
    assert "failed to parse result file" in loud.stderr
    assert str(run.results / "ds" / "q3" / "b.json") in loud.stderr


def test_cli_invalid_regex_exits_2(run: Tree) -> None:
    done = run_cli("stats", "find", "(unclosed", "-r", str(run.results))
    assert done.returncode == 2
    assert "invalid regular expression '(unclosed'" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_missing_root_exits_1(tmp_path: Path) -> None:
    done = run_cli("stats", "find", "x", "-r", str(tmp_path / "nope"))
    assert done.returncode == 1
    assert (
        done.stderr == f"kagreport: error: the results folder {tmp_path / 'nope'} does not exist\n"
    )


def test_huge_single_line_response_is_printed_whole(tree: Tree) -> None:
    big = "x" * 2_000_000
    tree.ok("ds", "q1", "a", big)
    done = run_cli("stats", "find", "x$", "-r", str(tree.results))
    assert done.returncode == 0
    assert done.stdout.endswith("\t" + big + "\n")


def test_symlinked_result_file_is_read_through(tree: Tree) -> None:
    # The folder entry of a symlink is not a regular file: it is stat()ed (followed).
    target = tree.ok("ds", "q1", "a", "linked B")
    os.symlink(target, tree.results / "ds" / "q1" / "b.json")
    report = find("B", tree.results)
    assert (report.total, len(report), report.skipped) == (2, 2, ())
