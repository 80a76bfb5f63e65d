"""The compiled scanner's ``grade_folder`` (a question folder listed, read, decoded and graded
in place) gives the chunk the Python code gives: the same rows, columns, group sums,
unparsable files and first error, in the same order.

Each chunk is graded three ways in this process: in place (the default), with the scanner
giving a record at a time (``grade_folder`` off), and in pure Python (the scanner off). The
folders are drawn: responses around kag's rule (Unicode White_Space at either end, ASCII
case, look-alike letters, JSON escapes), measurements at and past the scanner's limits,
error envelopes, files the scanner declines or no decoder reads, and entries that are not
result files, so that a folder graded in place sits beside folders Python grades.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kagreport.grading import _chunk
from kagreport.grading._chunk import GradedChunk, grade_chunk
from kagreport.grading._rule import WHITE_SPACE, grade_response
from kagreport.kag import _records, _tree, _walk

needs_scanner = pytest.mark.skipif(_records._SCANNER is None, reason="the C scanner is not built")


@contextmanager
def _off(*patched: tuple[Any, str]) -> Iterator[None]:
    saved = [getattr(module, name) for module, name in patched]
    for module, name in patched:
        setattr(module, name, None)
    try:
        yield
    finally:
        for (module, name), value in zip(patched, saved, strict=True):
            setattr(module, name, value)


def _three_ways(folders: list[str], answers: list[str]) -> list[GradedChunk]:
    datasets = [k % 3 for k in range(len(folders))]
    graded = [grade_chunk(folders, answers, datasets, "")]
    with _off((_chunk, "grade_folder")):
        graded.append(grade_chunk(folders, answers, datasets, ""))
    with _off(
        (_chunk, "grade_folder"), (_tree, "scan_file"), (_walk, "list_results"),
        (_records, "_SCANNER"),
    ):  # fmt: skip
        graded.append(grade_chunk(folders, answers, datasets, ""))
    return graded


def _record(response: str, gen: tuple[int, int], prompt: str, retrieval: Any) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "prompt": prompt,
        "time": {"secs": gen[0], "nanos": gen[1]},
        "config": {"provider": "openai", "model": "m", "temperature": 0.0, "tokens": None},
    }
    if retrieval is not None:
        vertices, relationships, properties, secs = retrieval
        stats["config"]["augmented_generation"] = {"retriever": "embedder", "database": "neo4j"}
        stats["retrieval"] = {
            "result": "(:E)",
            "stats": {
                "embedder": {
                    "embedding": {"document": "d", "vec": [-0.0305, 0.03, 1e-05]},
                    "database": {
                        "neo4j": {
                            "vertices": vertices,
                            "relationships": relationships,
                            "properties": properties,
                            "time": [0, 5],
                        }
                    },
                    "time": {"secs": secs, "nanos": 7},
                }
            },
        }
    return {"ok": {"result": response, "stats": stats}}


# Responses and answers around kag's rule: White_Space and characters that are not
# (U+001C..U+001F, U+200B, U+FEFF, U+180E), ASCII case, look-alikes (full-width B, Kelvin
# sign, dotless i, sharp s), ASCII case's neighbours (@ and `, [ and {), escapes.
_AROUND = WHITE_SPACE + "\x1c\x1f\u200b\ufeff\u180e\x00"
_RESPONSE = st.text(
    alphabet=st.sampled_from(
        [
            *_AROUND,
            "b",
            "B",
            "Ｂ",
            "K",
            "\u212a",
            "k",
            "ı",
            "I",
            "ß",
            "é",
            '"',
            "\\",
            "@",
            "`",
            "[",
            "{",
        ]
    ),
    max_size=6,
)
_ANSWER = st.sampled_from(
    ["B", "b", "K", "k", "I", "é", "É", "ß", "ss", "Ｂ", "AB", " B", "", "@", "{"]
)
_BIG = st.integers(0, 10**17) | st.sampled_from([0, 10**18 - 1, 10**18, 2**63 - 1, 2**63, 2**64])
_SECS = st.integers(0, 10**4) | st.sampled_from([9_000_000_000, 9_000_000_001, 2**63])


@st.composite
def _file(draw: st.DrawFn) -> tuple[str, bytes | None]:
    """A folder entry: (name, content); None makes a sub-folder instead of a file."""
    name = draw(st.sampled_from(["a", "b", "kag-x", "z9", "Bad", "a.b"])) + ".json"
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return name, None
    if kind == 1:
        return name, json.dumps({"error": draw(_RESPONSE)}).encode()
    if kind == 2:
        return name, draw(st.sampled_from([b"", b"{", b'{"ok": 1}', b"\xef\xbb\xbf{}", b"null"]))
    retrieval = draw(st.none() | st.tuples(_BIG, _BIG, _BIG, _SECS))
    gen = (draw(_SECS), draw(st.integers(0, 999_999_999)))
    prompt = draw(st.sampled_from(["p", "", "é\n\u2028", "x" * 40]))
    record = _record(draw(_RESPONSE), gen, prompt, retrieval)
    text = json.dumps(
        record, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans())
    )
    return name, text.encode()


def _write(root: Path, folders: list[list[tuple[str, bytes | None]]]) -> list[str]:
    paths = []
    for k, entries in enumerate(folders):
        folder = root / f"q{k:03d}"
        folder.mkdir()
        for name, content in entries:
            if (folder / name).exists():  # a name drawn twice: the first one stays
                continue
            if content is None:
                (folder / name).mkdir()
            else:
                (folder / name).write_bytes(content)
        paths.append(str(folder))
    return paths


@needs_scanner
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    folders=st.lists(st.lists(_file(), max_size=5), min_size=1, max_size=5),
    answers=st.lists(_ANSWER, min_size=5, max_size=5),
)
def test_folders_graded_in_place_are_graded_as_python_grades_them(
    folders: list[list[tuple[str, bytes | None]]], answers: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = _write(Path(tmp), folders)
        in_place, by_record, python = _three_ways(paths, answers[: len(paths)])
    assert in_place == by_record == python


@needs_scanner
def test_each_white_space_character_is_trimmed_as_kag_trims_it(tmp_path: Path) -> None:
    # One file per character, at the start, the end or both, written raw and escaped;
    # beside characters that are not White_Space. Each row's outcome is grade_response's.
    folder = tmp_path / "q"
    folder.mkdir()
    expected = {}
    for k, char in enumerate(_AROUND + "Ｂ"):
        for where, response in enumerate((char + "b", "B" + char, char + "B" + char)):
            for escaped in (False, True):
                name = f"s{k:02d}-{where}-{int(escaped)}"
                record = _record(response, (1, 0), "p", None)
                (folder / f"{name}.json").write_text(json.dumps(record, ensure_ascii=escaped))
                expected[name] = 0 if grade_response(response, "B") else 1
    graded = grade_chunk([str(folder)], ["B"], [0], "")
    outcomes = {graded.setups[s]: o for s, o in zip(graded.rows[1], graded.columns[0], strict=True)}
    assert outcomes == expected
    assert list(expected.values()).count(0) == 6 * len(WHITE_SPACE)


@needs_scanner
def test_ascii_case_and_its_neighbours_are_told_apart(tmp_path: Path) -> None:
    # The bytes one bit apart from a letter's other case (@ `, [ {, ^ ~) are no letters.
    pairs = [("`", "@"), ("@", "`"), ("{", "["), ("[", "{"), ("~", "^"), ("^", "~"),
             ("b", "B"), ("Z", "z"), ("Ｂ", "B"), ("\u212a", "K"), ("ı", "i"), ("é", "É"),
             ("a@", "A`"), ("A`", "a`"), ("", ""), ("ß", "ss")]  # fmt: skip
    answers = sorted({answer for _, answer in pairs})
    expected: dict[tuple[str, str], int] = {}
    for k, answer in enumerate(answers):
        folder = tmp_path / f"q{k:02d}"
        folder.mkdir()
        for j, (response, _) in enumerate(pairs):
            record = _record(response, (1, 0), "p", None)
            (folder / f"s{j:02d}.json").write_text(json.dumps(record))
            expected[(folder.name, f"s{j:02d}")] = 0 if grade_response(response, answer) else 1
    folders = [str(tmp_path / f"q{k:02d}") for k in range(len(answers))]
    graded = grade_chunk(folders, answers, [0] * len(answers), "")
    rows = zip(graded.rows[0], graded.rows[1], graded.columns[0], strict=True)
    assert {(f"q{q:02d}", graded.setups[s]): o for q, s, o in rows} == expected
    # Counted by hand: each of the six symbols against itself, b/B, Z/z, A` against A` and
    # a`, and "" against "".
    assert sum(o == 0 for o in expected.values()) == 11


@needs_scanner
def test_a_folder_that_cannot_be_listed_stops_the_chunk_where_python_stops_it(
    tmp_path: Path,
) -> None:
    good = [("a.json", json.dumps(_record("B", (1, 0), "p", None)).encode())]
    paths = _write(tmp_path, [good, good, good])
    for entry in Path(paths[1]).iterdir():
        entry.unlink()
    Path(paths[1]).rmdir()
    Path(paths[1]).write_text("a file where the folder was")
    graded = _three_ways(paths, ["B"] * 3)
    assert graded[0] == graded[1] == graded[2]
    assert graded[0].io_error is not None
    assert graded[0].io_error[0] == paths[1]
    assert list(graded[0].rows[0]) == [0]


def test_at_the_trace_level_each_skipped_entry_is_logged(
    tmp_path: Path, kag_log: list[logging.LogRecord]
) -> None:
    # -vvvv logs every entry a question folder holds that is not a result file; the compiled
    # path would skip it silently, so it is not used then.
    good = [("a.json", json.dumps(_record("B", (1, 0), "p", None)).encode())]
    paths = _write(tmp_path, [[*good, ("notes.txt", b"x")]])
    graded = grade_chunk(paths, ["B"], [0], "")
    assert list(graded.columns[0]) == [0]
    assert [r.getMessage() for r in kag_log if r.levelno == 5] == [
        f"ignoring non-result entry: {str(Path(paths[0]) / 'notes.txt')!r}"
    ]


@needs_scanner
def test_a_file_whose_path_is_too_long_is_refused_as_python_refuses_it(tmp_path: Path) -> None:
    # The compiled path opens each file relative to its open folder, where a path the system
    # refuses whole (PATH_MAX, 4096 bytes with its NUL) would still open.
    folder = tmp_path
    while len(str(folder)) < 4096 - 7 - 240:
        folder = folder / ("d" * 200)
    folder = folder / ("q" * (4096 - 7 - len(str(folder)) - 1))  # + "/a.json" = 4096 bytes
    folder.mkdir(parents=True)
    fd = os.open(str(folder), os.O_RDONLY)  # written relative to the folder, as no path fits
    try:
        with os.fdopen(os.open("a.json", os.O_CREAT | os.O_WRONLY, dir_fd=fd), "w") as file:
            file.write(json.dumps(_record("B", (1, 0), "p", None)))
    finally:
        os.close(fd)
    graded = _three_ways([str(folder)], ["B"])
    assert graded[0] == graded[1] == graded[2]
    assert graded[0].io_error is not None
    assert "File name too long" in graded[0].io_error[1]


@needs_scanner
def test_a_stop_is_acted_on_within_a_folder(tmp_path: Path) -> None:
    # One folder of many big files is graded in one compiled call: a signal's Python handler
    # runs between its files (the command line's stop handlers raise there), and nothing of
    # the folder is added.
    vector = ",".join(["0.0123456789"] * 40_000)  # about 520 kB a file
    text = json.dumps(_record("B", (1, 0), "p", (1, 1, 1, 0))).replace(
        "[-0.0305, 0.03, 1e-05]", f"[{vector}]"
    )
    folder = tmp_path / "q"
    folder.mkdir()
    (folder / "s0000.json").write_text(text)
    for k in range(1, 3000):  # 1.5 GB to read: seconds, far beyond the timer
        os.link(folder / "s0000.json", folder / f"s{k:04d}.json")

    class Stop(Exception):
        pass

    def stop(signum: int, frame: object) -> None:
        raise Stop

    state = ([], {}, {}, *(bytearray() for _ in range(9)))
    previous = signal.signal(signal.SIGALRM, stop)
    started = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(Stop):
            _records.grade_folder(str(folder), "", b"B", 0, 0, state)  # type: ignore[misc]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < 5
    assert state[0] == []  # a stopped folder adds nothing
    assert not any(state[3:])
