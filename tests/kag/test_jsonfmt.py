"""Floats in kag's JSON: serde_json writes an ``f64`` with the zmij crate (issue #11, item 7).

The rule, from zmij 1.0.23 ``src/lib.rs`` (``write``; ``FIXED_DEC_EXP = -5..=15`` for ``f64``):
with ``e`` the decimal exponent of the first significant digit, ``-5 <= e <= 15`` is written in
plain decimal (an integer value with a ``.0``), anything else as ``d[.ddd]e[+-]X`` with no
padding of the exponent. The expected texts below are either written out by hand from that rule
or built by :func:`_oracle` from NumPy's Dragon4 shortest digits, independently of the code under
test (which takes its digits from ``repr``).
"""

from __future__ import annotations

import json
import math
import random
import struct

import numpy as np
import pytest

from kagreport.kag._jsonfmt import dumps_pretty, format_float


def _oracle(value: float) -> str:
    # Dragon4 (NumPy), shortest round-tripping digits, in the form "d.ddde[+-]X".
    sci = np.format_float_scientific(abs(value), unique=True, trim="-", exp_digits=1)
    mantissa, exponent_text = sci.split("e")
    exponent = int(exponent_text)
    digits = mantissa.replace(".", "")
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if -5 <= exponent <= 15:
        if len(digits) - 1 <= exponent:  # an integer: pad with zeros, then ".0"
            return sign + digits + "0" * (exponent + 1 - len(digits)) + ".0"
        if exponent >= 0:
            return sign + digits[: exponent + 1] + "." + digits[exponent + 1 :]
        return sign + "0." + "0" * (-exponent - 1) + digits
    head = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{head}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # e = 15, the last plain exponent: 16 digits before the point.
        (1e15, "1000000000000000.0"),
        (9007199254740992.0, "9007199254740992.0"),  # 2**53
        (9999999999999998.0, "9999999999999998.0"),  # the float just below 1e16
        (1234567890123456.8, "1234567890123456.8"),
        # e = 16 and above: scientific with "+".
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (1e17, "1e+17"),
        (12345678901234568.0, "1.2345678901234568e+16"),
        (1e22, "1e+22"),
        (1e100, "1e+100"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),  # f64::MAX
        # e = -5, the first plain exponent below 1, and e = -6, scientific.
        (0.00001, "0.00001"),
        (0.000012345, "0.000012345"),
        (1.0000000000000003e-5, "0.000010000000000000003"),  # next float above 1e-5
        (9.999999999999999e-6, "9.999999999999999e-6"),  # e = -6: just below 1e-5
        (0.000001, "1e-6"),
        (1.5e-6, "1.5e-6"),
        (1e-7, "1e-7"),
        (1e-100, "1e-100"),
        (2.2250738585072014e-308, "2.2250738585072014e-308"),  # smallest normal
        (5e-324, "5e-324"),  # smallest subnormal
        # The middle.
        (1.0, "1.0"),
        (12.34, "12.34"),
        (0.1, "0.1"),
        (-1e16, "-1e+16"),
        (-1e-7, "-1e-7"),
        (-0.0, "-0.0"),
    ],
)
def test_thresholds_written_out_from_the_rule(value: float, text: str) -> None:
    assert format_float(value) == text
    assert float(text) == value


def test_oracle_agrees_with_the_hand_written_cases() -> None:
    # The oracle itself, on the cases above that are worked out by hand.
    assert _oracle(1e16) == "1e+16"
    assert _oracle(1e15) == "1000000000000000.0"
    assert _oracle(0.00001) == "0.00001"
    assert _oracle(0.000001) == "1e-6"
    assert _oracle(5e-324) == "5e-324"


def test_every_decimal_exponent_matches_the_oracle() -> None:
    # Both sides of every exponent from the smallest subnormal to f64::MAX.
    values = [5e-324, 1.7976931348623157e308]
    for exponent in range(-323, 309):
        for mantissa in ("1", "9.999999999999999", "1.2345678901234567", "5"):
            value = float(f"{mantissa}e{exponent}")
            if math.isfinite(value) and value:
                values += [value, math.nextafter(value, 0.0), math.nextafter(value, math.inf)]
    for value in values:
        assert format_float(value) == _oracle(value), value
        assert format_float(-value) == _oracle(-value), value


def test_random_bit_patterns_match_the_oracle() -> None:
    rng = random.Random(11)
    checked = 0
    while checked < 20_000:
        value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if not math.isfinite(value):
            continue
        text = format_float(value)
        assert text == _oracle(value), value
        assert float(text) == value
        checked += 1


def test_dumps_pretty_writes_floats_the_same_way() -> None:
    text = dumps_pretty({"big": 1e17, "small": 1e-7, "int": 1e15})
    assert text == '{\n  "big": 1e+17,\n  "small": 1e-7,\n  "int": 1000000000000000.0\n}'
    assert json.loads(text) == {"big": 1e17, "small": 1e-7, "int": 1e15}


def test_dumps_pretty_writes_non_finite_floats_as_null() -> None:
    # serde_json src/ser.rs, Serializer::serialize_f64: FpCategory::Nan | Infinite -> write_null.
    text = dumps_pretty({"nan": math.nan, "inf": math.inf, "list": [-math.inf, 1.5]})
    assert text == '{\n  "nan": null,\n  "inf": null,\n  "list": [\n    null,\n    1.5\n  ]\n}'
