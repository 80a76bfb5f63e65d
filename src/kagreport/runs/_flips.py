"""The items two systems of a run score differently: :func:`flipped_items`.

The same rows :func:`kagreport.runs.compare_setups` reports as ``flips``, with what a page
or a widget shows beside each: the question, its options and gold answer, and for each
side its outcome, score, response, explanation, error and costs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kagreport._errors import KagreportError
from kagreport.runs._columns import OUTCOMES
from kagreport.runs._costs import recorded_columns
from kagreport.runs._model import Run

__all__ = ["FlippedItem", "FlippedSide", "flip_rows", "flipped_items"]


@dataclass(frozen=True)
class FlippedSide:
    """One system's row of a flipped item.

    Attributes
    ----------
    system : str
    outcome : {"correct", "incorrect", "error"} or None
        None when the source records no outcome.
    score : float
        The compared metric's value on this row.
    response, explanation, error : str or None
        As the run holds them (whole: a view cuts what it shows).
    costs : mapping of str to float or None
        Each cost column of the run on this row (seconds, bytes, tokens, ...); None
        where it is unknown, and in a column no row recorded above 0
        (``recorded_columns``).
    """

    system: str
    outcome: str | None
    score: float
    response: str | None
    explanation: str | None
    error: str | None
    costs: Mapping[str, float | None]


@dataclass(frozen=True)
class FlippedItem:
    """An item both systems were scored on, with different scores.

    Attributes
    ----------
    item : str
        ``"dataset/question"`` (the question alone without a dataset).
    dataset, question : str
    question_text : str or None
    options : tuple of (str, str) or None
        The item's multiple-choice options, (key, text) pairs.
    reference : str or None
        The gold answer (an option key for a multiple-choice question).
    candidate, baseline : FlippedSide
    """

    item: str
    dataset: str
    question: str
    question_text: str | None
    options: tuple[tuple[str, str], ...] | None
    reference: str | None
    candidate: FlippedSide
    baseline: FlippedSide


def flip_rows(
    run: Run, metric: str, candidate: str, baseline: str
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], int, int]:
    """The paired rows of two systems that differ on ``metric``, ordered by item label.

    Returns
    -------
    rows_c, rows_b : ndarray of intp, shape (k,)
        The candidate's and the baseline's row of each flipped item.
    only_candidate, only_baseline : int
        Items one system holds and the other does not.

    Raises
    ------
    KagreportError
        For an unknown metric or system.
    """
    values = run.metric(metric)
    for system in (candidate, baseline):
        if system not in run.systems:
            raise KagreportError(
                f"the run holds no system {system!r}; systems: {', '.join(run.systems)}"
            )
    rows_c, keys_c = run.rows_of(candidate)
    rows_b, keys_b = run.rows_of(baseline)
    _, at_c, at_b = np.intersect1d(keys_c, keys_b, assume_unique=True, return_indices=True)
    only_c, only_b = len(keys_c) - len(at_c), len(keys_b) - len(at_b)
    rows_c, rows_b = rows_c[at_c], rows_b[at_b]
    a, b = values[rows_c], values[rows_b]
    flipped = np.flatnonzero((a != b) & ~np.isnan(a) & ~np.isnan(b))
    rows_c, rows_b = rows_c[flipped], rows_b[flipped]
    order = sorted(range(len(rows_c)), key=lambda k: run.item_label(int(rows_c[k])))
    return rows_c[order], rows_b[order], only_c, only_b


def flipped_items(
    run: Run,
    candidate: str,
    baseline: str,
    metric: str | None = None,
    *,
    limit: int | None = None,
) -> tuple[FlippedItem, ...]:
    """The items ``candidate`` and ``baseline`` score differently on ``metric``.

    Parameters
    ----------
    run : Run
    candidate, baseline : str
        Systems of the run.
    metric : str, optional
        A metric column; default ``correct`` when the run has it, else its first metric.
    limit : int, optional
        At most this many items (the first by item label); their texts are the only ones
        read from a lazy run.

    Returns
    -------
    tuple of FlippedItem
        Items both systems hold with the metric defined on both and different values,
        ordered by item label: the items :func:`kagreport.runs.compare_setups` reports as
        ``flips``.

    Raises
    ------
    KagreportError
        For an unknown system or metric, or a negative ``limit``.
    """
    if metric is None:
        if not run.metrics:
            raise KagreportError("the run has no metric")
        metric = run.headline
    if limit is not None and limit < 0:
        raise KagreportError(f"`limit` must be 0 or more, not {limit}")
    rows_c, rows_b, _, _ = flip_rows(run, metric, candidate, baseline)
    if limit is not None:
        rows_c, rows_b = rows_c[:limit], rows_b[:limit]
    values = run.metrics[metric]
    recorded = recorded_columns(run)
    found = []
    for r, s in zip(rows_c.tolist(), rows_b.tolist(), strict=True):
        found.append(
            FlippedItem(
                item=run.item_label(r),
                dataset=run.dataset_names[run.dataset[r]],
                question=run.question_names[run.question[r]],
                question_text=_text(run.question_texts, r),
                options=None if run.options is None else run.options[r],
                reference=_text(run.references, r),
                candidate=_side(run, r, values, recorded),
                baseline=_side(run, s, values, recorded),
            )
        )
    return tuple(found)


def _text(column: Any, row: int) -> str | None:
    return None if column is None else column[row]


def _side(
    run: Run, row: int, values: npt.NDArray[np.float64], recorded: frozenset[str]
) -> FlippedSide:
    code = int(run.outcome[row])
    costs = {}
    for name, column in run.costs.items():
        value = float(column[row])
        # A column no row recorded above 0 is unknown, not 0 (recorded_columns).
        costs[name] = None if math.isnan(value) or name not in recorded else value
    return FlippedSide(
        system=run.systems[run.system[row]],
        outcome=OUTCOMES[code] if code >= 0 else None,
        score=float(values[row]),
        response=_text(run.responses, row),
        explanation=_text(run.explanations, row),
        error=_text(run.errors, row),
        costs=costs,
    )
