"""Paired comparison of two evaluations: sign-flip test, bootstrap interval, Holm.

:func:`compare_items` pairs the items of two evaluations by identifier and, per
metric both report, tests whether the mean paired difference is zero with an
exact or Monte Carlo sign-flip (randomisation) test, gives a percentile
bootstrap interval of that mean, and adjusts the p-values across metrics with
Holm's step-down procedure. The result is an :class:`EvaluationComparison`,
serialisable like the evaluations themselves (ANSWER_EVALUATION_SPEC.md,
"compare" and "EvaluationComparison").

The building blocks are public too: :func:`sign_flip_test`,
:func:`bootstrap_mean_interval` and :func:`holm_adjust`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kagreport._atomic import write_atomic
from kagreport.evaluation._serialize import (
    canonical,
    dumps_document,
    format_for,
    jsonable,
    loads_document,
    write_document,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "DifferentItemsError",
    "EvaluationComparison",
    "MetricComparison",
    "SignFlipResult",
    "bootstrap_mean_interval",
    "compare_items",
    "compare_scores",
    "holm_adjust",
    "sign_flip_test",
]

SCHEMA = "kagreport.EvaluationComparison"
SCHEMA_VERSION = 1
KINDS = ("answers", "retrieval")

#: Relative tie tolerance of the sign-flip test, as a fraction of sum(|d|).
TOLERANCE = 1e-12

# Memory bounds of the resampling loops (bytes of the largest temporary block).
_SIGN_BLOCK_BYTES = 8 * 2**20
_BOOTSTRAP_BLOCK_BYTES = 16 * 2**20
# Resamples (columns) handled together; bounds the per-resample accumulators.
_MAX_COLUMNS = 2**16
# Above this many distinct values the bootstrap draws indices instead of counts.
_MAX_DISTINCT_FOR_MULTINOMIAL = 64

# Row b of _SIGNS holds the signs that byte b assigns to the 8 differences of a
# group: bit j set -> difference j is negated. Byte 0 is the observed assignment.
_BITS = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1


# --------------------------------------------------------------------------------------
# Sign-flip test
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignFlipResult:
    """The result of :func:`sign_flip_test`.

    Attributes
    ----------
    statistic : float
        Mean of the differences over all pairs, zeros included (NaN when there are none).
    p_value : float
        Two-sided p-value in (0, 1]: the share of sign assignments whose mean is at
        least as far from 0 as the observed one (Monte Carlo: ``(hits + 1) / (n + 1)``).
    exact : bool
        True when all ``2**n_nonzero`` assignments were enumerated.
    n_resamples : int
        Assignments evaluated: ``2**n_nonzero`` when exact, else the random ones drawn.
    n_nonzero : int
        Number of non-zero differences (m); zeros do not change the statistic under
        any assignment, so only these are flipped.
    """

    statistic: float
    p_value: float
    exact: bool
    n_resamples: int
    n_nonzero: int


def _as_differences(differences: npt.ArrayLike, name: str = "differences") -> np.ndarray[Any, Any]:
    """Validate and normalise paired differences to a 1-D float64 array."""
    try:
        array = np.asarray(differences, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be numbers: {exc}") from None
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, not of shape {array.shape}")
    if not np.isfinite(array).all():
        bad = "NaN" if np.isnan(array).any() else "an infinity"
        raise ValueError(f"`{name}` contains {bad}; leave undefined pairs out")
    return array


def _check_n_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"`n_resamples` must be a positive integer, not {n_resamples!r}")
    if not 1 <= n_resamples < 2**62:
        raise ValueError(f"`n_resamples` must be in [1, 2**62), not {n_resamples!r}")
    return int(n_resamples)


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, not {seed!r}")
    return int(seed)


def _sign_flip_test_iv(
    differences: npt.ArrayLike, n_resamples: int, seed: int
) -> tuple[np.ndarray[Any, Any], int, int]:
    return _as_differences(differences), _check_n_resamples(n_resamples), _check_seed(seed)


def _group_tables(groups: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The 256 signed sums of each group of 8 differences.

    ``groups`` has shape (k, 8); the result has shape (k, 256), entry [g, b] being
    sum_j s_j x[g, j] with s_j = -1 where bit j of b is set, else +1. Every entry
    is summed in the same order (j = 0..7, from 0.0), so entry 255 - b is exactly
    minus entry b and entry 0 is exactly :func:`_group_sums`.
    """
    table = np.zeros((groups.shape[0], 1))
    for j in range(8):
        column = groups[:, j : j + 1]
        # New bit j: the lower half keeps +x_j (bit clear), the upper half gets -x_j.
        table = np.concatenate((table + column, table - column), axis=1)
    return table


