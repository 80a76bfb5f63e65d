"""Configuration files: TOML read and decoded into a :class:`msgspec.Struct` shape, with
one-line messages that name the file, the key path and what was expected
(``site.toml: `runs[0].compare` must be one of baseline, all-pairs, not "some"``).

The shapes say the types (strict: no string read as a number); the code that builds the
configured objects checks only what a type cannot say (a repeated name, a known format).
"""

from __future__ import annotations

import os
import tomllib
import types
import typing
from typing import Any, TypeVar

import msgspec

from kagreport._document._convert import _TYPE_NAMES, _UNSEEN, _inner, _resolve, _shown
from kagreport._errors import KagreportError, NotUTF8Error
from kagreport._io import read_regular_file

__all__ = ["decode_config", "read_config", "read_toml"]

_T = TypeVar("_T")
# TOML's words for the JSON types msgspec names.
_NAMES = {**_TYPE_NAMES, "object": "a table", "array": "a list"}


def read_toml(
    path: str | os.PathLike[str], what: str, error: type[KagreportError]
) -> dict[str, Any]:
    """The parsed TOML file ``path``; ``what`` names it in messages (``"the judges file"``).

    Raises
    ------
    error
        ``cannot read <what> <path>: <reason>``, ``<what> <path> is not valid TOML: ...``
        or the offset of the first byte that is not UTF-8.
    """
    name = os.fspath(path)
    try:
        return tomllib.loads(read_regular_file(name).decode())
    except OSError as exc:
        raise error(f"cannot read {what} {name}: {exc.strerror or exc}", path=name) from None
    except UnicodeDecodeError as exc:  # tomllib decodes the whole file: the file's offset
        message = NotUTF8Error(what, name, exc.start).message
        raise error(message, path=name) from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {name} is not valid TOML: {exc}", path=name) from None


def decode_config(
    data: Any, shape: type[_T], where: str, error: type[KagreportError], path: Any = None
) -> _T:
    """``data`` (a parsed configuration) as ``shape`` (:func:`msgspec.convert`, strict).

    Raises
    ------
    error
        ``<where>: `<key path>` <problem>``: a key missing, unknown (the known keys
        listed), of the wrong type, or not one of the allowed values.
    """
    try:
        return msgspec.convert(data, shape)
    except msgspec.ValidationError as exc:
        key, problem = _problem(exc, data, shape)
        raise error(f"{where}: `{key}` {problem}", path=path) from None


def read_config(
    path: str | os.PathLike[str], shape: type[_T], what: str, error: type[KagreportError]
) -> _T:
    """:func:`read_toml` then :func:`decode_config`, messages naming ``path``."""
    name = os.fspath(path)
    return decode_config(read_toml(name, what, error), shape, name, error, path=name)


def _problem(error: msgspec.ValidationError, data: Any, shape: Any) -> tuple[str, str]:
    """(key path, problem) of the ``error`` converting ``data`` to ``shape``."""
    message = str(error)
    what, _, where = message.partition(" - at `$")
    where = where.removesuffix("`")
    path, value = _resolve(data, shape, where)
    kind = _kind_at(shape, data, where)
    if what.startswith("Object missing required field `"):
        field = what.split("`")[1]
        return _join(path, field), "is required"
    if what.startswith("Object contains unknown field `"):
        field = what.split("`")[1]
        known = ", ".join(_fields(kind, value))
        return _join(path, field), f"is not a known key; known keys: {known}"
    shown = "" if value is _UNSEEN else f", not {_shown(value)}"
    if what.startswith(("Invalid enum value", "Invalid value")):
        allowed = _allowed(shape, data, where)
        return path, f"must be one of {', '.join(allowed)}{shown}"
    if "of length >= 1" in what or "matching regex" in what:
        return path, "must not be empty"
    if what.startswith("Expected `"):
        names = what.split("`")[1].split(" | ")
        expected = " or ".join(_NAMES.get(n, n) for n in names)
        bound = what.split("`", 2)[2].partition(", got")[0]
        return path, f"must be {expected}{bound}{shown}"
    return path, what[:1].lower() + what[1:]


def _join(path: str, field: str) -> str:
    return f"{path}.{field}" if path else field


def _kind_at(shape: Any, data: Any, where: str) -> Any:
    """The type at msgspec's ``where`` (``.runs[0].compare``), a tagged union resolved by
    the entry's tag; None where unknown."""
    kind, value = shape, data
    for part in where.replace("[", ".[").split("."):
        if not part:
            continue
        step: str | int = int(part[1:-1]) if part.startswith("[") else part
        kind = _inner(_tagged(kind, value), step)
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            value = None
    return _tagged(kind, value)


def _is_union(kind: Any) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType)


def _variants(kind: Any) -> list[Any]:
    """The structs of a tagged union (or ``[kind]``)."""
    args = typing.get_args(kind) if _is_union(kind) else (kind,)
    return [a for a in args if isinstance(a, type) and issubclass(a, msgspec.Struct)]


def _tagged(kind: Any, value: Any) -> Any:
    """Of a tagged union, the struct ``value``'s tag names (else the union itself)."""
    if not _is_union(kind) or not isinstance(value, dict):
        return kind
    for variant in _variants(kind):
        config = variant.__struct_config__
        if config.tag_field and value.get(config.tag_field) == config.tag:
            return variant
    return kind


def _fields(kind: Any, value: Any) -> list[str]:
    found: list[str] = []
    for variant in _variants(_tagged(kind, value)):
        tag = variant.__struct_config__.tag_field
        found += [f for f in ((tag,) if tag else ()) + variant.__struct_fields__ if f not in found]
    return found


def _allowed(shape: Any, data: Any, where: str) -> list[str]:
    """The values the Literal at ``where`` allows, or, at a tag field, the union's tags."""
    kind = _kind_at(shape, data, where)
    for option in typing.get_args(kind) if _is_union(kind) else (kind,):
        if typing.get_origin(option) is typing.Literal:
            return [str(a) for a in typing.get_args(option)]
    parent = _kind_at(shape, data, where.rpartition(".")[0])
    return [str(v.__struct_config__.tag) for v in _variants(parent) if v.__struct_config__.tag]
