"""Paired comparison of two evaluations: sign-flip test, bootstrap interval, Holm.

:func:`compare_items` pairs the items of two evaluations by identifier and, per
metric both report, tests whether the mean paired difference is zero with an
exact or Monte Carlo sign-flip (randomisation) test, gives a percentile
bootstrap interval of that mean, and adjusts the p-values across metrics with
Holm's step-down procedure. The result is an :class:`EvaluationComparison`
(in :mod:`kagreport.evaluation._comparison`), serialisable like the evaluations
themselves (ANSWER_EVALUATION_SPEC.md, "compare" and "EvaluationComparison").

The mathematics is in :mod:`kagreport.stats` (re-exported from :mod:`kagreport.evaluation`):
:func:`~kagreport.stats.sign_flip_test`, :func:`~kagreport.stats.bootstrap_mean_interval`,
:func:`~kagreport.stats.holm_adjust` and ``paired_differences``.
Holm's family is the metrics under test (``metrics=``, default ``primary_metrics``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kagreport._document import canonical, jsonable
from kagreport._errors import DifferentItemsError, InputError, NoSharedItemsError
from kagreport._format import is_proportion
from kagreport.evaluation._comparison import KINDS, EvaluationComparison, MetricComparison
from kagreport.stats import bootstrap_mean_interval, holm_adjust
from kagreport.stats._signflip import (
    DUST,
    TOLERANCE,
    _check_confidence,
    _check_n_resamples,
    _check_seed,
    exact_mean,
    paired_differences,
    sign_flip_test,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "DifferentItemsError",
    "NoSharedItemsError",
    "compare_items",
    "compare_scores",
    "primary_metrics",
    "same_hypotheses",
]


# --------------------------------------------------------------------------------------
# compare_items
# --------------------------------------------------------------------------------------


class _ScoredItem(Protocol):
    @property
    def identifier(self) -> str: ...

    @property
    def scores(self) -> Mapping[str, float]: ...


class _Evaluation(Protocol):
    @property
    def items(self) -> Sequence[_ScoredItem]: ...

    @property
    def judges(self) -> Mapping[str, Any]: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...


def _label(evaluation: _Evaluation, given: str | None, default: str) -> str:
    if given is not None:
        return given
    name = evaluation.metadata.get("name")
    return name if isinstance(name, str) and name else default


def _identifier_index(items: Sequence[_ScoredItem], which: str) -> dict[str, int]:
    index: dict[str, int] = {}
    for position, item in enumerate(items):
        if item.identifier in index:
            raise InputError(f"the {which} holds item {item.identifier!r} twice")
        index[item.identifier] = position
    return index


def _few(identifiers: set[str]) -> str:
    shown = sorted(identifiers)[:5]
    more = f" and {len(identifiers) - 5} more" if len(identifiers) > 5 else ""
    return ", ".join(repr(i) for i in shown) + more


def _metric_names(items: Sequence[_ScoredItem]) -> set[str]:
    names: set[str] = set()
    for item in items:
        names.update(item.scores)
    return names


def _column(items: Sequence[_ScoredItem], metric: str) -> np.ndarray[Any, Any]:
    return np.fromiter(
        (item.scores.get(metric, math.nan) for item in items), dtype=np.float64, count=len(items)
    )


def _check_settings(kind: str, n_resamples: int, seed: int, confidence: float) -> tuple[int, int]:
    """Validate the comparison settings; return ``(n_resamples, seed)`` checked."""
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {', '.join(KINDS)}, not {kind!r}")
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    _check_confidence(confidence)
    return n_resamples, seed


#: The default family of a retrieval comparison (see :func:`compare_scores`).
RETRIEVAL_PRIMARY = "mrr"


def _family(kind: str, shared: Sequence[str], metrics: Sequence[str] | None) -> list[str]:
    """The metrics under test: ``metrics`` checked against ``shared``, or the default."""
    if metrics is None:
        if kind == "retrieval" and RETRIEVAL_PRIMARY in shared:
            return [RETRIEVAL_PRIMARY]
        return list(shared)
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise InputError(f"`metrics` must be a list of metric names, not {metrics!r}")
    named = sorted(set(metrics))
    if not named:
        raise InputError(
            f"`metrics` names no metric; the metrics both hold are: {', '.join(shared)}"
        )
    unknown = [m for m in named if m not in shared]
    if unknown:
        raise InputError(
            f"`metrics` names {', '.join(map(repr, unknown))}, which the two do not both "
            f"hold; the metrics both hold are: {', '.join(shared)}"
        )
    return named


def _judge_of(metric: str, judges: Sequence[str]) -> str | None:
    # Metric names are <judge> or <judge>.<criterion> (ANSWER_EVALUATION_SPEC.md).
    for name in sorted(judges, key=len, reverse=True):
        if metric == name or metric.startswith(name + "."):
            return name
    return None


def primary_metrics(
    candidate: _Evaluation, baseline: _Evaluation, shared: Sequence[str], kind: str
) -> list[str]:
    """The default family of :func:`compare_items`: the metrics it tests unless told.

    Answers: every shared metric except those of a *duplicate* judge, one that has the
    same identity as a judge of smaller name in both evaluations (the same judge
    configured twice scores every item alike: its metric is the same hypothesis
    again, and counting it would double the Holm-adjusted p-values for nothing).
    Retrieval: ``mrr`` alone when shared (the one metric every retrieval evaluation
    reports whatever its cut-offs; recall@k, precision@k, hit@k, complete@k and
    ndcg@k at several k are many views of one ranking, and adjusting over all of
    them, 21 by default, would make the headline test needlessly weak), else every
    shared metric. Name the metrics under test with ``metrics=`` to test others.
    """
    if kind == "retrieval":
        return _family(kind, shared, None)
    judges = sorted(set(candidate.judges) & set(baseline.judges))
    first: dict[tuple[Any, Any], str] = {}
    duplicate: set[str] = set()
    for name in judges:
        key = (
            json.dumps(canonical(candidate.judges[name]), sort_keys=True, default=str),
            json.dumps(canonical(baseline.judges[name]), sort_keys=True, default=str),
        )
        if key in first:
            duplicate.add(name)
        else:
            first[key] = name
    kept = [m for m in shared if _judge_of(m, judges) not in duplicate]
    return kept or list(shared)


# Over 80 lines only with its docstring (a public function's parameters, errors, sources).
def compare_items(
    candidate: _Evaluation,
    baseline: _Evaluation,
    *,
    kind: str,
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
    candidate_label: str | None = None,
    baseline_label: str | None = None,
    shared_only: bool = False,
    metrics: Sequence[str] | None = None,
) -> EvaluationComparison:
    """Paired comparison of two evaluations of the same items, metric by metric.

    Parameters
    ----------
    candidate, baseline : evaluation
        Objects with ``items`` (a sequence of items with ``identifier`` and
        ``scores``, metric -> float, absent where undefined), ``judges`` (judge
        name -> identity, possibly empty) and ``metadata`` (a mapping), such as
        :class:`AnswerEvaluation` or :class:`RetrievalEvaluation`.
    kind : {"answers", "retrieval"}
        The kind of evaluations compared (recorded in the result).
    n_resamples : int, default 10000
        Budget of the sign-flip test and number of bootstrap resamples.
    seed : int, default 0
        Seed of both the test and the bootstrap (each starts its own generator).
    confidence : float, default 0.95
        Coverage of the bootstrap interval, in (0, 1).
    candidate_label, baseline_label : str, optional
        Labels; default ``metadata["name"]`` when it is a non-empty string, else
        ``"candidate"`` / ``"baseline"``.
    shared_only : bool, default False
        Compare on the items both evaluations hold and leave the others out, instead of
        refusing evaluations whose items differ (e.g. a result file that did not parse for
        one system). The items each holds and those left out are counted in the result's
        ``metadata`` (``items_in_candidate``, ``items_in_baseline``,
        ``items_only_in_candidate``, ``items_only_in_baseline``).
    metrics : sequence of str, optional
        The metrics under test: Holm's adjustment runs over these (the result's
        ``family``); the other shared metrics are reported with unadjusted p-values.
        Default: ``primary_metrics``.

    Returns
    -------
    EvaluationComparison
        Per shared metric, over the n_pairs items where both define it:
        d_i = candidate_i - baseline_i, both means, mean(d), its bootstrap
        interval, the sign-flip p-value (``sign_flip_test``, with its ``method``)
        and the Holm adjustment across the family (``holm_adjust``). Metrics
        without any pair get NaN means and p-values and are left out of the adjustment.

    Raises
    ------
    ValueError
        If the identifier sets differ (the message names up to five) and not
        ``shared_only``, they share no item, an evaluation holds an identifier twice,
        no metric is shared (a metric is shared when some item of each evaluation has
        it), ``metrics`` names one that is not shared (the message lists those that
        are), ``kind`` is unknown, or a resampling argument is invalid. All but the
        last two are :class:`~kagreport.InputError` (a ValueError and a KagreportError);
        differing identifier sets are its subclass
        :class:`~kagreport.evaluation.DifferentItemsError`, no shared item (with or
        without ``shared_only``) its subclass
        :class:`~kagreport.evaluation.NoSharedItemsError` (a UsageError too).

    Notes
    -----
    Judges both evaluations name but with different identities are not refused
    (the spec's decision) but recorded in ``judge_mismatch``.
    """
    _check_settings(kind, n_resamples, seed, confidence)
    candidate_items = list(candidate.items)
    baseline_items = list(baseline.items)
    candidate_index = _identifier_index(candidate_items, "candidate")
    baseline_index = _identifier_index(baseline_items, "baseline")
    only_candidate = set(candidate_index) - set(baseline_index)
    only_baseline = set(baseline_index) - set(candidate_index)
    metadata: dict[str, Any] = {}
    if shared_only:
        if len(only_candidate) == len(candidate_items):
            raise NoSharedItemsError(
                "the two evaluations share no item",
                only_candidate=len(only_candidate),
                only_baseline=len(only_baseline),
            )
        candidate_items = [i for i in candidate_items if i.identifier in baseline_index]
        metadata = {
            "items_in_candidate": len(candidate_index),
            "items_in_baseline": len(baseline_index),
            "items_only_in_candidate": len(only_candidate),
            "items_only_in_baseline": len(only_baseline),
        }
    elif only_candidate or only_baseline:
        parts = []
        if only_candidate:
            parts.append(f"only in the candidate: {_few(only_candidate)}")
        if only_baseline:
            parts.append(f"only in the baseline: {_few(only_baseline)}")
        if len(only_candidate) == len(candidate_items):
            # Not "compare on the shared ones": there are none.
            raise NoSharedItemsError(
                "the two evaluations share no item (they hold different items); "
                + "; ".join(parts),
                only_candidate=len(only_candidate),
                only_baseline=len(only_baseline),
            )
        raise DifferentItemsError(
            "the two evaluations hold different items (compare on the shared ones with "
            "shared_only=True); " + "; ".join(parts),
            only_candidate=len(only_candidate),
            only_baseline=len(only_baseline),
        )
    # Baseline items in the candidate's order, so row i of every column is one pair.
    paired_baseline = [baseline_items[baseline_index[item.identifier]] for item in candidate_items]

    shared = sorted(_metric_names(candidate_items) & _metric_names(baseline_items))
    if not shared:
        raise InputError("the two evaluations share no metric")

    mismatch: dict[str, dict[str, Any]] = {}
    for name in sorted(set(candidate.judges) & set(baseline.judges)):
        mine, theirs = candidate.judges[name], baseline.judges[name]
        if canonical(mine) != canonical(theirs):
            mismatch[name] = {"candidate": jsonable(mine), "baseline": jsonable(theirs)}

    family = (
        primary_metrics(candidate, baseline, shared, kind)
        if metrics is None
        else _family(kind, shared, metrics)
    )
    return compare_scores(
        {metric: _column(candidate_items, metric) for metric in shared},
        {metric: _column(paired_baseline, metric) for metric in shared},
        kind=kind,
        metrics=family,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        candidate_label=_label(candidate, candidate_label, "candidate"),
        baseline_label=_label(baseline, baseline_label, "baseline"),
        judge_mismatch=mismatch,
        metadata=metadata,
    )


def _score_columns(
    candidate: Mapping[str, npt.ArrayLike],
    baseline: Mapping[str, npt.ArrayLike],
    shared: Sequence[str],
) -> tuple[dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]], int | None]:
    """Each shared metric's two score arrays, checked (1-D numbers, no infinity, one length),
    and that length (None without metrics); ValueError naming the system and the metric."""
    columns: dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}
    n_items: int | None = None
    for metric in shared:
        pair = []
        for which, scores in (("candidate", candidate), ("baseline", baseline)):
            try:
                values = np.asarray(scores[metric], dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"the {which}'s scores of {metric!r} are not numbers") from None
            if values.ndim != 1:
                raise ValueError(
                    f"the {which}'s scores of {metric!r} must be one-dimensional, "
                    f"not of shape {values.shape}"
                )
            if np.isinf(values).any():
                raise ValueError(f"the {which}'s scores of {metric!r} hold an infinity")
            if n_items is None:
                n_items = values.size
            elif values.size != n_items:
                raise ValueError(
                    f"the {which}'s scores of {metric!r} hold {values.size} items, not {n_items}"
                )
            pair.append(values)
        columns[metric] = (pair[0], pair[1])
    return columns, n_items


def _metric_row(
    metric: str,
    c: np.ndarray[Any, Any],
    b: np.ndarray[Any, Any],
    n_resamples: int,
    seed: int,
    confidence: float,
) -> dict[str, Any]:
    """One metric's comparison over the items both systems scored (a MetricComparison's
    fields but the Holm p-value)."""
    both = ~(np.isnan(c) | np.isnan(b))
    c, b = c[both], b[both]
    if c.size == 0:
        return {
            "metric": metric, "n_pairs": 0, "candidate_mean": math.nan,
            "baseline_mean": math.nan, "mean_difference": math.nan, "ci_low": math.nan,
            "ci_high": math.nan, "p_value": math.nan, "exact": False, "n_resamples": 0,
            "n_nonzero": 0, "method": "none", "variance": math.nan,
        }  # fmt: skip
    try:
        d = paired_differences(c, b)
    except ValueError:
        raise InputError(f"the differences of {metric!r} overflow (scores near ±1.8e308)") from None
    test = sign_flip_test(d, n_resamples=n_resamples, seed=seed)
    interval = bootstrap_mean_interval(d, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return {
        "metric": metric, "n_pairs": int(d.size), "candidate_mean": exact_mean(c),
        "baseline_mean": exact_mean(b), "mean_difference": test.statistic,
        "ci_low": interval.low, "ci_high": interval.high, "p_value": test.p_value,
        "exact": test.exact,
        "n_resamples": test.n_resamples, "n_nonzero": test.n_nonzero, "method": test.method,
        "variance": _mean_square(d),
    }  # fmt: skip


def _mean_square(d: np.ndarray[Any, Any]) -> float:
    """sum(d**2) / n, the mean square a verdict's interval and power use
    (:attr:`MetricComparison.variance`); NaN when it overflows (differences near 1e308)."""
    with np.errstate(over="ignore"):
        squares = d * d
    value = math.fsum(squares.tolist()) / d.size if np.isfinite(squares).all() else math.nan
    return value if math.isfinite(value) else math.nan


def same_hypotheses(
    columns: Mapping[str, Sequence[npt.ArrayLike]], names: Sequence[str]
) -> dict[str, str]:
    """Metrics that are the same hypothesis as an earlier one of ``names``.

    Two metrics whose every column is equal item by item (NaN equal to NaN) are one
    hypothesis, e.g. an Inspect ``choice`` scorer and the ``correct`` derived from it:
    tested once, they keep Holm's family from counting it twice.

    Parameters
    ----------
    columns : mapping of str to sequence of array_like
        Metric -> its score arrays (one per system, each of shape (n,)).
    names : sequence of str
        The metrics to group, in order of preference: the first of each group stands
        for it.

    Returns
    -------
    dict of str to str
        Each later member of a group -> the group's first metric; a metric equal to no
        earlier one is absent.
    """
    same: dict[str, str] = {}
    kept: list[tuple[str, list[np.ndarray[Any, Any]]]] = []
    for name in names:
        arrays = [np.asarray(a, dtype=np.float64) for a in columns[name]]
        for first, theirs in kept:
            if len(arrays) == len(theirs) and all(
                x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
                for x, y in zip(arrays, theirs, strict=True)
            ):
                same[name] = first
                break
        else:
            kept.append((name, arrays))
    return same


# Over 80 lines only with its docstring (a public function's parameters, errors, sources).
def compare_scores(
    candidate: Mapping[str, npt.ArrayLike],
    baseline: Mapping[str, npt.ArrayLike],
    *,
    kind: str = "answers",
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
    candidate_label: str = "candidate",
    baseline_label: str = "baseline",
    judge_mismatch: Mapping[str, Mapping[str, Any]] | None = None,
    metadata: Mapping[str, Any] | None = None,
    metrics: Sequence[str] | None = None,
) -> EvaluationComparison:
    """Paired comparison of two systems from aligned per-item scores, metric by metric.

    The array form of :func:`compare_items`, for callers that already hold the
    scores in columns (a graded kag run, a DataFrame): no item objects are built.

    Parameters
    ----------
    candidate, baseline : mapping of str to array_like, each of shape (n,)
        Metric name -> per-item scores. Row ``i`` of every array is the same item
        in both systems; NaN where a metric is undefined for an item (infinities are
        refused). The metrics compared are those both mappings hold.
    kind : {"answers", "retrieval"}, default "answers"
        The kind of evaluations compared (recorded in the result).
    n_resamples, seed, confidence
        As :func:`compare_items`.
    candidate_label, baseline_label : str
        Labels recorded in the result.
    judge_mismatch : mapping, optional
        Recorded as :attr:`EvaluationComparison.judge_mismatch`.
    metadata : mapping, optional
        Recorded as :attr:`EvaluationComparison.metadata` (JSON-compatible).
    metrics : sequence of str, optional
        The metrics under test (Holm's family). Default: ``mrr`` alone for retrieval
        when shared (see ``primary_metrics``), else every shared metric (the
        arrays carry no judge identities to tell duplicates by). A metric equal to
        another of the family on every item (:func:`same_hypotheses`) is tested once:
        it carries that metric's p-values and stands in ``settings["same_as"]``, not
        in the family.

    Returns
    -------
    EvaluationComparison
        As :func:`compare_items`, with ``n_items = n``. Per metric, d_i = c_i - b_i
        with rounding dust set to 0 (``paired_differences``: within 1e-12 of the
        larger score, a tie); the means are summed exactly (``math.fsum``). The
        sign-flip test and the bootstrap see the differences in sorted order, so the
        result does not depend on the order of the rows.
        ``settings["proportions"]`` lists the metrics scored 0 or 1 on every item of both
        sides (``kagreport._format.is_proportion``), which the views show as
        percentages with differences in points; absent when there is none.

    Raises
    ------
    ValueError
        If an array is not one-dimensional or not numeric, holds an infinity, the
        arrays differ in length, differences overflow, no metric is shared, ``metrics``
        names one that is not shared, ``kind`` is unknown, or a resampling argument is
        invalid.
    """
    n_resamples, seed = _check_settings(kind, n_resamples, seed, confidence)
    shared = sorted(set(candidate) & set(baseline))
    if not shared:
        raise InputError("the two systems share no metric")
    columns, n_items = _score_columns(candidate, baseline, shared)
    family = _family(kind, shared, metrics)
    same = same_hypotheses(columns, family)
    rows: dict[str, dict[str, Any]] = {}
    for metric in shared:
        if metric in same:  # equal columns: the same test, run once
            rows[metric] = {**rows[same[metric]], "metric": metric}
            continue
        c, b = columns[metric]
        rows[metric] = _metric_row(metric, c, b, n_resamples, seed, confidence)

    # A metric without pairs is no hypothesis tested (Holm would skip its NaN anyway),
    # and a metric equal to another on every item is that hypothesis again.
    family = [m for m in family if rows[m]["n_pairs"] > 0 and m not in same]
    adjusted = dict(zip(family, holm_adjust([rows[m]["p_value"] for m in family]), strict=True))
    adjusted.update({m: adjusted[first] for m, first in same.items() if first in adjusted})
    results = {
        metric: MetricComparison(**rows[metric], p_value_holm=adjusted.get(metric, math.nan))
        for metric in shared
    }
    # Metrics scored 0 or 1 on every item of both sides: their views show percentages and
    # differences in points, as the reports' own pages do (their items are not kept here).
    proportions = [m for m in shared if is_proportion(m, np.concatenate(columns[m]).tolist())]
    return EvaluationComparison(
        kind=kind,
        candidate=candidate_label,
        baseline=baseline_label,
        metrics=results,
        n_items=n_items or 0,
        judge_mismatch=dict(judge_mismatch or {}),
        settings={
            "n_resamples": n_resamples,
            "seed": seed,
            "confidence": float(confidence),
            "tolerance": TOLERANCE,
            "test": "paired sign-flip, two-sided",
            "interval": "percentile bootstrap",
            "adjustment": "holm",
            "dust": DUST,
            **({"same_as": same} if same else {}),
            **({"proportions": proportions} if proportions else {}),
        },
        metadata=dict(metadata or {}),
        family=tuple(family),
    )
