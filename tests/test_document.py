"""kagreport._document.Document: the one base of the versioned documents (issue #12 item 6)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kagreport._document import Document
from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, RetrievalEvaluation


class _Tally(Document):
    """A two-field document, enough to exercise the base."""

    SCHEMA: ClassVar[str] = "test.Tally"
    SCHEMA_VERSION: ClassVar[int] = 3

    def __init__(self, name: str, items: list[dict[str, Any]]) -> None:
        self.name, self.items = name, items

    def to_dict(self) -> dict[str, Any]:
        return {"schema": self.SCHEMA, "schema_version": 3, "name": self.name, "items": self.items}

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> _Tally:
        return cls(str(data["name"]), [dict(i) for i in data["items"]])


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".toml"])
def test_a_document_round_trips_with_nan_aware_equality(tmp_path: Path, suffix: str) -> None:
    tally = _Tally("t", [{"x": 1.5}, {"x": math.nan}])
    path = tmp_path / f"tally{suffix}"
    tally.write(path)
    back = _Tally.read(path)
    assert back == tally  # NaN equals NaN here
    assert back != _Tally("t", [{"x": 1.5}, {"x": 2.0}])
    assert tally.dumps(suffix[1:]) == path.read_text(encoding="utf-8")


def test_jsonl_writes_one_line_per_item() -> None:
    lines = _Tally("t", [{"x": 1}, {"x": 2}]).dumps("jsonl").splitlines()
    assert len(lines) == 3  # a header line, then the two items
    assert '"record": "header"' in lines[0]


def test_the_schema_and_its_version_are_checked() -> None:
    with pytest.raises(ValueError, match=r"not a test.Tally report \(schema 'other'\)"):
        _Tally.from_dict({"schema": "other", "schema_version": 3})
    with pytest.raises(ValueError, match="schema version True is not supported"):
        _Tally.from_dict({"schema": "test.Tally", "schema_version": True})
    with pytest.raises(ValueError, match="not a valid _Tally: KeyError"):
        _Tally.from_dict({"schema": "test.Tally", "schema_version": 3})


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "tally.toml"
    _Tally("old", []).write(path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="TOML"):
        _Tally("new", [{"x": [None]}]).write(path)  # TOML cannot hold None in a list
    assert path.read_bytes() == before


def test_the_evaluation_documents_share_the_base() -> None:
    for kind in (AnswerEvaluation, RetrievalEvaluation, EvaluationComparison):
        assert issubclass(kind, Document)
        for name in ("dumps", "write", "read", "__eq__"):
            owner = next(k for k in kind.__mro__ if name in vars(k))
            assert owner is Document, (kind, name)
    assert EvaluationComparison.ITEMS_KEY == "metrics"
