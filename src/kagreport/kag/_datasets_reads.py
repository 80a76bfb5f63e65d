"""What kag's serde reads in a datasets file that the typed decode does not see.

msgspec decodes the datasets file into dicts that keep the last copy of a key given twice,
and skips an output's unknown fields. kag's serde reads more (kag ``src/dataset.rs``: a map
of ``ComponentName`` to a map of ``ComponentName`` to ``Question``, whose ``output`` is an
internally tagged enum):

- every key of the two outer levels is read as a component name, the copies of a key given
  twice included (a map keeps the last, after reading each);
- every number inside an entry's ``output`` is read, as the enum buffers the whole value
  before it looks at its tag: a number serde_json cannot hold as an f64 fails the file
  (:func:`~kagreport.kag._checks.serde_f64_out_of_range`), where an unknown field of the
  entry itself is skipped unread;
- a struct may be written as an array of its fields in order: an entry as ``[input,
  output]``, an MCQ output as ``["MCQ", options, answer]`` (the tag first), every field
  given (an ``Option`` too) and no more.

:func:`check_serde_reads` walks the text once for the first two, when the cheap passes are
not sure; :func:`plain_entry` reads an entry in either form, for the typed conversion.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kagreport._errors import DatasetsError
from kagreport.kag._checks import serde_f64_out_of_range
from kagreport.kag._names import is_component_name

__all__ = ["LARGE_NUMBER", "Pairs", "check_serde_reads", "plain_entry", "read_pairs"]

#: A number that may not be a finite f64 (an exponent of three digits, 200 digits in a
#: row), or bytes in a string that look like one: where this does not match, every number
#: is finite however serde_json rounds it.
LARGE_NUMBER = re.compile(rb"[eE][+-]?[0-9]{3}|[0-9]{200}")


class _Number:
    """A JSON number as written (json's parse_int and parse_float hooks)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Pairs(list[tuple[str, Any]]):
    """A JSON object as its members in file order, repeated keys included."""


def _numbers(value: Any) -> Any:
    """Each number of a JSON value read with the hooks above, in file order."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Number):
            yield item.text
        elif isinstance(item, Pairs):
            stack.extend(member for _, member in reversed(item))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def check_serde_reads(
    data: bytes | str, where: str, path: str | None, *, names: bool, numbers: bool
) -> None:
    """Raise :class:`DatasetsError` at the first key or number, in file order, that kag's
    serde refuses: with ``names``, a dataset or question name that is not a component name
    (each copy of a repeated one); with ``numbers``, a number inside an entry's ``output``
    that is out of an f64's range. ``data`` is valid JSON (msgspec has decoded it)."""
    document = read_pairs(data)
    if not isinstance(document, Pairs):
        return
    for dataset, entries in document:
        if names and not is_component_name(dataset):
            raise DatasetsError(
                f"invalid datasets file {where}: dataset name {dataset!r} is not a valid name "
                "(only a-z, 0-9 and '-')",
                path=path,
            )
        for question, entry in entries if isinstance(entries, Pairs) else ():
            if names and not is_component_name(question):
                raise DatasetsError(
                    f"invalid datasets file {where}: question name {question!r} in dataset "
                    f"{dataset!r} is not a valid name (only a-z, 0-9 and '-')",
                    path=path,
                )
            if not numbers:
                continue
            if isinstance(entry, Pairs):
                outputs = [value for field, value in entry if field == "output"]
            else:  # [input, output]: the struct written as an array
                outputs = entry[1:2] if isinstance(entry, list) else []
            for output in outputs:
                for number in _numbers(output):
                    if serde_f64_out_of_range(number.encode()):
                        raise DatasetsError(
                            f"invalid datasets file {where}: {dataset}/{question}: the number "
                            f"{number[:40]} in `output` is out of range for an f64",
                            path=path,
                        )


def plain_entry(entry: Any) -> dict[str, Any] | str | None:
    """One entry of the datasets file, read with the hooks of :func:`check_serde_reads`'s
    walk (objects as :class:`Pairs`), as the plain values kag's serde reads it as: an
    entry written as an array ``[input, output]`` or an object, its MCQ output written as
    ``["MCQ", options, answer]`` or an object (a field given twice: the last, as the
    repeated-field check refuses it apart). A str says what serde says is wrong with an
    array; None: not an entry at all (the typed conversion's message says why)."""
    fields: dict[str, Any]
    if isinstance(entry, list) and not isinstance(entry, Pairs):
        if len(entry) != 2:
            return f"an entry written as an array has 2 elements (input, output), not {len(entry)}"
        fields = {"input": _plain(entry[0]), "output": entry[1]}
    elif isinstance(entry, Pairs):
        fields = {field: _plain(value) if field != "output" else value for field, value in entry}
    else:
        return None
    output = fields.get("output")
    if isinstance(output, list) and not isinstance(output, Pairs):
        if not output:
            return "the output array has no type"
        if output[0] != "MCQ":
            return f"unknown output type {output[0]!r}, expected 'MCQ'"
        if len(output) != 3:
            return (
                "an MCQ output written as an array has 3 elements (type, options, answer), "
                f"not {len(output)}"
            )
        output = {"type": "MCQ", "options": _plain(output[1]), "answer": _plain(output[2])}
    fields["output"] = _plain(output)
    return fields


def _plain(value: Any) -> Any:
    """A value of the hooked walk as plain JSON values (objects as dicts, the last of a
    repeated key kept; numbers as int or float)."""
    if isinstance(value, Pairs):
        return {key: _plain(member) for key, member in value}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, _Number):
        return json.loads(value.text)
    return value


def read_pairs(data: bytes | str) -> Any:
    """The datasets file as the hooked walk reads it (objects as :class:`Pairs`, numbers as
    written); a byte that is not UTF-8 is kept as a lone surrogate, and left for the callers'
    checks."""
    text = data if isinstance(data, str) else data.decode("utf-8", "surrogateescape")
    return json.loads(text, object_pairs_hook=Pairs, parse_int=_Number, parse_float=_Number)
