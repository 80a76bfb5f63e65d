"""Values kag's serde types accept or refuse in result and datasets files (issue 11, items
1-4 and 6). Each expected outcome is read off kag's source at commit 12389ee (cited) and
serde 1.0.229 / serde_json 1.0.15x, not off kagreport."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Tree, mcq, stats
from kagreport import DatasetsError, grade
from kagreport.kag._datasets import parse_datasets
from kagreport.kag._records import decode_result


def _kag_file(**kwargs: Any) -> dict[str, Any]:
    return {"ok": {"result": "B", "stats": stats(retrieval=(0, 5, 3, 2, 7), **kwargs)}}


def _text(body: dict[str, Any]) -> str:
    return json.dumps(body, indent=2)


def _with_vec(vec: str) -> str:
    body = _kag_file()
    body["ok"]["stats"]["retrieval"]["stats"]["embedder"]["embedding"]["vec"] = "@"
    return _text(body).replace('"@"', vec)


# -- 1. component names ---------------------------------------------------------------
# kag src/cli/generation.rs:68 (provider), :96 (retriever), :99 (database) are
# ComponentName, whose Deserialize (src/cli/component.rs:51-58) applies from_str (:29-48):
# non-empty, ASCII a-z, 0-9 and '-' only. serde fails the whole file otherwise.


@pytest.mark.parametrize("name", ["Bad Provider", "", "R_X", "na\u00efve", "a\n", "UPPER"])
@pytest.mark.parametrize("field", ["provider", "retriever", "database"])
def test_a_non_component_name_makes_the_file_unparsable(field: str, name: str) -> None:
    body = _kag_file()
    config = body["ok"]["stats"]["config"]
    (config if field == "provider" else config["augmented_generation"])[field] = name
    with pytest.raises(ValueError, match=f"{field} .* is not a component name"):
        decode_result(_text(body))


@pytest.mark.parametrize("name", ["a", "-", "123", "valid-name-123"])  # component.rs:101
def test_component_names_kag_accepts(name: str) -> None:
    body = _kag_file()
    body["ok"]["stats"]["config"]["provider"] = name
    assert decode_result(_text(body)).provider == name


# -- 2. embedding.vec -----------------------------------------------------------------
# rig's Embedding.vec is a Vec<f64> (kag src/retrieval/mod.rs:40; shim in
# /work/shared/kag-real): serde_json wants an array of numbers; integers are read as f64
# (visit_u64/visit_i64), `-0` as -0.0; a number beyond f64 is "number out of range"
# (1e400, or 1 followed by 400 zeros), one below the smallest subnormal is 0.0.


@pytest.mark.parametrize(
    "vec",
    ['"notalist"', "{}", '["a"]', "[1.0, null]", "[1e400]", "[true]", "[false]", "[[1.0]]",
     "[1.0, {}]", "[-1E+400]", "[1e0400]", "[1" + "0" * 400 + "]", "[0.5, 2" + "0" * 320 + ".5]",
     "[1.0, 1e309]", "null", "1.0"],
)  # fmt: skip
def test_a_vec_that_is_not_an_array_of_finite_numbers_is_unparsable(vec: str) -> None:
    with pytest.raises(ValueError, match=r"vec|invalid|expected"):
        decode_result(_with_vec(vec))


@pytest.mark.parametrize(
    "vec",
    ["[]", "[1, -2, 0, -0]", "[-0.0, 1e-400, 1E-5, 2.5e+10, 1e308, -1.7976931348623157e308]",
     "[1" + "0" * 300 + "]", "[0." + "0" * 400 + "1]", "[ 1 , 2 ]"],
)  # fmt: skip
def test_a_vec_of_numbers_serde_reads_as_f64_parses(vec: str) -> None:
    assert decode_result(_with_vec(vec)).retrieval is not None


# -- 3. integer widths ----------------------------------------------------------------
# tokens: Option<u64> (src/cli/generation.rs:85); vertices/relationships/properties: usize,
# 64-bit (src/retrieval/database/mod.rs:41-45); Duration secs u64, nanos u32, and serde's
# Duration adds nanos // 1e9 to secs (overflow past u64 is an error).


def test_tokens_is_a_u64() -> None:
    body = _kag_file()
    for tokens, good in ((2**32, True), (2**64 - 1, True), (2**64, False), (-1, False)):
        body["ok"]["stats"]["config"]["tokens"] = tokens
        if good:
            assert decode_result(_text(body)).result == "B"
        else:
            with pytest.raises(ValueError, match=r"64 bits|>= 0"):
                decode_result(_text(body))


def test_nanos_is_a_u32_and_carries_into_secs() -> None:
    body = _kag_file(secs=1, nanos=2**32 - 1)  # 4294967295 ns = 4 s + 294967295 ns
    assert decode_result(_text(body)).generation_ns == 1 * 10**9 + 2**32 - 1
    with pytest.raises(ValueError, match="<= 4294967295"):
        decode_result(_text(_kag_file(secs=1, nanos=2**32)))


# -- 4. numbers serde_json reads as floats, in integer fields ---------------------------
# serde_json's parse_integer returns F64(-0.0) for `-0` (a negated zero is not an i64
# there), and a fraction or an exponent makes any number a float: a u64 field then
# fails with "invalid type: floating point `-0.0`, expected u64" (the kag run).


@pytest.mark.parametrize("number", ["-0", "1.0", "1e0", "0E+0", "-0.0"])
@pytest.mark.parametrize("field", ["secs", "nanos", "vertices", "tokens", "pair"])
def test_a_float_token_in_an_integer_field_is_unparsable(field: str, number: str) -> None:
    body = _kag_file()
    ok_stats = body["ok"]["stats"]
    if field == "tokens":
        ok_stats["config"]["tokens"] = "@"
    elif field == "vertices":
        ok_stats["retrieval"]["stats"]["embedder"]["database"]["neo4j"]["vertices"] = "@"
    elif field == "pair":
        ok_stats["time"] = [1, "@"]
    else:
        ok_stats["time"][field] = "@"
    text = _text(body).replace('"@"', number)
    with pytest.raises(ValueError, match=r"float|int"):
        decode_result(text)


def test_minus_zero_elsewhere_is_fine() -> None:
    body = _kag_file(prompt="x -0 y")
    body["ok"]["stats"]["config"]["temperature"] = "@"
    body["ok"]["extra"] = "@"  # an unknown field: skipped by serde
    text = _text(body).replace('"@"', "-0")
    assert decode_result(text).result == "B"


# -- 6. nesting -------------------------------------------------------------------------
# serde_json counts the containers a type reads (remaining_depth 128, error when it reaches
# 0: the 128th level fails) and skips an unknown field with IgnoredAny, which its
# ignore_value reads in a loop with no depth limit.


@pytest.mark.slow
def test_a_result_file_with_a_deep_unknown_field_is_accepted(tree: Tree) -> None:
    depth = 100_000
    body = _text(_kag_file())
    deep = body.replace(
        '"result": "B",', '"result": "B", "x": ' + "[" * depth + "]" * depth + ",", 1
    )
    deep_obj = body.replace(
        '"prompt"', '"y": ' + '{"a":' * depth + "1" + "}" * depth + ', "prompt"', 1
    )
    assert decode_result(deep).result == "B"
    assert decode_result(deep_obj).generation_ns == 10**9
    tree.question("ds", "q1", mcq("B"))
    tree.raw("ds", "q1", "deep.json", deep)
    report = grade(tree.datasets_path, tree.results)
    assert report.setup_names == ("deep",)
    assert report.unparsable_files == ()


def test_deep_nesting_where_a_type_reads_is_unparsable() -> None:
    body = _text(_kag_file())
    for depth in (200, 5000):  # ok.result is a String: invalid type at the first '['
        with pytest.raises(ValueError, match=r"Expected `str`|nested too deeply"):
            decode_result(
                body.replace('"result": "B"', '"result": ' + "[" * depth + "]" * depth, 1)
            )


def _datasets(extra_output: str = "", extra_entry: str = "") -> str:
    return (
        '{"ds": {"q1": {"input": "i", %s"output": {"type": "MCQ", %s'  # noqa: UP031
        '"options": {"A": "a"}, "answer": "A"}}}}' % (extra_entry, extra_output)
    )


def test_the_datasets_file_follows_serdes_recursion_limit() -> None:
    # Datasets (dataset.rs:20) is map (1) of map (2) of DatasetEntry (3); `output` is an
    # internally tagged enum (dataset.rs:52), buffered whole: output's object is level 4,
    # so an unknown value nested 123 levels inside it reaches 127 (read), 124 reaches 128
    # (serde_json: "recursion limit exceeded"; kag exits 1).
    for levels, fine in ((123, True), (124, False), (400, False)):
        text = _datasets(extra_output='"x": %s, ' % ("[" * levels + "]" * levels))
        if fine:
            assert parse_datasets(text).get("ds", "q1") is not None
        else:
            with pytest.raises(DatasetsError, match="nested too deeply"):
                parse_datasets(text)
    # An unknown field of the entry itself is IgnoredAny: any depth.
    deep = _datasets(extra_entry='"x": %s, ' % ("[" * 100_000 + "]" * 100_000))
    question = parse_datasets(deep).get("ds", "q1")
    assert question is not None
    assert question.answer == "A"


def test_brackets_in_datasets_strings_are_not_nesting() -> None:
    # Text, not structure: serde reads these strings whole (no depth at all).
    text = _datasets(extra_output='"x": "%s\\"%s\\\\", ' % ("[" * 300, "{" * 300))  # noqa: UP031
    question = parse_datasets(text).get("ds", "q1")
    assert question is not None
    assert question.answer == "A"
