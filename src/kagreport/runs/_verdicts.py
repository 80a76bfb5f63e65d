"""What one comparison of two systems says on one metric: better, worse, equivalent within a
practical margin, or inconclusive (and then how many pairs would settle it).

The decision, the interval and the p-value belong to one Holm family (the run's pairs x
metrics, :func:`kagreport.runs.compare_setups`): the interval is at the level Holm tested
the hypothesis at (:func:`kagreport.stats.holm_levels`) and agrees with the test
(:func:`kagreport.stats.interval_from_test`), so it excludes 0 exactly when the adjusted
test rejects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from kagreport._format import count, difference
from kagreport.stats import interval_from_test, minimum_detectable_effect, required_sample_size

__all__ = ["VERDICTS", "MetricVerdict", "metric_verdict"]

#: The verdicts, in the order a page explains them.
VERDICTS: Final = ("better", "worse", "equivalent", "inconclusive")
#: The power the minimum detectable effect and the pairs needed are computed at.
POWER: Final = 0.8


@dataclass(frozen=True)
class MetricVerdict:
    """One hypothesis of a run's family: a pair of systems on one metric.

    Attributes
    ----------
    metric : str
    verdict : {"better", "worse", "equivalent", "inconclusive"}
        The candidate against the baseline: ``"better"``/``"worse"`` when the
        Holm-adjusted p-value is below ``alpha`` (by the sign of the difference);
        ``"equivalent"`` when it is not and the interval lies within ``[-margin, margin]``;
        else ``"inconclusive"`` (also with no pair).
    difference : float
        Mean candidate - baseline over the pairs, in the metric's units; NaN with none.
    p_value : float
        Holm-adjusted across the run's family (the comparison's ``p_value_holm``).
    low, high : float
        The interval of ``difference`` at confidence ``level``: test-based
        (:func:`kagreport.stats.interval_from_test`), so it excludes 0 exactly when
        ``p_value < alpha``. NaN with no pair.
    level : float
        Its coverage, ``1 - alpha_i``: the level Holm tested this hypothesis at
        (:func:`kagreport.stats.holm_levels`); the pages call it "Holm-adjusted 95%".
    alpha : float
        The family-wise error rate (0.05).
    margin : float
        The practical margin of equivalence, in the metric's units (0.01: one point).
    n_pairs : int
    variance : float
        Mean squared paired difference (for 0/1 outcomes, the share of discordant pairs):
        the variance the power calculations use.
    mde : float or None
        :func:`kagreport.stats.minimum_detectable_effect` at ``n_pairs``, ``alpha_i`` and
        80% power; None with no pair.
    n_needed : int or None
        :func:`kagreport.stats.required_sample_size` of ``margin`` at that variance,
        ``alpha_i`` and 80% power; None with no pair or no margin.
    """

    metric: str
    verdict: str
    difference: float
    p_value: float
    low: float
    high: float
    level: float
    alpha: float
    margin: float
    n_pairs: int
    variance: float
    mde: float | None
    n_needed: int | None

    @property
    def ci(self) -> tuple[float, float]:
        """``(low, high)``."""
        return (self.low, self.high)

    def sentence(self, *, proportion: bool) -> str:
        """The verdict in words, differences in points for a proportion.

        E.g. ``"Inconclusive: the Holm-adjusted 95% interval [−2.1, +3.0] pp reaches past
        ±1.0 pp. At 412 pairs the test detects +4.2 pp with 80% power; detecting 1.0 pp
        needs about 7,849 pairs."``
        """

        def shown(value: float) -> str:
            return difference(value, proportion=proportion)

        label = (
            f"Holm-adjusted {1 - self.alpha:.0%} interval [{shown(self.low)}, {shown(self.high)}]"
        )
        margin = shown(self.margin).lstrip("+")
        if self.n_pairs == 0 or math.isnan(self.difference):
            return "Inconclusive: no item has the metric on both sides."
        if self.verdict in ("better", "worse"):
            return (
                f"{self.verdict.capitalize()}: {shown(self.difference)}, adjusted p below "
                f"{self.alpha:g}; the {label} excludes 0."
            )
        if self.verdict == "equivalent":
            return f"Equivalent within ±{margin}: the {label} lies inside it."
        parts = [f"Inconclusive: the {label} reaches past ±{margin}."]
        if self.mde is not None:
            parts.append(
                f"At {count(self.n_pairs)} pairs the test detects {shown(self.mde).lstrip('+')} "
                f"with {POWER:.0%} power"
                + (
                    f"; detecting {margin} needs about {count(self.n_needed)} pairs."
                    if self.n_needed is not None
                    else "."
                )
            )
        return " ".join(parts)


def metric_verdict(
    metric: str,
    estimate: float,
    p_raw: float,
    p_adjusted: float,
    level: float,
    *,
    n_pairs: int,
    square_sum: float,
    alpha: float,
    margin: float,
) -> MetricVerdict:
    """The verdict of one hypothesis from its test and its place in the Holm family.

    ``estimate`` is the mean difference, ``p_raw`` the unadjusted two-sided p-value,
    ``p_adjusted`` its Holm adjustment, ``level`` the Holm level of the hypothesis
    (``alpha_i``), ``square_sum`` the sum of the squared paired differences.
    """
    if n_pairs == 0 or math.isnan(estimate) or math.isnan(p_raw) or math.isnan(level):
        return MetricVerdict(
            metric, "inconclusive", math.nan, p_adjusted, math.nan, math.nan, math.nan,
            alpha, margin, n_pairs, math.nan, None, None,
        )  # fmt: skip
    variance = square_sum / n_pairs
    interval = interval_from_test(estimate, p_raw, 1.0 - level, math.sqrt(square_sum) / n_pairs)
    low, high = float(interval.low), float(interval.high)
    if p_adjusted < alpha and estimate != 0.0:
        verdict = "better" if estimate > 0 else "worse"
    elif -margin <= low and high <= margin:
        verdict = "equivalent"
    else:
        verdict = "inconclusive"
    mde = minimum_detectable_effect(variance, n_pairs, alpha=level, power=POWER)
    needed = (
        required_sample_size(variance, margin, alpha=level, power=POWER) if margin > 0 else None
    )
    return MetricVerdict(
        metric, verdict, estimate, p_adjusted, low, high, 1.0 - level, alpha, margin,
        n_pairs, variance, mde, needed,
    )  # fmt: skip
