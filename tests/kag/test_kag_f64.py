"""Numbers near the largest f64: read or refused as the real kag does.

kag's serde_json is built without ``float_roundtrip``: it multiplies a 19-digit significand
by a power of ten in f64 arithmetic, so a number within a few ulps of the largest f64 can
overflow there (``number out of range``: kag skips the file) where a correctly rounded
parse (Python's ``float``, msgspec) gives a finite value. The verdicts are the real kag's
(``tests/data/kag-f64/record.py``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from kagreport.kag._checks import serde_f64_out_of_range
from kagreport.kag._records import decode_python, decode_result

DATA = Path(__file__).resolve().parents[1] / "data" / "kag-f64"
CASES: list[dict[str, Any]] = json.loads((DATA / "verdicts.json").read_text())["cases"]
_spec = importlib.util.spec_from_file_location("kag_f64_record", DATA / "record.py")
assert _spec is not None
assert _spec.loader is not None
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)


def _reads(data: bytes, decode: Any) -> bool:
    try:
        decode(data)
    except ValueError:
        return False
    return True


def test_the_cases_hold_both_verdicts() -> None:
    # Refused and read numbers each, so that neither a rule refusing all nor one reading
    # all passes.
    assert 10 <= sum(not case["vec"] for case in CASES) <= len(CASES) - 10


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["number"][:40])
def test_serde_json_s_rule_gives_kags_verdict(case: dict[str, Any]) -> None:
    assert serde_f64_out_of_range(case["number"].encode()) == (not case["vec"])


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["number"][:40])
def test_a_file_with_the_number_is_read_as_kag_reads_it(case: dict[str, Any]) -> None:
    in_vec = record.result_file(vec_head=case["number"]).encode()
    as_temperature = record.result_file(temperature=case["number"]).encode()
    for decode in (decode_result, decode_python):  # the compiled scanner, then Python alone
        assert _reads(in_vec, decode) == case["vec"], decode
        assert _reads(as_temperature, decode) == case["temperature"], decode
