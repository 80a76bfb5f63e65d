"""Bad input to every subcommand, in-process: only KagreportErrors reach the CLI's boundary.

Errors are translated once, in the library (issue #12 item 4): for each bad file, value or
flag below, every exception that leaves the command's function (where ``kagreport.cli``
catches them) is a :class:`~kagreport.KagreportError` (``UsageError`` included), and the
command ends with one ``kagreport: error:`` line naming the file or value, exit code 1
(runtime) or 2 (usage), no traceback, nothing on stdout and no file written.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable
from typing import Any

import pytest

from conftest import Tree, mcq
from kagreport import KagreportError
from kagreport.cli import _main
from kagreport.evaluation import AnswerItem, RetrievalItem, evaluate_answers, evaluate_retrieval
from kagreport.evaluation.judges import ExactMatch, TokenF1


def _items(ids: list[str]) -> list[AnswerItem]:
    return [AnswerItem(i, "Q?", "Paris", "Paris" if n % 2 else "Rome") for n, i in enumerate(ids)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Good and bad inputs, written once; the tests check nothing is added or changed."""
    root = tmp_path_factory.mktemp("boundary")
    tree = Tree(root)
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "s", "A")
    files: dict[str, str] = {"root": str(root), "datasets": str(tree.datasets_path)}
    files["results"] = str(tree.results)

    def write(name: str, data: bytes | str) -> str:
        path = root / name
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return str(path)

    files["judges"] = write("judges.toml", '[[judges]]\nkind = "exact_match"\n')
    lines = [json.dumps({"identifier": f"q{i}", "question": "Q?", "answer": "a"}) for i in (1, 2)]
    files["items"] = write("items.jsonl", "\n".join(lines) + "\n")
    files["dup_items"] = write("dup.jsonl", "\n".join([lines[0], lines[0]]) + "\n")
    files["dup_judges"] = write(
        "dup-judges.toml", '[[judges]]\nkind = "exact_match"\n[[judges]]\nkind = "exact_match"\n'
    )
    files["unknown_kind"] = write("unknown.toml", '[[judges]]\nkind = "oracle"\n')
    files["llm_no_prompt"] = write(
        "llm.toml",
        '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n',
    )
    files["prompt_missing"] = write(
        "prompt-missing.toml",
        '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n'
        'prompt_file = "nope.jinja"\n',
    )
    fifo_prompt = root / "prompt.fifo"
    os.mkfifo(fifo_prompt)
    files["prompt_fifo"] = write(
        "prompt-fifo.toml",
        '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n'
        'prompt_file = "prompt.fifo"\n',
    )
    files["key_env"] = write(
        "key.toml",
        '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n'
        'prompt = "p"\napi_key_env = "KAGREPORT_TEST_SURELY_UNSET"\n',
    )
    # Bad files of every sort, once per suffix the commands read.
    for suffix in ("json", "jsonl", "toml"):
        files[f"missing_{suffix}"] = str(root / f"missing.{suffix}")
        files[f"empty_{suffix}"] = write(f"empty.{suffix}", b"")
        files[f"invalid_{suffix}"] = write(f"invalid.{suffix}", b"{ not [ valid")
        files[f"latin1_{suffix}"] = write(f"latin1.{suffix}", b'{"caf\xe9": 1}\n')
        files[f"bom_{suffix}"] = write(f"bom.{suffix}", codecs.BOM_UTF8 + b"{}\n")
        (root / f"dir.{suffix}").mkdir()
        files[f"dir_{suffix}"] = str(root / f"dir.{suffix}")
        os.mkfifo(root / f"fifo.{suffix}")
        files[f"fifo_{suffix}"] = str(root / f"fifo.{suffix}")
    files["no_suffix"] = str(root / "nonexistent")
    files["txt"] = write("report.txt", "{}")
    files["not_a_folder"] = files["judges"]

    def report(name: str, evaluation: Any) -> str:
        path = root / name
        evaluation.write(path)
        return str(path)

    files["a"] = report("a.json", evaluate_answers(_items(["q1", "q2", "q3"]), [ExactMatch()]))
    files["b"] = report("b.json", evaluate_answers(_items(["q1", "q2", "q3"]), [ExactMatch()]))
    files["c"] = report("c.json", evaluate_answers(_items(["q1", "q2", "q9"]), [ExactMatch()]))
    files["f1"] = report("f1.json", evaluate_answers(_items(["q1", "q2", "q3"]), [TokenF1()]))
    retrieval = [RetrievalItem(f"q{i}", "Q?", ("x", "y"), ("x",)) for i in (1, 2, 3)]
    files["retrieval"] = report("r.json", evaluate_retrieval(retrieval, ks=(1,)))
    files["schema"] = write("schema.json", '{"schema": "something.else", "schema_version": 1}')
    files["site_unknown_key"] = write("site-key.toml", 'title = "t"\nbogus = 1\n')
    files["site"] = write("site.toml", 'title = "t"\n')  # no run: a quick build
    files["site_bad_source"] = write(
        "site-source.toml", '[[sources]]\npath = "x.json"\nformat = "nope"\n'
    )
    files["bad_run"] = write("bad-run.json", '{"schema": "kagreport.run", "version": 1}')
    files["bad_ipynb"] = write("bad.ipynb", "{}")
    os.mkfifo(root / "fifo.ipynb")
    files["fifo_ipynb"] = str(root / "fifo.ipynb")
    files["long_prefix"] = "p" * 201
    return files


