"""Retrieval against answer: a 2 x 2 of retrieval hit/miss by answer right/wrong.

Of the items where both are defined, each falls in one cell:

- hit, right: the retriever found the evidence and the generator used it;
- hit, wrong: the evidence was there, the answer still wrong (the generator's error);
- miss, right: answered right without the evidence (prior knowledge, or luck on an MCQ);
- miss, wrong: no evidence, no answer (the retriever's error, at least first).

Each cell's share of the items has a Wilson score interval (Wilson 1927), as have the
accuracies given a hit and given a miss; :func:`kagreport.stats.wilson_interval` computes
them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

    from kagreport.evaluation._report import AnswerEvaluation, RetrievalEvaluation

__all__ = [
    "CELLS",
    "RetrievalAnswerCell",
    "RetrievalAnswerTable",
    "retrieval_answer_from_reports",
    "retrieval_answer_table",
]

#: The cells in table order: (retrieval, answer).
CELLS = (("hit", "right"), ("hit", "wrong"), ("miss", "right"), ("miss", "wrong"))

#: Whose error each wrong cell is, as the views label it.
BLAME = {("hit", "wrong"): "generator", ("miss", "wrong"): "retriever"}


@dataclass(frozen=True)
class RetrievalAnswerCell:
    """One proportion of the table: ``count`` of ``trials`` with its Wilson interval.

    Attributes
    ----------
    retrieval : {"hit", "miss", "any"}
    answer : {"right", "wrong", "any"}
    count, trials : int
    proportion : float
        count / trials; NaN when ``trials`` is 0.
    low, high : float
        The Wilson score interval of ``proportion`` at the table's level; NaN when
        ``trials`` is 0.
    """

    retrieval: str
    answer: str
    count: int
    trials: int
    proportion: float
    low: float
    high: float

    @property
    def blame(self) -> str | None:
        """``"retriever"`` (miss, wrong), ``"generator"`` (hit, wrong), else None."""
        return BLAME.get((self.retrieval, self.answer))


@dataclass(frozen=True)
class RetrievalAnswerTable:
    """The 2 x 2 of retrieval hit/miss by answer right/wrong over the paired items.

    Attributes
    ----------
    cells : tuple of RetrievalAnswerCell, length 4
        In ``CELLS`` order; each a share of all ``n`` items.
    right_given_hit, right_given_miss : RetrievalAnswerCell
        Accuracy among the hits (trials = hits) and among the misses.
    n : int
        Items where both retrieval and answer are defined.
    left_out : int
        Items where one of them is undefined (not counted).
    level : float
        Nominal coverage of the intervals (0.95).
    method : str
        ``"wilson"``.
    retrieval_metric, answer_metric : str
        What "hit" and "right" were read from (for the views' labels), "" if not given.
    """

    cells: tuple[RetrievalAnswerCell, ...]
    right_given_hit: RetrievalAnswerCell
    right_given_miss: RetrievalAnswerCell
    n: int
    left_out: int
    level: float = 0.95
    method: str = "wilson"
    retrieval_metric: str = ""
    answer_metric: str = ""

    def cell(self, retrieval: str, answer: str) -> RetrievalAnswerCell:
        """The cell of (``"hit"``/``"miss"``, ``"right"``/``"wrong"``).

        Raises
        ------
        KeyError
            For another pair.
        """
        for c in self.cells:
            if (c.retrieval, c.answer) == (retrieval, answer):
                return c
        raise KeyError((retrieval, answer))

    @property
    def counts(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """((hit right, hit wrong), (miss right, miss wrong))."""
        c = [cell.count for cell in self.cells]
        return (c[0], c[1]), (c[2], c[3])

    def to_dict(self) -> dict[str, Any]:
        """Plain values (NaN stays NaN) for JSON writers and the views."""
        return {
            "n": self.n,
            "left_out": self.left_out,
            "level": self.level,
            "method": self.method,
            "retrieval_metric": self.retrieval_metric,
            "answer_metric": self.answer_metric,
            "cells": [vars(c) | {"blame": c.blame} for c in self.cells],
            "right_given_hit": vars(self.right_given_hit),
            "right_given_miss": vars(self.right_given_miss),
        }


def _binary(values: npt.ArrayLike, what: str) -> npt.NDArray[Any]:
    """``values`` as float64 of 0, 1 and NaN (undefined); None counts as undefined."""
    import numpy as np

    raw = [math.nan if v is None else v for v in np.asarray(values, dtype=object).ravel()]
    array = np.asarray(raw, dtype=np.float64)
    defined = array[~np.isnan(array)]
    if not np.isin(defined, (0.0, 1.0)).all():
        bad = defined[~np.isin(defined, (0.0, 1.0))][0]
        raise ValueError(f"{what} must be 0 or 1 (or undefined) per item, not {bad!r}")
    return array


def _cell(
    retrieval: str, answer: str, count: int, trials: int, level: float
) -> RetrievalAnswerCell:
    from kagreport.stats import wilson_interval

    bounds = wilson_interval(count, trials, level)
    return RetrievalAnswerCell(
        retrieval,
        answer,
        count,
        trials,
        count / trials if trials else math.nan,
        float(bounds.low),
        float(bounds.high),
    )


def retrieval_answer_table(
    hits: npt.ArrayLike,
    right: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    retrieval_metric: str = "",
    answer_metric: str = "",
) -> RetrievalAnswerTable:
    """Cross retrieval hit/miss with answer right/wrong, item by item.

    Parameters
    ----------
    hits : array_like, shape (n,)
        Per item 1 (or True) when retrieval found the evidence, 0 when not, NaN or None
        when undefined (no gold evidence, a failed retrieval).
    right : array_like, shape (n,)
        Per item 1 when the answer is right, 0 when wrong, NaN or None when undefined;
        aligned with ``hits``.
    confidence : float
        Coverage of the Wilson intervals, in (0, 1).
    retrieval_metric, answer_metric : str
        Names recorded for the views' labels.

    Returns
    -------
    RetrievalAnswerTable

    Raises
    ------
    ValueError
        If the arrays differ in length, hold a value other than 0, 1 or undefined, or
        ``confidence`` is out of range.
    """
    import numpy as np

    h = _binary(hits, "retrieval hits")
    r = _binary(right, "answer correctness")
    if h.shape != r.shape:
        raise ValueError(f"{len(h)} retrieval values for {len(r)} answer values")
    both = ~(np.isnan(h) | np.isnan(r))
    h, r = h[both].astype(bool), r[both].astype(bool)
    n = int(both.sum())
    counts = {
        ("hit", "right"): int(np.count_nonzero(h & r)),
        ("hit", "wrong"): int(np.count_nonzero(h & ~r)),
        ("miss", "right"): int(np.count_nonzero(~h & r)),
        ("miss", "wrong"): int(np.count_nonzero(~h & ~r)),
    }
    n_hit = counts["hit", "right"] + counts["hit", "wrong"]
    n_miss = n - n_hit
    return RetrievalAnswerTable(
        cells=tuple(_cell(ret, ans, counts[ret, ans], n, confidence) for ret, ans in CELLS),
        right_given_hit=_cell("hit", "right", counts["hit", "right"], n_hit, confidence),
        right_given_miss=_cell("miss", "right", counts["miss", "right"], n_miss, confidence),
        n=n,
        left_out=int(len(both) - n),
        level=float(confidence),
        retrieval_metric=retrieval_metric,
        answer_metric=answer_metric,
    )


def retrieval_answer_from_reports(
    retrieval: RetrievalEvaluation,
    answers: AnswerEvaluation,
    *,
    retrieval_metric: str,
    answer_metric: str = "correct",
    confidence: float = 0.95,
) -> RetrievalAnswerTable:
    """:func:`retrieval_answer_table` of one setup's two evaluations, paired by item
    identifier (items only one of them holds are left out and counted in ``left_out``).

    Parameters
    ----------
    retrieval : RetrievalEvaluation
        Its ``retrieval_metric`` (``hit@k``, ``complete@k``: 0/1 per item) decides hit.
    answers : AnswerEvaluation
        Its ``answer_metric`` (0/1 per item, such as ``correct`` or a judge's verdict)
        decides right.

    Raises
    ------
    KeyError
        If a report lacks its metric.
    ValueError
        If a metric is not 0/1 per item (as :func:`retrieval_answer_table`).
    """
    hit_of = dict(
        zip(
            (i.identifier for i in retrieval.items),
            retrieval.per_item(retrieval_metric),
            strict=True,
        )
    )
    right_of = dict(
        zip((i.identifier for i in answers.items), answers.per_item(answer_metric), strict=True)
    )
    shared = [key for key in hit_of if key in right_of]
    only = len(hit_of) + len(right_of) - 2 * len(shared)
    table = retrieval_answer_table(
        [hit_of[k] for k in shared],
        [right_of[k] for k in shared],
        confidence=confidence,
        retrieval_metric=retrieval_metric,
        answer_metric=answer_metric,
    )
    if only:
        from dataclasses import replace

        table = replace(table, left_out=table.left_out + only)
    return table
