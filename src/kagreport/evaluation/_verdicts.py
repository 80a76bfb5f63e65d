"""What one comparison of two systems says on one metric: better, worse, equivalent within a
practical margin, or inconclusive (and then how many pairs would settle it).

The decision, the interval and the p-value belong to one Holm family: the run's pairs x
metrics for :func:`kagreport.runs.compare_setups`, the metrics under test for a lone
:class:`~kagreport.evaluation.EvaluationComparison` (:func:`comparison_verdicts`). The
interval is at the level Holm tested the hypothesis at (``stats._holm.holm_levels``)
and agrees with the test (:func:`kagreport.stats.interval_from_test`), so it excludes 0
exactly when the adjusted test rejects. This module is the one home of that construction:
the run's comparisons and the lone ones both build their verdicts with :func:`row_verdict`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Final, Protocol

from kagreport._format import count, difference
from kagreport.stats import interval_from_test, minimum_detectable_effect, required_sample_size
from kagreport.stats._holm import holm_levels


# What a verdict reads of a comparison (evaluation._comparison's, which imports this
# module: typed by shape, not by import, so the two form no cycle).
class MetricComparison(Protocol):
    @property
    def metric(self) -> str: ...
    @property
    def n_pairs(self) -> int: ...
    @property
    def n_nonzero(self) -> int: ...
    @property
    def mean_difference(self) -> float: ...
    @property
    def ci_low(self) -> float: ...
    @property
    def ci_high(self) -> float: ...
    @property
    def p_value(self) -> float: ...
    @property
    def variance(self) -> float: ...
    @property
    def p_value_holm(self) -> float: ...


class EvaluationComparison(Protocol):
    @property
    def metrics(self) -> Mapping[str, MetricComparison]: ...
    @property
    def settings(self) -> Mapping[str, Any]: ...
    @property
    def family(self) -> tuple[str, ...] | None: ...
    @property
    def same_as(self) -> Mapping[str, str]: ...


__all__ = ["VERDICTS", "MetricVerdict", "comparison_verdicts", "metric_verdict", "row_verdict"]

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
        Holm-adjusted across the family (the comparison's ``p_value_holm``); for a metric
        outside a lone comparison's family (reported, not under test) its unadjusted
        p-value (``adjusted`` is then False).
    low, high : float
        The interval of ``difference`` at confidence ``level``: test-based
        (:func:`kagreport.stats.interval_from_test`), so it excludes 0 exactly when
        ``p_value < alpha``. NaN with no pair.
    level : float
        Its coverage, ``1 - alpha_i``: the level Holm tested this hypothesis at
        (Holm's level for its place in the family); the pages call it "Holm-adjusted 95%"
        (:attr:`label`). ``1 - alpha`` for a metric outside the family.
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
    adjusted : bool
        Whether the hypothesis is in a Holm family (True) or a metric a lone comparison
        reports outside it, judged alone at ``alpha`` (False).
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
    adjusted: bool = True

    @property
    def ci(self) -> tuple[float, float]:
        """``(low, high)``."""
        return (self.low, self.high)

    @property
    def label(self) -> str:
        """Which interval :attr:`ci` is, for a column header or a legend:
        ``"Holm-adjusted 95%"``, or ``"unadjusted 95%"`` outside the family (the family's
        nominal level: the interval's own coverage is :attr:`level`)."""
        return f"{'Holm-adjusted' if self.adjusted else 'unadjusted'} {1 - self.alpha:.0%}"

    def sentence(self, *, proportion: bool) -> str:
        """The verdict in words, differences in points for a proportion.

        E.g. ``"Inconclusive: the Holm-adjusted 95% interval [−2.1, +3.0] pp reaches past
        ±1.0 pp. At 412 pairs the test detects +4.2 pp with 80% power; detecting 1.0 pp
        needs about 7,849 pairs."``
        """

        def shown(value: float) -> str:
            return difference(value, proportion=proportion)

        label = f"{self.label} interval [{shown(self.low)}, {shown(self.high)}]"
        margin = shown(self.margin).lstrip("+")
        if self.n_pairs == 0 or math.isnan(self.difference):
            return "Inconclusive: no item has the metric on both sides."
        if self.verdict in ("better", "worse"):
            return (
                f"{self.verdict.capitalize()}: {shown(self.difference)}, "
                f"{'adjusted ' if self.adjusted else ''}p below "
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
    adjusted: bool = True,
) -> MetricVerdict:
    """The verdict of one hypothesis from its test and its place in the Holm family.

    ``estimate`` is the mean difference, ``p_raw`` the unadjusted two-sided p-value,
    ``p_adjusted`` its Holm adjustment, ``level`` the Holm level of the hypothesis
    (``alpha_i``), ``square_sum`` the sum of the squared paired differences (NaN when
    unknown: then no minimum detectable effect or pairs needed, and the test-based
    interval of :func:`kagreport.stats.interval_from_test`).
    """
    if n_pairs == 0 or math.isnan(estimate) or math.isnan(p_raw) or math.isnan(level):
        return MetricVerdict(
            metric, "inconclusive", math.nan, p_adjusted, math.nan, math.nan, math.nan,
            alpha, margin, n_pairs, math.nan, None, None, adjusted,
        )  # fmt: skip
    variance = square_sum / n_pairs
    null_se = math.sqrt(square_sum) / n_pairs  # NaN when unknown
    # Holm's decision as made: 1 - (1 - level) may round past level.
    interval = interval_from_test(
        estimate, p_raw, 1.0 - level, null_se, rejects=p_adjusted < alpha and estimate != 0.0
    )
    low, high = float(interval.low), float(interval.high)
    if p_adjusted < alpha and estimate != 0.0:
        verdict = "better" if estimate > 0 else "worse"
    elif -margin <= low and high <= margin:
        verdict = "equivalent"
    else:
        verdict = "inconclusive"
    known = not math.isnan(variance)
    mde = minimum_detectable_effect(variance, n_pairs, alpha=level, power=POWER) if known else None
    needed = (
        required_sample_size(variance, margin, alpha=level, power=POWER)
        if margin > 0 and known
        else None
    )
    return MetricVerdict(
        metric, verdict, estimate, p_adjusted, low, high, 1.0 - level, alpha, margin,
        n_pairs, variance, mde, needed, adjusted,
    )  # fmt: skip


def _square_sum(comparison: EvaluationComparison, row: MetricComparison) -> float:
    """The sum of the squared paired differences of ``row``: from its ``variance``; for
    documents written before it was stored (version 1 and 2), exactly ``n_nonzero`` for a
    metric scored 0 or 1 (every difference -1, 0 or 1), else from the bootstrap interval
    (n^2 se^2 + n mean^2, se its half-width over z: the mean square the interval implies);
    NaN when none of these is there."""
    n = row.n_pairs
    if not math.isnan(row.variance):
        return row.variance * n
    if row.n_nonzero == 0:
        return 0.0
    if row.metric in (comparison.settings.get("proportions") or ()):
        return float(row.n_nonzero)
    confidence = comparison.settings.get("confidence", 0.95)
    bootstrap = str(comparison.settings.get("interval", "")) == "percentile bootstrap"
    if bootstrap and isinstance(confidence, float) and 0.0 < confidence < 1.0:
        z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
        se = (row.ci_high - row.ci_low) / (2.0 * z)
        return n * n * se * se + n * row.mean_difference**2
    return math.nan


def row_verdict(
    comparison: EvaluationComparison,
    metric: str,
    p_adjusted: float,
    level: float,
    *,
    alpha: float,
    margin: float,
    adjusted: bool = True,
) -> MetricVerdict:
    """:func:`metric_verdict` of one row of ``comparison``: its mean difference, raw
    p-value and pairs, its sum of squared differences (from ``variance``), with the
    adjusted p-value and the Holm level its family gives it."""
    row = comparison.metrics[metric]
    return metric_verdict(
        metric, row.mean_difference, row.p_value, p_adjusted, level,
        n_pairs=row.n_pairs, square_sum=_square_sum(comparison, row), alpha=alpha,
        margin=margin, adjusted=adjusted,
    )  # fmt: skip


def comparison_verdicts(
    comparison: EvaluationComparison,
    *,
    margin: float | None = None,
    alpha: float | None = None,
) -> dict[str, MetricVerdict]:
    """Metric -> the verdict of a comparison's metric, with its interval at the family's
    adjusted level (:meth:`EvaluationComparison.verdicts`).

    The family is the comparison's: its ``family`` (the metrics under test), Holm-adjusted
    at ``alpha``; a metric of ``settings["same_as"]`` takes its family metric's place. A
    comparison of a run (:func:`kagreport.runs.compare_setups`) records the level of each
    hypothesis in the run's family (``settings["levels"]``), used as they are. A metric
    outside the family is judged alone at ``alpha`` (``adjusted`` False).

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 1) or ``margin`` is not a finite number >= 0.
    """
    settings = comparison.settings
    if alpha is None:
        alpha = float(settings.get("family_alpha", 0.05))
    if margin is None:
        margin = float(settings.get("margin", 0.01))
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1), not {alpha!r}")
    if (
        isinstance(margin, bool)
        or not isinstance(margin, int | float)
        or not 0 <= margin < math.inf
    ):
        raise ValueError(f"`margin` must be a finite number >= 0, not {margin!r}")
    same = comparison.same_as
    family = list(comparison.family or ())
    stored = settings.get("levels")
    if isinstance(stored, Mapping) and settings.get("family_alpha", 0.05) == alpha:
        levels = {str(m): float(v) if v is not None else math.nan for m, v in stored.items()}
    else:
        raw = [comparison.metrics[m].p_value for m in family]
        levels = dict(zip(family, holm_levels(raw, alpha), strict=True))
    verdicts = {}
    for name, row in comparison.metrics.items():
        first = same.get(name, name)
        if name in levels or first in levels:
            level = levels.get(name, levels.get(first, math.nan))
            verdicts[name] = row_verdict(
                comparison, name, row.p_value_holm, level, alpha=alpha, margin=margin
            )
        else:
            verdicts[name] = row_verdict(
                comparison, name, row.p_value, alpha, alpha=alpha, margin=margin, adjusted=False
            )
    return verdicts
