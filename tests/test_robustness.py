"""Bad input found by adversarial testing: each gets one message and the right exit code."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Tree, mcq, run_cli
from kagreport import UsageError, find, grade
from kagreport.kag import decode_result

STATS = '"stats": {"prompt": "p", "time": %s, "config": {"provider": "x", "model": "m", "temperature": 0}}'


def _ok(time_json: str = "[1, 0]", extra: str = "") -> str:
    return '{"ok": {"result": "b", %s%s}}' % (extra, STATS % time_json)  # noqa: UP031


def test_deeply_nested_json_is_unparsable_not_a_crash(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("b"))
    depth = 5000
    # An unknown field is skipped by serde at any depth (kag accepts it: issue 11, item 6);
    # a deep value where a type reads (ok.result is a String) is unparsable.
    tree.raw("ds", "q1", "deep.json", _ok(extra='"x": ' + "[" * depth + "]" * depth + ", "))
    bad = '{"ok": {"result": ' + "[" * depth + "]" * depth + ", " + STATS % "[1, 0]" + "}}"
    tree.raw("ds", "q1", "deep-typed.json", bad)
    tree.ok("ds", "q1", "fine", "b")
    report = grade(tree.datasets_path, tree.results)
    assert report.setup_names == ("deep", "fine")
    assert len(report.unparsable_files) == 1
    deep_truth = tree.root / "deep-datasets.json"
    deep_truth.write_text("[" * depth + "]" * depth)
    done = run_cli("stats", "-d", str(deep_truth), "-r", str(tree.results))
    assert done.returncode == 1
    assert "nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "time_json",
    ['{"secs": 18446744073709551616, "nanos": 0}', '{"secs": 1' + "0" * 400 + ', "nanos": 0}',
     '[18446744073709551615, 1000000000]'],
)  # fmt: skip
def test_integers_beyond_u64_do_not_parse(time_json: str) -> None:
    with pytest.raises(ValueError, match=r"64 bits|overflow"):
        decode_result(_ok(time_json))


def test_largest_u64_duration_parses() -> None:
    record = decode_result(_ok('{"secs": 18446744073709551615, "nanos": 999999999}'))
    assert record.generation_ns == (2**64 - 1) * 10**9 + 999_999_999


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


def test_unwritable_stdout_is_one_message(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("b"))
    tree.ok("ds", "q1", "s", "b")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "kagreport", "stats", "-d", str(tree.datasets_path), "-r",
             str(tree.results)],
            stdout=full, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == "kagreport: error: cannot write the output: No space left on device\n"


def test_simulate_rejects_path_prefixes(tmp_path: Path) -> None:
    for prefix in ("a/b", "../../esc-", "x" * 300):
        done = run_cli("simulate", str(tmp_path / "sim"), "--prefix", prefix)
        assert done.returncode == 2, prefix
        assert "--prefix" in done.stderr
    assert not (tmp_path / "sim").exists()