def _snapshot(root: str) -> dict[str, tuple[int, int]]:
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            found[os.path.relpath(path, root)] = (info.st_size, info.st_mtime_ns)
    return found


@pytest.fixture
def boundary(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    """Every exception leaving a command's function, where cli.main catches them."""
    seen: list[BaseException] = []

    def observed(run: Callable[..., int]) -> Callable[..., int]:
        def wrapper(*args: Any) -> int:
            try:
                return run(*args)
            except BaseException as exc:
                seen.append(exc)
                raise

        return wrapper

    monkeypatch.setattr(_main, "_run_stats", observed(_main._run_stats))
    monkeypatch.setattr(_main, "_run_find", observed(_main._run_find))
    commands = {name: observed(run) for name, run in _main._COMMANDS.items()}
    monkeypatch.setattr(_main, "_COMMANDS", commands)
    return seen


# (argv with {names} of the world, exit code, what the error line names)
# fmt: off
CASES: list[tuple[list[str], int, str]] = [
    # stats
    (["stats", "-d", "{missing_json}", "-r", "{results}"], 1, "{missing_json}"),
    (["stats", "-d", "{dir_json}", "-r", "{results}"], 1, "{dir_json}"),
    (["stats", "-d", "{fifo_json}", "-r", "{results}"], 1, "{fifo_json}"),
    (["stats", "-d", "{empty_json}", "-r", "{results}"], 1, "{empty_json}"),
    (["stats", "-d", "{invalid_json}", "-r", "{results}"], 1, "{invalid_json}"),
    (["stats", "-d", "{latin1_json}", "-r", "{results}"], 1, "{latin1_json}"),
    (["stats", "-d", "{bom_json}", "-r", "{results}"], 1, "{bom_json}"),
    (["stats", "-d", "{datasets}", "-r", "{missing_json}"], 1, "{missing_json}"),
    (["stats", "-d", "{datasets}", "-r", "{judges}"], 1, "{judges}"),
    (["stats", "-d", "{datasets}", "--format", "xml"], 2, "'xml'"),
    (["stats", "-d", "", "-r", "{results}"], 2, "-d/--datasets"),
    (["stats", "-r", "{results}"], 2, "-d/--datasets"),
    # stats find
    (["stats", "-r", "{results}", "find", "("], 2, "unclosed group"),
    (["stats", "-r", "{results}", "find", "\\w{{2000}}"], 2, "size limit"),
    (["stats", "-r", "{missing_json}", "find", "A"], 1, "{missing_json}"),
    (["stats", "-r", "{fifo_json}", "find", "A"], 1, "{fifo_json}"),
    (["stats", "find", "A", "--format", "csv"], 2, "'csv'"),
    # simulate
    (["simulate", "{results}"], 1, "{results}"),
    (["simulate", "{missing_json}/out"], 1, "{missing_json}"),
    (["simulate", "{root}/new", "--prefix", "a/b"], 2, "'a/b'"),
    (["simulate", "{root}/new", "--prefix", "{long_prefix}"], 2, "--prefix"),
    (["simulate", "{root}/new", "--questions", "-1"], 2, "--questions"),
    (["simulate", "{root}/new", "--datasets", "9"], 2, "--datasets"),
    (["simulate", "{root}/new", "--vector-dim", "x"], 2, "'x'"),
    (["convert", "{missing_json}", "-o", "{root}/o.json"], 2, "{missing_json}"),
    (["convert", "{invalid_json}", "-o", "{root}/o.json"], 2, "{invalid_json}"),
    (["convert", "{fifo_json}", "-o", "{root}/o.json"], 2, "{fifo_json}"),
    (["convert", "{bad_run}", "-o", "{root}/o.json"], 1, "{bad_run}"),
    (["convert", "{bad_run}", "-o", "{root}/o.txt"], 2, "o.txt"),
    (["convert", "{bad_run}", "-o", "{bad_run}"], 2, "{bad_run}"),
    (["convert", "{bad_run}", "--from", "nope", "-o", "{root}/o.json"], 2, "'nope'"),
    (["convert", "{bad_run}", "--to", "xml", "-o", "{root}/o.json"], 2, "'xml'"),
    (["convert", "{bad_run}", "--to", "eee", "-o", "{root}/o.eee"], 1, "{bad_run}"),
    (["convert", "{bad_run}", "-o", "{root}/o.eee"], 1, "{bad_run}"),
    (["convert", "{bad_run}", "--to", "eee", "-o", "{datasets}"], 2, "{datasets}"),
    (["convert", "{bad_run}", "--to", "eee", "-o", "{bad_run}"], 2, "{bad_run}"),
    # evaluate: the judges file
    (["evaluate", "--judges", "{missing_toml}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "{missing_toml}"),
    (["evaluate", "--judges", "{dir_toml}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "{dir_toml}"),
    (["evaluate", "--judges", "{fifo_toml}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "{fifo_toml}"),
    (["evaluate", "--judges", "{empty_toml}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "{empty_toml}"),
    (["evaluate", "--judges", "{invalid_toml}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "{invalid_toml}"),
    (["evaluate", "--judges", "{latin1_toml}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "{latin1_toml}"),
    (["evaluate", "--judges", "{bom_toml}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "{bom_toml}"),
    (["evaluate", "--judges", "{unknown_kind}", "--items", "{items}", "-o", "{root}/o.json"],
     1, '`judges[0].kind` must be one of option_match'),
    (["evaluate", "--judges", "{llm_no_prompt}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "`prompt` or `prompt_file` is required"),
    (["evaluate", "--judges", "{prompt_missing}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "nope.jinja"),
    (["evaluate", "--judges", "{prompt_fifo}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "prompt.fifo"),
    (["evaluate", "--judges", "{key_env}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "KAGREPORT_TEST_SURELY_UNSET"),
    (["evaluate", "--judges", "{dup_judges}", "--items", "{items}", "-o", "{root}/o.json"],
     1, "exact_match"),
    # evaluate: the items file
    (["evaluate", "--judges", "{judges}", "--items", "{missing_jsonl}", "-o", "{root}/o.json"],
     1, "{missing_jsonl}"),
    (["evaluate", "--judges", "{judges}", "--items", "{dir_jsonl}", "-o", "{root}/o.json"],
     1, "{dir_jsonl}"),
    (["evaluate", "--judges", "{judges}", "--items", "{fifo_jsonl}", "-o", "{root}/o.json"],
     1, "{fifo_jsonl}"),
    (["evaluate", "--judges", "{judges}", "--items", "{empty_jsonl}", "-o", "{root}/o.json"],
     1, "{empty_jsonl}"),
    (["evaluate", "--judges", "{judges}", "--items", "{invalid_jsonl}", "-o", "{root}/o.json"],
     1, "{invalid_jsonl}"),
    (["evaluate", "--judges", "{judges}", "--items", "{latin1_jsonl}", "-o", "{root}/o.json"],
     1, "{latin1_jsonl}"),
    (["evaluate", "--judges", "{judges}", "--items", "{bom_jsonl}", "-o", "{root}/o.json"],
     1, "{bom_jsonl}"),
    (["evaluate", "--judges", "{judges}", "--items", "{dup_items}", "-o", "{root}/o.json"],
     1, "'q1'"),
    # evaluate: outputs, caches and flags
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{items}"], 2, "{items}"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{judges}"], 2, "{judges}"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{root}/o.txt"], 2, "o.txt"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{dir_json}"],
     2, "{dir_json}"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{missing_json}/o.json"],
     2, "{missing_json}/o.json"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{root}/o.json", "--cache", "{root}/o.json"],
     2, "{root}/o.json"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{root}/o.json", "--cache", "{items}"],
     2, "{items}"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{root}/o.json", "--cache", ""],
     2, "--cache"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{root}/o.json", "--max-concurrency", "0"],
     2, "--max-concurrency"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{root}/o.json", "--setup", "s"],
     2, "--setup"),
    (["evaluate", "--judges", "{judges}", "-r", "{results}", "-o", "{root}/o.json"],
     2, "--datasets"),
    (["evaluate", "--judges", "{judges}", "-r", "{results}", "-d", "{fifo_json}", "--setup", "s", "-o", "{root}/o.json"],
     1, "{fifo_json}"),
    (["evaluate", "--judges", "{judges}", "-r", "{results}", "-d", "{datasets}", "--setup", "nobody", "-o", "{root}/o.json"],
     1, "'nobody'"),
    (["evaluate", "--judges", "{judges}", "-r", "{results}", "-d", "{datasets}", "--setup", "s", "-o", "{results}/ds/q1/o.json"],
     2, "question folder"),
    (["evaluate", "--judges", "{judges}", "--items", "{items}", "-o", "{root}/o.json", "--max-concurrency", "many"],
     2, "'many'"),
    (["evaluate", "--judges", "{judges}", "-r", "{missing_json}", "-d", "{datasets}",
      "--setup", "s", "-o", "{root}/o.json"], 1, "{missing_json}"),
    (["evaluate", "--judges", "{judges}", "-r", "{judges}", "-d", "{datasets}",
      "--setup", "s", "-o", "{root}/o.json"], 1, "{judges}"),
    # compare
    (["compare", "{no_suffix}", "{a}"], 1, "{no_suffix}"),
    (["compare", "{missing_json}", "{a}"], 1, "{missing_json}"),
    (["compare", "{a}", "{dir_json}"], 1, "{dir_json}"),
    (["compare", "{a}", "{fifo_json}"], 1, "{fifo_json}"),
    (["compare", "{a}", "{empty_json}"], 1, "{empty_json}"),
    (["compare", "{a}", "{invalid_json}"], 1, "{invalid_json}"),
    (["compare", "{a}", "{latin1_json}"], 1, "{latin1_json}"),
    (["compare", "{a}", "{bom_json}"], 1, "{bom_json}"),
    (["compare", "{a}", "{schema}"], 1, "{schema}"),
    (["compare", "{a}", "{txt}"], 2, "{txt}"),
    (["compare", "{a}", "{c}"], 1, "{c}"),
    (["compare", "{a}", "{f1}"], 1, "share no metric"),
    (["compare", "{a}", "{retrieval}"], 1, "{retrieval}"),
    (["compare", "{a}", "{b}", "--metrics", "nope"], 2, "'nope'"),
    (["compare", "{a}", "{b}", "--metrics", ","], 2, "--metrics"),
    (["compare", "{a}", "{b}", "--n-resamples", "0"], 2, "--n-resamples"),
    (["compare", "{a}", "{b}", "--seed", "-1"], 2, "--seed"),
    (["compare", "{a}", "{b}", "-o", "{a}"], 2, "{a}"),
    (["compare", "{a}", "{b}", "-o", "{root}/cmp.csv"], 2, "cmp.csv"),
    (["compare", "{a}", "{b}", "--format", "yaml"], 2, "'yaml'"),
    # site build
    (["site", "build", "{missing_toml}", "-o", "{root}/site"], 1, "{missing_toml}"),
    (["site", "build", "{dir_toml}", "-o", "{root}/site"], 1, "{dir_toml}"),
    (["site", "build", "{fifo_toml}", "-o", "{root}/site"], 1, "{fifo_toml}"),
    (["site", "build", "{invalid_toml}", "-o", "{root}/site"], 1, "{invalid_toml}"),
    (["site", "build", "{latin1_toml}", "-o", "{root}/site"], 1, "{latin1_toml}"),
    (["site", "build", "{site_unknown_key}", "-o", "{root}/site"], 1, "bogus"),
    (["site", "build", "{judges}", "-r", "{results}", "-o", "{root}/site"], 2, "CONFIG"),
    (["site", "build", "-d", "{datasets}", "-o", "{root}/site"], 2, "--datasets"),
    (["site", "build", "-r", "{results}", "-o", "{root}/site"], 2, "--datasets"),
    (["site", "build", "--baseline", "s", "-o", "{root}/site"], 2, "--baseline"),
    (["site", "build", "-r", "{results}", "-d", "{datasets}", "--name", " ", "-o", "{root}/s"],
     2, "--name"),
    (["site", "build", "{judges}", "--with-notebooks", "-o", "{root}/site"], 2, "--with-notebooks"),
    (["site", "build", "-r", "{results}", "-d", "{datasets}", "--compare", "some"], 2, "'some'"),
    # site build: what the build reads (a configuration without runs, so it is quick)
    (["site", "build", "{site}", "-o", "{root}/site", "--notebook", "{fifo_ipynb}", "--no-execute"],
     1, "{fifo_ipynb}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--notebook", "{bad_ipynb}", "--no-execute"],
     1, "{bad_ipynb}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--notebook", "{missing_json}", "--no-execute"],
     1, "{missing_json}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--evaluation", "{fifo_json}"],
     1, "{fifo_json}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--evaluation", "{missing_json}"],
     1, "{missing_json}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--evaluation", "{datasets}"],
     1, "{datasets}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--templates", "{missing_json}"],
     1, "{missing_json}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--run", "{missing_json}"],
     1, "{missing_json}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--run", "{bad_run}"], 1, "{bad_run}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--run", "{fifo_json}"], 1, "{fifo_json}"),
    (["site", "build", "{site}", "-o", "{root}/site", "--run", "{judges}"], 1, "{judges}"),
    (["site", "build", "--run", "{bad_run}", "--with-notebooks", "-o", "{root}/site"],
     2, "--with-notebooks"),
    (["site", "build", "{site_bad_source}", "-o", "{root}/site"], 1, "sources[0].format"),
    (["site", "build", "{site}", "-o", "{results}"], 1, "{results}"),
    (["site", "build", "-r", "{missing_json}", "-d", "{datasets}", "-o", "{root}/site"],
     1, "{missing_json}"),
    (["site", "build", "-r", "{results}", "-d", "{fifo_json}", "-o", "{root}/site"],
     1, "{fifo_json}"),
    # gate: every error exits 2 (1 means "fail") in one line, without the usage
    (["gate", "{missing_json}", "--baseline", "{bad_run}"], 2, "{missing_json}"),
    (["gate", "{bad_run}", "--baseline", "{bad_run}"], 2, "{bad_run}"),
    (["gate", "{invalid_json}", "--baseline", "{invalid_json}"], 2, "{invalid_json}"),
    (["gate", "{fifo_json}", "--baseline", "{fifo_json}"], 2, "{fifo_json}"),
    (["gate", "{results}", "--baseline", "{results}", "-d", "{datasets}", "--metric", "nope"],
     2, "'nope'"),
    (["gate", "{results}", "--baseline", "{results}", "-d", "{datasets}", "-o", "{bad_run}"],
     2, "{bad_run}"),
    (["gate", "{results}", "--baseline", "{results}", "--margin", "-1"], 2, "--margin"),
    # demo, and the command itself
    (["demo", "--format", "html"], 2, "'html'"),
    (["nope"], 2, "'nope'"),
    ([], 2, "COMMAND"),
]
# fmt: on


ERROR_LINE = re.compile(r"kagreport( [a-z]+)*: error: ")
# Usage errors whose message is several lines, as kag prints them (an invalid regex).
MULTI_LINE = {"("}


def _case_id(case: tuple[list[str], int, str]) -> str:
    return " ".join(case[0])[:80] or "(none)"


@pytest.mark.timeout(60)  # a FIFO opened blocking would hang: that fails here instead
@pytest.mark.parametrize(("argv", "code", "named"), CASES, ids=[_case_id(c) for c in CASES])
def test_bad_input_is_one_line_and_only_kagreport_errors_reach_the_cli(
    argv: list[str],
    code: int,
    named: str,
    world: dict[str, str],
    boundary: list[BaseException],
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [word.format(**world) for word in argv]
    named = named.format(**world)
    before = _snapshot(world["root"])
    by_argparse = False
    try:
        returned = _main.main(args)
    except SystemExit as exc:  # argparse's own usage errors, before any command runs
        returned, by_argparse = exc.code, True
    out, err = capsys.readouterr()
    assert all(isinstance(exc, KagreportError) for exc in boundary), boundary
    assert returned == code, err
    assert "Traceback" not in err
    lines = err.splitlines()
    # argparse's own errors are "kagreport <command>: error: ..." after its usage lines.
    errors = [n for n, line in enumerate(lines) if ERROR_LINE.match(line)]
    assert len(errors) == 1, err
    line = lines[errors[0]]
    if argv and argv[-1] in MULTI_LINE:  # kag prints the regex crate's message, several lines
        line = " ".join(lines[errors[0] :])
    else:
        assert errors == [len(lines) - 1], err
    assert named in line, err
    if not by_argparse:  # the error came through the command's function
        assert len(boundary) == 1, boundary
    if code == 1 or (argv[:1] == ["gate"] and not by_argparse):
        assert len(lines) == 1, err
    else:
        assert lines[0].startswith("usage: kagreport"), err
    assert out == ""
    assert _snapshot(world["root"]) == before


def test_the_cases_reach_every_subcommand() -> None:
    # A subcommand added to the parser must get its bad inputs here.
    parser = _main.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    covered = {case[0][0] for case in CASES if case[0]}
    assert set(commands) <= covered
    assert any(case[0][:2] == ["stats", "-r"] and "find" in case[0] for case in CASES)
    assert any(case[0][:2] == ["site", "build"] for case in CASES)


def test_the_library_errors_are_also_the_specs_value_errors(world: dict[str, str]) -> None:
    # ANSWER_EVALUATION_SPEC.md: compare raises ValueError when the items differ or no metric
    # is shared; they are KagreportErrors too, so the CLI shows them without re-wrapping.
    from kagreport import FormatError, InputError, UsageError
    from kagreport.evaluation import DifferentItemsError
    from kagreport.evaluation._read import read_report

    a, c, f1 = (read_report(world[k]) for k in ("a", "c", "f1"))
    with pytest.raises(DifferentItemsError) as different:
        a.compare(c)
    with pytest.raises(InputError, match="share no metric") as unshared:
        a.compare(f1)
    with pytest.raises(FormatError) as suffix:
        read_report(world["txt"])
    for caught in (different, unshared):
        assert isinstance(caught.value, ValueError)
        assert isinstance(caught.value, KagreportError)
        assert caught.value.exit_code == 1
    assert isinstance(suffix.value, ValueError)
    assert isinstance(suffix.value, UsageError)