def _group_sums(groups: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Column 0 of :func:`_group_tables` (the observed signs), with the same roundings."""
    sums = np.zeros(groups.shape[0])
    for j in range(8):
        sums = sums + groups[:, j]
    return sums


def _pad_to_groups(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    n_groups = -(-x.size // 8)
    padded = np.zeros(n_groups * 8)
    padded[: x.size] = x  # zero padding: its sign never matters
    return padded.reshape(n_groups, 8)


def _signed_sums(
    groups: np.ndarray[Any, Any], byte_rows: Iterator[np.ndarray[Any, Any]], n_columns: int
) -> np.ndarray[Any, Any]:
    """Sum of the signed differences for ``n_columns`` sign assignments.

    ``byte_rows`` yields blocks of shape (k, n_columns), uint8, for consecutive
    groups (rows) until all groups are covered; column c of the stacked blocks is
    one assignment (8 signs per byte). The sum is accumulated group by group in
    order 0, 1, ... for every column, exactly as :func:`_observed_sum` does, so
    the identity assignment reproduces the observed sum bit for bit.
    """
    total = np.zeros(n_columns)
    start = 0
    for block in byte_rows:
        tables = _group_tables(groups[start : start + block.shape[0]])
        for row in range(block.shape[0]):
            total += tables[row].take(block[row])
        start += block.shape[0]
    return total


def _observed_sum(groups: np.ndarray[Any, Any]) -> float:
    # Sequential (cumulative) sum over groups: the same additions, in the same
    # order, as _signed_sums performs for the all-zero byte pattern.
    sums = _group_sums(groups)
    return float(np.cumsum(sums)[-1]) if sums.size else 0.0


def _rows_per_block(n_columns: int) -> int:
    return max(1, _SIGN_BLOCK_BYTES // n_columns)


def _random_bytes(
    rng: np.random.Generator, n_groups: int, n_columns: int
) -> Iterator[np.ndarray[Any, Any]]:
    rows = _rows_per_block(n_columns)
    for start in range(0, n_groups, rows):
        k = min(rows, n_groups - start)
        # Raw 64-bit outputs, read as little-endian bytes on every platform: several times
        # faster than Generator.bytes, and each bit is a fair coin all the same.
        words = rng.bit_generator.random_raw(-(-k * n_columns // 8))
        raw = np.asarray(words, dtype="<u8").view(np.uint8)[: k * n_columns]
        yield raw.reshape(k, n_columns)


def _pattern_bytes(first: int, n_columns: int, n_groups: int) -> Iterator[np.ndarray[Any, Any]]:
    # Assignment number p (0 <= p < 2**m) flips difference i when bit i of p is set;
    # group g's byte is bits 8g..8g+7. Pattern 0 is the observed assignment.
    patterns = np.arange(first, first + n_columns, dtype=np.uint64)
    rows = _rows_per_block(n_columns)
    for start in range(0, n_groups, rows):
        k = min(rows, n_groups - start)
        shifts = (8 * np.arange(start, start + k, dtype=np.uint64))[:, None]
        yield ((patterns[None, :] >> shifts) & np.uint64(255)).astype(np.uint8)


def sign_flip_test(
    differences: npt.ArrayLike, *, n_resamples: int = 10000, seed: int = 0
) -> SignFlipResult:
    """Two-sided paired sign-flip (randomisation) test that the mean difference is 0.

    Under the null hypothesis each paired difference is as likely to have either
    sign, so every assignment of signs to the differences is equally likely
    (Fisher 1935, s. 21). The p-value is the share of assignments whose mean is at
    least as far from zero as the observed mean.

    Parameters
    ----------
    differences : array_like, shape (n,)
        Paired differences d_i = candidate_i - baseline_i, finite, in the metric's units.
    n_resamples : int, default 10000
        Budget of sign assignments. All ``2**m`` are enumerated when ``2**m <=
        n_resamples`` (m = non-zero differences), else ``n_resamples`` random ones
        are drawn.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` for the random assignments.

    Returns
    -------
    SignFlipResult
        ``statistic`` = mean(d) over all n pairs, ``p_value``, ``exact``,
        ``n_resamples`` (assignments evaluated), ``n_nonzero`` (m). With no
        differences the statistic is NaN; with m = 0 the p-value is 1.0.

    Raises
    ------
    ValueError
        If ``differences`` is not one-dimensional or holds NaN or an infinity, or
        if ``n_resamples`` or ``seed`` is not a valid integer.

    Notes
    -----
    Zeros keep their value under any sign, so only the m non-zero differences
    x_1..x_m are flipped, and since n is the same for every assignment the test
    compares sums S = sum_i s_i x_i instead of means. An assignment counts as a
    hit when |S*| >= |S_obs| - 1e-12 * sum_i |x_i|. The tolerance is there
    because sums that are equal in exact arithmetic (0.1 + 0.2 against 0.3, or
    two assignments that reach the same value through different terms) differ
    by a few units in the last place once rounded; without it, such ties would be
    counted or not at random. Genuinely distinct sums closer than the tolerance
    are counted as ties too, which errs on the conservative side.

    Exact: p = hits / 2**m, the observed assignment among them (Fisher 1935).
    Monte Carlo: p = (hits + 1) / (n_resamples + 1), counting the observed
    assignment once, which keeps the test valid and p > 0 (Phipson & Smyth 2010).

    Computation: the differences are split into groups of 8 (zero-padded) and
    the 256 signed sums of each group are tabulated; an assignment is then one
    random byte per group and its sum is one table look-up per group. For
    n = 100,000 and 10,000 resamples that is 1.25e8 look-ups instead of 1e9
    multiply-adds. The random bytes come in blocks of at most 8 MiB (two alive
    at a time) with the tables of one block (2 KiB per group), so the working
    memory stays near 20 MiB whatever n and ``n_resamples`` are, beyond a few
    copies of the differences and 8 bytes per resample in chunks of 65,536.
    The observed sum goes through the same additions in the same order as every
    assignment, so the observed assignment always counts as a hit. The random
    bytes are the generator's raw 64-bit outputs read as little-endian bytes
    (``default_rng(seed).bit_generator.random_raw``); they depend only on
    ``seed``, m and ``n_resamples``, so results repeat across runs and platforms.

    References
    ----------
    .. [1] R. A. Fisher (1935), *The Design of Experiments*, s. 21 (Darwin's
       Zea mays data: 1726 of 32768 assignments, two-sided).
    .. [2] M. D. Ernst (2004), "Permutation methods: a basis for exact
       inference", *Statistical Science* 19(4), 676-685.
    .. [3] B. Phipson and G. K. Smyth (2010), "Permutation p-values should never
       be zero", *Statistical Applications in Genetics and Molecular Biology*
       9(1), article 39.

    Examples
    --------
    >>> sign_flip_test([1.0, 2.0, 3.0]).p_value  # only +++ and --- reach |S| >= 6
    0.25
    """
    d, n_resamples, seed = _sign_flip_test_iv(differences, n_resamples, seed)
    statistic = float(d.mean()) if d.size else math.nan
    x = d[d != 0.0]
    m = int(x.size)
    if m == 0:
        return SignFlipResult(statistic, 1.0, exact=True, n_resamples=1, n_nonzero=0)

    groups = _pad_to_groups(x)
    n_groups = groups.shape[0]
    threshold = abs(_observed_sum(groups)) - TOLERANCE * float(np.abs(x).sum())

    if m < 63 and 2**m <= n_resamples:
        total = 2**m
        hits = 0
        for first in range(0, total, _MAX_COLUMNS):
            n_columns = min(_MAX_COLUMNS, total - first)
            sums = _signed_sums(groups, _pattern_bytes(first, n_columns, n_groups), n_columns)
            hits += int(np.count_nonzero(np.abs(sums) >= threshold))
        return SignFlipResult(statistic, hits / total, exact=True, n_resamples=total, n_nonzero=m)

    rng = np.random.default_rng(seed)
    hits = 0
    for first in range(0, n_resamples, _MAX_COLUMNS):
        n_columns = min(_MAX_COLUMNS, n_resamples - first)
        sums = _signed_sums(groups, _random_bytes(rng, n_groups, n_columns), n_columns)
        hits += int(np.count_nonzero(np.abs(sums) >= threshold))
    p_value = (hits + 1) / (n_resamples + 1)
    return SignFlipResult(statistic, p_value, exact=False, n_resamples=n_resamples, n_nonzero=m)


# --------------------------------------------------------------------------------------
# Bootstrap interval
# --------------------------------------------------------------------------------------


def bootstrap_mean_interval(
    differences: npt.ArrayLike,
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean paired difference.

    Parameters
    ----------
    differences : array_like, shape (n,)
        Paired differences, finite, in the metric's units.
    n_resamples : int, default 10000
        Bootstrap resamples (each of n pairs drawn with replacement).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
        resampled means (numpy's default linear interpolation), in the metric's
        units; ``(nan, nan)`` when there are no differences.

    Raises
    ------
    ValueError
        If ``differences`` is not one-dimensional or holds NaN or an infinity, or
        if ``n_resamples``, ``seed`` or ``confidence`` is out of range.

    Notes
    -----
    The percentile interval of Efron and Tibshirani (1993, ch. 13). Resampling n
    pairs with replacement is the same as drawing the counts of each distinct
    value from Multinomial(n, counts / n); when there are at most 64 distinct
    values (0/1 correctness gives at most 3 differences: -1, 0, 1), the counts
    are drawn directly, which costs O(distinct values) per resample instead of
    O(n). Otherwise indices are drawn, in blocks of about 16 MiB.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani (1993), *An Introduction to the
       Bootstrap*, Chapman & Hall, ch. 13.
    """
    d = _as_differences(differences)
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    _check_confidence(confidence)
    if d.size == 0:
        return (math.nan, math.nan)
    n = d.size
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    values, counts = np.unique(d, return_counts=True)
    if values.size <= _MAX_DISTINCT_FOR_MULTINOMIAL:
        probabilities = counts / n
        for first in range(0, n_resamples, _MAX_COLUMNS):
            size = min(_MAX_COLUMNS, n_resamples - first)
            drawn = rng.multinomial(n, probabilities, size=size)  # (size, distinct values)
            means[first : first + size] = drawn @ values / n
    else:
        # int64 indices plus float64 values: 16 bytes per drawn pair.
        per_block = max(1, _BOOTSTRAP_BLOCK_BYTES // (16 * n))
        looked_up = np.empty((min(per_block, n_resamples), n))
        for first in range(0, n_resamples, per_block):
            size = min(per_block, n_resamples - first)
            indices = rng.integers(0, n, size=(size, n))
            out = looked_up[:size]
            np.take(d, indices, out=out, mode="clip")  # indices < n: "clip" never clips
            means[first : first + size] = out.sum(axis=1) / n
    alpha = 1.0 - float(confidence)
    low, high = np.quantile(means, [alpha / 2, 1.0 - alpha / 2])
    return (float(low), float(high))


# --------------------------------------------------------------------------------------
# Holm
# --------------------------------------------------------------------------------------


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of p-values for multiple comparisons.

    Parameters
    ----------
    p_values : sequence of float, length k
        Unadjusted p-values in [0, 1]; NaN entries (tests not run) are passed
        through as NaN and are not counted among the tests.

    Returns
    -------
    list of float, length k
        Adjusted p-values in the input order: with the t defined p-values sorted
        ascending, p_(i) -> max_{j <= i} min(1, (t - j + 1) p_(j)). Monotone in the
        unadjusted p-values and capped at 1. Rejecting where the adjusted value is
        below alpha controls the family-wise error rate at alpha.

    Raises
    ------
    ValueError
        If a p-value is outside [0, 1].

    References
    ----------
    .. [1] S. Holm (1979), "A simple sequentially rejective multiple test
       procedure", *Scandinavian Journal of Statistics* 6(2), 65-70.

    Examples
    --------
    >>> [round(p, 12) for p in holm_adjust([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    p = np.asarray([float(v) for v in p_values], dtype=np.float64)
    defined = ~np.isnan(p)
    if ((p[defined] < 0.0) | (p[defined] > 1.0)).any():
        raise ValueError(f"`p_values` must lie in [0, 1] (or be NaN), not {list(p_values)!r}")
    adjusted = np.full(p.shape, math.nan)
    positions = np.flatnonzero(defined)
    t = positions.size
    if t:
        order = np.argsort(p[positions], kind="stable")
        ranked = p[positions][order]
        stepped = np.minimum(1.0, np.maximum.accumulate((t - np.arange(t)) * ranked))
        adjusted[positions[order]] = stepped
    return [float(v) for v in adjusted]


# --------------------------------------------------------------------------------------
# Result objects
# --------------------------------------------------------------------------------------


def _boolean(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"`{name}` must be true or false, not {value!r}")
    return value


def _float_or_nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _canonical_float(value: float) -> float | None:
    return None if math.isnan(value) else value


@dataclass(frozen=True, eq=False)
class MetricComparison:
    """The paired comparison of one metric.

    Equality is NaN-aware (NaN equals NaN), so a comparison read back from a file
    equals the one written.

    Attributes
    ----------
    metric : str
        Metric name.
    n_pairs : int
        Items where both evaluations define the metric.
    candidate_mean, baseline_mean : float
        Means over those ``n_pairs`` items (NaN when there are none); in the metric's units.
    mean_difference : float
        Mean of candidate - baseline over those items (the test statistic).
    ci_low, ci_high : float
        Percentile bootstrap interval of ``mean_difference`` at the comparison's confidence.
    p_value : float
        Two-sided sign-flip p-value (NaN when ``n_pairs`` is 0).
    p_value_holm : float
        ``p_value`` adjusted by Holm across the metrics of the comparison.
    exact : bool
        Whether the p-value enumerated every sign assignment.
    n_resamples : int
        Sign assignments evaluated (``2**n_nonzero`` when exact; 0 when ``n_pairs`` is 0).
    n_nonzero : int
        Pairs with a non-zero difference (the only ones the test flips).
    """

    metric: str
    n_pairs: int
    candidate_mean: float
    baseline_mean: float
    mean_difference: float
    ci_low: float
    ci_high: float
    p_value: float
    p_value_holm: float
    exact: bool
    n_resamples: int
    n_nonzero: int

    def to_dict(self) -> dict[str, Any]:
        """A flat mapping of the fields, in declaration order (NaN kept as NaN)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricComparison:
        """Rebuild from :meth:`to_dict` output; a missing or None float reads as NaN.

        Raises
        ------
        ValueError
            If ``metric`` or a count is missing or not of its type.
        """
        for key in ("n_pairs", "n_resamples", "n_nonzero"):
            value = data.get(key)
            if key in data and (
                not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63
            ):
                raise ValueError(
                    f"not a metric comparison row: `{key}` must be a count (an integer >= 0), "
                    f"not {value!r}"
                )
        try:
            return cls(
                metric=str(data["metric"]),
                n_pairs=int(data["n_pairs"]),
                candidate_mean=_float_or_nan(data.get("candidate_mean")),
                baseline_mean=_float_or_nan(data.get("baseline_mean")),
                mean_difference=_float_or_nan(data.get("mean_difference")),
                ci_low=_float_or_nan(data.get("ci_low")),
                ci_high=_float_or_nan(data.get("ci_high")),
                p_value=_float_or_nan(data.get("p_value")),
                p_value_holm=_float_or_nan(data.get("p_value_holm")),
                exact=_boolean(data["exact"], "exact"),
                n_resamples=int(data["n_resamples"]),
                n_nonzero=int(data["n_nonzero"]),
            )
        except KeyError as exc:
            raise ValueError(f"not a metric comparison row: it lacks {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a metric comparison row: {exc}") from None

    def _key(self) -> tuple[Any, ...]:
        return tuple(
            _canonical_float(v) if isinstance(v, float) else v
            for v in (getattr(self, f.name) for f in fields(self))
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetricComparison):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True, eq=False)
class EvaluationComparison:
    """A paired comparison of a candidate evaluation against a baseline.

    Built by :func:`compare_items` (``AnswerEvaluation.compare``). Equality is
    NaN-aware, so ``EvaluationComparison.read(path) == x`` after ``x.write(path)``.

    Attributes
    ----------
    kind : str
        ``"answers"`` or ``"retrieval"``: the kind of evaluations compared.
    candidate, baseline : str
        Labels of the two evaluations (the candidate is the one whose differences
        are positive when it scores higher).
    metrics : Mapping[str, MetricComparison]
        Metric name -> its comparison, in sorted metric order.
    n_items : int
        Paired items (both evaluations hold the same identifiers).
    judge_mismatch : Mapping[str, Mapping[str, Any]]
        Judge name -> ``{"candidate": identity, "baseline": identity}`` for judges
        both evaluations used under different identities (then part of a
        difference is the judges'); empty when there is none.
    settings : Mapping[str, Any]
        ``n_resamples``, ``seed``, ``confidence``, ``tolerance`` and the names of the
        test, interval and adjustment used.
    metadata : Mapping[str, Any]
        Free-form JSON-compatible description (default empty).

    Raises
    ------
    ValueError
        If ``kind`` is not one of the two kinds, or a key of ``metrics`` differs
        from its comparison's ``metric``.

    Notes
    -----
    Serialised documents carry ``"schema": "kagreport.EvaluationComparison"`` and
    ``"schema_version": 1``; ``metrics`` is written as a list of flat rows. JSON
    writes NaN as ``null``; TOML cannot hold null, so keys whose value is None
    (in ``metadata`` or a judge identity) are omitted there and read back absent.
    """

    kind: str
    candidate: str
    baseline: str
    metrics: Mapping[str, MetricComparison]
    n_items: int
    judge_mismatch: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"`kind` must be one of {', '.join(KINDS)}, not {self.kind!r}")
        for name, comparison in self.metrics.items():
            if name != comparison.metric:
                raise ValueError(f"metrics[{name!r}] holds metric {comparison.metric!r}")
        object.__setattr__(self, "metrics", {k: self.metrics[k] for k in sorted(self.metrics)})

    def significant(self, alpha: float = 0.05) -> tuple[str, ...]:
        """Metrics whose Holm-adjusted p-value is below ``alpha``, in sorted order.

        Raises
        ------
        ValueError
            If ``alpha`` is not in (0, 1].
        """
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha <= 1:
            raise ValueError(f"`alpha` must be in (0, 1], not {alpha!r}")
        # NaN < alpha is False: metrics without pairs are never significant.
        return tuple(name for name, c in self.metrics.items() if c.p_value_holm < alpha)

    def _repr_html_(self) -> str:
        from kagreport.evaluation._text import render_comparison_html

        return render_comparison_html(self)

    def to_rows(self) -> list[dict[str, Any]]:
        """One flat row per metric: ``candidate``, ``baseline``, then the metric's fields."""
        return [
            {"candidate": self.candidate, "baseline": self.baseline, **c.to_dict()}
            for c in self.metrics.values()
        ]

    def to_dict(self) -> dict[str, Any]:
        """The comparison as a JSON-compatible mapping (NaN kept), schema-versioned."""
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "n_items": self.n_items,
            "settings": jsonable(self.settings),
            "judge_mismatch": jsonable(self.judge_mismatch),
            "metadata": jsonable(self.metadata),
            "metrics": [c.to_dict() for c in self.metrics.values()],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvaluationComparison:
        """Rebuild from :meth:`to_dict` output (or a parsed file).

        Raises
        ------
        ValueError
            If the schema or its version is not this one, or a field is missing
            or malformed.
        """
        schema = data.get("schema")
        if schema != SCHEMA:
            raise ValueError(f"not a {SCHEMA} document (schema {schema!r})")
        version = data.get("schema_version")
        if isinstance(version, bool) or version != SCHEMA_VERSION:
            raise ValueError(
                f"{SCHEMA} schema version {version!r} is not supported "
                f"(this kagreport reads version {SCHEMA_VERSION})"
            )
        try:
            rows = data["metrics"]
            if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
                raise TypeError("`metrics` must be a list of rows (mappings)")
            metrics = [MetricComparison.from_dict(row) for row in rows]
            if len({c.metric for c in metrics}) != len(metrics):
                raise TypeError("`metrics` names a metric twice")
            n_items = data["n_items"]
            if not isinstance(n_items, int) or isinstance(n_items, bool) or n_items < 0:
                raise TypeError(f"`n_items` must be a count (an integer >= 0), not {n_items!r}")
            for key in ("judge_mismatch", "settings", "metadata"):
                if not isinstance(data.get(key) or {}, Mapping):
                    raise TypeError(f"`{key}` must be a mapping")
            mismatch = data.get("judge_mismatch") or {}
            if not all(isinstance(v, Mapping) for v in mismatch.values()):
                raise TypeError("`judge_mismatch` must map judge names to mappings")
            return cls(
                kind=str(data["kind"]),
                candidate=str(data["candidate"]),
                baseline=str(data["baseline"]),
                metrics={c.metric: c for c in metrics},
                n_items=n_items,
                judge_mismatch={str(k): dict(v) for k, v in mismatch.items()},
                settings=dict(data.get("settings") or {}),
                metadata=dict(data.get("metadata") or {}),
            )
        except KeyError as exc:
            raise ValueError(f"malformed {SCHEMA} document: it lacks {exc}") from None
        except TypeError as exc:
            raise ValueError(f"malformed {SCHEMA} document: {exc}") from None

    def dumps(self, format: str = "json") -> str:
        """Serialise to ``"json"``, ``"jsonl"`` (a header line, then one line per
        metric), ``"yaml"`` or ``"toml"``.

        Raises
        ------
        ValueError
            For an unknown format.
        """
        return dumps_document(self.to_dict(), format_for("", format), items_key="metrics")

    def write(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Write atomically; the format defaults to the path's suffix.

        Raises
        ------
        ValueError
            For an unknown format or suffix.
        OSError
            If the file cannot be written (an existing file is left intact).
        """
        fmt = format_for(path, format)
        if fmt == "jsonl":
            # write_document has no items_key: metric rows would not get lines of their own.
            write_atomic(path, self.dumps("jsonl"))
        else:
            write_document(self.to_dict(), path, fmt)

    @classmethod
    def read(cls, path: str | os.PathLike[str], format: str | None = None) -> EvaluationComparison:
        """Read a comparison written by :meth:`write` (JSON, JSONL, YAML or TOML).

        Raises
        ------
        ValueError
            If the file does not parse, or is not a comparison of this schema version.
        OSError
            If the file cannot be read.
        """
        fmt = format_for(path, format)
        with open(path, encoding="utf-8-sig") as file:
            text = file.read()
        return cls.from_dict(loads_document(text, fmt, items_key="metrics"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvaluationComparison):
            return NotImplemented
        return bool(canonical(self.to_dict()) == canonical(other.to_dict()))

    __hash__ = None  # type: ignore[assignment]


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
            raise ValueError(f"the {which} holds item {item.identifier!r} twice")
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


class DifferentItemsError(ValueError):
    """Two evaluations compared item by item do not hold the same items.

    Attributes
    ----------
    only_candidate, only_baseline : int
        How many items only one of them holds.
    """

    def __init__(self, message: str, *, only_candidate: int, only_baseline: int) -> None:
        super().__init__(message)
        self.only_candidate = only_candidate
        self.only_baseline = only_baseline


def _check_confidence(confidence: float) -> None:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ValueError(f"`confidence` must be a number in (0, 1), not {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"`confidence` must be in (0, 1), not {confidence!r}")


def _check_settings(kind: str, n_resamples: int, seed: int, confidence: float) -> tuple[int, int]:
    """Validate the comparison settings; return ``(n_resamples, seed)`` checked."""
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {', '.join(KINDS)}, not {kind!r}")
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    _check_confidence(confidence)
    return n_resamples, seed


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
        one system). The counts left out are recorded in the result's ``metadata``
        (``items_only_in_candidate``, ``items_only_in_baseline``).

    Returns
    -------
    EvaluationComparison
        Per shared metric, over the n_pairs items where both define it:
        d_i = candidate_i - baseline_i, both means, mean(d), its bootstrap
        interval, the sign-flip p-value (:func:`sign_flip_test`) and the Holm
        adjustment across metrics (:func:`holm_adjust`). Metrics without any
        pair get NaN means and p-values and are left out of the adjustment.

    Raises
    ------
    ValueError
        If the identifier sets differ (the message names up to five) and not
        ``shared_only``, they share no item, an evaluation holds an identifier twice,
        no metric is shared (a metric is shared when some item of each evaluation has
        it), ``kind`` is unknown, or a resampling argument is invalid.

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
            raise ValueError("the two evaluations share no item")
        candidate_items = [i for i in candidate_items if i.identifier in baseline_index]
        metadata = {
            "items_only_in_candidate": len(only_candidate),
            "items_only_in_baseline": len(only_baseline),
        }
    elif only_candidate or only_baseline:
        parts = []
        if only_candidate:
            parts.append(f"only in the candidate: {_few(only_candidate)}")
        if only_baseline:
            parts.append(f"only in the baseline: {_few(only_baseline)}")
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
        raise ValueError("the two evaluations share no metric")

    mismatch: dict[str, dict[str, Any]] = {}
    for name in sorted(set(candidate.judges) & set(baseline.judges)):
        mine, theirs = candidate.judges[name], baseline.judges[name]
        if canonical(mine) != canonical(theirs):
            mismatch[name] = {"candidate": jsonable(mine), "baseline": jsonable(theirs)}

    return compare_scores(
        {metric: _column(candidate_items, metric) for metric in shared},
        {metric: _column(paired_baseline, metric) for metric in shared},
        kind=kind,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        candidate_label=_label(candidate, candidate_label, "candidate"),
        baseline_label=_label(baseline, baseline_label, "baseline"),
        judge_mismatch=mismatch,
        metadata=metadata,
    )


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

    Returns
    -------
    EvaluationComparison
        As :func:`compare_items`, with ``n_items = n``.

    Raises
    ------
    ValueError
        If an array is not one-dimensional or not numeric, holds an infinity, the
        arrays differ in length, differences overflow, no metric is shared, ``kind``
        is unknown, or a resampling argument is invalid.
    """
    n_resamples, seed = _check_settings(kind, n_resamples, seed, confidence)
    shared = sorted(set(candidate) & set(baseline))
    if not shared:
        raise ValueError("the two systems share no metric")
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

    rows: dict[str, dict[str, Any]] = {}
    for metric in shared:
        c, b = columns[metric]
        both = ~(np.isnan(c) | np.isnan(b))
        c, b = c[both], b[both]
        if c.size == 0:
            rows[metric] = {
                "metric": metric, "n_pairs": 0, "candidate_mean": math.nan,
                "baseline_mean": math.nan, "mean_difference": math.nan, "ci_low": math.nan,
                "ci_high": math.nan, "p_value": math.nan, "exact": False, "n_resamples": 0,
                "n_nonzero": 0,
            }  # fmt: skip
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            d = c - b
        if not np.isfinite(d).all():
            raise ValueError(f"the differences of {metric!r} overflow (scores near ±1.8e308)")
        test = sign_flip_test(d, n_resamples=n_resamples, seed=seed)
        low, high = bootstrap_mean_interval(
            d, n_resamples=n_resamples, seed=seed, confidence=confidence
        )
        rows[metric] = {
            "metric": metric, "n_pairs": int(d.size), "candidate_mean": float(c.mean()),
            "baseline_mean": float(b.mean()), "mean_difference": test.statistic, "ci_low": low,
            "ci_high": high, "p_value": test.p_value, "exact": test.exact,
            "n_resamples": test.n_resamples, "n_nonzero": test.n_nonzero,
        }  # fmt: skip

    adjusted = holm_adjust([rows[metric]["p_value"] for metric in shared])
    metrics = {
        metric: MetricComparison(**rows[metric], p_value_holm=p_holm)
        for metric, p_holm in zip(shared, adjusted, strict=True)
    }
    return EvaluationComparison(
        kind=kind,
        candidate=candidate_label,
        baseline=baseline_label,
        metrics=metrics,
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
        },
        metadata=dict(metadata or {}),
    )
