"""Human labels for some items of an evaluation: reading them (a CSV or JSONL file, or a
mapping) and checking them against the items and metrics before any judge runs.

The labels file
---------------
One row per labelled item: its identifier and, per metric it labels, the human score.

* ``.csv``: a header row with an ``identifier`` (or ``id``) column and one column per
  metric of the evaluation (``exact_match``, ``llm.correctness``: the judge metric a column
  corrects is the one of the same name); then one row per item. An empty cell is no label
  (an item may be labelled on one metric only). Cells are trimmed of surrounding spaces.
* ``.jsonl``: one JSON object per line, ``{"identifier": "q1", "exact_match": 1}`` (or
  ``"id"``); ``null`` is no label.

Scores are finite numbers in the metric's own units (a 1-5 rating a judge maps to [0, 1] is
labelled in [0, 1]). An identifier may appear once; blank lines are skipped; the file is
UTF-8 (a byte-order mark is accepted).
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kagreport._errors import FormatError, InputError, NotUTF8Error, decode_utf8
from kagreport._io import read_regular_file

if TYPE_CHECKING:
    from kagreport.evaluation._items import AnswerItem

__all__ = [
    "LABEL_FORMATS",
    "Labels",
    "as_labels",
    "check_labels",
    "checked_labels",
    "read_labels",
]

#: Suffixes of a labels file and their format.
LABEL_FORMATS = {".csv": "csv", ".jsonl": "jsonl"}
#: The column (or key) naming the item, and its short alias.
_KEYS = ("identifier", "id")


@dataclass(frozen=True)
class Labels:
    """Human scores of some items, by metric.

    Attributes
    ----------
    source : str
        The file they were read from, or ``"labels"`` for a mapping.
    scores : dict of str to dict of str to float
        Metric -> item identifier -> human score, in the order read.
    places : dict of str to str
        Item identifier -> where its labels were read (``"labels.csv:4"``), for messages.
    """

    source: str
    scores: dict[str, dict[str, float]]
    places: dict[str, str]


def _score(value: Any, where: str, metric: str) -> float | None:
    """A label's value as a float, None for no label; InputError naming ``where``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"{where}: {metric} {value!r} is not a number") from None
    elif isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{where}: {metric} {value!r} is not a number")
    else:
        number = float(value)
    if not math.isfinite(number):
        raise InputError(f"{where}: {metric} {value!r} is not a finite number")
    return number


