"""One hypothesis of a gate: a system pair's metric on one slice of the items."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from kagreport._format import json_safe

__all__ = ["FLOATS", "GateHypothesis"]

#: The float fields (NaN where undefined; null in JSON).
FLOATS = (
    "baseline_mean", "candidate_mean", "difference", "low", "high", "level", "p_value",
    "p_value_holm", "variance", "mde", "power",
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class GateHypothesis:
    """One hypothesis of a gate: a system pair's metric on one slice of the items.

    H0: Δ = -margin, where Δ is the mean over the paired items of d_i = candidate_i -
    baseline_i (the metric's units; a proportion's in [0, 1]); tested two-sided by the
    paired sign-flip test of d_i + margin at Holm's level ``level``.

    Attributes
    ----------
    candidate_system, baseline_system : str
        The systems paired (the same name unless each run holds one system).
    metric : str
    slice : str
        The dataset or task the items belong to (``"all"`` with ``slice="none"``).
    n_pairs : int
        Items both systems scored (a cluster of repeats counts once).
    candidate_only, baseline_only : int
        Items left out, scored by one side only.
    baseline_mean, candidate_mean, difference : float
        Means over the paired items and their difference, Δ; NaN with no pair.
    low, high : float
        Interval of Δ at confidence ``1 - level`` that agrees with the test: it lies
        above ``-margin`` when the verdict is pass, below when fail; NaN with no pair.
        Cut to [-1, 1] when every paired score lies in [0, 1].
    level : float
        Holm's level for this hypothesis, α_i (NaN with no pair).
    p_value, p_value_holm : float
        Two-sided p-value of H0 and its Holm-adjusted value over the gate's hypotheses.
    method : str
        How the p-value was computed (``"exact-enumeration"``, ``"exact-lattice"``,
        ``"monte-carlo"`` or ``"normal"``, as :func:`kagreport.stats.sign_flip_test`;
        ``"none"`` without a pair).
    verdict : {"pass", "fail", "inconclusive"}
    variance : float
        Sample variance of the d_i (ddof 1); NaN below 2 pairs.
    mde : float
        The smallest true change this benchmark detects at its size, with probability
        0.8 at level α_i (:func:`kagreport.stats.minimum_detectable_effect`); NaN when
        undefined.
    n_needed : int or None
        Items needed to show non-inferiority with probability 0.8 when the true change
        is 0 (:func:`kagreport.stats.required_sample_size` of the margin); None when
        undefined (no variance, or margin 0).
    power : float
        Predicted probability that this hypothesis fails when the true change is
        ``-2 * margin`` (:func:`kagreport.stats.power` of the margin); NaN when undefined.
    proportion : bool
        Whether the metric is a proportion (shown in percent and percentage points).
    reason : str
        Why a hypothesis without a pair is inconclusive: ``"not in the candidate run"``
        (a baseline system or dataset the candidate lacks), ``"not in the baseline
        run"``, ``"no item in both runs"``; ``""`` otherwise.
    """

    candidate_system: str
    baseline_system: str
    metric: str
    slice: str
    n_pairs: int
    candidate_only: int
    baseline_only: int
    baseline_mean: float
    candidate_mean: float
    difference: float
    low: float
    high: float
    level: float
    p_value: float
    p_value_holm: float
    method: str
    verdict: str
    variance: float
    mde: float
    n_needed: int | None
    power: float
    proportion: bool
    reason: str = ""

    @property
    def system(self) -> str:
        """The pair's name: the system's, or ``"candidate vs baseline"`` when they differ."""
        if self.candidate_system == self.baseline_system:
            return self.candidate_system
        return f"{self.candidate_system} vs {self.baseline_system}"

    def to_dict(self) -> dict[str, Any]:
        """The hypothesis as a mapping (NaN kept; JSON writes it as null)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GateHypothesis):
            return NotImplemented
        return bool(json_safe(self.to_dict()) == json_safe(other.to_dict()))

    __hash__ = None  # type: ignore[assignment]
