"""The run's document: ``{"schema": "kagreport.run", "version": 1, ...}``, compact JSON.

Columns are stored whole (codes as integers, metrics and costs as numbers with ``null`` for
NaN), so a document reads back to an equal run. The shape is checked by
:func:`kagreport._document.convert`: a bad field raises
:class:`~kagreport._document.DocumentError` naming its path (``metrics.correct[4]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
import numpy as np

from kagreport._document import convert, jsonable
from kagreport._errors import DocumentError
from kagreport._format import json_safe

if TYPE_CHECKING:
    from kagreport.runs._model import Run

__all__ = ["SCHEMA", "VERSION", "fields_of", "to_dict"]

SCHEMA = "kagreport.run"
VERSION = 1
_TEXTS = ("responses", "references", "errors")

_Code = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
_Outcome = Annotated[int, msgspec.Meta(ge=-1, le=2)]


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
    responses: list[str | None] | None = None
    references: list[str | None] | None = None
    errors: list[str | None] | None = None
    metadata: dict[str, Any] = {}


def _floats(values: np.ndarray[Any, Any]) -> list[float | None]:
    return [None if math.isnan(v) else v for v in values.tolist()]


def to_dict(run: Run, *, plain: bool = False) -> dict[str, Any]:
    """``run`` as a version-1 document mapping, keys in a fixed order: NaN kept as NaN, or
    as JSON holds it with ``plain`` (NaN as None; built column by column, faster than
    :func:`~kagreport._format.json_safe` walking a million values)."""
    column = _floats if plain else (lambda values: values.tolist())
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
        **{
            name: None if getattr(run, name) is None else list(getattr(run, name))
            for name in _TEXTS
        },
        "metadata": json_safe(run.metadata) if plain else jsonable(run.metadata),
    }


def fields_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`Run` fields of a version-1 document mapping (schema already checked).

    Raises
    ------
    DocumentError
        If a field is missing or malformed: ``not a valid Run: <path>: <what>``.
    """
    shape = convert(data, _RunShape, "Run")
    return {
        "kind": shape.kind,
        "systems": tuple(shape.systems),
        "dataset_names": tuple(shape.dataset_names),
        "question_names": tuple(shape.question_names),
        "system": np.array(shape.system, dtype=np.int32),
        "dataset": np.array(shape.dataset, dtype=np.int32),
        "question": np.array(shape.question, dtype=np.int32),
        "outcome": np.array(shape.outcome, dtype=np.int8),
        "metrics": _columns(shape.metrics, "metrics"),
        "costs": _columns(shape.costs, "costs"),
        **{name: _texts(getattr(shape, name)) for name in _TEXTS},
        "metadata": shape.metadata,
    }


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


def _texts(values: list[str | None] | None) -> tuple[str | None, ...] | None:
    return None if values is None else tuple(values)