class _Builder:
    """Collects labels row by row, refusing a repeated identifier."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.scores: dict[str, dict[str, float]] = {}
        self.places: dict[str, str] = {}

    def add(self, identifier: Any, row: Mapping[str, Any], where: str) -> None:
        if not isinstance(identifier, str) or not identifier:
            raise InputError(f"{where}: the identifier {identifier!r} is not a non-empty string")
        if identifier in self.places:
            raise InputError(
                f"{where}: the identifier {identifier!r} repeats {self.places[identifier]}"
            )
        self.places[identifier] = where
        for metric, value in row.items():
            if not isinstance(metric, str) or not metric:
                raise InputError(f"{where}: the metric name {metric!r} is not a non-empty string")
            number = _score(value, where, metric)
            scores = self.scores.setdefault(metric, {})
            if number is not None:
                scores[identifier] = number

    def labels(self) -> Labels:
        scores = {metric: by_item for metric, by_item in self.scores.items() if by_item}
        if not scores:
            raise InputError(f"{self.source} holds no labels", path=self._path())
        return Labels(self.source, scores, self.places)

    def _path(self) -> str | None:
        return None if self.source == "labels" else self.source


def _key(names: Iterable[Any], where: str) -> str:
    """Which of ``identifier``/``id`` names the item (exactly one must be there)."""
    present = [key for key in _KEYS if key in names]
    if len(present) != 1:
        found = "both" if present else "neither"
        raise InputError(f"{where}: needs an 'identifier' (or 'id') column or key; {found} found")
    return present[0]


def _read_csv(text: str, name: str) -> Labels:
    rows = csv.reader(io.StringIO(text, newline=""))
    builder = _Builder(name)
    header: list[str] | None = None
    key = 0
    for row in rows:
        where = f"{name}:{rows.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        cells = [cell.strip() for cell in row]
        if header is None:
            header = cells
            key = header.index(_key(header, where))
            repeated = sorted({c for c in header if header.count(c) > 1})
            if repeated:
                raise InputError(f"{where}: the column {repeated[0]!r} repeats")
            continue
        if len(cells) != len(header):
            raise InputError(f"{where}: {len(cells)} cells, but the header has {len(header)}")
        values = {h: c for i, (h, c) in enumerate(zip(header, cells, strict=True)) if i != key}
        builder.add(cells[key], values, where)
    return builder.labels()


def _read_jsonl(text: str, name: str) -> Labels:
    builder = _Builder(name)
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):
        where = f"{name}:{number}"
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"{where}: not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise InputError(f"{where}: not a JSON object")
        key = _key(data, where)
        builder.add(data[key], {k: v for k, v in data.items() if k != key}, where)
    return builder.labels()


def read_labels(path: str | os.PathLike[str]) -> Labels:
    """Read a labels file (the module's docstring gives the formats).

    Raises
    ------
    FormatError
        If the suffix is not ``.csv`` or ``.jsonl`` (a usage error).
    InputError
        If the file cannot be read or is not UTF-8, or a row has no identifier, repeats
        one, holds a value that is not a finite number, or has a cell too many or too few;
        if it holds no label at all. One line naming the file and line.
    """
    name = os.fspath(path)
    kind = LABEL_FORMATS.get(os.path.splitext(name)[1].lower())
    if kind is None:
        raise FormatError(
            f"the labels file {name} is neither .csv nor .jsonl (its suffix names the format)",
            path=name,
        )
    try:
        text = decode_utf8(read_regular_file(name), name, "the labels file", bom=True)
    except OSError as exc:
        raise InputError(
            f"cannot read the labels file {name}: {exc.strerror or exc}", path=name
        ) from None
    except NotUTF8Error as exc:
        raise InputError(exc.message, path=name) from None
    try:
        return _read_csv(text, name) if kind == "csv" else _read_jsonl(text, name)
    except InputError as exc:
        raise InputError(exc.message, path=name) from None


def as_labels(value: Any) -> Labels:
    """``labels`` as :func:`~kagreport.evaluate_answers` takes them: a labels file's path,
    a mapping identifier -> {metric: score} (None is no label), or :class:`Labels`.

    Raises
    ------
    TypeError
        For anything else.
    InputError, FormatError
        As :func:`read_labels`, or for a mapping whose values are not mappings of numbers.
    """
    if isinstance(value, Labels):
        return value
    if isinstance(value, str | os.PathLike):
        return read_labels(value)
    if isinstance(value, Mapping):
        builder = _Builder("labels")
        for identifier, row in value.items():
            where = f"labels[{identifier!r}]"
            if not isinstance(row, Mapping):
                raise InputError(f"{where}: not a mapping of metric -> score")
            builder.add(identifier, row, where)
        return builder.labels()
    raise TypeError(
        "labels must be a labels file's path or a mapping identifier -> {metric: score}, "
        f"not {type(value).__name__}"
    )


def check_labels(
    labels: Labels, scorable: Mapping[str, Iterable[str]], identifiers: Iterable[str]
) -> None:
    """Refuse, before any judge runs, labels that cannot correct the evaluation.

    Parameters
    ----------
    labels : Labels
    scorable : mapping of str to iterable of str
        Metric -> the identifiers of the items it can be defined on (those with an answer
        for a judge's metric, those holding it for a score the items already carry).
    identifiers : iterable of str
        Every item's identifier.

    Raises
    ------
    InputError
        If a label names an item the evaluation does not hold or a metric it does not
        compute, or if a metric has fewer than 2 labelled items it can score or none left
        unlabelled (PPI needs both); one line naming the file and line, or the metric.
    """
    path = None if labels.source == "labels" else labels.source
    known = set(identifiers)
    for identifier, where in labels.places.items():
        if identifier not in known:
            raise InputError(f"{where}: no item {identifier!r} in the evaluation", path=path)
    for metric, by_item in labels.scores.items():
        if metric not in scorable:
            names = ", ".join(repr(m) for m in scorable) or "none"
            where = labels.places[next(iter(by_item))]
            raise InputError(
                f"{where}: the evaluation has no metric {metric!r} (its metrics: {names})",
                path=path,
            )
        items = set(scorable[metric])
        labelled = sum(identifier in items for identifier in by_item)
        if labelled < 2:
            raise InputError(
                f"{labels.source}: {metric!r} has {labelled} labelled item(s) it can score "
                "(with an answer); the correction (PPI++) needs at least 2",
                path=path,
            )
        if labelled == len(items):
            raise InputError(
                f"{labels.source}: every item {metric!r} can score is labelled "
                f"({labelled}): the judge has nothing to add; the human mean is the answer",
                path=path,
            )


def checked_labels(labels: Any, rows: Sequence[AnswerItem], owners: Mapping[str, str]) -> Labels:
    """``labels`` (as :func:`as_labels` takes them) read and checked against the items
    and metrics of :func:`~kagreport.evaluate_answers`, before any judging: a judge's
    metric (``owners``: metric -> judge) can be defined on the items with an answer, a
    score the items already carry on the items that hold it (:func:`check_labels`); and
    SciPy, which the corrections' t intervals need (MissingExtraError naming the extra)."""
    from kagreport._optional import need

    human = as_labels(labels)
    need("scipy")
    scorable: dict[str, list[str]] = {
        metric: [row.identifier for row in rows if row.answer is not None] for metric in owners
    }
    for row in rows:
        for name in row.scores:
            if name not in owners:
                scorable.setdefault(name, []).append(row.identifier)
    check_labels(human, scorable, (row.identifier for row in rows))
    return human
