"""Text columns read on demand: ``LazyTexts``.

A run of a million kag result files cannot hold every response in memory, and a view
shows a page of them at a time. A lazy column is a ``Sequence`` whose values are loaded
when asked for (one at a time; the last ``CACHE_SIZE`` kept), so a ``Run`` costs its
code and number columns only. A column over the whole source holds no per-row array at
all; :meth:`LazyTexts.take` (what ``Run.select`` does) selects rows without loading any,
and the columns taken with one row array share it. Equality and serialisation iterate
the column, which loads every value once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

__all__ = ["CACHE_SIZE", "LazyTexts", "take_texts"]

T = TypeVar("T")

#: Values a column keeps after loading them (shared by the columns taken from it): a few
#: pages of a view, whatever the run's size.
CACHE_SIZE = 1024


class _Cache(Generic[T]):
    """The loader of a column and its last ``CACHE_SIZE`` values, by source row."""

    __slots__ = ("load", "values")

    def __init__(self, load: Callable[[int], T]) -> None:
        self.load = load
        self.values: OrderedDict[int, T] = OrderedDict()

    def __call__(self, source_row: int) -> T:
        # Each OrderedDict call is atomic under the GIL: a view's thread and the kernel's
        # may read one column at once (at worst a value is loaded twice).
        try:
            return self.values[source_row]
        except KeyError:
            pass
        value = self.load(source_row)
        self.values[source_row] = value
        while len(self.values) > CACHE_SIZE:
            self.values.popitem(last=False)
        return value


class LazyTexts(Sequence[T]):
    """A per-row column whose values are loaded when read.

    Parameters
    ----------
    load : callable
        ``load(source_row) -> value`` for ``0 <= source_row < n``. It must not raise for a
        row of the source: a value it cannot load is ``None`` (or a text saying why).
    n : int
        Rows of the source.

    Notes
    -----
    ``column[i]`` loads one value; ``column[a:b]`` and :meth:`take` load none; iteration,
    ``list(column)`` and ``==`` (with any sequence of the same values) load every one.
    Memory: the loader and at most ``CACHE_SIZE`` values, plus one int64 per row for a
    column taken or sliced from another (none for the whole source).
    """

    __slots__ = ("_cache", "_n", "_rows")

    def __init__(self, load: Callable[[int], T], n: int) -> None:
        if n < 0:
            raise ValueError(f"a column has 0 rows or more, not {n}")
        self._cache: _Cache[T] = _Cache(load)
        self._n = n
        # None: row i is source row i (no array for a million rows).
        self._rows: npt.NDArray[np.intp] | None = None

    @classmethod
    def _view(cls, cache: _Cache[T], rows: npt.NDArray[np.intp]) -> LazyTexts[T]:
        view = cls.__new__(cls)
        view._cache, view._n, view._rows = cache, len(rows), rows
        return view

    def __len__(self) -> int:
        return self._n

    def _source(self, index: int) -> int:
        if not -self._n <= index < self._n:
            raise IndexError(f"row {index} of a column of {self._n}")
        index %= self._n
        return index if self._rows is None else int(self._rows[index])

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> LazyTexts[T]: ...
    def __getitem__(self, index: int | slice) -> T | LazyTexts[T]:
        if isinstance(index, slice):
            if self._rows is None:
                return self._view(self._cache, np.arange(self._n, dtype=np.intp)[index])
            return self._view(self._cache, self._rows[index])
        return self._cache(self._source(int(index)))

    def __iter__(self) -> Iterator[T]:
        cache = self._cache
        rows: Sequence[int] = range(self._n) if self._rows is None else self._rows.tolist()
        for row in rows:
            yield cache(row)

    def take(self, rows: Sequence[int] | npt.NDArray[np.integer[Any]]) -> LazyTexts[T]:
        """The column of rows ``rows`` (positions in this column, in that order), nothing
        loaded. Taken from a whole-source column, the new column keeps ``rows`` itself
        (an intp array is not copied), so several columns taken with one array share it.

        Raises
        ------
        IndexError
            For a position outside the column.
        """
        positions = np.asarray(rows, dtype=np.intp)
        if positions.ndim != 1:
            raise IndexError(f"rows of a column are one-dimensional, not {positions.shape}")
        if len(positions) and (positions.min() < 0 or positions.max() >= self._n):
            raise IndexError(f"a row outside a column of {self._n}")
        if self._rows is not None:
            positions = self._rows[positions]
        return self._view(self._cache, positions)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<LazyTexts: {len(self)} rows>"


def take_texts(column: Sequence[T] | None, rows: npt.NDArray[np.intp]) -> Sequence[T] | None:
    """Rows ``rows`` of a text column: a lazy column stays lazy, another becomes a tuple."""
    if column is None:
        return None
    if isinstance(column, LazyTexts):
        return column.take(rows)
    return tuple(column[i] for i in rows.tolist())
