"""Checked decoding: a parsed document against a :mod:`msgspec` shape, and the message that
names the path of a bad field (``items[3].scores.correct: expected a number, got "x"``)."""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from kagreport._errors import DocumentError

__all__ = ["convert"]

_T = TypeVar("_T")
_AT = re.compile(r"(?P<what>.*?)(?: - at `\$(?P<where>[^`]*)`)?", re.S)
_MISSING_FIELD = re.compile(r"Object missing required field `(?P<field>[^`]*)`")
_EXPECTED = re.compile(r"Expected `(?P<type>[^`]*)`(?P<bound>.*?)(?:, got (?P<got>.*))?")
_SEGMENT = re.compile(r"\.(?P<key>[^.\[]+)|\[(?P<index>\d+|\.\.\.)\]")
_TYPE_NAMES = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}
_UNSEEN = object()


def convert(data: Any, shape: type[_T], document: str) -> _T:
    """``data`` (a parsed document or part of one) as ``shape``, a :class:`msgspec.Struct`
    (:func:`msgspec.convert`, strict: no string read as a number, no bool as an integer).

    Raises
    ------
    DocumentError
        ``not a valid <document>: <path>: <what>``, the path as ``items[3].scores.correct``
        and the value at fault shown as JSON.
    """
    try:
        return msgspec.convert(data, shape)
    except msgspec.ValidationError as exc:
        where, what = _field_error(exc, data, shape)
        at = f"{where}: " if where else ""
        raise DocumentError(f"not a valid {document}: {at}{what}") from None


def _field_error(error: msgspec.ValidationError, data: Any, shape: Any) -> tuple[str, str]:
    """(path, what) of the ``error`` :func:`msgspec.convert` raised converting ``data``.

    msgspec writes the path as ``$.items[3].scores[...]``, a mapping's key unnamed: it is
    found again as the first key whose entry fails alone, checked against the shape's type.
    """
    message = str(error)
    found = _AT.fullmatch(message)
    what, where = (found["what"], found["where"] or "") if found else (message, "")
    path, value = _resolve(data, shape, where)
    missing = _MISSING_FIELD.fullmatch(what)
    if missing:
        return (f"{path}.{missing['field']}" if path else missing["field"]), "missing"
    expected = _EXPECTED.fullmatch(what)
    if expected:
        names = [_TYPE_NAMES.get(t, f"`{t}`") for t in expected["type"].split(" | ")]
        what = f"expected {' or '.join(names)}{expected['bound']}"
        if value is not _UNSEEN:
            what += f", got {_shown(value)}"
        elif expected["got"]:
            got = expected["got"].strip("`")
            what += f", got {_TYPE_NAMES.get(got, got)}"
    elif what.startswith("Invalid enum value"):
        what = "unknown value" + (f" {_shown(value)}" if value is not _UNSEEN else "")
    else:
        what = what[:1].lower() + what[1:]
    return path, what


def _resolve(data: Any, shape: Any, where: str) -> tuple[str, Any]:
    """The readable path of msgspec's ``where`` in ``data``, and the value there."""
    steps: list[str | int] = []
    value, kind = data, shape  # kind: the type annotation ``value`` was converted to
    segments = list(_SEGMENT.finditer(where))
    for position, segment in enumerate(segments):
        step: str | int | None = segment["key"]
        if step is None and segment["index"] != "...":
            step = int(segment["index"])
        inner = _inner(kind, "..." if step is None else step)
        if step is None and isinstance(value, Mapping) and inner is not None:
            # The entry msgspec rejected: the first that fails alone (it checks in order).
            step = next((k for k, v in value.items() if not _converts(v, inner)), None)
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            rest = "".join(s[0] for s in segments[position:])
            return _path_text(steps) + rest, _UNSEEN
        steps.append(step)  # type: ignore[arg-type]
        kind = inner
    return _path_text(steps), value


def _inner(kind: Any, step: str | int) -> Any:
    """The type of ``step`` (a field, an index, or ``"..."``: a mapping's entry) in ``kind``;
    None if unknown."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Annotated:
        return _inner(args[0], step)
    if origin in (typing.Union, types.UnionType):
        found = [t for t in (_inner(a, step) for a in args if a is not type(None)) if t]
        return found[0] if len(found) == 1 else None
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct) and isinstance(step, str):
        return typing.get_type_hints(kind, include_extras=True).get(step)
    if origin is list and isinstance(step, int):
        return args[0]
    if origin is tuple and isinstance(step, int) and step < len(args):
        return args[step]
    return args[1] if origin is dict and step == "..." else None


def _converts(value: Any, kind: Any) -> bool:
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


def _path_text(steps: list[str | int]) -> str:
    path = ""
    for step in steps:
        path = f"{path}[{step}]" if isinstance(step, int) else _join(path, step)
    return path


def _join(path: str, key: str) -> str:
    if re.fullmatch(r"[^.\[\]\s\"]+", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _shown(value: Any, limit: int = 60) -> str:
    """A value as JSON, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
