"""Datasets files read or refused as the real kag does, where msgspec's decode sees less.

kag reads the names of every copy of a dataset or question given twice (a map keeps the
last copy), and every number inside an entry's ``output`` (an internally tagged enum
buffers it all; one out of an f64's range fails the file), while an unknown field beside
``output`` is skipped unread. The verdicts are the real kag's (``tests/data/kag-datasets/
record.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kagreport import DatasetsError
from kagreport.kag import _datasets
from kagreport.kag._datasets import parse_datasets

DATA = Path(__file__).resolve().parents[1] / "data" / "kag-datasets" / "verdicts.json"
CASES: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))["cases"]


def _reads(text: str) -> bool:
    try:
        parse_datasets(text.encode())
    except DatasetsError:
        return False
    return True


def test_the_cases_hold_both_verdicts() -> None:
    exits = [case["kag_exit"] for case in CASES]
    assert exits.count(0) >= 5
    assert exits.count(1) >= 5


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled pass", "python pass"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case["text"][:60])
def test_a_datasets_file_is_read_or_refused_as_kag_does(
    case: dict[str, Any], compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not compiled:
        monkeypatch.setattr(_datasets, "datasets_structure", None)
    elif _datasets.datasets_structure is None:
        pytest.skip("the C scanner is not built")
    assert _reads(case["text"]) == (case["kag_exit"] == 0), case["kag_stderr"]


# Bytes that are not UTF-8: kag reads the file with serde_json's reader, which checks the
# strings it reads and skips an unknown field's value unchecked. Verdicts observed with the
# real kag (`kag stats -d datasets.json -r results`, exit 0 = read).
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled pass", "python pass"])
@pytest.mark.parametrize(
    ("data", "kag_reads"),
    [
        (b'{"ds":{"q1":{"input":"x","zz":"\xff"}}}', True),
        (b'{"ds":{"q1":{"input":"x","zz":"\xff","w":1e999}}}', True),
        (b'{"ds":{"q1":{"input":"x","zz":{"\xff":1}}}}', True),
        (b'{"ds":{"q1":{"input":"x\xff"}}}', False),
    ],
)
def test_bytes_that_are_not_utf8_are_read_or_refused_as_kag_does(
    data: bytes, kag_reads: bool, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not compiled:
        monkeypatch.setattr(_datasets, "datasets_structure", None)
    try:
        parse_datasets(data)
        read = True
    except DatasetsError:
        read = False
    assert read == kag_reads
