"""A grade store's Parquet tables: the rows of its shards, the newest of each file kept.

NumPy and pyarrow only here (imported when a store is read or written).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt

from kagreport._errors import StoreError
from kagreport.grading.engine._rows import MEASURES, NewRows, StoredRows

__all__ = ["live_rows", "merged", "table_of_new", "table_of_rows"]


class _DamagedShardError(StoreError, ValueError):
    """A shard's column with missing values or values out of range (a ValueError too); the
    store says so naming its folder."""


def _codes(column: Any) -> tuple[npt.NDArray[np.int32], list[str]]:
    """A string column of a table with unified dictionaries as (codes, names)."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    indices = column.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    return indices, [str(name) for name in column.dictionary.to_pylist()]


def _ranked(codes: npt.NDArray[np.int32], names: list[str]) -> npt.NDArray[np.int64]:
    """Codes replaced by each name's rank in name order (so sorting them sorts by name)."""
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    return rank[codes] if len(codes) else np.zeros(0, dtype=np.int64)


# Over 60 lines: one pass from the concatenated shards to the sorted live table.
def _check(table: Any) -> None:
    """Raise _DamagedShardError unless every column a stored row needs is whole and in range
    (a shard rewritten by hand or by another program must not make a wrong report)."""
    import pyarrow.compute as pc

    needed = ("dataset", "question", "setup", "answer", "identity", "parsed", "outcome")
    for name in (*needed, *MEASURES):
        if table.column(name).null_count:
            raise _DamagedShardError(f"column {name!r} has missing values")
    outcome = table.column("outcome").to_numpy(zero_copy_only=False).astype(np.int64)
    if not np.isin(outcome, (0, 1, 2, 255)).all():
        raise _DamagedShardError("column 'outcome' holds a value that is not an outcome")
    parsed = table.column("parsed").to_numpy(zero_copy_only=False).astype(bool)
    if ((outcome == 255) == parsed).any():
        raise _DamagedShardError("columns 'parsed' and 'outcome' disagree")
    for name in MEASURES:
        if len(table) and pc.min(table.column(name)).as_py() < -1:
            raise _DamagedShardError(f"column {name!r} holds a negative measurement")
    for value in table.column("exact").to_pylist():
        if value is not None:
            values = json.loads(value)
            if not (
                isinstance(values, list)
                and len(values) == len(MEASURES)
                and all(type(v) is int and v >= -1 for v in values)
            ):
                raise _DamagedShardError(
                    "column 'exact' holds something other than six measurements"
                )


def live_rows(table: Any, keep_text: bool | int) -> StoredRows | None:
    """The newest row of each (dataset, question, setup), sorted by name."""
    if len(table) == 0:
        return None
    _check(table)
    table = table.unify_dictionaries()
    names = {}
    codes = {}
    for column in ("dataset", "question", "setup", "answer"):
        codes[column], names[column] = _codes(table.column(column))
    shard = table.column("shard").to_numpy()
    keys = [_ranked(codes[c], names[c]) for c in ("dataset", "question", "setup")]
    # Sorted by name; within a key, the newest shard first.
    order = np.lexsort((-shard, keys[2], keys[1], keys[0]))
    sorted_keys = [k[order] for k in keys]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (
        (sorted_keys[0][1:] != sorted_keys[0][:-1])
        | (sorted_keys[1][1:] != sorted_keys[1][:-1])
        | (sorted_keys[2][1:] != sorted_keys[2][:-1])
    )
    rows = order[first]

    def numbers(name: str, dtype: Any) -> Any:
        return table.column(name).to_numpy(zero_copy_only=False)[rows].astype(dtype)

    def strings(name: str) -> list[Any]:
        values = table.column(name).to_pylist()
        return [values[i] for i in rows]

    dataset, question = codes["dataset"][rows], codes["question"][rows]
    folders: dict[tuple[str, str], tuple[int, int]] = {}
    if len(rows):
        change = np.flatnonzero((np.diff(dataset) != 0) | (np.diff(question) != 0)) + 1
        starts = np.concatenate(([0], change))
        ends = np.concatenate((change, [len(rows)]))
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            key = (names["dataset"][dataset[start]], names["question"][question[start]])
            folders[key] = (start, end)
    exact = {
        i: tuple(json.loads(value)) for i, value in enumerate(strings("exact")) if value is not None
    }
    message = {
        i: (m, r)
        for i, (m, r) in enumerate(zip(strings("message"), strings("reason"), strict=True))
        if m is not None
    }
    texts = None
    if keep_text is not False:
        texts = (
            strings("response"),
            numbers("response_length", np.int64),
            strings("error"),
        )
    return StoredRows(
        dataset_names=names["dataset"],
        question_names=names["question"],
        setup_names=names["setup"],
        answer_names=names["answer"],
        dataset=dataset,
        question=question,
        setup=codes["setup"][rows],
        answer=codes["answer"][rows],
        identity=numbers("identity", np.int64),
        parsed=numbers("parsed", np.bool_),
        outcome=numbers("outcome", np.uint8),
        measures={m: numbers(m, np.int64) for m in MEASURES},
        exact=exact,
        message=message,
        texts=texts,
        folders=folders,
    )


