"""The paired sign-flip (randomisation) test, exact or Monte Carlo.

:func:`sign_flip_test` gives the two-sided p-value of the paired sign-flip
(randomisation) test exactly whenever that is cheap, at any number of pairs:

* ``"exact-enumeration"``: all ``2**m`` sign assignments are enumerated when
  ``2**m <= n_resamples`` (m = non-zero differences);
* ``"exact-lattice"``: otherwise, when every ``|d_i|`` is an integer multiple
  ``k_i`` of one step and ``sum k_i`` is at most ``LATTICE_BUDGET``
  (0/1 correctness, Likert or 1-10 judge scores, counts), the null distribution
  of ``S = sum s_i |d_i|`` is computed by convolution (for 0/1 outcomes it is the
  binomial), in milliseconds for 100,000 pairs;
* ``"monte-carlo"``: only when there is no small lattice, ``n_resamples`` random
  assignments with the add-one estimate;
* ``"normal"``: with ``fallback="normal"``, instead of Monte Carlo when more than
  ``NORMAL_MIN`` differences are non-zero: the normal approximation of the same
  randomisation distribution (in milliseconds at a million pairs).

The percentile bootstrap of the mean is in :mod:`kagreport.stats._bootstrap`, Holm's
step-down adjustment in :mod:`kagreport.stats._holm`. Every resampling runs over the
differences in a canonical (sorted) order, so results depend only on the multiset
of differences: permuting the items never changes a digit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from kagreport.stats._lattice import (
    LATTICE_BUDGET,
    LATTICE_TOLERANCE,
    find_lattice,
    lattice_p_value,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "DUST",
    "LATTICE_BUDGET",
    "LATTICE_TOLERANCE",
    "METHODS",
    "NORMAL_MIN",
    "TOLERANCE",
    "SignFlipResult",
    "exact_mean",
    "paired_differences",
    "sign_flip_test",
]

#: Relative tie tolerance of the sign-flip test, as a fraction of sum(|d|).
TOLERANCE: Final = 1e-12

#: A paired difference at most this fraction of the largest score of the column (in
#: absolute value, both systems) is rounding dust and counts as a tie
#: (``paired_differences``).
DUST: Final = 1e-12

#: The ways a p-value is computed, as recorded in results.
METHODS: Final = ("exact-enumeration", "exact-lattice", "monte-carlo", "normal")

#: With ``fallback="normal"``, the fewest non-zero differences at which the normal
#: approximation replaces Monte Carlo (below, Monte Carlo takes well under a second).
NORMAL_MIN: Final = 20_000

# Memory bound of the resampling loops (bytes of the largest temporary block).
_SIGN_BLOCK_BYTES = 8 * 2**20
# Resamples (columns) handled together; bounds the per-resample accumulators.
_MAX_COLUMNS = 2**16
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
        Mean of the differences over all pairs, zeros included, summed exactly
        (``math.fsum``); NaN when there are none.
    p_value : float
        Two-sided p-value in (0, 1]: the probability under the null that ``|S|`` is at
        least the observed one (Monte Carlo: ``(hits + 1) / (n + 1)``). An exact value
        below the smallest positive double (about 4.9e-324) is reported as that double.
    exact : bool
        True when the p-value is exact (``method`` is not ``"monte-carlo"`` or ``"normal"``).
    n_resamples : int
        Assignments evaluated one by one: ``2**n_nonzero`` for ``"exact-enumeration"``,
        the random ones drawn for ``"monte-carlo"``, 0 for ``"exact-lattice"`` and
        ``"normal"`` (the distribution is computed, not sampled).
    n_nonzero : int
        Number of non-zero differences (m); zeros do not change the statistic under
        any assignment, so only these are flipped.
    method : str
        One of ``METHODS``.
    """

    statistic: float
    p_value: float
    exact: bool
    n_resamples: int
    n_nonzero: int
    method: str = "exact-enumeration"


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


def _check_confidence(confidence: float) -> None:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ValueError(f"`confidence` must be a number in (0, 1), not {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"`confidence` must be in (0, 1), not {confidence!r}")


def _tamed(x: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], int]:
    """``x`` scaled by ``2**-shift`` so that sums of up to 2**62 terms cannot overflow.

    Only values beyond 2**512 are scaled (by a power of two, exact for all that is not
    below 2**-500 of the largest, far under rounding of any sum with it); the sign-flip
    p-value does not change under a positive scaling, and means scale back exactly.
    """
    largest = float(np.abs(x).max()) if x.size else 0.0
    if largest <= 2.0**512:
        return x, 0
    shift = math.frexp(largest)[1]
    return np.ldexp(x, -shift), shift


