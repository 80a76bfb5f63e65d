"""A lazy text column (:class:`kagreport.runs.LazyTexts`): values loaded when read, a
bounded cache, rows taken without loading; and a run's selection keeping it lazy."""

from __future__ import annotations

import numpy as np
import pytest

from kagreport.runs import Run
from kagreport.runs._texts import CACHE_SIZE, LazyTexts


class Loader:
    """``row -> "text <row>"``, counting the loads."""

    def __init__(self) -> None:
        self.loads: list[int] = []

    def __call__(self, row: int) -> str:
        self.loads.append(row)
        return f"text {row}"


def test_values_are_loaded_when_read_and_only_then() -> None:
    load = Loader()
    column = LazyTexts(load, 10)
    assert len(column) == 10
    assert load.loads == []
    assert column[3] == "text 3"
    assert column[-1] == "text 9"
    assert load.loads == [3, 9]
    assert column[3] == "text 3"  # kept
    assert load.loads == [3, 9]
    with pytest.raises(IndexError):
        column[10]
    with pytest.raises(IndexError):
        column[-11]


def test_slices_and_taken_rows_load_nothing() -> None:
    load = Loader()
    column = LazyTexts(load, 10)
    window = column[2:8:2]
    taken = column.take([9, 0, 9])
    again = taken.take(np.array([2, 1]))
    assert load.loads == []
    assert list(window) == ["text 2", "text 4", "text 6"]
    assert list(taken) == ["text 9", "text 0", "text 9"]
    assert list(again) == ["text 9", "text 0"]
    assert window[-1] == "text 6"
    assert sorted(set(load.loads)) == [0, 2, 4, 6, 9]
    assert len(load.loads) == 5  # one load per source row: the cache is shared
    with pytest.raises(IndexError):
        column.take([10])
    with pytest.raises(IndexError):
        column.take([-1])


def test_equality_and_iteration_load_every_value() -> None:
    column = LazyTexts(Loader(), 4)
    expected = ("text 0", "text 1", "text 2", "text 3")
    assert column == expected
    assert column == list(expected)
    assert column != expected[:3]
    assert column != ("text 0", "text 1", "text 2", "other")
    assert column != "text 0"  # a string is not a column
    assert list(reversed(column)) == list(reversed(expected))
    assert "text 2" in column
    assert column.index("text 3") == 3


def test_the_cache_is_bounded() -> None:
    load = Loader()
    column = LazyTexts(load, 3 * CACHE_SIZE)
    assert sum(1 for _ in column) == 3 * CACHE_SIZE
    assert len(load.loads) == 3 * CACHE_SIZE
    column[0]  # long gone from the cache: loaded again
    assert len(load.loads) == 3 * CACHE_SIZE + 1
    column[3 * CACHE_SIZE - 1]  # among the last ones: kept
    assert len(load.loads) == 3 * CACHE_SIZE + 1


def _run(n_items: int, texts: LazyTexts[str | None]) -> Run:
    return Run(
        kind="answers",
        systems=("A", "B"),
        dataset_names=("d",),
        question_names=tuple(f"q{k}" for k in range(n_items)),
        system=np.repeat(np.array([0, 1], dtype=np.int32), n_items),
        dataset=np.zeros(2 * n_items, dtype=np.int32),
        question=np.tile(np.arange(n_items, dtype=np.int32), 2),
        outcome=np.zeros(2 * n_items, dtype=np.int8),
        metrics={"correct": np.ones(2 * n_items)},
        responses=texts,
        errors=texts,
    )


def test_a_selection_of_a_run_stays_lazy() -> None:
    load = Loader()
    run = _run(50, LazyTexts(load, 100))
    part = run.select(["B"])
    assert isinstance(part.responses, LazyTexts)
    assert isinstance(part.errors, LazyTexts)
    assert load.loads == []
    assert len(part.responses) == 50
    # Row 0 of the selection is B's first row, row 50 of the run.
    assert part.responses[0] == "text 50" == run.responses[50]  # type: ignore[index]
    assert load.loads == [50]


def test_a_run_of_lazy_columns_equals_the_run_of_their_values() -> None:
    lazy = _run(3, LazyTexts(Loader(), 6))
    values = tuple(f"text {k}" for k in range(6))
    eager = _run(3, values)  # type: ignore[arg-type]
    assert lazy == eager
    assert Run.loads(lazy.dumps()) == eager
    assert lazy != _run(3, ("x",) * 6)  # type: ignore[arg-type]
