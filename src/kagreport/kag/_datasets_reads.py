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
not sure; :func:`entries_from_arrays` rewrites the third into objects, for the typed decode.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kagreport._errors import DatasetsError
from kagreport.kag._checks import serde_f64_out_of_range
from kagreport.kag._names import is_component_name

__all__ = ["LARGE_NUMBER", "check_serde_reads", "entries_from_arrays"]

#: A number that may not be a finite f64 (an exponent of three digits, 200 digits in a
#: row), or bytes in a string that look like one: where this does not match, every number
#: is finite however serde_json rounds it.
LARGE_NUMBER = re.compile(rb"[eE][+-]?[0-9]{3}|[0-9]{200}")


class _Number:
    """A JSON number as written (json's parse_int and parse_float hooks)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its members in file order, repeated keys included."""


def _numbers(value: Any) -> Any:
    """Each number of a JSON value read with the hooks above, in file order."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Number):
            yield item.text
        elif isinstance(item, _Pairs):
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
    document = json.loads(data, object_pairs_hook=_Pairs, parse_int=_Number, parse_float=_Number)
    if not isinstance(document, _Pairs):
        return
    for dataset, entries in document:
        if names and not is_component_name(dataset):
            raise DatasetsError(
                f"invalid datasets file {where}: dataset name {dataset!r} is not a valid name "
                "(only a-z, 0-9 and '-')",
                path=path,
            )
        for question, entry in entries if isinstance(entries, _Pairs) else ():
            if names and not is_component_name(question):
                raise DatasetsError(
                    f"invalid datasets file {where}: question name {question!r} in dataset "
                    f"{dataset!r} is not a valid name (only a-z, 0-9 and '-')",
                    path=path,
                )
            if not numbers:
                continue
            if isinstance(entry, _Pairs):
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


def entries_from_arrays(tree: Any) -> str | None:
    """Rewrite, in ``tree`` (the datasets file decoded untyped), each entry written as an
    array ``[input, output]`` and each MCQ output written as ``["MCQ", options, answer]``
    into the object kag's serde reads it as; None when done, else what serde says is wrong
    (``dataset/question: ...``). Anything else is left for the typed conversion to judge.
    """
    if not isinstance(tree, dict):
        return None
    for dataset, entries in tree.items():
        if not isinstance(entries, dict):
            continue
        for question, entry in entries.items():
            if isinstance(entry, list):
                if len(entry) != 2:
                    return (
                        f"{dataset}/{question}: an entry written as an array has 2 elements "
                        f"(input, output), not {len(entry)}"
                    )
                entry = entries[question] = {"input": entry[0], "output": entry[1]}
            output = entry.get("output") if isinstance(entry, dict) else None
            if not isinstance(output, list):
                continue
            if not output:
                return f"{dataset}/{question}: the output array has no type"
            if output[0] != "MCQ":
                return f"{dataset}/{question}: unknown output type {output[0]!r}, expected 'MCQ'"
            if len(output) != 3:
                return (
                    f"{dataset}/{question}: an MCQ output written as an array has 3 elements "
                    f"(type, options, answer), not {len(output)}"
                )
            entry["output"] = {"type": "MCQ", "options": output[1], "answer": output[2]}
    return None
