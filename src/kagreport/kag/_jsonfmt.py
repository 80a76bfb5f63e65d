"""JSON text exactly as kag prints it: ``serde_json::to_string_pretty`` with ryu floats."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

__all__ = ["dumps_pretty", "format_float"]


def format_float(value: float) -> str:
    """Format a finite float the way serde_json (ryu) does.

    The digits are the shortest that round-trip (as ``repr``); the layout
    follows ryu's ``format64``: with ``kk`` the position of the decimal point
    relative to the first digit, integers up to 16 digits print as ``d.0``,
    ``0 < kk <= 16`` in plain decimal, ``-5 < kk <= 0`` as ``0.000ddd``, and
    anything else in scientific form without a ``+`` (``1e16``, ``1.5e-7``).

    Raises
    ------
    ValueError
        For NaN or infinities, which JSON cannot hold.
    """
    if not math.isfinite(value):
        raise ValueError(f"{value!r} cannot be written as JSON")
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exponent, int)
    exponent += len(digit_tuple) - len(digits)  # exponent of the last kept digit
    length = len(digits)
    kk = length + exponent
    if exponent >= 0 and kk <= 16:
        text = digits + "0" * exponent + ".0"
    elif 0 < kk <= 16:
        text = digits[:kk] + "." + digits[kk:]
    elif -5 < kk <= 0:
        text = "0." + "0" * -kk + digits
    elif length == 1:
        text = f"{digits}e{kk - 1}"
    else:
        text = f"{digits[0]}.{digits[1:]}e{kk - 1}"
    return sign + text


def _write(value: Any, indent: str, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(format_float(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{\n")
        for index, (key, item) in enumerate(value.items()):
            if index:
                out.append(",\n")
            out.append(inner + json.dumps(str(key), ensure_ascii=False) + ": ")
            _write(item, inner, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[\n")
        for index, item in enumerate(value):
            if index:
                out.append(",\n")
            out.append(inner)
            _write(item, inner, out)
        out.append("\n" + indent + "]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def dumps_pretty(value: Any) -> str:
    """Serialise ``value`` as ``serde_json::to_string_pretty`` would (no trailing newline).

    Two-space indentation, ``": "`` after keys, empty containers as ``{}``
    and ``[]``, non-ASCII characters written as is, floats by
    :func:`format_float`.
    """
    out: list[str] = []
    _write(value, "", out)
    return "".join(out)
