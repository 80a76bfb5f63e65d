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
  entry itself is skipped unread.

:func:`check_serde_reads` walks the text once for both, when the cheap passes are not sure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kagreport._errors import DatasetsError
from kagreport.kag._checks import serde_f64_out_of_range
from kagreport.kag._names import is_component_name

__all__ = ["LARGE_NUMBER", "check_serde_reads"]

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
            for field, value in entry if numbers and isinstance(entry, _Pairs) else ():
                if field != "output":
                    continue
                for number in _numbers(value):
                    if serde_f64_out_of_range(number.encode()):
                        raise DatasetsError(
                            f"invalid datasets file {where}: {dataset}/{question}: the number "
                            f"{number[:40]} in `output` is out of range for an f64",
                            path=path,
                        )
