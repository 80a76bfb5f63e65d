"""The one coercion at the views' public edge: :func:`as_run`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kagreport._errors import InputError

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["as_run"]


def as_run(source: Any, **options: Any) -> Run:
    """``source`` as a :class:`kagreport.runs.Run`.

    Parameters
    ----------
    source : Run, StatsReport, AnswerEvaluation, RetrievalEvaluation, sequence of
        evaluations, or path
        A run is returned as it is; a graded kag tree (``StatsReport``) becomes
        ``Run.from_stats(source)``; evaluations become ``Run.from_evaluations(source,
        same_items=False)``, one system each (a system may lack some items, as a kag
        setup whose result file did not parse does); a path is read with
        :func:`kagreport.read_run` (``options`` are passed to it, e.g. ``datasets=``
        for a kag tree).
    **options
        For a path: :func:`kagreport.read_run`'s. For a ``StatsReport``:
        ``storage_options`` only (fsspec options to read the responses of a tree on
        object storage when they are shown).

    Returns
    -------
    Run

    Raises
    ------
    InputError
        For any other type (the message names it), or options the source does not
        take.
    KagreportError
        As :func:`kagreport.read_run`, :meth:`Run.from_evaluations`.
    """
    from kagreport.evaluation import AnswerEvaluation, RetrievalEvaluation
    from kagreport.grading import StatsReport
    from kagreport.runs import Run
    from kagreport.sources._registry import read_run

    if isinstance(source, str | os.PathLike):
        return read_run(source, **options)
    if isinstance(source, StatsReport) and set(options) <= {"storage_options"}:
        return Run.from_stats(source, **options)
    if options:
        raise InputError(
            f"options {', '.join(sorted(options))} are for a path; got a {type(source).__name__}"
        )
    if isinstance(source, Run):
        return source
    evaluations = (AnswerEvaluation, RetrievalEvaluation)
    if isinstance(source, evaluations):
        return Run.from_evaluations([source])
    if isinstance(source, Sequence) and source and all(isinstance(e, evaluations) for e in source):
        return Run.from_evaluations(list(source), same_items=False)
    raise InputError(
        "expected a Run, a StatsReport, an evaluation (or a list of them) or a path, "
        f"not {type(source).__name__}"
    )
