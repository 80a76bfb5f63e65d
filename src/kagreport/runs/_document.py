"""The run's document: ``{"schema": "kagreport.run", "version": 2, ...}``, compact JSON.

Columns are stored whole (codes as integers, metrics and costs as numbers with ``null`` for
NaN), so a document reads back to an equal run. A text column that is the same on every
system's row of an item (a question's text, its options, its gold answer) is stored once
per item, under ``item_texts`` (its ``dataset`` and ``question`` codes name the items);
a column that is not (a response, an explanation, an error; a prompt that differs by
system) once per row, at the top level. Version 1 (no question texts, options or
explanations; every text per row) still reads. The shape is checked by
:func:`kagreport._document.convert`: a bad field raises
:class:`~kagreport._document.DocumentError` naming its path (``metrics.correct[4]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Protocol

import msgspec
import numpy as np
import numpy.typing as npt

from kagreport._document import convert, jsonable
from kagreport._errors import DocumentError
from kagreport._format import json_safe
from kagreport.runs._columns import ITEM_TEXTS, TEXTS

__all__ = ["READABLE", "SCHEMA", "VERSION", "fields_of", "to_dict"]

SCHEMA = "kagreport.run"
VERSION = 2
#: The versions this kagreport reads.
READABLE = (1, 2)

_Code = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
_Outcome = Annotated[int, msgspec.Meta(ge=-1, le=2)]
_Options = list[tuple[str, str]] | None


class _ItemTexts(msgspec.Struct, forbid_unknown_fields=True):
    dataset: list[_Code]
    question: list[_Code]
    question_texts: list[str | None] | None = None
    options: list[_Options] | None = None
    references: list[str | None] | None = None


class _RunShape(msgspec.Struct):
    kind: Literal["answers", "retrieval"]
    systems: list[str]
    dataset_names: list[str]
    question_names: list[str]
    system: list[_Code]
    dataset: list[_Code]
    question: list[_Code]
    outcome: list[_Outcome]
    metrics: dict[str, list[float | None]]
    costs: dict[str, list[float | None]]
    question_texts: list[str | None] | None = None
    options: list[_Options] | None = None
    responses: list[str | None] | None = None
    references: list[str | None] | None = None
    explanations: list[str | None] | None = None
    errors: list[str | None] | None = None
    metadata: dict[str, Any] = {}
    item_texts: _ItemTexts | None = None


class RunColumns(Protocol):
    """What :func:`to_dict` reads of a run (the fields of :class:`kagreport.runs.Run`)."""

    @property
    def kind(self) -> str: ...
    @property
    def systems(self) -> tuple[str, ...]: ...
    @property
    def dataset_names(self) -> tuple[str, ...]: ...
    @property
    def question_names(self) -> tuple[str, ...]: ...
    @property
    def system(self) -> npt.NDArray[np.int32]: ...
    @property
    def dataset(self) -> npt.NDArray[np.int32]: ...
    @property
    def question(self) -> npt.NDArray[np.int32]: ...
    @property
    def outcome(self) -> npt.NDArray[np.int8]: ...
    @property
    def metrics(self) -> Mapping[str, npt.NDArray[np.float64]]: ...
    @property
    def costs(self) -> Mapping[str, npt.NDArray[np.float64]]: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...


def _floats(values: np.ndarray[Any, Any]) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in values.tolist()]


def _items(run: RunColumns) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """The first row of each item (dataset, question) in row order, and each row's item
    (an index into the first array)."""
    if not len(run.system):
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    key = run.dataset.astype(np.int64) * max(1, len(run.question_names)) + run.question
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # items by their first row
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order].astype(np.intp), rank[inverse.reshape(-1)].astype(np.intp)


def _jsonable(name: str, values: list[Any]) -> list[Any]:
    if name == "options":
        return [None if o is None else [list(pair) for pair in o] for o in values]
    return values


def _text_columns(run: RunColumns) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The document's per-row text columns, and its ``item_texts`` (None when no column
    is per item). Lazy columns are read whole, once, row by row across the columns (the
    response and the error of a kag row come from one file read)."""
    names = [name for name in TEXTS if getattr(run, name) is not None]
    rows: dict[str, Any] = dict.fromkeys(TEXTS)
    if not names:
        return rows, None
    values: list[list[Any]] = [[] for _ in names]
    appends = [v.append for v in values]
    for row in zip(*(getattr(run, name) for name in names), strict=True):
        for append, value in zip(appends, row, strict=True):
            append(value)
    first, item = _items(run)
    items: dict[str, Any] = {
        "dataset": run.dataset[first].tolist(),
        "question": run.question[first].tolist(),
        **dict.fromkeys(ITEM_TEXTS),
    }
    per_item = False
    for name, column in zip(names, values, strict=True):
        chosen = [column[i] for i in first.tolist()]
        if name in ITEM_TEXTS and all(
            v == chosen[k] for v, k in zip(column, item.tolist(), strict=True)
        ):
            items[name] = _jsonable(name, chosen)
            per_item = True
        else:
            rows[name] = _jsonable(name, column)
    return rows, (items if per_item else None)


