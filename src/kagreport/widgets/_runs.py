"""What the views need of a run: what it lacks.

A view cuts a run with :meth:`kagreport.runs.Run.select`, which selects rows and computes
nothing. Every number a view shows comes from :mod:`kagreport.runs` (``leaderboard``,
``compare_setups``, ``cost_frontier``) on such a run.
"""

from __future__ import annotations

import numpy as np

from kagreport.runs import Run

__all__ = ["lacks", "lacks_note"]


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
