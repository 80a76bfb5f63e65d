"""A non-recursive JSON walk that knows which values kag's serde types look into.

serde_json (kag's parser) counts nesting only where a type reads the value: derived
structs, maps, sequences and the buffered content of an internally tagged enum, and it
fails at the 128th level (``recursion limit exceeded``). An unknown field of a derived
struct is skipped by ``IgnoredAny``, which serde_json reads with a loop and no depth
limit. msgspec recurses (and stops at Python's recursion limit, about 1,000) in both
cases. :func:`strip_ignored` walks the text with an explicit stack, applies serde's
limit where serde applies it, checks integer fields as serde_json reads them, and
returns the text with every ignored value replaced by ``0``, which msgspec can then
decode without recursing.

Schemas are small trees: a ``dict`` of field name to schema (a struct: other keys are
ignored), :class:`MapOf` (every key), :data:`ANY` (read but untyped: counted),
:data:`INT` (an unsigned integer field) and :data:`DURATION` (``{secs, nanos}`` or
``[secs, nanos]``).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple, TypeAlias

from kagreport._errors import KagreportError

__all__ = [
    "ANY",
    "DURATION",
    "INT",
    "RECURSION_LIMIT",
    "SURROGATE_ESCAPE",
    "MapOf",
    "Schema",
    "is_utf8",
    "strip_ignored",
]

#: serde_json's default ``remaining_depth``: the 128th nested container is refused.
RECURSION_LIMIT = 128


class MapOf(NamedTuple):
    """A JSON object read as a map: every value has schema ``value``."""

    value: Schema


class _Leaf(NamedTuple):
    name: str


ANY = _Leaf("any")
INT = _Leaf("int")
DURATION = _Leaf("duration")
_IGNORED = _Leaf("ignored")

Schema: TypeAlias = "dict[str, Schema] | MapOf | _Leaf"

_TOKEN = re.compile(
    rb"[ \t\n\r]*(?:"
    rb'("(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")'  # 1 string
    rb"|(-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)"  # 2 number (3 fraction, 4 exponent)
    rb"|(true|false|null)"  # 5
    rb"|([\[\]{},:]))"  # 6
)
_END = re.compile(rb"[ \t\n\r]*\Z")
_DURATION_FIELDS: dict[str, Schema] = {"secs": INT, "nanos": INT}


class JSONScanError(KagreportError, ValueError):
    """The text is not what kag's serde reads (message says why); a ValueError too."""