def merged(
    stored: StoredRows | None, kept: npt.NDArray[np.int64], new: NewRows, keep_text: bool | int
) -> StoredRows | None:
    """The live rows after a grade: the kept stored rows and the new ones, sorted."""
    import pyarrow as pa

    parts = []
    if stored is not None and len(kept):
        parts.append(table_of_rows(stored, keep_text, kept))
    if len(new):
        parts.append(table_of_new(new, keep_text))
    if not parts:
        return None
    table = pa.concat_tables(parts, promote_options="permissive")
    table = table.append_column("shard", pa.array([0] * len(table), pa.int32()))
    return live_rows(table, keep_text)


def _exact_text(values: tuple[int, ...] | None) -> str | None:
    return None if values is None else json.dumps(list(values))


def table_of_new(new: NewRows, keep_text: bool | int) -> Any:
    import pyarrow as pa

    n = len(new)

    def sparse(values: dict[int, Any]) -> list[Any]:
        column: list[Any] = [None] * n
        for row, value in values.items():
            column[row] = value
        return column

    messages = sparse(new.message)
    columns: dict[str, Any] = {
        "dataset": pa.array(new.dataset, pa.string()).dictionary_encode(),
        "question": pa.array(new.question, pa.string()).dictionary_encode(),
        "setup": pa.array(new.setup, pa.string()).dictionary_encode(),
        "answer": pa.array(new.answer, pa.string()).dictionary_encode(),
        "identity": pa.array(np.frombuffer(new.identity, dtype=np.int64), pa.int64()),
        "parsed": pa.array(np.frombuffer(new.parsed, dtype=np.uint8).astype(bool), pa.bool_()),
        "outcome": pa.array(np.frombuffer(new.outcome, dtype=np.uint8), pa.uint8()),
    }
    for name, values in zip(MEASURES, new.measures, strict=True):
        columns[name] = pa.array(np.frombuffer(values, dtype=np.int64), pa.int64())
    columns["exact"] = pa.array(
        sparse({row: _exact_text(m) for row, m in new.exact.items()}), pa.string()
    )
    columns["message"] = pa.array([m and m[0] for m in messages], pa.string())
    columns["reason"] = pa.array([m and m[1] for m in messages], pa.string())
    if keep_text is not False and new.texts is not None:
        columns["response"] = pa.array(new.texts[0], pa.string())
        columns["response_length"] = pa.array(np.frombuffer(new.texts[1], dtype=np.int64))
        columns["error"] = pa.array(new.texts[2], pa.string())
    return pa.table(columns)


def table_of_rows(
    rows: StoredRows, keep_text: bool | int, which: npt.NDArray[np.int64] | None = None
) -> Any:
    import pyarrow as pa

    index = np.arange(len(rows)) if which is None else which

    def named(codes: npt.NDArray[np.int32], names: list[str]) -> Any:
        dictionary = pa.array(names, pa.string())
        return pa.DictionaryArray.from_arrays(pa.array(codes[index], pa.int32()), dictionary)

    positions = index.tolist()
    columns: dict[str, Any] = {
        "dataset": named(rows.dataset, rows.dataset_names),
        "question": named(rows.question, rows.question_names),
        "setup": named(rows.setup, rows.setup_names),
        "answer": named(rows.answer, rows.answer_names),
        "identity": pa.array(rows.identity[index], pa.int64()),
        "parsed": pa.array(rows.parsed[index], pa.bool_()),
        "outcome": pa.array(rows.outcome[index], pa.uint8()),
    }
    for name in MEASURES:
        columns[name] = pa.array(rows.measures[name][index], pa.int64())
    columns["exact"] = pa.array([_exact_text(rows.exact.get(i)) for i in positions], pa.string())
    messages = [rows.message.get(i) for i in positions]
    columns["message"] = pa.array([m and m[0] for m in messages], pa.string())
    columns["reason"] = pa.array([m and m[1] for m in messages], pa.string())
    if keep_text is not False and rows.texts is not None:
        columns["response"] = pa.array([rows.texts[0][i] for i in positions], pa.string())
        columns["response_length"] = pa.array(rows.texts[1][index], pa.int64())
        columns["error"] = pa.array([rows.texts[2][i] for i in positions], pa.string())
    return pa.table(columns)
