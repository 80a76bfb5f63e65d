"""The command line: flags, streams, exit codes, messages (spec section 2.4).

In this process (``run_cli``), but for the exit status of a real ``kagreport`` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Tree, mcq, run_cli, run_process


@pytest.fixture
def run(tree: Tree) -> Tree:
    tree.question("ds", "q1", mcq("A"))
    tree.question("ds", "q2", mcq("A"))
    tree.ok("ds", "q1", "s", "A")
    tree.raw("ds", "q2", "s.json", "{ not json")
    return tree


def test_default_level_prints_one_hint_about_unparsable_files(run: Tree) -> None:
    done = run_cli("stats", "-d", str(run.datasets_path), "-r", str(run.results))
    assert done.returncode == 0
    assert done.stdout.startswith("Datasets: 1 | Scorable questions: 2 | Skipped files: 0\n")
    assert done.stderr == (
        "kagreport: 1 result file did not parse and was skipped; run with -v to list them.\n"
    )


def test_v_lists_them_and_q_is_silent(run: Tree) -> None:
    loud = run_cli("stats", "-v", "-d", str(run.datasets_path), "-r", str(run.results))
    assert "WARNING: failed to parse result file" in loud.stderr
    assert str(run.results / "ds" / "q2" / "s.json") in loud.stderr
    assert "did not parse and were skipped" not in loud.stderr
    quiet = run_cli("stats", "-q", "-d", str(run.datasets_path), "-r", str(run.results))
    assert (quiet.returncode, quiet.stderr) == (0, "")
    assert quiet.stdout == loud.stdout


def test_vvvv_traces_every_grade(run: Tree) -> None:
    done = run_cli("stats", "-vvvv", "-d", str(run.datasets_path), "-r", str(run.results))
    assert "[ds/q1] setup 's' graded as correct" in done.stderr
    assert "DEBUG" in done.stderr or "TRACE" in done.stderr


def test_options_after_find_and_before(run: Tree) -> None:
    a = run_cli("stats", "-r", str(run.results), "--format", "json", "find", "A")
    b = run_cli("stats", "find", "A", "-r", str(run.results), "--format", "json")
    assert a.stdout == b.stdout
    assert json.loads(a.stdout)["matches"] == 1


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["stats", "-r", "."], 2, "-d/--datasets"),
        (["stats", "-d", "x", "--format", "xml"], 2, "invalid choice: 'xml'"),
        (["stats", "--bogus"], 2, "unrecognized arguments: --bogus"),
        (["nope"], 2, "invalid choice: 'nope'"),
        (["stats", "-d", "MISSING.json"], 1, "cannot read the datasets file MISSING.json"),
    ],
)
def test_errors_are_one_clear_message(args: list[str], code: int, message: str) -> None:
    done = run_cli(*args)
    assert done.returncode == code
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_invalid_datasets_file_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "d.json"
    bad.write_text('{"ds": {"q1": {"input": "x", "output": {"type": "Essay"}}}}')
    done = run_cli("stats", "-d", str(bad), "-r", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr == (
        f"kagreport: error: invalid datasets file {bad}: ds/q1: Invalid enum value 'Essay' "
        "- at `$.output.type`\n"
    )


def test_missing_results_root_exits_1(run: Tree, tmp_path: Path) -> None:
    done = run_cli("stats", "-d", str(run.datasets_path), "-r", str(tmp_path / "gone"))
    assert done.returncode == 1
    assert (
        done.stderr == f"kagreport: error: the results folder {tmp_path / 'gone'} does not exist\n"
    )


def test_default_results_root_is_the_current_folder(run: Tree) -> None:
    done = run_cli("stats", "-d", str(run.datasets_path), "-q", cwd=run.results)
    assert done.stdout.startswith("Datasets: 1 ")


def test_version_and_help() -> None:
    assert run_cli("--version").stdout.startswith("kagreport ")
    helptext = run_cli("stats", "--help").stdout
    for flag in ("--datasets", "--results", "--prefix", "--format", "-v", "-q"):
        assert flag in helptext


def test_demo_prints_the_mmlu_pro_table() -> None:
    done = run_cli("demo")
    assert done.returncode == 0, done.stderr
    assert "TIGER-AI-Lab/MMLU-Pro" in done.stdout
    assert "Datasets: 1 | Scorable questions: 499 | Skipped files: 0" in done.stdout
    assert "gemini-1-5-pro-002" in done.stdout
    assert "a SIMULATED kag run" in done.stdout  # the one the demo site adds


def test_simulate_writes_a_complete_tree_or_nothing(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    done = run_cli("simulate", str(out), "--questions", "4", "--datasets", "2")
    assert done.returncode == 0, done.stderr
    assert "SIMULATED" in done.stdout
    assert (out / "SIMULATED.md").read_text().startswith("# Simulated kag run")
    graded = run_cli("stats", "-q", "-d", str(out / "datasets.json"), "-r", str(out / "results"))
    assert graded.returncode == 0
    again = run_cli("simulate", str(out))
    assert again.returncode == 1
    assert "already exists" in again.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim"]  # no staging folder left
    bad = run_cli("simulate", str(tmp_path / "x"), "--questions", "-3")
    assert bad.returncode == 2


# kag's clap definitions (src/cli/stats/mod.rs, src/cli/stats/find.rs at 12389ee): every option
# is ArgAction::Set, so a second occurrence on the same command is a usage error; `-d` and `-r`
# are PathBuf, whose parser refuses an empty value; `--prefix` is a String (empty allowed). The
# exit codes and refusals below were seen with the real kag built from that commit.
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["stats", "-d", "D", "-d", "D"], "argument -d/--datasets: cannot be used multiple times"),
        (["stats", "-d", "D", "--datasets=D"], "-d/--datasets: cannot be used multiple times"),
        (["stats", "-d", "D", "-r", ".", "-r", "."], "-r/--results: cannot be used multiple"),
        (["stats", "-d", "D", "--prefix", "a", "--prefix", "a"], "--prefix: cannot be used"),
        (["stats", "-d", "D", "--format", "text", "--format", "json"], "--format: cannot be"),
        (["stats", "find", "x", "-r", ".", "--results", "."], "-r/--results: cannot be used"),
        (["stats", "find", "x", "--prefix=", "--prefix="], "--prefix: cannot be used"),
        (["stats", "find", "--format", "json", "x", "--format", "json"], "--format: cannot be"),
        (["stats", "find", "x", "--fzf", "--fzf"], "--fzf: cannot be used multiple times"),
        (["stats", "-d", "D", "-r", ""], "-r/--results: a value is required"),
        (["stats", "-d", "D", "-r="], "-r/--results: a value is required"),
        (["stats", "-d", "", "-r", "."], "-d/--datasets: a value is required"),
        (["stats", "-d", "", "find", "x"], "-d/--datasets: a value is required"),
        (["stats", "find", "x", "--results="], "-r/--results: a value is required"),
        # clap reads "-1" as an option, never as a value: `find -- -1` and `--prefix=-1` work.
        (["stats", "-d", "D", "--prefix", "-1"], "argument --prefix: expected one argument"),
        (["stats", "-d", "D", "-r", "-1"], "argument -r/--results: expected one argument"),
        (["stats", "find", "-1"], "the following arguments are required: REGEX"),
    ],
)
def test_repeated_or_empty_options_are_usage_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from kagreport.cli._main import build_parser

    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(args)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_options_again_after_find_and_empty_prefix_are_allowed() -> None:
    from kagreport.cli._main import build_parser

    # As clap's global options: the subcommand's own value wins.
    parse = build_parser().parse_args
    args = parse(
        ["stats", "--format", "text", "-r", "a", "find", "--format", "json", "-r", "b", "x"]
    )
    assert (args.format, args.results, args.regex) == ("json", "b", "x")
    args = parse(["stats", "-d", "D", "--prefix", "", "--format=json"])
    assert (args.datasets, args.prefix, args.format) == ("D", "", "json")
    assert parse(["stats", "find", ""]).regex == ""  # an empty regex is valid in kag too
    assert parse(["stats", "find", "--", "-1"]).regex == "-1"
    assert parse(["stats", "-d", "D", "--prefix=-1"]).prefix == "-1"


def test_empty_results_is_exit_2_on_the_command_line(run: Tree) -> None:
    done = run_cli("stats", "-d", str(run.datasets_path), "-r", "")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "kagreport stats: error: argument -r/--results: a value is required but none was supplied"
    )
    assert done.stdout == ""


def test_the_process_exits_with_mains_code(tmp_path: Path) -> None:
    """``python -m kagreport`` and the installed console script end with main's code: 0, 1
    for a runtime error, 2 for a usage error (the other tests call main in-process)."""
    script = Path(sys.executable).with_name("kagreport")
    assert script.is_file(), f"no console script beside {sys.executable}: pip install -e ."
    cases = [
        (["--version"], 0),
        (["stats", "-d", str(tmp_path / "MISSING.json")], 1),
        (["nope"], 2),
    ]
    for args, code in cases:
        module = run_process(*args, cwd=tmp_path)
        assert module.returncode == code, (args, module.stderr)
        console = subprocess.run(
            [str(script), *args], capture_output=True, text=True, encoding="utf-8",
            cwd=tmp_path, env=dict(os.environ), timeout=300, check=False,
        )  # fmt: skip
        assert (console.returncode, console.stdout, console.stderr) == (
            code, module.stdout, module.stderr,
        ), args  # fmt: skip
        assert "Traceback" not in module.stderr


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
