"""What the views draw from a run: the leaderboard, the setup comparisons with their
run-level Holm family and flipped items, and the cost frontier.

No statistics are computed here: the paired sign-flip test is
``evaluation._compare.compare_scores``, Holm's adjustment
:func:`kagreport.stats.holm_adjust`, the frontier :func:`kagreport.stats.pareto_front`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from kagreport._errors import KagreportError
from kagreport._format import p_value, plural
from kagreport.evaluation import MetricVerdict
from kagreport.runs._columns import OUTCOMES
from kagreport.runs._costs import cost_axis, item_costs
from kagreport.runs._flips import flip_rows
from kagreport.runs._leaderboard import system_means
from kagreport.runs._model import Run
from kagreport.runs._repeats import item_means
from kagreport.stats import holm_adjust, pareto_front
from kagreport.stats._holm import holm_levels

if TYPE_CHECKING:
    from kagreport.evaluation import EvaluationComparison

#: The family-wise error rate of a run's comparisons.
_ALPHA = 0.05
#: Comparisons, and flipped items of one comparison, a repr shows before "... N more".
_REPR_ROWS = 5
_REPR_FLIPS = 3

__all__ = [
    "FrontierPoint",
    "SetupComparison",
    "SetupComparisons",
    "compare_setups",
    "cost_frontier",
]


@dataclass(frozen=True)
class SetupComparison:
    """One pair of systems compared item by item: one set of hypotheses of the run's
    Holm family (every pair x metric).

    Attributes
    ----------
    candidate, baseline : str
    comparison : EvaluationComparison
        The paired sign-flip test of each metric on the items both systems hold. One
        family: each metric's ``p_value_holm`` is Holm-adjusted across the run's family
        (every compared pair x metric), and ``ci_low``/``ci_high`` is the interval at the
        level Holm tested that hypothesis at (:attr:`verdicts`; ``settings["interval"]``
        says so), which excludes 0 exactly when that p-value is below 0.05.
    flips : tuple of (str, str or None, str or None)
        (item, candidate outcome, baseline outcome) of the items whose first metric
        differs between the two, sorted.
    only_candidate, only_baseline : int
        Items held by one system of the pair only (not compared).
    family_size : int
        Hypotheses in the run-level Holm family (compared pairs x metrics).
    verdicts : mapping of str to MetricVerdict
        Metric -> better / worse / equivalent / inconclusive, with the interval, the
        margin, the minimum detectable effect and the pairs needed
        (:class:`~kagreport.evaluation.MetricVerdict`).
    """

    candidate: str
    baseline: str
    comparison: EvaluationComparison
    flips: tuple[tuple[str, str | None, str | None], ...]
    only_candidate: int
    only_baseline: int
    family_size: int = 0
    verdicts: Mapping[str, MetricVerdict] = field(default_factory=dict)

    @property
    def p_values_family(self) -> dict[str, float]:
        """Metric -> its Holm-adjusted p-value across the run (``comparison``'s
        ``p_value_holm``, the one adjusted p-value of each hypothesis)."""
        return {name: m.p_value_holm for name, m in self.comparison.metrics.items()}

    def __repr__(self) -> str:
        first = next(iter(self.comparison.metrics.values()), None)
        pairs = "?" if first is None else first.n_pairs
        p = ", ".join(
            f"{m} {p_value(v)}" + (f" {self.verdicts[m].verdict}" if m in self.verdicts else "")
            for m, v in self.p_values_family.items()
        )
        flips = ", ".join(f[0] for f in self.flips[:_REPR_FLIPS])
        left = len(self.flips) - _REPR_FLIPS
        more = f", ... {left} more" if left > 0 else ""
        return (
            f"<SetupComparison {self.candidate} vs {self.baseline}: {pairs} pairs, "
            f"p (Holm across the run) {p}, {len(self.flips)} flipped"
            + (f" ({flips}{more})" if flips else "")
            + ">"
        )


@dataclass(frozen=True)
class SetupComparisons:
    """Every comparison of a run, with its family.

    Attributes
    ----------
    comparisons : tuple of SetupComparison
        In pair order: against the baseline in rank order, or every pair (i < j).
    family : tuple of str
        ``"candidate vs baseline"`` of each comparison, the Holm family (times the
        metrics).
    metrics : tuple of str
        The metrics compared.
    skipped : tuple of (str, str, int, int)
        (candidate, baseline, only in candidate, only in baseline) of the pairs that
        share no item and were not compared.
    pairs : {"baseline", "all-pairs"}
        How the pairs were chosen.
    same_as : mapping of str to str
        Metric -> the earlier metric it equals on every row of the run (one hypothesis,
        tested once: it is not counted in the family and carries that metric's
        p-values); empty when no two metrics are equal.
    margin : float
        The practical margin of the comparisons' ``"equivalent"`` verdicts.

    Iterating gives the comparisons; the repr shows the counts and the first few pairs.
    """

    comparisons: tuple[SetupComparison, ...]
    family: tuple[str, ...]
    metrics: tuple[str, ...]
    skipped: tuple[tuple[str, str, int, int], ...]
    pairs: str = "baseline"
    same_as: Mapping[str, str] = field(default_factory=dict)
    margin: float = 0.01

    def __len__(self) -> int:
        return len(self.comparisons)

    def __iter__(self) -> Iterator[SetupComparison]:
        return iter(self.comparisons)

    def __repr__(self) -> str:
        shown = [f"  {c!r}" for c in self.comparisons[:_REPR_ROWS]]
        if len(self.comparisons) > _REPR_ROWS:
            shown.append(f"  ... {len(self.comparisons) - _REPR_ROWS} more")
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        same = "".join(f", {m} = {first}" for m, first in self.same_as.items())
        head = (
            f"<SetupComparisons ({self.pairs}): {plural(len(self.comparisons), 'pair')} x "
            f"{plural(len(self.metrics), 'metric')} ({', '.join(self.metrics)}), Holm family of "
            f"{len(self.comparisons) * (len(self.metrics) - len(self.same_as))}{same}{skipped}"
        )
        return "\n".join([head, *shown]) + ">" if shown else head + ">"


def _pairs(run: Run, pairs: str, baseline: str | None) -> list[tuple[str, str]]:
    ranked = list(run.systems)
    if pairs == "all-pairs":
        return [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]]
    if pairs != "baseline":
        raise KagreportError(f"pairs must be 'baseline' or 'all-pairs', not {pairs!r}")
    if baseline is None:
        baseline = ranked[0] if ranked else ""
    if baseline not in ranked:
        raise KagreportError(
            f"no system {baseline!r} to compare against; systems: {', '.join(ranked)}"
        )
    return [(s, baseline) for s in ranked if s != baseline]


# Over 80 lines with its docstring: pair, test, then one Holm family over every pair.
def compare_setups(
    run: Run,
    pairs: Literal["baseline", "all-pairs"] = "baseline",
    metrics: Sequence[str] | None = None,
    adjust: Literal["holm"] = "holm",
    *,
    baseline: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    margin: float = 0.01,
) -> SetupComparisons:
    """Paired sign-flip tests between the run's systems, Holm-adjusted across the run.

    Each pair is compared on the items both systems hold, aligned by (dataset name,
    question name), so the result does not depend on the order of rows or systems.
    A run with promptfoo repeats (:func:`kagreport.runs.repeat_scores`) pairs each item
    once, on the mean of its repeats (the difference of the clusters' means; an item's
    repeats are not independent pairs), and its comparisons' ``settings["repeats"]`` says
    so; an Inspect row is already its item's score over the epochs. The run-level
    family is every pair x metric: Holm (1979) over all of them, at a
    family-wise 5%. Metrics equal on every row of the run (e.g. an Inspect ``choice``
    scorer and the ``correct`` derived from it) are one hypothesis, tested once
    (its ``same_as``).
    Each comparison carries that one family: its p-values adjusted across it, its
    intervals at the level Holm tested each hypothesis at, and a verdict per metric
    (:class:`~kagreport.evaluation.MetricVerdict`).

    Parameters
    ----------
    run : Run
    pairs : {"baseline", "all-pairs"}
        Each other system against ``baseline``, or every pair in rank order.
    metrics : sequence of str, optional
        The metrics compared (each must be a column of the run); the first one
        decides the flipped items. Default: the run's headline (:attr:`Run.headline`).
    adjust : {"holm"}
        The run-level adjustment.
    baseline : str, optional
        Default the first system.
    n_resamples, seed
        As :meth:`AnswerEvaluation.compare <kagreport.evaluation.AnswerEvaluation.compare>`.
    margin : float, default 0.01
        The practical margin of an ``"equivalent"`` verdict, >= 0, in the metrics' units
        (0.01: one percentage point of accuracy).

    Raises
    ------
    KagreportError
        For an unknown metric, system, ``pairs`` or ``adjust``, or a ``margin`` that is
        not a finite number >= 0.
    """
    from kagreport.evaluation._compare import compare_scores, same_hypotheses
    from kagreport.evaluation._verdicts import row_verdict

    if adjust != "holm":
        raise KagreportError(f"adjust must be 'holm', not {adjust!r}")
    if (
        isinstance(margin, bool)
        or not isinstance(margin, int | float)
        or not 0 <= margin < math.inf
    ):
        raise KagreportError(f"`margin` must be a finite number >= 0, not {margin!r}")
    if metrics is None:
        metrics = (run.headline,)
    if not metrics:
        raise KagreportError("compare_setups needs at least one metric")
    columns = {m: run.metric(m) for m in metrics}
    # Repeats as rows (promptfoo's ``repeat``): each item is paired once, on the mean of its
    # repeats (the cluster-level difference); an Inspect row already reduces its epochs.
    averaged = item_means(run, columns)
    if averaged is not None:
        columns, first = averaged
    found: list[tuple[str, str, EvaluationComparison, int, int]] = []
    skipped = []
    for candidate, base in _pairs(run, pairs, baseline):
        rows_c, keys_c = run.rows_of(candidate)
        rows_b, keys_b = run.rows_of(base)
        if averaged is not None:  # only the row standing for each item
            rows_c, keys_c = rows_c[first[rows_c]], keys_c[first[rows_c]]
            rows_b, keys_b = rows_b[first[rows_b]], keys_b[first[rows_b]]
        _, at_c, at_b = np.intersect1d(keys_c, keys_b, assume_unique=True, return_indices=True)
        rows_c, rows_b = rows_c[at_c], rows_b[at_b]
        only_c, only_b = len(keys_c) - len(rows_c), len(keys_b) - len(rows_b)
        if not len(rows_c):
            skipped.append((candidate, base, only_c, only_b))
            continue
        comparison = compare_scores(
            {m: v[rows_c] for m, v in columns.items()},
            {m: v[rows_b] for m, v in columns.items()},
            kind=run.kind,
            n_resamples=n_resamples,
            seed=seed,
            candidate_label=candidate,
            baseline_label=base,
            metrics=list(metrics),
        )
        found.append((candidate, base, comparison, only_c, only_b))
    # A metric equal to another on every row is one hypothesis: tested once in the family.
    same = same_hypotheses({m: (v,) for m, v in columns.items()}, metrics)
    tested = [m for m in metrics if m not in same]
    raw = [c.metrics[m].p_value for _, _, c, _, _ in found for m in tested]
    family_p = holm_adjust(raw)
    levels = holm_levels(raw, _ALPHA)
    comparisons = []
    size = sum(1 for p in raw if not math.isnan(p))
    for k, (candidate, base, comparison, only_c, only_b) in enumerate(found):
        at = {m: k * len(tested) + i for i, m in enumerate(tested)}
        verdicts, rows = {}, {}
        for m in metrics:
            row, j = comparison.metrics[m], at[same.get(m, m)]
            # The one construction of a verdict (evaluation._verdicts), as a lone
            # comparison's verdicts(); the square sum comes from the row's variance.
            verdicts[m] = row_verdict(
                comparison, m, family_p[j], levels[j], alpha=_ALPHA, margin=float(margin)
            )
            rows[m] = dataclasses.replace(
                row, p_value_holm=family_p[j], ci_low=verdicts[m].low, ci_high=verdicts[m].high
            )
        settings = {
            **comparison.settings,
            "interval": "test-based at the Holm level of each hypothesis (Holm-adjusted)",
            "adjustment": f"holm across the run's {size} hypotheses (pairs x metrics)",
            "family_alpha": _ALPHA,
            "margin": float(margin),
            # Each metric's Holm level in the run's family: EvaluationComparison.verdicts
            # of this comparison gives the verdicts above, not the metrics-only family's.
            "levels": {m: levels[at[same.get(m, m)]] for m in metrics},
        }
        if averaged is not None:
            settings["repeats"] = "averaged per item: one pair per item (its repeats a cluster)"
        comparisons.append(
            SetupComparison(
                candidate,
                base,
                dataclasses.replace(comparison, metrics=rows, settings=settings),
                _flips(run, metrics[0], candidate, base),
                only_c,
                only_b,
                len(family_p),
                verdicts,
            )
        )
    return SetupComparisons(
        tuple(comparisons),
        tuple(f"{c.candidate} vs {c.baseline}" for c in comparisons),
        tuple(metrics),
        tuple(skipped),
        pairs,
        same,
        float(margin),
    )


def _flips(
    run: Run, metric: str, candidate: str, baseline: str
) -> tuple[tuple[str, str | None, str | None], ...]:
    """(item, candidate outcome, baseline outcome) of the items whose ``metric`` differs
    (both defined), ordered by item: the rows of :func:`kagreport.runs.flipped_items`."""
    rows_c, rows_b, _, _ = flip_rows(run, metric, candidate, baseline)
    labels = [*OUTCOMES, None]  # code -1 picks the last: unknown
    return tuple(
        (run.item_label(r), labels[run.outcome[r]], labels[run.outcome[s]])
        for r, s in zip(rows_c.tolist(), rows_b.tolist(), strict=True)
    )


@dataclass(frozen=True)
class FrontierPoint:
    """One system on the cost-metric plane.

    Attributes
    ----------
    system : str
    cost : float
        Mean of the cost over the system's rows where it is known; on a retrieval axis,
        0.0 for a system that retrieved nothing (see :func:`cost_frontier`); else NaN if
        it is known on no row.
    value : float
        Mean of the metric where defined.
    on_frontier : bool
        Whether no other system is at most as costly and at least as good, one of
        them strictly (:func:`kagreport.stats.pareto_front`).
    """

    system: str
    cost: float
    value: float
    on_frontier: bool


def cost_frontier(run: Run, cost: str, metric: str | None = None) -> tuple[FrontierPoint, ...]:
    """Each system's mean ``cost`` and mean ``metric``, and whether it is on the Pareto
    frontier of lower cost and higher value; in the run's system order.

    Parameters
    ----------
    run : Run
    cost : str
        A cost axis (``"retrieval"``, ``"generation"``,
        ``"context"``, ``"graph"``: the names the accuracy-against-cost chart takes) or
        a cost column of the run (``"retrieval_secs"``, ``"input_tokens"``, ...). An
        item's cost on ``"graph"`` is its vertices + relationships + properties.
    metric : str, optional
        A metric column of the run; default: :attr:`Run.headline`.

    Returns
    -------
    tuple of FrontierPoint
        The cost is the mean over the system's rows where it is known (NaN on every
        row is skipped; a float mean: kag's tables round a mean time to whole
        nanoseconds, within half a nanosecond of it), with one exception. On the
        retrieval axes (``"retrieval"`` or its column ``"retrieval_secs"``, and
        ``"graph"``; not a single graph column such as ``"vertices"``), a system whose
        cost is NaN on every row but which has at least one correct or incorrect row
        (a setup that answers without retrieving, like kag's native ones) costs
        exactly 0.0: 0 s, 0 graph elements, as the accuracy-against-cost chart and the
        site draw it. A system with no row where the cost is known and no such
        answer (only errors or unknown outcomes) keeps NaN. The frontier is
        :func:`kagreport.stats.pareto_front`.

    Raises
    ------
    KagreportError
        If the run has no such cost or metric column (the message names the missing
        column).
    """
    axis = cost_axis(run, cost)
    values_of_cost = item_costs(run, axis)
    costs, _, defined = system_means(run, values_of_cost)
    if axis.retrieval:
        committed = [
            int(np.count_nonzero((run.system == s) & (run.outcome >= 0) & (run.outcome <= 1)))
            for s in range(len(run.systems))
        ]
        costs = [
            0.0 if n == 0 and answered else c
            for c, n, answered in zip(costs, defined, committed, strict=True)
        ]
    values, _, _ = system_means(run, run.metric(run.headline if metric is None else metric))
    on = pareto_front(np.array(costs, dtype=np.float64), np.array(values, dtype=np.float64))
    return tuple(
        FrontierPoint(s, c, v, bool(o))
        for s, c, v, o in zip(run.systems, costs, values, on, strict=True)
    )
