"""``stats find`` (KAG_STATS_SPEC.md section 3): library and command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
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
        "kagreport: 2 result files could not be read or parsed and were skipped; "
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


def test_find_uses_linear_time_rust_regex(tree: Tree) -> None:
    tree.ok("ds", "q1", "s", "a" * 40 + "!")
    start = time.perf_counter()
    report = find(r"^(a+)+$", tree.results)  # exponential in a backtracking engine
    assert time.perf_counter() - start < 5
    assert len(report) == 0
    assert len(find(r"\p{L}+!", tree.results)) == 1  # Rust regex syntax
    for bad in ("(", "[z-a]", "(?=x)", r"\1", r"\w{1000}{1000}"):
        with pytest.raises(UsageError, match="invalid regular expression"):
            find(bad, tree.results)


def test_find_cli_rejects_bad_regex_with_exit_2_and_no_noise(tree: Tree) -> None:
    done = run_cli("stats", "-r", str(tree.results), "find", "(?=x)")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "error: look-around, including look-ahead and look-behind, is not supported"
    )
    assert "kagreport: error: invalid regular expression '(?=x)': regex parse error:" in done.stderr
    assert "usage: kagreport stats find" in done.stderr
    assert "absl" not in done.stderr


def test_find_skips_special_and_non_utf8_files(tree: Tree) -> None:
    good = tree.ok("ds", "q1", "s", "hello")
    os.mkfifo(tree.results / "ds" / "q1" / "fifo.json")
    os.symlink("/dev/zero", tree.results / "ds" / "q1" / "zero.json")
    os.symlink(good, os.path.join(os.fsencode(tree.results / "ds" / "q1"), b"\xff.json"))
    weird = os.path.join(os.fsencode(tree.results), b"dir\xfe")
    os.mkdir(weird)
    os.symlink(good, os.path.join(weird, b"x.json"))
    report = find("hello", tree.results)
    # Counted: s.json, fifo.json, zero.json and dir\xfe/x.json; the \xff name is skipped, as kag does.
    assert report.total == 4
    assert len(report.skipped) == 2
    assert sorted(m.display_path.rsplit("/", 2)[-2] for m in report) == ["dir\ufffd", "q1"]
    done = subprocess.run(
        [sys.executable, "-m", "kagreport", "stats", "-r", str(tree.results), "find", "hello",
         "--format", "json"],
        capture_output=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )  # fmt: skip
    assert done.returncode == 0
    done.stdout.decode("utf-8")  # valid UTF-8 JSON
