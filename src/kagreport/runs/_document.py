"""The run's JSON document: ``{"schema": "kagreport.run", "version": 1, ...}``.

Columns are stored whole (codes as integers, metrics and costs as numbers with
``null`` for NaN), so a document reads back to an equal run. A bad document raises
:class:`KagreportError` naming the source and the JSON path of the field at fault.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import KagreportError

if TYPE_CHECKING:
    from kagreport.runs._model import Run

__all__ = ["SCHEMA", "VERSION", "dumps", "loads"]

SCHEMA = "kagreport.run"
VERSION = 1
_TEXTS = ("responses", "references", "errors")


def _floats(values: np.ndarray[Any, Any]) -> list[float | None]:
    return [None if math.isnan(v) else v for v in values.tolist()]


def dumps(run: Run) -> str:
    """``run`` as a version-1 document (compact, keys in a fixed order)."""
    document: dict[str, Any] = {
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
        "metrics": {k: _floats(v) for k, v in run.metrics.items()},
        "costs": {k: _floats(v) for k, v in run.costs.items()},
        **{
            name: None if getattr(run, name) is None else list(getattr(run, name))
            for name in _TEXTS
        },
        "metadata": dict(run.metadata),
    }
    try:
        return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise KagreportError(f"run metadata is not JSON-compatible: {exc}") from None


class _Bad(Exception):
    def __init__(self, where: str, what: str) -> None:
        self.where, self.what = where, what


def _strings(doc: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = doc.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(key, "must be a list of strings")
    return tuple(value)


def _ints(doc: Mapping[str, Any], key: str, dtype: Any) -> np.ndarray[Any, Any]:
    value = doc.get(key)
    if not isinstance(value, list) or not all(
        type(v) is int and -(2**31) <= v < 2**31 for v in value
    ):
        raise _Bad(key, "must be a list of 32-bit integers")
    return np.array(value, dtype=np.int64).astype(dtype)


def _columns(doc: Mapping[str, Any], key: str) -> dict[str, np.ndarray[Any, Any]]:
    group = doc.get(key)
    if not isinstance(group, dict):
        raise _Bad(key, "must be an object of columns")
    found = {}
    for name, values in group.items():
        if not isinstance(values, list) or not all(
            v is None or (type(v) in (int, float) and math.isfinite(v)) for v in values
        ):
            raise _Bad(f"{key}.{name}", "must be a list of finite numbers or null")
        found[name] = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    return found


def _texts(doc: Mapping[str, Any], key: str) -> tuple[str | None, ...] | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(v is None or isinstance(v, str) for v in value):
        raise _Bad(key, "must be null or a list of strings or nulls")
    return tuple(value)


def loads(text: str, source: str = "<string>") -> Run:
    """The run of a version-1 document.

    Raises
    ------
    KagreportError
        If ``text`` is not JSON, not a ``kagreport.run`` document, of another
        version, or a field is missing or malformed (the message names it).
    """
    from kagreport.runs._model import Run

    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise KagreportError(f"{source}: not a JSON document: {exc}", path=_path(source)) from None
    try:
        if not isinstance(doc, dict):
            raise _Bad("$", "must be a JSON object")
        if doc.get("schema") != SCHEMA:
            raise _Bad("schema", f"must be {SCHEMA!r}, not {doc.get('schema')!r}")
        if doc.get("version") != VERSION:
            raise _Bad("version", f"must be {VERSION} (this kagreport reads version {VERSION})")
        if doc.get("kind") not in ("answers", "retrieval"):
            raise _Bad("kind", "must be 'answers' or 'retrieval'")
        metadata = doc.get("metadata", {})
        if not isinstance(metadata, dict):
            raise _Bad("metadata", "must be an object")
        fields: dict[str, Any] = {
            "kind": doc["kind"],
            "systems": _strings(doc, "systems"),
            "dataset_names": _strings(doc, "dataset_names"),
            "question_names": _strings(doc, "question_names"),
            "system": _ints(doc, "system", np.int32),
            "dataset": _ints(doc, "dataset", np.int32),
            "question": _ints(doc, "question", np.int32),
            "outcome": _ints(doc, "outcome", np.int8),
            "metrics": _columns(doc, "metrics"),
            "costs": _columns(doc, "costs"),
            **{name: _texts(doc, name) for name in _TEXTS},
            "metadata": metadata,
        }
    except _Bad as bad:
        raise KagreportError(
            f"{source}: field {bad.where!r} {bad.what}", path=_path(source)
        ) from None
    try:
        return Run(**fields)
    except KagreportError as exc:
        raise KagreportError(f"{source}: {exc.message}", path=_path(source)) from None


def _path(source: str) -> str | None:
    return None if source == "<string>" else source
