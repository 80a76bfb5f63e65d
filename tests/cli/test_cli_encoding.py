"""Every command on a stdout/stderr that cannot encode everything, and files that are not UTF-8.

The expected output is computed apart from the code under test: the same command's output
on UTF-8 streams, encoded by Python's own codec with ``backslashreplace``.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Tree, mcq, run_cli
from kagreport.evaluation import AnswerItem, evaluate_answers
from kagreport.evaluation.judges import ExactMatch

# Name -> (environment, the encoding the child's streams then use).
LOCALES: dict[str, tuple[dict[str, str], str]] = {
    "ascii": ({"PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0"}, "ascii"),
    "cp1252": ({"PYTHONIOENCODING": "cp1252", "PYTHONUTF8": "0"}, "cp1252"),
    "latin-1": ({"PYTHONIOENCODING": "latin-1", "PYTHONUTF8": "0"}, "latin-1"),
    # The C locale without UTF-8 mode: ASCII with surrogateescape on stdout.
    "C": ({"LC_ALL": "C", "PYTHONUTF8": "0"}, "ascii"),
    # The C locale alone: Python turns UTF-8 mode on (PEP 540); output is kag's bytes.
    "C-utf8-mode": ({"LC_ALL": "C"}, "utf-8"),
}
UTF8 = {"PYTHONIOENCODING": "utf-8"}


def _run(env: dict[str, str], *args: str | bytes, cwd: Path | None = None) -> Any:
    base = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_CTYPE", "LC_ALL")}
    base.pop("PYTHONIOENCODING", None)
    base.pop("PYTHONUTF8", None)
    return subprocess.run(
        [sys.executable, "-m", "kagreport", *args],
        capture_output=True,
        env={**base, **env},
        cwd=cwd,
        check=False,
        timeout=300,
    )


def _shown(name: str, locale: str) -> bytes:
    """How a child under ``locale`` writes ``name`` received on its command line."""
    env, encoding = LOCALES[locale]
    if env.get("LC_ALL") == "C" and encoding == "ascii":  # argv decoded as ASCII
        name = name.encode("utf-8").decode("ascii", "surrogateescape")
    return name.encode(encoding, "backslashreplace")


def _same_as_utf8(locale: str, *args: str | bytes, cwd: Path | None = None) -> Any:
    """Run under ``locale`` and under UTF-8; check the bytes are the escaped UTF-8 text."""
    env, encoding = LOCALES[locale]
    utf8 = _run(UTF8, *args, cwd=cwd)
    done = _run(env, *args, cwd=cwd)
    assert b"Traceback" not in done.stderr, done.stderr.decode("ascii", "replace")
    assert done.returncode == utf8.returncode == 0, done.stderr
    for got, reference in ((done.stdout, utf8.stdout), (done.stderr, utf8.stderr)):
        text = reference.decode("utf-8", "surrogateescape")
        assert got == text.encode(encoding, "backslashreplace")
    return done


def _accents(tmp_path: Path, folder: str = "donn\u00e9es") -> Tree:
    """A run under ``folder``; responses in several scripts; one broken file."""
    root = tmp_path / folder
    root.mkdir()
    tree = Tree(root)
    tree.question("ds", "q1", mcq("A", {"A": "s\u00ed", "B": "\u043d\u0435\u0442"}))
    tree.question("ds", "q2", mcq("B"))
    tree.ok("ds", "q1", "kag", "A", prompt="caf\u00e9 \u2615")
    tree.ok("ds", "q2", "kag", "r\u00e9ponse: B\n\u2014 \u65e5\u672c \U0001f600")
    tree.ok("ds", "q1", "base", "\u00bfA?")
    tree.raw("ds", "q2", "base.json", "{ cass\u00e9")
    return tree


@pytest.fixture
def accents(tmp_path: Path) -> Tree:
    return _accents(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("locale", sorted(LOCALES))
def test_stats_and_find_write_escapes(tmp_path: Path, locale: str) -> None:
    # Under LC_ALL=C the child reads a non-ASCII argument as undecodable bytes (surrogates),
    # so the UTF-8 run's text would differ by more than escapes: ASCII paths there.
    accents = _accents(tmp_path, "donnees" if locale == "C" else "donn\u00e9es")
    # The table's tree lines (U+2514) and the find lines' U+23CE are not ASCII.
    datasets, results = str(accents.datasets_path), str(accents.results)
    done = _same_as_utf8(locale, "stats", "-d", datasets, "-r", results)
    assert b"Datasets: 1 | Scorable questions: 2" in done.stdout
    _same_as_utf8(locale, "stats", "-v", "-d", datasets, "-r", results)  # log lines
    found = _same_as_utf8(locale, "stats", "find", ".", "-r", results)
    assert found.stdout.count(b"\n") == 3  # kag q1 and q2, base q1


@pytest.mark.slow
@pytest.mark.parametrize("locale", ["ascii", "cp1252"])
def test_demo_writes_escapes(locale: str) -> None:
    done = _same_as_utf8(locale, "demo")
    assert b"\\u2514" in done.stdout  # the table's tree line, escaped


# (Not LC_ALL=C: there the child reads the folder's name as undecodable bytes.)
@pytest.mark.parametrize(("locale", "command"), [
    ("ascii", ["stats"]), ("ascii", ["stats", "find", "."]), ("cp1252", ["stats", "find", "."]),
    ("cp1252", ["demo"]),
])  # fmt: skip
def test_json_stays_json_on_any_stdout(accents: Tree, locale: str, command: list[str]) -> None:
    extra = ["-d", str(accents.datasets_path)] if command == ["stats"] else []
    if command != ["demo"]:
        extra += ["-r", str(accents.results)]
    env, _ = LOCALES[locale]
    utf8 = _run(UTF8, *command, *extra, "--format", "json")
    done = _run(env, *command, *extra, "--format", "json")
    assert done.returncode == utf8.returncode == 0, done.stderr
    assert done.stdout.isascii()
    assert json.loads(done.stdout) == json.loads(utf8.stdout)
    if command[-1] == ".":  # paths; on UTF-8 left as they are (kag writes UTF-8 JSON)
        assert "donn\u00e9es".encode() in utf8.stdout
        assert b"donn\\u00e9es" in done.stdout


@pytest.mark.slow
def test_every_command_runs_on_an_ascii_stream(tmp_path: Path) -> None:
    # LC_ALL=C without UTF-8 mode: ASCII streams, and every non-ASCII argument arrives as
    # undecodable bytes. (stats, find and demo are checked in every locale above.)
    locale = "C"
    env, encoding = LOCALES[locale]
    home = tmp_path / "r\u00e9sum\u00e9"
    home.mkdir()
    items = home / "\u00e9l\u00e8ves.jsonl"
    rows = [
        ("q1", "Capitale\u00a0?", "Z\u00fcrich", "Z\u00fcrich"),
        ("q2", "\u00bf?", "\u65e5", "x"),
    ]
    items.write_text(
        "".join(
            json.dumps({"identifier": i, "question": q, "answer": a, "reference": r}) + "\n"
            for i, q, a, r in rows
        ),
        encoding="utf-8",
    )
    (home / "juges.toml").write_text('[[judges]]\nkind = "exact_match"\n', encoding="utf-8")

    def check(*args: str) -> bytes:
        done = _run(env, *args, cwd=home)
        assert b"Traceback" not in done.stderr, done.stderr
        assert done.returncode == 0, done.stderr
        done.stdout.decode(encoding)  # encodable: nothing was written raw
        return bytes(done.stdout)

    out = check("simulate", "s\u00efm", "--questions", "3", "--prefix", "\u00e9t\u00e9-")
    assert _shown("s\u00efm", locale) in out
    assert b"--prefix='" + _shown("\u00e9t\u00e9-", locale) + b"'" in out
    out = check("evaluate", "--items", items.name, "--judges", "juges.toml", "-o", "\u00e9.json")
    assert b"report written to " + _shown("\u00e9.json", locale) in out
    # The report is named after the items file: its name as text, whatever argv's encoding.
    written = json.loads((home / "\u00e9.json").read_text(encoding="utf-8"))
    assert written["metadata"]["name"] == "\u00e9l\u00e8ves"
    check("evaluate", "--items", items.name, "--judges", "juges.toml", "-o", "b.json")
    out = check("compare", "\u00e9.json", "b.json")
    reference = _run(UTF8, "compare", "\u00e9.json", "b.json", cwd=home).stdout
    assert out == reference.decode("utf-8").encode(encoding, "backslashreplace")
    out = check("compare", "\u00e9.json", "b.json", "--format", "json")
    assert json.loads(out) == json.loads(
        _run(UTF8, "compare", "\u00e9.json", "b.json", "--format", "json", cwd=home).stdout
    )
    sim = home / "s\u00efm"
    out = check("site", "build", "-r", str(sim / "results"), "-d", str(sim / "datasets.json"),
                "--prefix", "\u00e9t\u00e9-", "-o", "s\u00eete", "--title", "R\u00e9sultats")  # fmt: skip
    assert out.startswith(b"site written to ")
    assert _shown("s\u00eete", locale) in out
    index = (home / "s\u00eete" / "index.html").read_text(encoding="utf-8")
    assert "R\u00e9sultats" in index
    assert "s\u00efm" in index


@pytest.mark.parametrize("locale", ["ascii", "C"])
def test_error_messages_with_odd_file_names(tmp_path: Path, locale: str) -> None:
    env, _ = LOCALES[locale]
    undecodable = os.fsencode(tmp_path) + b"/caf\xff\xe9.json"  # Latin-1 bytes, not UTF-8
    for name, shown in (
        (undecodable, b"caf\\udcff\\udce9.json"),
        (os.fsencode(tmp_path / "caf\u00e9.json"), _shown("caf\u00e9.json", locale)),
    ):
        done = _run(env, "stats", "-d", name, "-r", str(tmp_path))
        assert done.returncode == 1, done.stderr
        assert b"Traceback" not in done.stderr
        assert done.stderr.count(b"\n") == 1
        assert b"cannot read the datasets file" in done.stderr
        assert shown + b": No such file or directory\n" in done.stderr
    # A usage error (argparse's own message) with a non-ASCII value.
    bad = _run(env, "stats", "--format", "t\u00e9xt")
    assert bad.returncode == 2
    assert b"Traceback" not in bad.stderr
    assert b"invalid choice: '" + _shown("t\u00e9xt", locale) + b"'" in bad.stderr


# -- files that are not UTF-8 ---------------------------------------------------------------


def _latin1(path: Path, text: str) -> int:
    """Write ``text`` in Latin-1; return the offset of its first non-ASCII byte (from 0)."""
    data = text.encode("latin-1")
    path.write_bytes(data)
    return next(i for i, byte in enumerate(data) if byte >= 0x80)


def _one_line_error(done: Any, path: Path, offset: int) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"kagreport: error: {_what(path)} {path} is not UTF-8 at byte {offset}\n"
    assert "usage:" not in done.stderr


def _what(path: Path) -> str:
    return {
        ".toml": "the judges file",
        ".jsonl": "the items file",
        ".json": "the datasets file",
    }[path.suffix]


@pytest.mark.slow
def test_an_evaluation_report_in_latin1_is_one_line_exit_1(tmp_path: Path) -> None:
    items = [("q1", "Paris", "Paris"), ("q2", "Z\u00fcrich", "Zurich")]
    report = evaluate_answers(
        [AnswerItem(identifier=i, question="?", answer=a, reference=r) for i, a, r in items],
        [ExactMatch()],
    )
    good = tmp_path / "good.json"
    report.write(good)
    text = good.read_text(encoding="utf-8")
    bad = tmp_path / "bad.json"
    offset = _latin1(bad, text)
    assert text.encode("utf-8")[:offset].isascii()  # the same bytes up to there
    for args in (["compare", str(bad), str(good)], ["compare", str(good), str(bad)]):
        done = run_cli(*args)
        assert done.returncode == 1, done.stderr
        assert done.stderr == (
            f"kagreport: error: the evaluation report {bad} is not UTF-8 at byte {offset}\n"
        )
    # A byte-order mark is allowed and counted in the offset.
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("latin-1"))
    done = run_cli("compare", str(bom), str(good))
    assert done.stderr.endswith(f"{bom} is not UTF-8 at byte {offset + 3}\n")
    site = run_cli("site", "build", "--evaluation", str(bad), "-o", str(tmp_path / "site"))
    assert site.returncode == 1
    assert "Traceback" not in site.stderr
    assert site.stderr.endswith(f"{bad} is not UTF-8 at byte {offset}\n")
    assert site.stderr.count("\n") == 1


def test_judges_items_and_datasets_in_latin1(tmp_path: Path) -> None:
    judges = tmp_path / "judges.toml"
    items = tmp_path / "items.jsonl"
    (tmp_path / "ok.toml").write_text('[[judges]]\nkind = "exact_match"\n', encoding="utf-8")
    (tmp_path / "ok.jsonl").write_text('{"identifier": "q", "answer": "a"}\n', encoding="utf-8")
    at = _latin1(judges, '[[judges]]\nkind = "exact_match"\nname = "caf\u00e9"\n')
    done = run_cli("evaluate", "--items", str(tmp_path / "ok.jsonl"), "--judges", str(judges),
                   "-o", str(tmp_path / "o.json"))  # fmt: skip
    _one_line_error(done, judges, at)
    # The bad byte is on the third line: the offset counts the whole file, not one line.
    at = _latin1(items, '{"identifier": "q"}\n\r\n{"identifier": "r\u00e9", "answer": "a"}\n')
    assert at > 20
    done = run_cli("evaluate", "--items", str(items), "--judges", str(tmp_path / "ok.toml"),
                   "-o", str(tmp_path / "o.json"))  # fmt: skip
    _one_line_error(done, items, at)

    (tmp_path / "run").mkdir()
    tree = Tree(tmp_path / "run")
    tree.question("ds", "q1", mcq("A"))
    datasets = tree.datasets_path
    at = _latin1(datasets, datasets.read_text(encoding="utf-8").replace('"Q?"', '"Qu\u00e9?"'))
    for args in (
        ["stats", "-d", str(datasets), "-r", str(tree.results)],
        ["evaluate", "-r", str(tree.results), "-d", str(datasets), "--setup", "s",
         "--judges", str(tmp_path / "ok.toml"), "-o", str(tmp_path / "o.json")],
        ["site", "build", "-r", str(tree.results), "-d", str(datasets),
         "-o", str(tmp_path / "site")],
    ):  # fmt: skip
        _one_line_error(run_cli(*args), datasets, at)


def test_a_prompt_file_and_a_site_configuration_in_latin1(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    at = _latin1(prompt, "Grade {{ item.answer }} \u00e0 la r\u00e8gle.")
    judges = tmp_path / "judges.toml"
    judges.write_text(
        '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'prompt_file = "prompt.txt"\n',
        encoding="utf-8",
    )
    (tmp_path / "ok.jsonl").write_text('{"identifier": "q", "answer": "a"}\n', encoding="utf-8")
    done = run_cli("evaluate", "--items", str(tmp_path / "ok.jsonl"), "--judges", str(judges),
                   "-o", str(tmp_path / "o.json"))  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith(f"prompt_file {prompt} is not UTF-8 at byte {at}\n")
    assert done.stderr.count("\n") == 1

    config = tmp_path / "site.toml"
    at = _latin1(config, 'title = "R\u00e9sultats"\n')
    done = run_cli("site", "build", str(config), "-o", str(tmp_path / "site"))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr == (
        f"kagreport: error: the site configuration {config} is not UTF-8 at byte {at}\n"
    )


# -- simulate's hint ---------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["run 1-", "-x", "it's-$HOME-"])
def test_simulate_hint_can_be_pasted_into_a_shell(tmp_path: Path, prefix: str) -> None:
    out = tmp_path / "my runs" / "-first"
    out.parent.mkdir()
    done = run_cli("simulate", "--questions", "2", f"--prefix={prefix}", "--", "-first",
                   cwd=out.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr
    hint = done.stdout.splitlines()[-1]
    assert hint.startswith("  grade it: kagreport stats ")
    words = shlex.split(hint.removeprefix("  grade it: "))  # as a POSIX shell splits it
    assert words[0] == "kagreport"
    graded = run_cli(*words[1:], "--format", "json", cwd=out.parent)
    assert graded.returncode == 0, graded.stderr
    # The prefix reached stats whole: it is cut off the setup names of simulate's files.
    setups = {setup["setup"] for setup in json.loads(graded.stdout)["setups"]}
    assert setups == {"kag-large", "kag-small", "native-large", "native-small"}


def test_simulate_hint_quotes_a_folder_with_spaces(tmp_path: Path) -> None:
    out = tmp_path / "a b" / "c'd"
    out.parent.mkdir()
    done = run_cli("simulate", str(out), "--questions", "2")
    assert done.returncode == 0, done.stderr
    words = shlex.split(done.stdout.splitlines()[-1].removeprefix("  grade it: "))
    assert words[1:] == ["stats", "-d", str(out / "datasets.json"), "-r", str(out / "results")]


def test_an_undecodable_folder_name_on_a_utf8_stdout(tmp_path: Path) -> None:
    # Python hands the byte 0xff over as the lone surrogate U+DCFF, which strict UTF-8
    # cannot write: it is escaped like any character the stream lacks.
    out = os.fsencode(tmp_path) + b"/run\xff"
    done = _run(UTF8, "simulate", out, "--questions", "1")
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"written to " + os.fsencode(tmp_path) + b"/run\\udcff: " in done.stdout
    assert os.path.isdir(out + b"/results")


def test_json_escapes_are_utf16_code_units(monkeypatch: pytest.MonkeyPatch) -> None:
    from kagreport.cli._output import write_json

    document = {"r\u00e9ponse": ["\u65e5", "\U0001f600", 'a\\b"c']}
    text = json.dumps(document, ensure_ascii=False)
    for encoding in ("ascii", "cp1252", "latin-1"):
        buffer = io.BytesIO()
        stream = io.TextIOWrapper(buffer, encoding=encoding)
        monkeypatch.setattr(sys, "stdout", stream)
        write_json(text)
        stream.flush()
        # json.dumps' own ASCII form (ensure_ascii): U+1F600 as the pair \ud83d\ude00.
        assert buffer.getvalue() == json.dumps(document).encode("ascii")
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer, encoding="utf-8"))
    write_json(text)
    sys.stdout.flush()
    assert buffer.getvalue() == text.encode("utf-8")  # UTF-8: as it is


def test_names_from_the_command_line_become_text() -> None:
    from kagreport.cli._output import as_text

    assert as_text("caf\u00e9") == "caf\u00e9"
    # UTF-8 bytes read as undecodable (LC_ALL=C) come back; other bytes become U+FFFD.
    assert as_text(b"caf\xc3\xa9".decode("ascii", "surrogateescape")) == "caf\u00e9"
    assert as_text(b"caf\xe9".decode("utf-8", "surrogateescape")) == "caf\ufffd"


def test_not_utf8_error_names_the_offset_past_a_byte_order_mark() -> None:
    import pickle

    from kagreport._errors import NotUTF8Error, decode_utf8

    assert decode_utf8(b"\xef\xbb\xbfok", "f", bom=True) == "ok"
    # b"\xef\xbb\xbf" + b"ab" + b"\xff": the bad byte is the sixth (offset 5).
    with pytest.raises(NotUTF8Error) as caught:
        decode_utf8(b"\xef\xbb\xbfab\xff", "f.json", "the file", bom=True)
    assert (str(caught.value), caught.value.offset) == ("the file f.json is not UTF-8 at byte 5", 5)
    again = pickle.loads(pickle.dumps(caught.value))
    assert (str(again), again.offset, again.path) == (str(caught.value), 5, "f.json")


@pytest.mark.parametrize(
    "args",
    [[b"--prefix", b"\xff-"], [b"--prefix=\xff"], [b"find", b"\xff"]],
    ids=["prefix", "prefix-equals", "find"],
)
def test_a_prefix_or_pattern_that_is_not_utf8_is_a_usage_error(
    tree: Tree, args: list[bytes]
) -> None:
    # kag reads both as Strings: clap refuses bytes that are not UTF-8 with exit 2
    # ("invalid UTF-8 was detected in one or more arguments"), before reading anything.
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "base", "A")
    command = [
        os.fsencode(sys.executable), b"-m", b"kagreport", b"stats",
        b"-d", os.fsencode(tree.datasets_path), b"-r", os.fsencode(tree.results),
    ]  # fmt: skip
    done = subprocess.run([*command, *args], capture_output=True, timeout=120, check=False)
    assert done.returncode == 2, done
    assert done.stdout == b""
    assert b"invalid UTF-8 was detected" in done.stderr
