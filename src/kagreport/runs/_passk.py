"""pass@k and pass^k of a run that repeats its items: for each system and k, the chance
that at least one (pass@k) or every one (pass^k) of k repeats of an item passes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kagreport.runs._model import Run
from kagreport.runs._repeats import repeat_scores
from kagreport.stats._passk import pass_at_k, pass_hat_k

__all__ = ["PassRow", "pass_k"]


@dataclass(frozen=True)
class PassRow:
    """One system's pass@k and pass^k at one k.

    Attributes
    ----------
    system : str
    k : int
        Repeats per attempt, 1 .. the fewest scored repeats of an item of the system.
    pass_at_k, pass_hat_k : float
        Means over the system's items of the unbiased per-item estimates (Chen et al.
        2021, ``1 - C(n - c, k) / C(n, k)``; Yao et al. 2024, ``C(c, k) / C(n, k)``),
        fractions in [0, 1].
    pass_at_k_ci, pass_hat_k_ci : tuple of (float, float)
        Their 95% t intervals over items (the unbiased estimators of Chen et al. 2021 and
        Yao et al. 2024), cut to [0, 1]; NaN, NaN where undefined.
    n_items : int
        Items with at least one scored repeat.
    """

    system: str
    k: int
    pass_at_k: float
    pass_at_k_ci: tuple[float, float]
    pass_hat_k: float
    pass_hat_k_ci: tuple[float, float]
    n_items: int


def pass_k(run: Run, metric: str | None = None) -> tuple[PassRow, ...]:
    """pass@k and pass^k of each system for k = 1 .. its fewest scored repeats of an item.

    Parameters
    ----------
    run : Run
    metric : str, optional
        A 0/1 metric (default :attr:`Run.headline`): the repeats' scores
        (:func:`kagreport.runs.repeat_scores`).

    Returns
    -------
    tuple of PassRow
        In the run's system order, k ascending. Empty when the run records no repeats
        (``repeat_scores(...).source == "none"``) or a repeat's score is not 0 or 1. A
        system's items are those with a scored repeat (an errored Inspect epoch has no
        score and is not a trial; a promptfoo error scores 0); its largest k is the fewest
        scored repeats of one of them, so every item has at least k trials (the
        estimators allow a different number of trials per item, but not fewer than k).
        A system with fewer than 2 such items, or with an item of a single repeat, has no row.

    Raises
    ------
    KagreportError
        For an unknown metric.

    Notes
    -----
    Never the plug-in ``(c / n) ** k`` (promptfoo's ``repeat.pass_n``), which is biased.
    """
    repeats = repeat_scores(run, metric)
    if repeats.source == "none":
        return ()
    scored = ~np.isnan(repeats.values)
    if not bool(np.isin(repeats.values[scored], (0.0, 1.0)).all()):
        return ()
    rows = []
    for s, name in enumerate(run.systems):
        mine = scored & (run.system[repeats.cluster] == s)
        items, trials = np.unique(repeats.cluster[mine], return_counts=True)
        if len(items) < 2 or int(trials.min()) < 2:
            continue
        successes = np.zeros(len(items), dtype=np.int64)
        np.add.at(successes, np.searchsorted(items, repeats.cluster[mine]),
                  repeats.values[mine].astype(np.int64))  # fmt: skip
        for k in range(1, int(trials.min()) + 1):
            at, hat = pass_at_k(successes, trials, k), pass_hat_k(successes, trials, k)
            rows.append(
                PassRow(name, k, at.estimate, _ci(at.ci), hat.estimate, _ci(hat.ci), len(items))
            )
    return tuple(rows)


def _ci(ci: tuple[float, float]) -> tuple[float, float]:
    # A chance lies in [0, 1]: the t interval's overhang covers nothing.
    if not all(map(math.isfinite, ci)):
        return (math.nan, math.nan)
    return (max(float(ci[0]), 0.0), min(float(ci[1]), 1.0))
