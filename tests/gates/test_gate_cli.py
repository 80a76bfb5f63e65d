"""``kagreport gate``: exit codes 0/1/3, 2 for every input or usage error in one line, the
folder it writes, and names from hostile result files kept inert in every output."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gate_runs import make_run, one_system

from conftest import run_cli
from kagreport import read_run
from kagreport.examples import mmlu_pro_philosophy
from kagreport.gates import gate

EXAMPLE = mmlu_pro_philosophy()
TREE = [str(EXAMPLE.results), "-d", str(EXAMPLE.datasets)]


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The bundled MMLU-Pro run's systems as kagreport.run documents, one system each."""
    folder = tmp_path_factory.mktemp("runs")
    run = read_run(EXAMPLE.results, datasets=EXAMPLE.datasets)
    found = {"all": folder / "all.json"}
    run.write(found["all"])
    for name in run.systems:
        found[name] = folder / f"{name}.json"
        run.select([name]).write(found[name])
    return found


def _junit(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def test_a_kag_tree_against_itself_passes(tmp_path: Path) -> None:
    done = run_cli("gate", TREE[0], "--baseline", *TREE, "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PASS")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "badge.svg", "gate.json", "gate.md", "gate.xml",
    ]  # fmt: skip
    suite = _junit(tmp_path / "out" / "gate.xml").find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("6", "0", "0")
    assert not list(suite.iter("failure"))
    assert json.loads((tmp_path / "out" / "gate.json").read_text())["verdict"] == "pass"
    assert (tmp_path / "out" / "gate.md").read_text().startswith("## ✅ Regression gate: **pass**")


def test_the_best_system_against_a_much_weaker_one_fails(
    documents: dict[str, Path], tmp_path: Path
) -> None:
    done = run_cli(
        "gate", documents["llama-2-7b-hf"], "--baseline", documents["gemini-1-5-pro-002"],
        "-o", tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    suite = _junit(tmp_path / "gate.xml").find("testsuite")
    assert suite is not None
    assert suite.get("failures") == "1"
    (failure,) = suite.iter("failure")
    # 101 and 361 of the 499 questions right (kag stats of the example): -260 / 499.
    assert f"−{100 * 260 / 499:.1f} pp" in failure.get("message", "")
    assert "fail" in (tmp_path / "gate.md").read_text().splitlines()[0]


def test_several_systems_fail_one_junit_failure_each(
    documents: dict[str, Path], tmp_path: Path
) -> None:
    run = read_run(documents["all"])
    # Every system's scores replaced by the weakest system's: five regress, one is itself.
    weakest = run.metrics["correct"][run.system == run.systems.index("llama-2-7b-hf")]
    keys = {
        run.item_label(int(r)): v
        for r, v in zip(
            (run.system == run.systems.index("llama-2-7b-hf")).nonzero()[0], weakest, strict=True
        )
    }
    worse = run.metrics["correct"].copy()
    for row in range(len(run)):
        worse[row] = keys.get(run.item_label(row), 0.0)
    from kagreport.runs import Run

    Run.from_dict(run.to_dict() | {"metrics": {"correct": worse.tolist()}}).write(
        tmp_path / "worse.json"
    )
    result = gate(tmp_path / "worse.json", documents["all"])
    failing = sum(h.verdict == "fail" for h in result.hypotheses)
    assert failing == 5
    done = run_cli("gate", tmp_path / "worse.json", "--baseline", documents["all"], "-o", tmp_path)
    assert done.returncode == 1
    suite = _junit(tmp_path / "gate.xml").find("testsuite")
    assert suite is not None
    assert len(list(suite.iter("failure"))) == failing == int(suite.get("failures", ""))


def test_close_systems_are_inconclusive(documents: dict[str, Path], tmp_path: Path) -> None:
    args = ["gate", documents["gemini-1-5-flash-002"], "--baseline",
            documents["meta-llama-3-1-70b-instruct"], "-o", tmp_path]  # fmt: skip
    done = run_cli(*args)
    assert done.returncode == 3, done.stderr
    text = (tmp_path / "gate.md").read_text()
    assert "inconclusive" in text.splitlines()[0]
    assert "Items needed" in text
    assert "MDE" in text
    (case,) = _junit(tmp_path / "gate.xml").iter("testcase")
    skipped = case.find("skipped")
    assert skipped is not None
    assert "items needed" in skipped.get("message", "")
    assert run_cli(*args, "--inconclusive", "pass").returncode == 0
    assert run_cli(*args, "--inconclusive", "exit").returncode == 3
    done = run_cli(*args, "--inconclusive", "fail")
    assert done.returncode == 1
    # The policy is in every output, not only in the exit code.
    assert json.loads((tmp_path / "gate.json").read_text())["settings"]["inconclusive"] == "fail"
    assert "count as a failure here (--inconclusive fail)" in (tmp_path / "gate.md").read_text()
    assert "--inconclusive fail" in done.stdout
    suite = _junit(tmp_path / "gate.xml").find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "0")
    (case,) = suite.iter("testcase")
    assert "inconclusive, counted as a failure" in case.find("failure").get("message", "")  # type: ignore[union-attr]


