"""Text columns read on demand: :class:`LazyTexts`.

A run of a million kag result files cannot hold every response in memory, and most views
show a page of them at a time. A lazy column is a ``Sequence`` whose values are loaded
when asked for (one at a time, the last few thousand kept), so a ``Run`` costs its code
and number columns only; :meth:`LazyTexts.take` selects rows without loading any.
Equality and serialisation iterate the column, which loads every value once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

__all__ = ["LazyTexts", "take_texts"]

T = TypeVar("T")

#: Values a column keeps after loading them (shared by the columns taken from it).
CACHE_SIZE = 4096


class _Cache(Generic[T]):
    """The loader of a column and its last :data:`CACHE_SIZE` values, by source row."""

    __slots__ = ("load", "values")

    def __init__(self, load: Callable[[int], T]) -> None:
        self.load = load
        self.values: OrderedDict[int, T] = OrderedDict()

    def __call__(self, source_row: int) -> T:
        try:
            value = self.values[source_row]
        except KeyError:
            value = self.load(source_row)
            self.values[source_row] = value
            if len(self.values) > CACHE_SIZE:
                self.values.popitem(last=False)
        return value


class LazyTexts(Sequence[T]):
    """A per-row column whose values are loaded when read.

    Parameters
    ----------
    load : callable
        ``load(source_row) -> value``, for ``0 <= source_row < n``; it must not raise for
        a row of the source (an unreadable value is ``None``).
    n : int
        Rows of the source.

    Notes
    -----
    Iteration, ``==`` (with any sequence) and ``list(column)`` load every value;
    ``column[i]`` loads one; ``column[a:b]`` and :meth:`take` load none.
    """

    __slots__ = ("_cache", "_rows")

    def __init__(self, load: Callable[[int], T], n: int) -> None:
        self._cache: _Cache[T] = _Cache(load)
        self._rows: npt.NDArray[np.intp] = np.arange(n, dtype=np.intp)

    @classmethod
    def _view(cls, cache: _Cache[T], rows: npt.NDArray[np.intp]) -> LazyTexts[T]:
        view = cls.__new__(cls)
        view._cache, view._rows = cache, rows
        return view

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> LazyTexts[T]: ...
    def __getitem__(self, index: int | slice) -> T | LazyTexts[T]:
        if isinstance(index, slice):
            return self._view(self._cache, self._rows[index])
        return self._cache(int(self._rows[index]))

    def __iter__(self) -> Iterator[T]:
        cache = self._cache
        for row in self._rows.tolist():
            yield cache(row)

    def take(self, rows: Sequence[int] | npt.NDArray[np.integer[Any]]) -> LazyTexts[T]:
        """The column of rows ``rows`` (positions in this column), nothing loaded."""
        return self._view(self._cache, self._rows[np.asarray(rows, dtype=np.intp)])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<LazyTexts: {len(self)} rows>"


def take_texts(
    column: Sequence[T] | None, rows: npt.NDArray[np.integer[Any]]
) -> Sequence[T] | None:
    """Rows ``rows`` of a text column: a lazy column stays lazy, another becomes a tuple."""
    if column is None:
        return None
    if isinstance(column, LazyTexts):
        return column.take(rows)
    return tuple(column[i] for i in rows.tolist())
