"""The exact null distribution of the sign-flip statistic on a lattice.

When every non-zero |d_i| of :func:`~kagreport.stats.sign_flip_test` is an integer
multiple k_i of one step, S / step = T = sum s_i k_i takes integer values and its law under
fair random signs is a convolution of scaled binomials: :func:`find_lattice` finds the step
and the multipliers, :func:`lattice_p_value` the two-sided p-value P(|T| >= |T_obs|), in
exact integers (up to 62 non-zero pairs) or by exponential tilting with a relative error of
order 1e-12 even in tails near 1e-300.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

import numpy as np

__all__ = ["LATTICE_BUDGET", "LATTICE_TOLERANCE", "find_lattice", "lattice_p_value"]

#: Relative distance from a lattice point within which a ``|d_i|`` counts as on it.
LATTICE_TOLERANCE: Final = 1e-11

#: Largest lattice size ``sum_i k_i`` (in steps) handled exactly by convolution.
LATTICE_BUDGET: Final = 2**23

# Above this many distinct |d| values no lattice is looked for (the search is a
# Python loop over them, and such a lattice would rarely fit the budget).
_MAX_DISTINCT_FOR_LATTICE = 4096
# Largest denominator of a ratio of two |d| values (so of L, the step's divisor of the
# smallest |d|). Real lattices need a few (1/4 or 1/9 steps, eighths of an inch); a
# cap keeps off-lattice ratios from being "fitted": the chance that a random ratio r
# lies within LATTICE_TOLERANCE * r of some p / q with q <= Q is about 0.6 Q^2 tol r,
# 6e-6 r at Q = 1024, while with the budget's Q (up to millions) it would be near 1.
_MAX_DENOMINATOR = 1024
# Exact integer subset-sum counts while every count fits an int64 and the work
# (additions) stays below this; beyond, the tilted floating-point tail.
_MAX_NONZERO_FOR_COUNTS = 62
_MAX_COUNT_WORK = 2**27
# Bound of the tilted path's work: (distinct multipliers) x (estimated length of the
# convolution). Beyond, the p-value is Monte Carlo (a lattice of few, widely spread
# multipliers, e.g. 32 counts near 250,000 each, would take tens of seconds).
_MAX_TILTED_WORK = 2**30
# Entries of a tilted binomial below this fraction of its mode are dropped: they
# change the tail by far less than a unit in the last place.
_TRUNCATE = 1e-40
# Binomials of at most this many kept terms are added in shifted copies, not convolved.
_SHIFT_ADD = 16
# Direct (not FFT) convolution while the product of the two lengths is below this.
_DIRECT_CONVOLUTION = 2**20
# The smallest positive double: a p-value that underflows is reported as this.
_TINY = math.ulp(0.0)


@dataclass(frozen=True)
class _Lattice:
    """|d| values as integer multiples: ``counts[u]`` differences equal ``k[u] * step``."""

    k: np.ndarray[Any, Any]  # distinct multipliers, ascending, int64, gcd 1
    counts: np.ndarray[Any, Any]  # how many |d| have each
    step: float

    @property
    def size(self) -> int:
        return int((self.k * self.counts).sum())


def find_lattice(values: np.ndarray[Any, Any], counts: np.ndarray[Any, Any]) -> _Lattice | None:
    """The coarsest lattice holding the distinct positive ``values`` (ascending, each
    ``counts`` times), if it is small.

    With u_1 < ... < u_D the distinct values and r_j = u_j / u_1, each r_j is
    approximated by the fraction p_j / q_j of smallest denominator within
    ``LATTICE_TOLERANCE * r_j`` (continued fractions, ``Fraction.limit_denominator``),
    q_j at most 1024; with L = lcm(q_j) (also at most 1024), k_j = r_j L are integers
    with gcd 1 and the step is u_1 / L. None when a ratio has no such fraction or
    ``sum k_i`` exceeds ``LATTICE_BUDGET``.
    """
    if values.size > _MAX_DISTINCT_FOR_LATTICE:
        return None
    with np.errstate(over="ignore"):
        ratios = values / values[0]
    if not np.isfinite(ratios).all():  # e.g. a subnormal beside 1.0
        return None
    weight = float((ratios * counts).sum())  # sum k_i = L * weight
    limit = min(_MAX_DENOMINATOR, int(LATTICE_BUDGET // weight))
    if limit < 1:
        return None
    denominator = 1
    for r in ratios.tolist():
        fraction = Fraction(r).limit_denominator(limit)
        if abs(float(fraction) - r) > LATTICE_TOLERANCE * r:
            return None
        # The smallest denominator within tolerance: walk back from the best approximation.
        fraction = _simplest_within(r, fraction)
        denominator = math.lcm(denominator, fraction.denominator)
        if denominator > limit:
            return None
    scaled = ratios * denominator
    k = np.rint(scaled).astype(np.int64)
    if (np.abs(scaled - k) > LATTICE_TOLERANCE * scaled).any():
        return None
    lattice = _Lattice(k, counts.astype(np.int64), float(values[0]) / denominator)
    if lattice.size > LATTICE_BUDGET:
        return None
    return lattice


def _simplest_within(r: float, best: Fraction) -> Fraction:
    """The fraction of smallest denominator within ``LATTICE_TOLERANCE * r`` of ``r``.

    ``best`` (from ``limit_denominator``) is within tolerance; a convergent of smaller
    denominator may be too (``0.1 / 0.3`` is 1/3 within tolerance and 6004799503160661 /
    18014398509481984 exactly), and the lattice should be the coarse one.
    """
    x = Fraction(r)
    a, b = x.numerator, x.denominator
    p0, q0, p1, q1 = 0, 1, 1, 0
    while b:
        n, rest = divmod(a, b)
        p0, q0, p1, q1 = p1, q1, n * p1 + p0, n * q1 + q0
        if abs(p1 / q1 - r) <= LATTICE_TOLERANCE * r:
            candidate = Fraction(p1, q1)
            return candidate if candidate.denominator <= best.denominator else best
        a, b = b, rest
    return best


def _subset_sum_counts(lattice: _Lattice) -> list[int]:
    """Exact counts: entry w = number of sign assignments with ``W = w`` (see below)."""
    counts = np.ones(1, dtype=np.int64)
    for k, c in zip(lattice.k.tolist(), lattice.counts.tolist(), strict=True):
        grown = np.zeros(counts.size + k * c, dtype=np.int64)
        for j in range(c + 1):
            grown[j * k : j * k + counts.size] += math.comb(c, j) * counts
        counts = grown
    return [int(v) for v in counts]


def _tilted_binomial(c: int, log_odds: float) -> tuple[int, np.ndarray[Any, Any]]:
    """Bin(c, pi) with ``log(pi / (1 - pi)) = log_odds``, from its mode outward.

    Returns ``(first, pmf)``: the probabilities of first, first + 1, ..., normalised
    to sum 1, with the negligible ends (below ``_TRUNCATE`` times the mode) dropped.
    Built by products of the term ratios ``(c - j) / (j + 1) * odds`` from the mode,
    so every entry has a relative error of a few units in the last place times the
    distance from the mode, with no cancellation and no underflow near the mode.
    """
    pi = 1.0 / (1.0 + math.exp(-log_odds))
    mode = min(c, max(0, math.floor((c + 1) * pi)))
    j = np.arange(c, dtype=np.float64)
    ratios = (c - j) / (j + 1.0) * math.exp(log_odds)  # t_{j+1} / t_j, j = 0..c-1
    pmf = np.empty(c + 1)
    pmf[mode] = 1.0
    with np.errstate(under="ignore"):
        pmf[mode + 1 :] = np.cumprod(ratios[mode:])
        pmf[:mode] = np.cumprod(1.0 / ratios[:mode][::-1])[::-1]
    kept = np.flatnonzero(pmf >= _TRUNCATE)
    lo, hi = int(kept[0]), int(kept[-1])
    pmf = pmf[lo : hi + 1]
    return lo, pmf / math.fsum(pmf.tolist())


def _convolve(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    if a.size * b.size <= _DIRECT_CONVOLUTION:
        return np.convolve(a, b)
    n = a.size + b.size - 1
    size = 1 << (n - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n]
    return np.maximum(out, 0.0)


def _log_upper_tail(lattice: _Lattice, w0: int) -> float:
    """log P(W >= w0), W = sum_u k_u B_u with B_u ~ Binomial(c_u, 1/2), K/2 < w0 < K.

    Exponential tilting (Esscher transform): with M(t) = E exp(tW) =
    prod_u ((1 + e^{t k_u}) / 2)^{c_u}, P(W = w) = M(t) e^{-tw} Q_t(w), where Q_t is
    the law of sum_u k_u B'_u with B'_u ~ Binomial(c_u, pi_u), logit pi_u = t k_u.
    Choosing t so that Q_t has mean w0 puts the tail's mass where Q_t is largest, so
    P(W >= w0) = M(t) e^{-t w0} sum_{w >= w0} Q_t(w) e^{-t (w - w0)} is a sum of
    non-negative terms of which the largest are near Q_t's mode: the absolute error
    of an FFT convolution, relative to that mode, is a relative error of the tail.
    """
    k = lattice.k.astype(np.float64)
    c = lattice.counts.astype(np.float64)

    def mean(t: float) -> float:
        return float((c * k / (1.0 + np.exp(-t * k))).sum())

    low, high = 0.0, 1.0
    while mean(high) < w0:
        low, high = high, 2.0 * high
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if mean(middle) < w0:
            low = middle
        else:
            high = middle
    t = 0.5 * (low + high)
    offset = 0
    q = np.ones(1)
    for k_u, c_u in zip(lattice.k.tolist(), lattice.counts.tolist(), strict=True):
        first, pmf = _tilted_binomial(int(c_u), t * k_u)
        if pmf.size <= _SHIFT_ADD:
            # A few terms on a wide stride: shift and add (exact sums of positive terms).
            grown = np.zeros(q.size + (pmf.size - 1) * k_u)
            for j, weight in enumerate(pmf.tolist()):
                grown[j * k_u : j * k_u + q.size] += weight * q
            q = grown
        else:
            spread = np.zeros((pmf.size - 1) * k_u + 1)
            spread[::k_u] = pmf
            q = _convolve(q, spread)
        offset += first * k_u
    start = max(0, w0 - offset)
    tail = q[start:]
    weights = np.exp(-t * (np.arange(start, q.size) + offset - w0))
    total = math.fsum((tail * weights).tolist())
    log_m = float((c * (np.logaddexp(0.0, t * k) - math.log(2.0))).sum())
    return log_m - t * w0 + math.log(total) if total > 0 else -math.inf


def _tilted_work(lattice: _Lattice) -> float:
    """About the number of operations of :func:`_log_upper_tail` on ``lattice``."""
    work = 0.0
    length = 1.0
    for k, c in zip(lattice.k.tolist(), lattice.counts.tolist(), strict=True):
        # A tilted binomial keeps at most its +-15 standard deviations (sd <= sqrt(c) / 2).
        span = min(c + 1.0, 16.0 * math.sqrt(c) + 2.0)
        length += (span - 1.0) * k
        work += span * length if span <= _SHIFT_ADD else 3.0 * length * math.log2(length)
    return work


def lattice_p_value(lattice: _Lattice, observed: int) -> float | None:
    """Two-sided p = P(|T| >= |observed|), T = sum_i s_i k_i with fair random signs.

    T = 2W - K with W the sum of the k_i given a + sign, so the two tails are
    W >= (K + |observed|) / 2 and its mirror W <= (K - |observed|) / 2. None when the
    computation would exceed its cost bounds (the caller then uses Monte Carlo).
    """
    total = lattice.size
    m = int(lattice.counts.sum())
    t_obs = abs(observed)
    if t_obs == 0:
        return 1.0
    w0 = (total + t_obs) // 2
    if w0 >= total:  # only the two all-equal-sign assignments
        return max(math.ldexp(1.0, 1 - m), _TINY)
    if m <= _MAX_NONZERO_FOR_COUNTS and (m + lattice.k.size) * (total + 1) <= _MAX_COUNT_WORK:
        counts = _subset_sum_counts(lattice)
        hits: int = 2 * sum(counts[w0:])
        return min(1.0, hits / (1 << m))  # int / int: correctly rounded
    if _tilted_work(lattice) > _MAX_TILTED_WORK:
        return None
    log_p = math.log(2.0) + _log_upper_tail(lattice, w0)
    return min(1.0, max(math.exp(log_p), _TINY)) if log_p > -math.inf else _TINY