def test_a_system_missing_from_the_candidate_does_not_pass(
    documents: dict[str, Path], tmp_path: Path
) -> None:
    run = read_run(documents["all"])
    kept = [s for s in run.systems if s != "yi-34b"]
    run.select(kept).write(tmp_path / "crashed.json")
    done = run_cli(
        "gate", tmp_path / "crashed.json", "--baseline", documents["all"], "-o", tmp_path
    )
    assert done.returncode == 3, done.stdout
    left = [line for line in done.stdout.splitlines() if line.startswith("Systems left out")]
    assert left == [
        "Systems left out: only in the baseline (not in the candidate run: inconclusive): yi-34b."
    ]
    md = (tmp_path / "gate.md").read_text()
    assert md.index("Systems left out") < md.index("| System |")  # near the top
    suite = _junit(tmp_path / "gate.xml").find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("6", "0", "1")


@pytest.mark.parametrize(
    ("case", "pattern"),
    [
        ("missing", r"/nowhere/run\.json: no such file"),
        ("metric", r"holds no metric 'nope'; its metrics: 'correct'"),
        ("margin", r"--margin must be a number >= 0, not '-1'"),
        ("margin-text", r"--margin must be a number >= 0, not 'abc'"),
        ("alpha", r"--alpha must be a number in \(0, 1\), not '2'"),
        ("min-paired", r"--min-paired must be a number in \(0, 1\], not '0'"),
        ("empty", r"empty\.json: the file is empty, not a run"),
        (
            "gate-result",
            r"gate\.json: a kagreport\.gate document \(the result of a gate\), not a run",
        ),
        ("datasets-missing", r"missing\.json: no such file \(--datasets\)"),
        ("datasets-unused", r"--datasets is given but neither input is a kag result tree"),
        ("output-file", r"-o .*existing is a file, not a folder"),
        ("paired", r"only 2\.0% of the items \(2 of 100\) .* at least 50\.0% \(--min-paired\)"),
        ("systems", r"no system of .*a\.json \('a'\) is in .*b\.json"),
        ("not-a-run", r"not a run of any format"),
    ],
)
def test_every_input_error_exits_2_in_one_line(tmp_path: Path, case: str, pattern: str) -> None:
    good = tmp_path / "good.json"
    one_system("s", [1.0, 0.0] * 25).write(good)
    args = [good, "--baseline", good]
    if case == "missing":
        args[0] = Path("/nowhere/run.json")
    elif case == "metric":
        args += ["--metric", "nope"]
    elif case == "margin":
        args += ["--margin", "-1"]
    elif case == "margin-text":
        args += ["--margin", "abc"]
    elif case == "alpha":
        args += ["--alpha", "2"]
    elif case == "min-paired":
        args += ["--min-paired", "0"]
    elif case == "empty":
        (tmp_path / "empty.json").write_bytes(b"")
        args[0] = tmp_path / "empty.json"
    elif case == "gate-result":
        gate(good, good).write(tmp_path / "out")
        args[0] = tmp_path / "out" / "gate.json"
    elif case == "datasets-missing":
        args += ["--datasets", tmp_path / "missing.json"]
    elif case == "datasets-unused":
        args += ["--datasets", good]
    elif case == "output-file":
        (tmp_path / "existing").write_text("x")
        args += ["-o", tmp_path / "existing"]
    elif case == "paired":
        other = tmp_path / "other.json"
        make_run({"s": {("ds", f"q{i}"): 1.0 for i in range(48, 100)}}).write(other)
        args[2] = other
    elif case == "systems":
        a, b = tmp_path / "a.json", tmp_path / "b.json"
        make_run({"a": {("d", "q"): 1.0}, "c": {("d", "q"): 1.0}}).select(["a"]).write(a)
        make_run({"b": {("d", "q"): 1.0}, "e": {("d", "q"): 1.0}}).write(b)
        args = [a, "--baseline", b]
    elif case == "not-a-run":
        (tmp_path / "x.txt").write_text("hello")
        args[0] = tmp_path / "x.txt"
    done = run_cli("gate", *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert re.search(pattern, last), done.stderr
    assert done.stderr.count("\n") == 1  # no usage text: one line


HOSTILE = "<b>x</b> ]]> & \"q\" '\u202eevil\u202c' @team :x: | `c` [l](http://e) \n\x01 ~~s~~"


def test_hostile_names_stay_inert_in_every_output(tmp_path: Path) -> None:
    cand = make_run({HOSTILE: {(HOSTILE, f"q{i}"): v for i, v in enumerate([1.0, 0.0] * 4)}},
                    metric=HOSTILE + "m")  # fmt: skip
    base = make_run({HOSTILE: {(HOSTILE, f"q{i}"): 1.0 for i in range(8)}}, metric=HOSTILE + "m")
    result = gate(cand, base)
    result.write(tmp_path)
    md = (tmp_path / "gate.md").read_text(encoding="utf-8")
    for bad in ("<b>", "]]>", "\u202e", "@team", ":x:", "`c`", "[l]", "~~", "\x01", '"q"'):
        assert bad not in md, bad
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert table[0].count("|") == table[1].count("|") == 9  # no cell added by a name
    for name in ("gate.xml", "badge.svg"):
        ET.parse(tmp_path / name)  # well-formed XML 1.0, controls escaped
    xml = (tmp_path / "gate.xml").read_text(encoding="utf-8")
    assert "<b>" not in xml
    assert "\x01" not in xml
    assert "\u202e" not in xml
    (case,) = ET.parse(tmp_path / "gate.xml").getroot().iter("testcase")
    assert "<b>x</b> ]]>" in case.get("classname", "")  # the name, as text
    html = result._repr_html_()
    assert "<b>x" not in html
    assert "&lt;b&gt;x" in html
    assert "\u202e" not in html
    assert json.loads((tmp_path / "gate.json").read_text())["hypotheses"][0]["metric"] == (
        HOSTILE + "m"
    )
    assert "\x01" not in result.text()


def test_an_error_naming_a_hostile_name_is_one_inert_line(tmp_path: Path) -> None:
    # The run's metrics are listed in the message: a bidi override or a line feed in one
    # must not reorder or break the terminal's line.
    hostile = "acc\u202eycarucca\nfake: line"
    make_run({"s": {("d", "q"): 1.0}}, metric=hostile).write(tmp_path / "run.json")
    done = run_cli("gate", tmp_path / "run.json", "--baseline", tmp_path / "run.json",
                   "--metric", "missing")  # fmt: skip
    assert done.returncode == 2
    assert "\u202e" not in done.stderr
    assert "\\u202e" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