def exact_mean(values: npt.ArrayLike) -> float:
    """The mean with its sum exactly rounded (``math.fsum``), so exact sums stay exact.

    Twenty 0.3s average to 0.3 and k ones among n values to k / n in one rounding (what
    ``kag stats`` gives for a proportion), whatever the order. Where the sum leaves the
    float range though the mean does not (scores near 1.8e308), the values are first
    scaled by a power of two (exact), so the result is the same correctly rounded mean.
    NaN for no values.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        return math.nan
    try:
        return math.fsum(x.tolist()) / x.size
    except OverflowError:
        shift = x.size.bit_length()  # 2**shift > n: the scaled sum cannot overflow
        return math.fsum(np.ldexp(x, -shift).tolist()) / x.size * 2.0**shift


def paired_differences(candidate: npt.ArrayLike, baseline: npt.ArrayLike) -> np.ndarray[Any, Any]:
    """``candidate - baseline`` with rounding dust set to zero.

    A difference counts as a tie (0.0) when ``|c_i - b_i| <= DUST * s`` with
    ``s = max_j max(|c_j|, |b_j|)``, the largest score of either system: within rounding
    of zero on the scale of the scores themselves. Scores ``0.1 + 0.2`` against ``0.3``
    differ by 5.6e-17 in floating point but are equal in the decimal arithmetic they
    stand for, and so are ``0.1 + 0.2 - 0.3`` against ``0`` (a per-pair scale would miss
    that one: its larger score is the dust itself); without this, twenty such pairs give
    a "significant" p-value of 1e-4 for a difference shown as 0.0000. The scale is the
    column's, so the rule does not depend on the order of the items; a column mixing
    magnitudes more than 1e12 apart loses differences below 1e-12 of its largest score.

    Parameters
    ----------
    candidate, baseline : array_like, shape (n,)
        Finite scores, row i of both the same item.

    Returns
    -------
    numpy.ndarray
        The differences (float64), dust as exactly 0.0.

    Raises
    ------
    ValueError
        If the shapes differ, a score is not finite or a difference overflows.
    """
    c = np.asarray(candidate, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    if c.shape != b.shape:
        raise ValueError(f"the scores differ in shape: {c.shape} and {b.shape}")
    if not (np.isfinite(c).all() and np.isfinite(b).all()):
        raise ValueError("the scores must be finite")
    with np.errstate(over="ignore", invalid="ignore"):
        d = c - b
    if not np.isfinite(d).all():
        raise ValueError("the differences overflow (scores near ±1.8e308)")
    if d.size:
        scale = max(float(np.abs(c).max()), float(np.abs(b).max()))
        d[np.abs(d) <= DUST * scale] = 0.0
    return d


# --- enumeration and Monte Carlo -----------------------------------------------------------


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


# Over 80 lines only with its docstring (a public function's parameters, errors, sources).
def sign_flip_test(
    differences: npt.ArrayLike,
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    fallback: str = "monte-carlo",
) -> SignFlipResult:
    """Two-sided paired sign-flip (randomisation) test that the mean difference is 0.

    Under the null hypothesis each paired difference is as likely to have either
    sign, so every assignment of signs to the differences is equally likely
    (Fisher 1935, s. 21). The p-value is the probability, over the assignments,
    that the mean is at least as far from zero as the observed mean.

    Parameters
    ----------
    differences : array_like, shape (n,)
        Paired differences d_i = candidate_i - baseline_i, finite, in the metric's units.
    n_resamples : int, default 10000
        Budget of sign assignments: all ``2**m`` are enumerated when ``2**m <=
        n_resamples`` (m = non-zero differences); beyond, and when the differences lie
        on no small lattice, ``n_resamples`` random ones are drawn.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` for the random assignments.
    fallback : {"monte-carlo", "normal"}, default "monte-carlo"
        What to do when neither exact method applies: Monte Carlo, or (``"normal"``, when
        more than ``NORMAL_MIN`` differences are non-zero) the normal approximation.

    Returns
    -------
    SignFlipResult
        ``statistic`` = mean(d) over all n pairs (``math.fsum``), ``p_value``,
        ``exact``, ``n_resamples`` (assignments evaluated one by one), ``n_nonzero``
        (m) and ``method``. With no differences the statistic is NaN; with m = 0 the
        p-value is 1.0.

    Raises
    ------
    ValueError
        If ``differences`` is not one-dimensional or holds NaN or an infinity, if
        ``n_resamples`` or ``seed`` is not a valid integer, or ``fallback`` is unknown.

    Notes
    -----
    Zeros keep their value under any sign, so only the m non-zero differences
    x_1..x_m are flipped, and since n is the same for every assignment the test
    compares sums S = sum_i s_i x_i instead of means. The differences are sorted
    first, so every result depends only on their multiset, never on the item order.

    *Exact enumeration* (``2**m <= n_resamples``): an assignment counts as a hit when
    ``|S*| >= |S_obs| - 1e-12 * sum_i |x_i|``. The tolerance is there because sums that
    are equal in exact arithmetic (0.1 + 0.2 against 0.3, or two assignments that
    reach the same value through different terms) differ by a few units in the last
    place once rounded; without it, such ties would be counted or not at random.
    Genuinely distinct sums closer than the tolerance count as ties too, which errs on
    the conservative side. p = hits / 2**m, the observed assignment among them.

    *Exact lattice*: when every ``|x_i|`` is, within a relative ``LATTICE_TOLERANCE``
    (1e-11), an integer multiple k_i of one step (found from the ratios of the distinct
    values to the smallest by continued fractions, denominators at most 1024, the
    coarsest such step, so the k_i have gcd 1), K = sum k_i <= ``LATTICE_BUDGET``
    (2**23) and the convolution's estimated work is below about 1.3e8 operations
    (well under a second), S / step = T = sum s_i k_i is an integer
    and ``|T| >= |T_obs|`` is the tie rule above without rounding. With W the sum of the
    k_i given a + sign, T = 2W - K and W = sum_u k_u B_u, B_u ~ Binomial(c_u, 1/2)
    independent over the distinct multipliers k_u (c_u differences each): for 0/1
    outcomes (one multiplier) this is the exact binomial (McNemar) test on the m
    discordant pairs. ``p = 2 P(W >= (K + |T_obs|) / 2)`` (or 1 when T_obs = 0). With
    m <= 62 (and the work small) the subset-sum counts are computed in exact integer
    arithmetic, so p is the correctly rounded fraction hits / 2**m, bit for bit the
    enumeration's. Beyond, the tail is computed by exponential tilting (Esscher
    1932; the saddle point of Daniels 1954, used exactly rather than approximated):
    the tilted binomials are built from their modes by products of term ratios and
    convolved (directly, or by FFT for long ones), so the result has a relative error
    of order 1e-12 even in tails near 1e-300 (an FFT's error is absolute, relative to
    the largest term, and tilting makes the tail's terms the largest). A p-value
    below the smallest positive double (2**-1074) is reported as that double.

    *Monte Carlo* otherwise: p = (hits + 1) / (n_resamples + 1), counting the observed
    assignment once, which keeps the test valid and p > 0 (Phipson & Smyth 2010).
    The differences are split into groups of 8 (zero-padded) and the 256 signed sums
    of each group are tabulated; an assignment is then one random byte per group and
    its sum is one table look-up per group. The random bytes come in blocks of at
    most 8 MiB with the tables of one block, so the working memory stays near 20 MiB
    whatever n and ``n_resamples`` are. The observed sum goes through the same
    additions in the same order as every assignment, so the observed assignment
    always counts as a hit. The random bytes are the generator's raw 64-bit outputs
    read as little-endian bytes (``default_rng(seed).bit_generator.random_raw``);
    with the sorted differences, results depend only on ``seed``, ``n_resamples``
    and the multiset of differences, on every platform.

    *Normal* (``fallback="normal"``, m > ``NORMAL_MIN``, no exact method): under
    the sign flips S has mean 0 and variance sum_i x_i**2, and by the Lindeberg central
    limit theorem for such conditional sums (Hoeffding 1952) S / sqrt(sum x_i**2) is
    asymptotically standard normal: z = sum_i x_i / sqrt(sum_i x_i**2),
    ``p = 2 (1 - Phi(|z|)) = erfc(|z| / sqrt 2)``. With m > 20,000 and bounded differences
    its error is far below a Monte Carlo p's of 10,000 resamples (about 0.002 at
    p = 0.05), in milliseconds where Monte Carlo takes seconds per million pairs.

    References
    ----------
    .. [1] R. A. Fisher (1935), *The Design of Experiments*, s. 21 (Darwin's
       Zea mays data: 1726 of 32768 assignments, two-sided).
    .. [2] M. D. Ernst (2004), "Permutation methods: a basis for exact
       inference", *Statistical Science* 19(4), 676-685.
    .. [3] B. Phipson and G. K. Smyth (2010), "Permutation p-values should never
       be zero", *Statistical Applications in Genetics and Molecular Biology*
       9(1), article 39.
    .. [4] F. Esscher (1932), "On the probability function in the collective theory
       of risk", *Skandinavisk Aktuarietidskrift* 15, 175-195; H. E. Daniels (1954),
       "Saddlepoint approximations in statistics", *Annals of Mathematical
       Statistics* 25(4), 631-650.
    .. [5] Q. McNemar (1947), "Note on the sampling error of the difference between
       correlated proportions or percentages", *Psychometrika* 12(2), 153-157.
    .. [6] W. Hoeffding (1952), "The large-sample power of tests based on permutations
       of observations", *Annals of Mathematical Statistics* 23(2), 169-192.

    Examples
    --------
    >>> sign_flip_test([1.0, 2.0, 3.0]).p_value  # only +++ and --- reach |S| >= 6
    0.25
    >>> r = sign_flip_test([1.0] * 50_500 + [-1.0] * 49_500)  # 100,000 discordant 0/1 pairs
    >>> r.method, f"{r.p_value:.6g}"  # scipy.stats.binomtest(50500, 100000).pvalue: 0.00158236
    ('exact-lattice', '0.00158236')
    """
    d, n_resamples, seed = _sign_flip_test_iv(differences, n_resamples, seed)
    if fallback not in ("monte-carlo", "normal"):
        raise ValueError(f"`fallback` must be 'monte-carlo' or 'normal', not {fallback!r}")
    statistic = exact_mean(d)
    # The canonical order: results depend on the multiset only. Scores near 1.8e308 are
    # scaled first (the p-value is scale-free), so no sum below overflows.
    x = np.sort(_tamed(d[d != 0.0])[0])
    m = int(x.size)
    if m == 0:
        return SignFlipResult(statistic, 1.0, True, 1, 0, "exact-enumeration")

    if m < 63 and 2**m <= n_resamples:
        groups = _pad_to_groups(x)
        n_groups = groups.shape[0]
        threshold = abs(_observed_sum(groups)) - TOLERANCE * float(np.abs(x).sum())
        total = 2**m
        hits = 0
        for first in range(0, total, _MAX_COLUMNS):
            n_columns = min(_MAX_COLUMNS, total - first)
            sums = _signed_sums(groups, _pattern_bytes(first, n_columns, n_groups), n_columns)
            hits += int(np.count_nonzero(np.abs(sums) >= threshold))
        return SignFlipResult(statistic, hits / total, True, total, m, "exact-enumeration")

    values, inverse, counts = np.unique(np.abs(x), return_inverse=True, return_counts=True)
    lattice = find_lattice(values, counts)
    if lattice is not None:
        signs = np.where(x > 0, 1, -1).astype(np.int64)
        observed = int((signs * lattice.k[inverse]).sum())
        exact_p = lattice_p_value(lattice, observed)
        if exact_p is not None:
            return SignFlipResult(statistic, exact_p, True, 0, m, "exact-lattice")

    if fallback == "normal" and m > NORMAL_MIN:
        return SignFlipResult(statistic, _normal_p_value(x), False, 0, m, "normal")

    groups = _pad_to_groups(x)
    n_groups = groups.shape[0]
    threshold = abs(_observed_sum(groups)) - TOLERANCE * float(np.abs(x).sum())
    rng = np.random.default_rng(seed)
    hits = 0
    for first in range(0, n_resamples, _MAX_COLUMNS):
        n_columns = min(_MAX_COLUMNS, n_resamples - first)
        sums = _signed_sums(groups, _random_bytes(rng, n_groups, n_columns), n_columns)
        hits += int(np.count_nonzero(np.abs(sums) >= threshold))
    p_value = (hits + 1) / (n_resamples + 1)
    return SignFlipResult(statistic, p_value, False, n_resamples, m, "monte-carlo")


def _normal_p_value(x: np.ndarray[Any, Any]) -> float:
    """erfc(|z| / sqrt 2), z = sum x / sqrt(sum x**2): the two-sided normal tail of the
    sign-flip sum (``x`` non-zero, already scaled by :func:`_tamed`)."""
    z = math.fsum(x.tolist()) / math.sqrt(math.fsum((x * x).tolist()))
    return max(math.erfc(abs(z) / math.sqrt(2.0)), 5e-324)


def _sign_flip_test_iv(
    differences: npt.ArrayLike, n_resamples: int, seed: int
) -> tuple[np.ndarray[Any, Any], int, int]:
    return _as_differences(differences), _check_n_resamples(n_resamples), _check_seed(seed)
