"""What the views need of a run: the run of a source, and a run cut to some systems or datasets.

Cutting selects rows; it computes nothing. Every number a view shows comes from
:mod:`kagreport.runs` (``leaderboard``, ``compare_setups``, ``cost_frontier``) on such a run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from kagreport._errors import KagreportError
from kagreport.grading import StatsReport
from kagreport.runs import Run

__all__ = ["as_run", "lacks", "lacks_note", "select_run"]


def as_run(source: Run | StatsReport, view: str) -> Run:
    """``source`` itself, or ``Run.from_stats`` of a graded kag tree.

    Raises
    ------
    TypeError
        For anything else (``view`` names the view in the message).
    """
    if isinstance(source, Run):
        return source
    if isinstance(source, StatsReport):
        return Run.from_stats(source)
    raise TypeError(
        f"{view} takes a kagreport.runs.Run or a StatsReport, not {type(source).__name__}"
    )


def select_run(run: Run, systems: Sequence[str], datasets: Sequence[str] | None = None) -> Run:
    """The rows of ``run`` whose system is one of ``systems`` (in that order, which becomes the
    run's system order) and, when given, whose dataset is one of ``datasets``.

    Names and codes of datasets and questions are kept, so an item keeps its identity (and
    :func:`kagreport.runs.compare_setups` pairs the same items as on the whole run).

    Raises
    ------
    KagreportError
        For a system the run does not hold.
    """
    unknown = [s for s in systems if s not in run.systems]
    if unknown:
        raise KagreportError(
            f"the run holds no system {', '.join(map(repr, unknown))}; "
            f"systems: {', '.join(run.systems)}"
        )
    remap = np.full(max(1, len(run.systems)), -1, dtype=np.int32)
    for new, name in enumerate(systems):
        remap[run.systems.index(name)] = new
    keep = remap[run.system] >= 0 if len(run) else np.zeros(0, dtype=bool)
    if datasets is not None:
        wanted = [k for k, name in enumerate(run.dataset_names) if name in set(datasets)]
        keep &= np.isin(run.dataset, wanted)
    rows = np.flatnonzero(keep)

    def texts(column: tuple[str | None, ...] | None) -> tuple[str | None, ...] | None:
        return None if column is None else tuple(column[i] for i in rows.tolist())

    return dataclasses.replace(
        run,
        systems=tuple(systems),
        system=remap[run.system[rows]] if len(rows) else np.zeros(0, dtype=np.int32),
        dataset=run.dataset[rows],
        question=run.question[rows],
        outcome=run.outcome[rows],
        metrics={name: values[rows] for name, values in run.metrics.items()},
        costs={name: values[rows] for name, values in run.costs.items()},
        responses=texts(run.responses),
        references=texts(run.references),
        errors=texts(run.errors),
    )


def lacks(run: Run) -> list[str]:
    """What a view may miss in ``run``, one short phrase each (empty when it has it all)."""
    missing = []
    if run.responses is None:
        missing.append("responses")
    if run.references is None:
        missing.append("references")
    if not any(run.dataset_names):
        missing.append("datasets")
    if not any((~np.isnan(values)).any() for values in run.costs.values()):
        missing.append("costs")
    if len(run) and not (run.outcome >= 0).any():
        missing.append("outcomes")
    return missing


def lacks_note(run: Run) -> str:
    """``"The run has no a, b or c."`` of :func:`lacks`, or ``""``."""
    missing = lacks(run)
    if not missing:
        return ""
    named = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} or {missing[-1]}"
    return f"The run has no {named}."
