"""Report serialisation (ANSWER_EVALUATION_SPEC.md; PITFALLS.md B11)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kagreport.evaluation import AnswerEvaluation, AnswerItem, RetrievalEvaluation, RetrievalItem


def b11_report() -> AnswerEvaluation:
    return AnswerEvaluation(
        metrics={"llm": 1.0},
        items=(
            AnswerItem("q1", "Q1", "Café – 北京 ✓", "ref", {"llm": 1.0}, latency=0.25),
            AnswerItem("q2", "Q2", None, None, {}, latency=None, error="system error"),
        ),
        judges={"llm": {"kind": "llm", "model": "m"}},
        agreement={"score": math.nan},
        usage={"llm": {"responses": 1, "cached_responses": 0, "input_tokens": 12,
                       "output_tokens": 3, "responses_without_token_counts": 0}},
        errors={"system": 1, "llm": 0},
        settings={"keep_verdicts": False},
        metadata={"note": "a\u2028b", "largest": 1.7976931348623157e308, "tiny": 5e-324,
                  "ns_total": 9007199254740993},
    )  # fmt: skip


def _raise(token: str) -> Any:
    raise ValueError(f"non-JSON token {token}")


def test_b11_json_has_no_nan_tokens_and_exact_big_ints() -> None:
    text = b11_report().dumps("json")
    data = json.loads(text, parse_constant=_raise)
    assert data["agreement"] == {"score": None}
    assert data["metadata"]["ns_total"] == 9007199254740993
    assert "9007199254740993" in text
    assert data["metadata"]["largest"] == 1.7976931348623157e308
    assert data["metadata"]["tiny"] == 5e-324
    assert "Café – 北京 ✓" in text
    assert "\u2028" not in text  # escaped, so JSON-in-JavaScript and splitlines() are safe
    for line in b11_report().dumps("jsonl").splitlines():
        json.loads(line, parse_constant=_raise)


def test_b11_yaml_is_readable_utf8_with_nan() -> None:
    text = b11_report().dumps("yaml")
    assert "Café – 北京 ✓" in text
    assert ".nan" in text
    assert "\\u" not in text


def test_b11_toml_omits_none() -> None:
    text = b11_report().dumps("toml")
    assert "latency = 0.25" in text
    q2 = text[text.index('identifier = "q2"') :]
    assert "answer =" not in q2.split("[[items]]")[0]


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".toml", ".jsonl"])
def test_b11_round_trip(tmp_path: Path, suffix: str) -> None:
    report = b11_report()
    path = tmp_path / f"report{suffix}"
    report.write(path)
    again = AnswerEvaluation.read(path)
    assert again == report
    assert math.isnan(again.agreement["score"])
    assert again.items[1].answer is None
    assert again.items[1].latency is None


def test_failed_write_leaves_the_old_file_intact(tmp_path: Path) -> None:
    path = tmp_path / "report.toml"
    path.write_text("old contents\n")
    bad = AnswerEvaluation(
        metrics={}, items=(), judges={}, agreement={}, usage={}, errors={}, settings={},
        metadata={"list": [1, None]},  # TOML cannot hold None in an array
    )  # fmt: skip
    with pytest.raises(ValueError, match="TOML cannot hold None"):
        bad.write(path)
    assert path.read_text() == "old contents\n"
    assert sorted(os.listdir(tmp_path)) == ["report.toml"]


def test_schema_checks(tmp_path: Path) -> None:
    data = b11_report().to_dict()
    with pytest.raises(ValueError, match="schema version 2"):
        AnswerEvaluation.from_dict({**data, "schema_version": 2})
    with pytest.raises(ValueError, match=r"not a kagreport\.RetrievalEvaluation"):
        RetrievalEvaluation.from_dict(data)
    path = tmp_path / "r.txt"
    with pytest.raises(ValueError, match="suffix"):
        b11_report().write(path)
    (tmp_path / "r.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="mapping"):
        AnswerEvaluation.read(tmp_path / "r.json")


def test_shape_methods() -> None:
    report = b11_report()
    assert report.n_items == 2
    assert report.coverage == {"llm": 1}
    values = report.per_item("llm")
    assert values.shape == (2,)
    assert values[0] == 1.0
    assert np.isnan(values[1])
    with pytest.raises(KeyError, match="no metric 'nope'"):
        report.per_item("nope")
    assert report.to_rows()[1] == {"identifier": "q2", "answer": None, "llm": None,
                                   "latency": None, "error": "system error"}  # fmt: skip


# Round trips with hypothesis: NaN, None and unicode included.
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
_json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), _finite, _text)
_json = st.recursive(
    _json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=8,
)


def _no_none_in_lists(value: Any) -> bool:
    if isinstance(value, list):
        return all(v is not None and _no_none_in_lists(v) for v in value)
    if isinstance(value, dict):
        return all(_no_none_in_lists(v) for v in value.values())
    return True


def _no_none_values(value: Any) -> bool:
    if isinstance(value, dict):
        return all(v is not None and _no_none_values(v) for v in value.values())
    if isinstance(value, list):
        return all(_no_none_values(v) for v in value)
    return True


@st.composite
def answer_items(draw: st.DrawFn) -> AnswerItem:
    return AnswerItem(
        identifier=draw(_text.filter(bool)),
        question=draw(_text),
        answer=draw(st.none() | _text),
        reference=draw(st.none() | _text),
        scores=draw(st.dictionaries(_text.filter(bool), _finite, max_size=3)),
        latency=draw(st.none() | st.floats(0, 1e6)),
        error=draw(st.none() | _text),
        metadata=draw(st.dictionaries(_text, _json, max_size=3)),
    )


@st.composite
def evaluations(draw: st.DrawFn) -> AnswerEvaluation:
    items = draw(st.lists(answer_items(), max_size=4, unique_by=lambda i: i.identifier))
    nan_or_float = st.one_of(st.just(math.nan), _finite)
    return AnswerEvaluation(
        metrics=draw(st.dictionaries(_text, nan_or_float, max_size=3)),
        items=tuple(items),
        judges=draw(st.dictionaries(_text, st.dictionaries(_text, _text, max_size=2), max_size=2)),
        agreement=draw(st.dictionaries(_text, nan_or_float, max_size=2)),
        usage={},
        errors=draw(st.dictionaries(_text, st.integers(0, 10), max_size=2)),
        settings={"seed": draw(st.integers(0, 10))},
        metadata=draw(st.dictionaries(_text, _json, max_size=3)),
        agreement_intervals=draw(
            st.dictionaries(_text, st.tuples(nan_or_float, nan_or_float), max_size=2)
        ),
    )


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "jsonl", "yaml", "toml"])
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(report=evaluations())
def test_round_trip_every_format(tmp_path: Path, fmt: str, report: AnswerEvaluation) -> None:
    if fmt == "toml":
        # TOML has no null: None values in mappings are omitted (documented), and
        # None inside an array cannot be written at all.
        plain = report.to_dict()
        if not (
            _no_none_in_lists(plain)
            and all(_no_none_values(i["metadata"]) for i in plain["items"])
            and _no_none_values(plain["metadata"])
        ):
            return
    path = tmp_path / f"r.{fmt}"
    report.write(path)
    assert AnswerEvaluation.read(path) == report


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=st.lists(
        st.builds(
            RetrievalItem,
            identifier=_text.filter(bool),
            question=_text,
            retrieved=st.lists(_text, max_size=4).map(tuple),
            relevant=st.lists(_text, max_size=3).map(tuple),
        ),
        max_size=4,
        unique_by=lambda i: i.identifier,
    )
)
def test_retrieval_round_trip(tmp_path: Path, items: list[RetrievalItem]) -> None:
    from kagreport.evaluation import evaluate_retrieval

    report = evaluate_retrieval(items, ks=(1, 2))
    for fmt in ("json", "yaml", "toml"):
        path = tmp_path / f"r.{fmt}"
        report.write(path)
        assert RetrievalEvaluation.read(path) == report
    assert yaml.safe_load(report.dumps("yaml"))["schema"] == "kagreport.RetrievalEvaluation"