def _check_int(token: bytes, fraction: bytes | None, exponent: bytes | None) -> None:
    # serde_json reads a number with a fraction or an exponent as a float, and ``-0`` as
    # the float -0.0 (its integer parser returns F64(-0.0) for a negated zero); a u64
    # field then fails with "invalid type: floating point `...`, expected u64".
    if fraction is not None or exponent is not None or token == b"-0":
        shown = "-0.0" if token == b"-0" else token.decode()
        raise JSONScanError(f"invalid type: floating point `{shown}`, expected an unsigned integer")
    if token.startswith(b"-"):
        raise JSONScanError(f"invalid value: integer `{token.decode()}`, expected u64")


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8."""
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _element(schema: Schema) -> Schema:
    if schema is _IGNORED:
        return _IGNORED
    return INT if schema is DURATION else ANY


def _field(schema: Schema, key: bytes) -> Schema:
    if isinstance(schema, dict):
        name = json.loads(key) if b"\\" in key else key[1:-1].decode("utf-8", "surrogateescape")
        return schema.get(name, _IGNORED)
    if isinstance(schema, MapOf):
        return schema.value
    if schema is DURATION:
        return _field(_DURATION_FIELDS, key)
    return _IGNORED if schema is _IGNORED else ANY


#: A ``\\u`` escape of a UTF-16 surrogate. serde_json skips an ignored field's string
#: without pairing its surrogates (read.rs, ``ignore_escape``), msgspec refuses any lone
#: one: where this matches, a decode error may lie in a value kag ignores.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


# Long (over 80 lines): one tokenizer loop whose states share the container stack; split,
# every token would pay a function call.
def strip_ignored(text: bytes, root: Schema) -> bytes:
    """Check ``text`` as kag's serde reads it and blank out the values it ignores.

    Parameters
    ----------
    text : bytes
        A JSON document.
    root : Schema
        What the document's top-level value is.

    Returns
    -------
    bytes
        ``text`` with each ignored value (an unknown field's) replaced by ``0``.

    Raises
    ------
    JSONScanError
        If the text is not JSON, nests 128 read containers, an :data:`INT` field
        holds a number serde_json reads as a float (``1.0``, ``1e0``, ``-0``), or a key of
        a read object is not UTF-8.
    """
    spans: list[tuple[int, int]] = []
    # One frame per open container: [closer, schema, counted, ignored span start or -1].
    stack: list[tuple[bytes, Schema, bool, int]] = []
    depth = 0
    pos = 0
    schema: Schema = root  # of the next value
    state = "value"  # value | first-value | key | first-key | colon | next
    match = _TOKEN.match
    while True:
        found = match(text, pos)
        if found is None:
            raise JSONScanError(f"not JSON at byte {pos}")
        pos = found.end()
        group = found.lastindex or 0
        token = found.group(group)  # a number's group (2) closes after its parts (3, 4)
        if state == "colon":
            if token != b":":
                raise JSONScanError(f"expected ':' at byte {found.start(group)}")
            state = "value"
            continue
        if state in ("next", "first-value", "first-key") and token in (b"]", b"}"):
            closer, _, counted, start = stack.pop()
            if token != closer:
                raise JSONScanError(f"mismatched {token.decode()!r} at byte {pos - 1}")
            depth -= counted
            if start >= 0:
                spans.append((start, pos))
        elif state == "next":
            if token != b",":
                raise JSONScanError(f"expected ',' at byte {found.start(group)}")
            if stack[-1][0] == b"}":
                state = "key"
            else:
                schema, state = _element(stack[-1][1]), "value"
            continue
        elif state in ("key", "first-key"):
            if group != 1:
                raise JSONScanError(f"expected a key at byte {found.start(group)}")
            # serde_json reads a key of a value it reads as a str (checked UTF-8); it skips
            # an ignored value's keys unchecked.
            if stack[-1][1] is not _IGNORED and not is_utf8(token):
                raise JSONScanError(f"invalid UTF-8 in a key at byte {found.start(group)}")
            schema, state = _field(stack[-1][1], token), "colon"
            continue
        else:  # a value
            start = -1
            if schema is _IGNORED and (not stack or stack[-1][1] is not _IGNORED):
                start = found.start(group)
            if token in (b"[", b"{"):
                counted = schema is not _IGNORED
                depth += counted
                if depth >= RECURSION_LIMIT:
                    raise JSONScanError(
                        f"JSON nested too deeply: recursion limit of {RECURSION_LIMIT} "
                        f"exceeded at byte {found.start(group)}"
                    )
                if token == b"[":
                    stack.append((b"]", schema, counted, start))
                    schema, state = _element(schema), "first-value"
                else:
                    stack.append((b"}", schema, counted, start))
                    state = "first-key"
                continue
            if group == 6:
                raise JSONScanError(f"unexpected {token.decode()!r} at byte {found.start(group)}")
            if schema is INT and group == 2:
                _check_int(token, found.group(3), found.group(4))
            if start >= 0:
                spans.append((start, pos))
        if not stack:
            break
        state = "next"
    if _END.match(text, pos) is None:
        raise JSONScanError(f"trailing characters at byte {pos}")
    if not spans:
        return text
    pieces: list[bytes] = []
    last = 0
    for start, end in spans:
        pieces += (text[last:start], b"0")
        last = end
    pieces.append(text[last:])
    return b"".join(pieces)