def to_dict(run: RunColumns, *, plain: bool = False) -> dict[str, Any]:
    """``run`` as a version-2 document mapping, keys in a fixed order: NaN kept as NaN, or
    as JSON holds it with ``plain`` (NaN as None; built column by column, faster than
    :func:`~kagreport._format.json_safe` walking a million values). Lazy text columns are
    read whole."""
    column = _floats if plain else (lambda values: values.tolist())
    texts, items = _text_columns(run)
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "kind": run.kind,
        "systems": list(run.systems),
        "dataset_names": list(run.dataset_names),
        "question_names": list(run.question_names),
        "system": run.system.tolist(),
        "dataset": run.dataset.tolist(),
        "question": run.question.tolist(),
        "outcome": run.outcome.tolist(),
        "metrics": {k: column(v) for k, v in run.metrics.items()},
        "costs": {k: column(v) for k, v in run.costs.items()},
        **texts,
        "metadata": json_safe(run.metadata) if plain else jsonable(run.metadata),
        "item_texts": items,
    }


def fields_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`Run` fields of a version-1 or version-2 document mapping (schema and
    version already checked).

    Raises
    ------
    DocumentError
        If a field is missing or malformed: ``not a valid Run: <path>: <what>``.
    """
    shape = convert(data, _RunShape, "Run")
    dataset = np.array(shape.dataset, dtype=np.int32)
    question = np.array(shape.question, dtype=np.int32)
    fields: dict[str, Any] = {
        "kind": shape.kind,
        "systems": tuple(shape.systems),
        "dataset_names": tuple(shape.dataset_names),
        "question_names": tuple(shape.question_names),
        "system": np.array(shape.system, dtype=np.int32),
        "dataset": dataset,
        "question": question,
        "outcome": np.array(shape.outcome, dtype=np.int8),
        "metrics": _columns(shape.metrics, "metrics"),
        "costs": _columns(shape.costs, "costs"),
        **{name: _texts(name, getattr(shape, name)) for name in TEXTS},
        "metadata": shape.metadata,
    }
    if shape.item_texts is not None:
        for name, values in _per_row(shape.item_texts, dataset, question).items():
            if fields[name] is not None:
                raise DocumentError(
                    f"not a valid Run: {name}: given per row and in item_texts.{name}"
                )
            fields[name] = values
    return fields


def _per_row(
    items: _ItemTexts, dataset: npt.NDArray[np.int32], question: npt.NDArray[np.int32]
) -> dict[str, Any]:
    """The item texts of the document, one value per row."""
    if len(items.dataset) != len(items.question):
        raise DocumentError(
            f"not a valid Run: item_texts: {len(items.dataset)} datasets for "
            f"{len(items.question)} questions"
        )
    at = {key: k for k, key in enumerate(zip(items.dataset, items.question, strict=True))}
    found: dict[str, Any] = {}
    if len(at) != len(items.dataset):
        raise DocumentError("not a valid Run: item_texts: an item (dataset, question) twice")
    for name in ITEM_TEXTS:
        given: list[Any] | None = getattr(items, name)
        if given is None:
            continue
        if len(given) != len(at):
            raise DocumentError(
                f"not a valid Run: item_texts.{name}: {len(given)} values for {len(at)} items"
            )
        values = _texts(name, given)
        assert values is not None
        if len(dataset) != len(question):
            raise DocumentError(
                f"not a valid Run: dataset and question hold {len(dataset)} and "
                f"{len(question)} rows"
            )
        try:
            found[name] = tuple(
                values[at[key]] for key in zip(dataset.tolist(), question.tolist(), strict=True)
            )
        except KeyError as exc:
            raise DocumentError(
                f"not a valid Run: item_texts: no entry for the item (dataset, question) {exc}"
            ) from None
    return found


def _columns(group: dict[str, list[float | None]], key: str) -> dict[str, np.ndarray[Any, Any]]:
    found = {}
    for name, values in group.items():
        column = np.array(values, dtype=np.float64)  # None becomes NaN
        infinite = np.flatnonzero(np.isinf(column))
        if infinite.size:
            raise DocumentError(
                f"not a valid Run: {key}.{name}[{infinite[0]}]: expected a finite number "
                f"or null, got {values[infinite[0]]}"
            )
        found[name] = column
    return found


def _texts(name: str, values: list[Any] | None) -> tuple[Any, ...] | None:
    """A text column of the document as the run holds it (options as tuples of pairs)."""
    if values is None:
        return None
    if name == "options":
        return tuple(None if o is None else tuple((k, t) for k, t in o) for o in values)
    return tuple(values)
