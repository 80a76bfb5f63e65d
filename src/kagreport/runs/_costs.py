"""The cost axes of a run: one table of names shared by the run's views and the charts.

A cost axis (kag's ``"retrieval"``, ``"generation"``, ``"context"``, ``"graph"``; other
tools' ``"latency"``, ``"tokens"``, ``"input_tokens"``, ``"output_tokens"``, ``"money"``) names the
per-item cost columns of a :class:`~kagreport.runs.Run` it sums, the column of
:func:`kagreport.frames.stats_frame` that holds its kag mean, and its axis title.
:func:`kagreport.runs.cost_frontier` and the accuracy-against-cost chart read it from
here, so both accept the same names.

``"latency"`` is not a column of its own: a tool's per-item wall time (promptfoo's
``latencyMs``, Inspect's ``total_time``) is stored as ``generation_secs``, so
``"latency"`` and ``"generation"`` are two titles of one column. ``"tokens"`` sums
``input_tokens`` and ``output_tokens`` and needs both: a run with only one of them is
refused (one-line error naming the missing column) rather than drawn at half its cost;
ask for ``"input_tokens"`` or ``"output_tokens"`` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from kagreport._errors import KagreportError
from kagreport.runs._model import Run

__all__ = ["COSTS", "CostAxis", "cost_axis", "item_costs", "recorded_columns", "recorded_costs"]


@dataclass(frozen=True)
class CostAxis:
    """One cost axis of the accuracy-against-cost plane.

    Attributes
    ----------
    name : str
        The short name (``"retrieval"``).
    columns : tuple of str
        The run's per-item cost columns whose sum is an item's cost on this axis
        (``vertices + relationships + properties`` for ``"graph"``).
    stats_column : str
        The column of :func:`kagreport.frames.stats_frame` holding kag's mean.
    title : str
        Axis title, with the unit.
    retrieval : bool
        Whether only retrieving costs anything on it: a system that answered
        without retrieving (no retrieval sample) costs exactly 0.
    """

    name: str
    columns: tuple[str, ...]
    stats_column: str
    title: str
    retrieval: bool


#: The cost axes by short name, in the order the site tries them.
COSTS: Mapping[str, CostAxis] = MappingProxyType(
    {
        "retrieval": CostAxis(
            "retrieval",
            ("retrieval_secs",),
            "avg_retrieval_secs",
            "Mean retrieval time (s)",
            True,
        ),
        "generation": CostAxis(
            "generation",
            ("generation_secs",),
            "avg_generation_secs",
            "Mean generation time (s)",
            False,
        ),
        "context": CostAxis(
            "context",
            ("context_bytes",),
            "avg_context_length",
            "Mean context length (bytes)",
            False,
        ),
        "graph": CostAxis(
            "graph",
            ("vertices", "relationships", "properties"),
            "avg_graph_elements",
            "Mean graph elements retrieved",
            True,
        ),
        # Other tools' costs (promptfoo, Inspect, ...). "latency" is the same column as
        # "generation" (one name per column: a tool's per-item latency is recorded as
        # generation_secs), under the title those tools use.
        "latency": CostAxis(
            "latency",
            ("generation_secs",),
            "avg_generation_secs",
            "Mean latency per item (s)",
            False,
        ),
        "tokens": CostAxis(
            "tokens",
            ("input_tokens", "output_tokens"),
            "avg_tokens",
            "Mean tokens per item",
            False,
        ),
        "input_tokens": CostAxis(
            "input_tokens",
            ("input_tokens",),
            "avg_input_tokens",
            "Mean input tokens per item",
            False,
        ),
        "output_tokens": CostAxis(
            "output_tokens",
            ("output_tokens",),
            "avg_output_tokens",
            "Mean output tokens per item",
            False,
        ),
        "money": CostAxis(
            "money",
            ("cost_usd",),
            "avg_cost_usd",
            "Mean cost per item (USD)",
            False,
        ),
    }
)


def cost_axis(run: Run, cost: str) -> CostAxis:
    """The axis ``cost`` names: a short name of :data:`COSTS`, or one cost column of ``run``.

    Raises
    ------
    KagreportError
        If ``cost`` is neither, or the run lacks a column the axis sums (the message
        names the column and the run's cost columns).
    """
    axis = COSTS.get(cost)
    if axis is None:
        for known in COSTS.values():
            if known.columns == (cost,):
                axis = known
                break
    if axis is None:
        if cost in run.costs:
            return CostAxis(cost, (cost,), "", cost, False)
        raise KagreportError(
            f"the run has no cost {cost!r}; cost names: {', '.join(COSTS)}, or one of the "
            f"run's cost columns: {', '.join(run.costs) or 'none'}"
        )
    missing = [c for c in axis.columns if c not in run.costs]
    if missing:
        raise KagreportError(
            f"the run has no cost column {', '.join(map(repr, missing))} for the cost "
            f"{axis.name!r}; its cost columns: {', '.join(run.costs) or 'none'}"
        )
    return axis


def item_costs(run: Run, axis: CostAxis) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Each row's cost on ``axis``: the sum of its columns, NaN where one is unknown.

    Returns
    -------
    ndarray of float64, shape (len(run),)
    """
    values = np.zeros(len(run), dtype=np.float64)
    for column in axis.columns:
        values = values + run.costs[column]
    return values


def recorded_costs(run: Run) -> tuple[str, ...]:
    """The names of :data:`COSTS` the run recorded: every column the axis sums is there,
    and some item has a cost above 0 on it.

    One name per set of columns, the first in :data:`COSTS` order (``"generation"``, not
    its other title ``"latency"``); ``"tokens"`` and its parts ``"input_tokens"`` and
    ``"output_tokens"`` are each listed. A kag run that never retrieved has no
    ``"retrieval"`` or ``"graph"``.

    Returns
    -------
    tuple of str
        In :data:`COSTS` order.
    """
    found: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for name, axis in COSTS.items():
        if axis.columns in seen or not all(c in run.costs for c in axis.columns):
            continue
        values = item_costs(run, axis)
        if bool((np.nan_to_num(values, nan=0.0) > 0).any()):
            found.append(name)
            seen.add(axis.columns)
    return tuple(found)


def recorded_columns(run: Run) -> frozenset[str]:
    """The run's cost columns that some row recorded above zero.

    A column that is 0 or NaN in every row was not recorded (MMLU-Pro's published
    outputs hold a time of 0 for every answer): views show its values as unknown ("—"),
    never as 0.
    """
    return frozenset(
        name for name, column in run.costs.items() if bool((np.nan_to_num(column) > 0).any())
    )
