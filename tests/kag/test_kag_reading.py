"""kagreport.kag: the datasets file, the result envelope and the JSON writer (spec section 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import S, Tree, mcq, run_cli
from kagreport import DatasetsError, ResultFileError, grade
from kagreport.kag import load_datasets
from kagreport.kag._datasets import parse_datasets
from kagreport.kag._jsonfmt import dumps_pretty, format_float
from kagreport.kag._names import is_component_name, to_component_name
from kagreport.kag._records import decode_result, read_result
from kagreport.kag._walk import setup_name


@pytest.mark.parametrize(
    ("name", "valid"),
    [("a", True), ("run-1", True), ("0", True), ("-", True), ("", False), ("A", False),
     ("a_b", False), ("a.b", False), ("\u00e9", False), ("a b", False)],
)  # fmt: skip
def test_component_names(name: str, valid: bool) -> None:
    assert is_component_name(name) is valid


def test_to_component_name() -> None:
    assert to_component_name("Meta-Llama-3_1-70B-Instruct") == "meta-llama-3-1-70b-instruct"
    assert to_component_name("gemini-1.5-pro-002") == "gemini-1-5-pro-002"
    with pytest.raises(ValueError, match="component name"):
        to_component_name("___")


@pytest.mark.parametrize(
    ("file_name", "prefix", "setup"),
    [("a.json", "", "a"), ("run1-a.json", "run1-", "a"), ("a.json", "run1-", None),
     ("a.json.tmp", "", None), ("A.json", "", None), ("run1-.json", "run1-", None),
     ("a.json.json", "", None), ("x-a.json", "", "x-a")],
)  # fmt: skip
def test_setup_name(file_name: str, prefix: str, setup: str | None) -> None:
    assert setup_name(file_name, prefix) == setup


def test_datasets_file(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({
        "ds": {"q1": mcq("A"), "q2": mcq(None), "q3": {"input": "x", "output": None},
               "q4": {"input": "x", "extra": 1}},
        "other": {"q1": mcq("B")},
        "empty": {},
    }))  # fmt: skip
    truth = load_datasets(path)
    assert truth.scorable_questions == 2
    assert len(truth) == 5
    assert truth.get("ds", "q1") is not None
    assert truth.get("ds", "q1").answer == "A"  # type: ignore[union-attr]
    assert truth.get("ds", "q3").output is None  # type: ignore[union-attr]
    assert truth.get("nope", "q1") is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", "Expected `object`, got `array`"),
        ('{"ds": []}', "must be an object of questions"),
        ('{"Bad": {}}', "dataset name 'Bad'"),
        ('{"ds": {"q_1": {"input": "x"}}}', "question name 'q_1'"),
        ('{"ds": {"q1": {"output": null}}}', "ds/q1: Object missing required field `input`"),
        ('{"ds": {"q1": {"input": 3}}}', r"ds/q1: Expected `str`, got `int` - at `\$\.input`"),
        ('{"ds": {"q1": {"input": "x", "output": {"type": "Free"}}}}', "Invalid enum value 'Free'"),
        ('{"ds": {"q1": {"input": "x", "output": {"options": {}}}}}', "required field `type`"),
        ('{"ds": {"q1": {"input": "x", "output": "MCQ"}}}', "output"),
        ('{"ds": {"q1": {"input": "x", "output": {"type": "MCQ", "options": [1]}}}}', "options"),
        (
            '{"ds": {"q1": {"input": "x", "output": {"type": "MCQ", "options": {}, "answer": 1}}}}',
            "answer",
        ),
        ("{", "not valid JSON"),
    ],
)
def test_invalid_datasets_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(content)
    with pytest.raises(DatasetsError, match=message) as info:
        load_datasets(path)
    assert info.value.path == str(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # msgspec checks types as it decodes: the wrong type (a string where a dataset's
        # object belongs) comes before the bad byte, and the file is still not UTF-8.
        (b'{"ds": "caf\xe9"}', "is not UTF-8 at byte 11"),
        # A wrong type, then the file ends early: msgspec's type error, in one line.
        (b'{"ds": 1, "other": {', "dataset 'ds' must be an object of questions, not|got `int`"),
    ],
)
def test_a_type_error_before_another_fault(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(content)
    with pytest.raises(DatasetsError, match=message) as info:
        load_datasets(path)
    assert str(path) in str(info.value)


def test_missing_datasets_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetsError, match="cannot read the datasets file"):
        load_datasets(tmp_path / "missing.json")


def test_minimal_ok_record() -> None:
    record = decode_result(json.dumps({"ok": {"result": "B", "stats": S}}))
    assert record.result == "B"
    assert record.error is None
    assert record.generation_ns == 1_000_000_000
    assert record.context_bytes == 1
    assert record.retrieval is None
    assert (record.provider, record.model) == ("stub", "m")


def test_error_record() -> None:
    record = decode_result('{"error": "request timed out"}')
    assert record.is_error
    assert record.error == "request timed out"


def test_retrieval_record_and_durations() -> None:
    stats = dict(S)
    stats["time"] = [3, 250]
    stats["retrieval"] = {
        "result": "ctx",
        "stats": {"embedder": {
            "embedding": {"document": "d", "vec": [0.5] * 384},
            "database": {"neo4j": {"vertices": 3, "relationships": 2, "properties": 7,
                                   "time": {"secs": 9, "nanos": 0}}},
            "time": {"secs": 0, "nanos": 2_000_000_001},
        }},
    }  # fmt: skip
    record = decode_result(json.dumps({"ok": {"result": "x", "stats": stats}}))
    assert record.generation_ns == 3_000_000_250
    assert record.retrieval is not None
    # RET uses the embedder (whole retrieval) time, with excess nanoseconds carried.
    assert record.retrieval.time_ns == 2_000_000_001
    assert (record.retrieval.vertices, record.retrieval.relationships) == (3, 2)
    assert record.retrieval.properties == 7


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r["ok"]["stats"].pop("prompt"),
        lambda r: r["ok"]["stats"].pop("time"),
        lambda r: r["ok"]["stats"]["config"].pop("provider"),
        lambda r: r["ok"]["stats"]["config"].pop("model"),
        lambda r: r["ok"]["stats"]["config"].pop("temperature"),
        lambda r: r["ok"].pop("result"),
        lambda r: r["ok"]["stats"].__setitem__("time", {"secs": 1}),
        lambda r: r["ok"]["stats"].__setitem__("time", {"secs": 1, "nanos": 0, "x": 1}),
        lambda r: r["ok"]["stats"].__setitem__("time", [1]),
        lambda r: r["ok"]["stats"].__setitem__("retrieval", {"result": "c", "stats": {}}),
        lambda r: r.__setitem__("error", "x"),
        lambda r: r.__setitem__("other", 1),
    ],
)
def test_records_that_do_not_parse(mutate) -> None:  # type: ignore[no-untyped-def]
    record = {"ok": {"result": "B", "stats": json.loads(json.dumps(S))}}
    mutate(record)
    with pytest.raises(ValueError):  # noqa: PT011 - the message is msgspec's
        decode_result(json.dumps(record))


def test_read_result_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("{")
    with pytest.raises(ResultFileError, match=r"s\.json is not a kag result file"):
        read_result(path)
    with pytest.raises(ResultFileError, match="cannot read"):
        read_result(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # serde_json (zmij) layouts; the thresholds are tested in test_jsonfmt.py.
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (0.3, "0.3"),
        (0.6666666666666666, "0.6666666666666666"),
        (100.0, "100.0"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (123456.789, "123456.789"),
        (0.001, "0.001"),
        (0.0001, "0.0001"),
        (0.00001, "0.00001"),
        (0.000001, "1e-6"),
        (1.5e-7, "1.5e-7"),
        (0.333333333, "0.333333333"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-2.5, "-2.5"),
    ],
)
def test_format_float_like_serde_json(value: float, text: str) -> None:
    assert format_float(value) == text


def test_format_float_rejects_nan() -> None:
    with pytest.raises(ValueError, match="JSON"):
        format_float(float("nan"))


def test_dumps_pretty_like_serde() -> None:
    value = {"a": [], "b": {}, "c": [1, None, True], "d": '\u00e9"\n\u001f', "e": 2.0}
    assert dumps_pretty(value) == (
        '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    null,\n    true\n  ],\n'
        '  "d": "\u00e9\\"\\n\\u001f",\n  "e": 2.0\n}'
    )


def test_parse_datasets_accepts_text() -> None:
    assert parse_datasets('{"ds": {}}').questions == {"ds": {}}


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
