"""JSON text exactly as kag prints it: ``serde_json::to_string_pretty`` (floats by zmij)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from kagreport._errors import InputError, InputTypeError

__all__ = ["dumps_pretty", "format_float"]


def format_float(value: float) -> str:
    """Format a finite float the way serde_json writes an ``f64``.

    serde_json 1.0.15x writes floats with the ``zmij`` crate (1.0.23;
    ``serde_json`` ``src/ser.rs``, ``write_f64`` calls
    ``zmij::Buffer::format_finite``). The digits are the shortest that
    round-trip (as ``repr``; zmij's own test checks its digits against ryu's
    on random bit patterns). The layout (zmij ``src/lib.rs``, ``write``) turns
    on ``e``, the decimal exponent of the first digit (``value = d.ddd x 10^e``):

    - ``-5 <= e <= 15`` (zmij's ``FIXED_DEC_EXP`` for ``f64``), plain decimal:
      an integer value as ``digits`` then zeros then ``.0``
      (``1e15`` -> ``1000000000000000.0``), ``e >= 0`` otherwise as
      ``12.34``, and ``e < 0`` as ``0.0000ddd`` (``1e-5`` -> ``0.00001``);
    - otherwise scientific: the first digit, ``.`` and the other digits if
      there are any, ``e``, the sign (``+`` for ``e >= 0``, ``-`` otherwise)
      and ``|e|`` without leading zeros (``1e+16``, ``1.5e-7``, ``5e-324``,
      ``1.7976931348623157e+308``).

    The thresholds are those of ryu's ``format64``, which serde_json used
    before; only the ``+`` of a positive exponent is new.

    Raises
    ------
    InputError
        A ValueError too: for NaN or infinities, which JSON cannot hold.
    """
    if not math.isfinite(value):
        raise InputError(f"{value!r} cannot be written as JSON")
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
    else:
        mantissa = digits if length == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{mantissa}e{'+' if kk > 0 else '-'}{abs(kk - 1)}"
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
        # serde_json's serialize_f64 writes null for NaN and infinities (src/ser.rs).
        out.append(format_float(value) if math.isfinite(value) else "null")
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
        raise InputTypeError(f"cannot write {type(value).__name__} as JSON")


def dumps_pretty(value: Any) -> str:
    """Serialise ``value`` as ``serde_json::to_string_pretty`` would (no trailing newline).

    Two-space indentation, ``": "`` after keys, empty containers as ``{}``
    and ``[]``, non-ASCII characters written as is, finite floats by
    ``format_float``, NaN and infinities as ``null`` (serde_json's
    ``Serializer::serialize_f64``). No field of kag's report can be
    non-finite (every mean is guarded by a non-zero count, and
    ``Duration::as_secs_f64`` is at most about 1.8e19), so that branch only
    matters to other callers.
    """
    out: list[str] = []
    _write(value, "", out)
    return "".join(out)
