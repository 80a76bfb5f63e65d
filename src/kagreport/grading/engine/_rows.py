"""The rows of a grade store, as columns: those it holds (:class:`StoredRows`, live rows
sorted by name) and those one grade adds (:class:`NewRows`).

Plain data, no I/O: the store (:mod:`~kagreport.grading.engine._store`) loads and saves
them, its shards (:mod:`~kagreport.grading.engine._shards`) turn them into Parquet tables
and back, and grading merges them into the report.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kagreport.grading._chunk import ChunkKnown

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MEASURES", "NewRows", "StoredRows"]

#: The six measurements of a row, int64 (-1: absent), in the item table's order.
MEASURES = (
    "generation_ns",
    "retrieval_ns",
    "vertices",
    "relationships",
    "properties",
    "context_bytes",
)


@dataclass
class StoredRows:
    """The live rows of a store, sorted by (dataset, question, setup) name.

    Name columns are codes into the ``*_names`` lists. ``parsed`` is False for a file
    that did not parse (its ``message`` and ``reason`` are kept, its measures are -1).
    """

    dataset_names: list[str]
    question_names: list[str]
    setup_names: list[str]
    answer_names: list[str]
    dataset: npt.NDArray[np.int32]
    question: npt.NDArray[np.int32]
    setup: npt.NDArray[np.int32]
    answer: npt.NDArray[np.int32]
    identity: npt.NDArray[np.int64]
    parsed: npt.NDArray[np.bool_]
    outcome: npt.NDArray[np.uint8]
    measures: dict[str, npt.NDArray[np.int64]]
    exact: dict[int, tuple[int, ...]]
    message: dict[int, tuple[str, str]]
    texts: tuple[list[str | None], npt.NDArray[np.int64], list[str | None]] | None
    folders: dict[tuple[str, str], tuple[int, int]]

    def __len__(self) -> int:
        return len(self.identity)

    @functools.cached_property
    def _answer_codes(self) -> dict[str, int]:
        return {name: code for code, name in enumerate(self.answer_names)}

    def known_rows(
        self, keys: Sequence[tuple[str, str, str]]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The stored rows of each (dataset, question, answer) folder of a chunk, in
        folder order, and the bounds of each folder's rows (``len(keys) + 1`` offsets).

        A stored row counts only if it was graded against the same answer.
        """
        import numpy as np

        answer_codes = self._answer_codes
        spans = [self.folders.get((dataset, question), (0, 0)) for dataset, question, _ in keys]
        starts = np.array([span[0] for span in spans], dtype=np.int64)
        lengths = np.array([span[1] - span[0] for span in spans], dtype=np.int64)
        wanted = np.array([answer_codes.get(answer, -1) for _, _, answer in keys], dtype=np.int64)
        folder = np.repeat(np.arange(len(keys)), lengths)
        ends = np.cumsum(lengths)
        total = int(ends[-1]) if len(ends) else 0
        rows = np.repeat(starts - (ends - lengths), lengths) + np.arange(total)
        same = self.answer[rows] == wanted[folder]
        bounds = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(np.bincount(folder[same], minlength=len(keys)), out=bounds[1:])
        return rows[same], bounds

    def known(self, keys: Sequence[tuple[str, str, str]]) -> ChunkKnown:
        """What the store holds for each (dataset, question, answer) folder of a chunk."""
        rows, bounds = self.known_rows(keys)
        return ChunkKnown(self.setup_names, self.setup[rows], self.identity[rows], bounds)


@dataclass
class NewRows:
    """Rows graded by one run, to append to the store, as columns.

    ``identity``: :func:`identity_hash` of each file; ``parsed`` 1 for a file that
    parsed; ``outcome`` 255 for one that did not; ``measures``: six int64 columns in
    :data:`MEASURES` order, clamped to int64 (-1: absent),
    with the exact values of a row beyond int64 in ``exact`` and the message and
    reason of a file that did not parse in ``message`` (both by row).
    """

    dataset: list[str] = field(default_factory=list)
    question: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    identity: array[int] = field(default_factory=lambda: array("q"))
    parsed: array[int] = field(default_factory=lambda: array("B"))
    outcome: array[int] = field(default_factory=lambda: array("B"))
    measures: tuple[array[int], ...] = field(
        default_factory=lambda: tuple(array("q") for _ in range(6))
    )
    exact: dict[int, tuple[int, ...]] = field(default_factory=dict)
    message: dict[int, tuple[str, str]] = field(default_factory=dict)
    texts: tuple[list[str | None], array[int], list[str | None]] | None = None

    def __len__(self) -> int:
        return len(self.identity)
