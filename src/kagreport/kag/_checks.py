"""kag's strictness on a decoded success record, checked on its raw text (:func:`check_ok`).

msgspec has decoded the file into the serde types of :mod:`kagreport.kag._envelope`;
what serde refuses and msgspec does not is checked here, once per result file, in as few
passes over the bytes as possible (this runs for every file ``stats`` and ``find`` read):
a key given twice or an enum given two keys (the colon count of
:mod:`kagreport.kag._duplicate_keys`), an embedding vector that is not an array of finite
f64 numbers, a ``-0`` where an integer is read, a provider, retriever or database that
is not a component name, and a ``tokens`` beyond u64.
"""

from __future__ import annotations

import re

import msgspec

from kagreport.kag._duplicate_keys import _repeated_key
from kagreport.kag._envelope import (
    _U64_MAX,
    _UNSET,
    _AugmentedGeneration,
    _DurationObject,
    _Invalid,
    _Ok,
)
from kagreport.kag._jsonscan import JSONScanError, Schema, strip_ignored
from kagreport.kag._names import is_component_name

__all__ = ["check_ok", "check_vec", "serde_f64_out_of_range"]

_NEGATIVE_ZERO = re.compile(rb"-0(?![0-9.eE])")
_GOOD_NAMES: set[str] = set()  # component names seen valid (a tree has few)
_U64_MAX_10, _U64_MAX_DIGIT = divmod(2**64 - 1, 10)
_I32_MAX_10, _I32_MAX_DIGIT = divmod(2**31 - 1, 10)
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1
_POW10 = [float(f"1e{k}") for k in range(309)]  # serde_json's POW10 table (correctly rounded)
#: serde_json's f64 of a number is within a few ulps of the correctly rounded one: only
#: a number whose float is at least this may be one serde_json refuses while float() gives
#: a finite value (the largest f64 is 1.7976931348623157e308).
_NEAR_F64_MAX = 1.7976931348623e308
_STRIDE = 16
_RUN = b"0" * (210 // _STRIDE)
_DIGIT_TO_0 = bytes.maketrans(b"123456789", b"000000000")


def check_ok(text: bytes, ok: _Ok, schema: Schema) -> None:
    """Raise :class:`_Invalid` where kag's serde would refuse the success record ``ok``
    decoded from ``text`` (``schema``: the file's, for the ``-0`` walk)."""
    stats = ok.stats
    config = stats.config
    retrieval = stats.retrieval
    # Typed keys present (envelope 1, ok 2, stats 3 + time 2, config 3, ...) and the
    # colons in the decoded strings: see kagreport.kag._duplicate_keys.
    keys = 11 if type(stats.time) is _DurationObject else 9
    if config.tokens is not _UNSET:
        keys += 1
    augmented = config.augmented_generation
    if augmented is not _UNSET:
        keys += 1 if augmented is None else 3
    vec = None
    end = len(text)
    head = tail = end
    if retrieval is None:
        keys += 1
    elif retrieval is not _UNSET:
        embedder = retrieval.stats.embedder
        # retrieval 1 + 2, its stats 1, embedder 3, embedding 2, database 1, neo4j 4
        keys += 14 + (2 if type(embedder.time) is _DurationObject else 0)
        keys += 2 if type(embedder.database.neo4j.time) is _DurationObject else 0
        vec = embedder.embedding.vec
        # Backwards from the last place its key can be: kag writes little after the vector.
        at = text.rfind(b'"vec"', 0, end - len(vec))
        start = at + 5
        while start < end and text[start] in b" \t\r\n:":
            start += 1
        if at >= 0 and text.startswith(vec, start):
            head, tail = start, start + len(vec)
    if vec is None:
        found = text.count(b":")
    elif head == end:  # the vector's place is not known: the slow check decides
        found = -1
    else:  # leave the vector out: it is most of the file, and has no key
        found = text.count(b":", 0, head) + text.count(b":", tail)
    if found != keys:
        colons = ok.result.count(":") + stats.prompt.count(":") + config.model.count(":")
        if vec is not None:
            colons += retrieval.result.count(":")  # type: ignore[union-attr]
            colons += retrieval.stats.embedder.embedding.document.count(":")  # type: ignore[union-attr]
        if not (
            found == keys + colons
            and text.find(b"\\u003", 0, head) < 0
            and (text.find(b"\\", tail) < 0 or text.find(b"\\u003", tail) < 0)  # memchr first
        ):
            problem = _repeated_key(text)
            if problem is not None:
                raise _Invalid(problem)
    if head != end:
        check_vec(text, head, tail)
    elif vec is not None:
        check_vec(bytes(vec), 0, len(vec))
    # serde_json reads `-0` as the float -0.0, which no integer field takes (see _jsonscan).
    if _negative_zero(text, 0, head) or _negative_zero(text, tail, end):
        try:
            strip_ignored(text, schema)  # raises if it is an integer field's
        except JSONScanError as exc:
            raise _Invalid(str(exc)) from None
    # ComponentName (kag src/cli/component.rs:29-48) types these three fields
    # (src/cli/generation.rs:68, 96, 99): serde refuses the file otherwise.
    if config.provider not in _GOOD_NAMES:
        _check_name("provider", config.provider)
    if type(augmented) is _AugmentedGeneration:
        if augmented.retriever not in _GOOD_NAMES:
            _check_name("retriever", augmented.retriever)
        if augmented.database not in _GOOD_NAMES:
            _check_name("database", augmented.database)
    if type(config.tokens) is int and config.tokens > _U64_MAX:
        raise _Invalid("tokens does not fit in 64 bits")
    # msgspec rounds the f64 correctly; serde_json, by kag's build, may overflow instead.
    if abs(config.temperature) >= _NEAR_F64_MAX and serde_f64_out_of_range(
        bytes(_temperature_text.decode(text).ok.stats.config.temperature)
    ):
        raise _Invalid("Number out of range - at `$.ok.stats.config.temperature`")


# The text of the temperature alone (a second decode, for the rare value near the largest
# f64; the fields not named here are skipped).
class _TemperatureConfig(msgspec.Struct):
    temperature: msgspec.Raw


class _TemperatureStats(msgspec.Struct):
    config: _TemperatureConfig


class _TemperatureOk(msgspec.Struct):
    stats: _TemperatureStats


class _TemperatureEnvelope(msgspec.Struct):
    ok: _TemperatureOk


_temperature_text = msgspec.json.Decoder(_TemperatureEnvelope)


def _check_name(field: str, name: str) -> None:
    if not is_component_name(name):
        raise _Invalid(
            f"{field} {name!r} is not a component name (only a-z, 0-9 and '-', not empty)"
        )
    if len(_GOOD_NAMES) < 4096:
        _GOOD_NAMES.add(name)


def check_vec(text: bytes, head: int, tail: int) -> None:
    """Refuse an embedding vector kag cannot read as ``Vec<f64>``, without building it.

    rig's ``Embedding.vec`` is a ``Vec<f64>``: an array of JSON numbers (integers
    included), each finite as an f64 (serde_json: ``number out of range``). msgspec
    has checked the JSON syntax, so a second ``[``, a ``{``, a ``"`` or the ``u``/``l``
    of ``true``, ``false`` and ``null`` is what would make it something else (each
    looked for with ``memchr``). A number reaches f64's 1.8e308 only with a positive
    exponent of 3 digits or an integer part of 210 digits or more (10**209 * 10**99):
    only a file that may have either has its numbers converted (exactly: Python's
    by serde_json's own arithmetic, :func:`serde_f64_out_of_range`).
    """
    if (
        text[head : head + 1] != b"["
        or text.find(b"[", head + 1, tail) >= 0
        or text.find(b"{", head, tail) >= 0
        or text.find(b'"', head, tail) >= 0
        or text.find(b"u", head, tail) >= 0
        or text.find(b"l", head, tail) >= 0
    ):
        raise _Invalid("embedding.vec is not an array of numbers")
    if _large_exponent(text, head, tail) or _long_number(text, head, tail):
        numbers = text[head + 1 : tail - 1].split(b",")
        if any(serde_f64_out_of_range(number) for number in numbers if number.strip()):
            raise _Invalid("embedding.vec: number out of range")


def _overflows(value: int, digit: int, tenth: int, last: int) -> bool:
    """serde_json's ``overflow!(value * 10 + digit, MAX)``, with ``tenth, last =
    divmod(MAX, 10)``."""
    return value >= tenth and (value > tenth or digit > last)


def serde_f64_out_of_range(number: bytes) -> bool:
    """Whether serde_json refuses the JSON number ``number`` as an f64 (``number out of
    range``), as kag's build of it decides: without its ``float_roundtrip`` feature, the
    first 19 or 20 significant digits make a u64, converted to f64 and multiplied by a
    power of ten from a table, so a number within a few ulps of the largest f64
    (``1.7976931348623158e308``) can overflow there where a correctly rounded parse
    (Python's ``float``, msgspec) gives a finite value.

    ``number`` must be valid JSON number syntax (white space around it is ignored).
    Source: serde_json 1.0.154 ``src/de.rs``: ``parse_integer``, ``parse_long_integer``,
    ``parse_decimal``, ``parse_decimal_overflow``, ``parse_exponent``,
    ``parse_exponent_overflow``, ``f64_from_parts`` (the ``not(float_roundtrip)`` ones).
    """
    text = number.strip()
    end = len(text)
    i = 1 if text[:1] == b"-" else 0
    significand = exponent = 0
    long = False  # parse_long_integer: the integer's further digits only raise the exponent
    while i < end and 48 <= text[i] <= 57:
        digit = text[i] - 48
        if not long and _overflows(significand, digit, _U64_MAX_10, _U64_MAX_DIGIT):
            long = True
        if long:
            exponent += 1
        else:
            significand = significand * 10 + digit
        i += 1
    if i < end and text[i] == 46:  # '.': parse_decimal, from the exponent so far
        i += 1
        while i < end and 48 <= text[i] <= 57:
            digit = text[i] - 48
            if _overflows(significand, digit, _U64_MAX_10, _U64_MAX_DIGIT):
                while i < end and 48 <= text[i] <= 57:  # parse_decimal_overflow
                    i += 1
                break
            significand = significand * 10 + digit
            exponent -= 1
            i += 1
    if i < end and text[i] in b"eE":
        i += 1
        positive = text[i : i + 1] != b"-"
        i += text[i : i + 1] in (b"+", b"-")
        power = 0
        while i < end and 48 <= text[i] <= 57:
            digit = text[i] - 48
            if _overflows(power, digit, _I32_MAX_10, _I32_MAX_DIGIT):
                return significand != 0 and positive  # parse_exponent_overflow
            power = power * 10 + digit
            i += 1
        exponent = max(_I32_MIN, min(_I32_MAX, exponent + power if positive else exponent - power))
    value = float(significand)  # u64 as f64: round to nearest, ties to even
    while True:  # f64_from_parts
        if abs(exponent) < len(_POW10):
            return exponent >= 0 and value * _POW10[exponent] == float("inf")
        if value == 0.0:
            return False
        if exponent >= 0:
            return True
        value /= 1e308
        exponent += 308


def _large_exponent(text: bytes, head: int, tail: int) -> bool:
    for letter in b"eE":
        at = text.find(letter, head, tail)
        while at >= 0:
            # e+123, e123 (3 digits or more, leading zeros included); e-400 is 0.0
            start = at + 1 + (text[at + 1] == 43)  # '+'
            if text[start : start + 3].isdigit():
                return True
            at = text.find(letter, at + 1, tail)
    return False


def _long_number(text: bytes, head: int, tail: int) -> bool:
    """Whether 210 digits or more may be in a row (no false negative; cheap).

    Such a run holds at least 13 of the bytes taken every 16th (210 // 16), all digits.
    """
    return _RUN in text[head:tail:_STRIDE].translate(_DIGIT_TO_0)


def _negative_zero(text: bytes, start: int, end: int) -> bool:
    """Whether a ``-0`` that is a whole number (not ``-0.5``) may be in text[start:end]."""
    # re: faster than bytes.find here; search() first, as most files have none.
    found = _NEGATIVE_ZERO.search(text, start, end)
    while found is not None:
        # A value follows ':' (a field), '[' or ',' (the [secs, nanos] pair); in a
        # string ("a -0 b") it rarely does: those need no walk of the whole file.
        before = text[max(found.start() - 64, 0) : found.start()].rstrip(b" \t\r\n")
        if before[-1:] in (b":", b"[", b",", b""):
            return True
        found = _NEGATIVE_ZERO.search(text, found.end(), end)
    return False
