"""Krippendorff's alpha without a coincidence matrix, and its unit bootstrap, vectorised.

``kagreport.evaluation._agreement`` validates the ratings and turns them into numbers; this
module computes. With ``n`` pairable values (ratings in units that two or more coders rated),
``m_u`` of them in unit ``u``, and a difference function ``delta`` (Krippendorff 2011, section E),

    D_o = (1 / n) * sum_u (1 / (m_u - 1)) * sum_{i != j in u} delta(v_ui, v_uj)
    D_e = (1 / (n (n - 1))) * sum_{i != j} delta(v_i, v_j)     (all pairable values)
    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_u o_u / E

with ``o_u`` the unit's inner sum over ``m_u - 1`` and ``E`` the sum over all ordered pairs of
pairable values. No values x values matrix is built, so the number of distinct values does not
matter:

* interval (``delta = (c - k)**2``): a sum over ordered pairs is ``2 m S`` with ``S`` the sum of
  squared deviations from the mean, so ``o_u`` and ``E`` take O(n) (centred sums, no
  cancellation);
* ordinal: Krippendorff's ordinal difference of ``c < k`` is ``(sum_{g=c..k} n_g - (n_c + n_k) /
  2)**2 = (r_k - r_c)**2`` with the mid-rank ``r_c = sum_{g<=c} n_g - n_c / 2`` of the value's
  frequency ``n_c`` among the pairable values, so ordinal alpha is interval alpha on mid-ranks;
* nominal: ``sum_{i != j} [v_i != v_j] = m**2 - sum_c m_c**2`` from value counts;
* ratio (``delta = ((c - k) / (c + k))**2``): ``o_u`` from the pairs inside each unit
  (O(units x coders**2)); ``E`` from ``1 / (c + k)**2 = int_0^inf t exp(-t (c + k)) dt``, which
  turns the sum over pairs into a one-dimensional integral of weighted variances, taken by the
  trapezoid rule in ``log t`` (see :func:`_ratio_total`): O(V) per node, some 250 nodes, error
  below rounding, whatever the number V of distinct values.

Extreme magnitudes are rescaled first (interval: to [-1, 1], invariant under linear maps; ratio:
divided by the largest value, invariant under scaling), so values near 1e-300 or 1e300 neither
underflow nor overflow.

The bootstrap resamples units (as the previous implementation did, with the same draws from
``numpy.random.default_rng(seed)``): a resample is a multiplicity per unit, and every sum above is
a weighted sum over units, so a block of resamples is a few matrix products.

References
----------
.. [1] Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. University of
   Pennsylvania ScholarlyCommons, asc_papers/43.
.. [2] Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard reliability
   measure for coding data. Communication Methods and Measures, 1(1), 77-89.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from kagreport.stats._intervals import ConfidenceInterval

__all__ = [
    "MIN_DEFINED_SHARE",
    "AlphaBootstrap",
    "Pairable",
    "alpha",
    "alpha_bootstrap_interval",
    "bootstrap_alphas",
    "pairable",
]

Level: TypeAlias = Literal["nominal", "ordinal", "interval", "ratio"]
_Floats: TypeAlias = npt.NDArray[np.float64]
_Ints: TypeAlias = npt.NDArray[np.intp]

# Elements of the largest temporary array (16 MB of float64): blocks of units, values or
# resamples are sized to stay under it, whatever the data.
_BUDGET: Final = 1 << 21


@dataclass(frozen=True)
class Pairable:
    """The pairable ratings of a coders x units table, unit by unit.

    Attributes
    ----------
    unit : ndarray of intp, shape (n,)
        The unit (0..U-1, ascending) of each pairable rating.
    value : ndarray of float, shape (n,)
        The rating, rescaled for its level (interval: into (-1, 1); ratio: into [0, 1)).
    code : ndarray of intp, shape (n,)
        The rating's index in ``domain``.
    domain : ndarray of float, shape (V,)
        The distinct pairable ratings, ascending, rescaled like ``value``.
    size : ndarray of float, shape (U,)
        Ratings per pairable unit (``m_u >= 2``).
    padded : ndarray of intp, shape (U, M)
        Each unit's codes, then -1; ``M`` is the largest ``m_u``.
    """

    unit: _Ints
    value: _Floats
    code: _Ints
    domain: _Floats
    size: _Floats
    padded: _Ints

    @property
    def n_units(self) -> int:
        """Pairable units ``U``."""
        return int(self.size.shape[0])

    @property
    def n_values(self) -> int:
        """Pairable ratings ``n``."""
        return int(self.value.shape[0])


def pairable(positions: _Floats, level: Level) -> Pairable:
    """Gather the ratings of the units rated at least twice from ``positions`` (coders x units,
    NaN where missing)."""
    rated = ~np.isnan(positions)
    keep = rated.sum(axis=0) >= 2
    if positions.shape[0] < 2:
        keep[:] = False
    sub = positions[:, keep].T  # units x coders: C order then groups the ratings by unit
    mask = ~np.isnan(sub)
    raw = sub[mask]
    unit = np.nonzero(mask)[0].astype(np.intp)
    domain_raw, code = np.unique(raw, return_inverse=True)
    code = code.astype(np.intp).reshape(-1)
    size = mask.sum(axis=1)
    width = int(size.max()) if size.size else 0
    starts = (np.cumsum(size) - size).astype(np.intp)
    slot = np.arange(raw.size, dtype=np.intp) - np.repeat(starts, size)
    padded = np.full((size.size, width), -1, dtype=np.intp)
    padded[unit, slot] = code
    rescale = _rescaling(domain_raw, level)
    return Pairable(
        unit=unit,
        value=rescale(raw),
        code=code,
        domain=rescale(domain_raw),
        size=size.astype(np.float64),
        padded=padded,
    )


def _rescaling(domain: _Floats, level: Level) -> Callable[[_Floats], _Floats]:
    """The map that brings the values to order 1 without changing alpha at ``level``.

    Scaling is by a power of two, which is exact: differences of nearly equal values survive.
    """
    if domain.size < 2:
        return lambda v: v
    if level == "interval":
        low, high = float(domain[0]), float(domain[-1])
        half = high / 2 - low / 2  # halves first: high - low can overflow near the float limit
        middle = low / 2 + high / 2
        exponent = math.frexp(half)[1]  # half < 2**exponent
        return lambda v: np.ldexp(v - middle, -exponent)
    if level == "ratio":
        # The largest is > 0: the values are non-negative and not all equal.
        exponent = math.frexp(float(domain[-1]))[1]
        return lambda v: np.ldexp(v, -exponent)
    return lambda v: v  # nominal and ordinal use codes and ranks only


def alpha(data: Pairable, level: Level) -> float:
    """Krippendorff's alpha of the pairable ratings; NaN without pairable unit or variation."""
    if data.n_units == 0 or data.domain.size < 2:
        return math.nan
    n = data.n_values
    if level == "nominal":
        observed, expected = _nominal_units(data), _nominal_total(_value_counts(data))
    elif level == "ratio":
        observed, expected = _ratio_units(data), _ratio_total(data.domain, _value_counts(data))
    else:
        x = _ranks(_value_counts(data))[data.code] if level == "ordinal" else data.value
        observed = _interval_units(data, x)
        expected = 2.0 * n * float(np.sum((x - x.mean()) ** 2))
    return float(1.0 - (n - 1) * math.fsum(observed) / expected)


def _value_counts(data: Pairable) -> _Floats:
    return np.bincount(data.code, minlength=data.domain.size).astype(np.float64)


def _ranks(counts: _Floats) -> _Floats:
    """Mid-ranks ``r_c = sum_{g<=c} n_g - n_c / 2`` along the last axis (see the module notes)."""
    return np.cumsum(counts, axis=-1) - counts / 2.0


def _interval_units(data: Pairable, x: _Floats) -> _Floats:
    """``o_u = 2 m_u S_u / (m_u - 1)`` for ``delta = (c - k)**2`` on ``x``, shape (n,)."""
    mean = np.bincount(data.unit, weights=x, minlength=data.n_units) / data.size
    spread = np.bincount(data.unit, weights=(x - mean[data.unit]) ** 2, minlength=data.n_units)
    return 2.0 * data.size * spread / (data.size - 1.0)


def _unit_value_pairs(data: Pairable) -> tuple[_Ints, _Ints, _Floats]:
    """``(unit, code, count)`` for every value present in a unit."""
    width = data.domain.size
    keys, counts = np.unique(data.unit * width + data.code, return_counts=True)
    return keys // width, keys % width, counts.astype(np.float64)


def _nominal_units(data: Pairable) -> _Floats:
    unit, _, counts = _unit_value_pairs(data)
    same = np.bincount(unit, weights=counts**2, minlength=data.n_units)
    return (data.size**2 - same) / (data.size - 1.0)


def _nominal_total(counts: _Floats) -> Any:
    """``n**2 - sum_c n_c**2`` along the last axis."""
    return counts.sum(axis=-1) ** 2 - (counts**2).sum(axis=-1)


def _ratio_delta(c: _Floats, k: _Floats) -> _Floats:
    total = c + k
    # 0 and 0 agree (krippendorff 0.9.0 does the same); the values are non-negative.
    q = np.divide(c - k, total, out=np.zeros(np.broadcast(c, k).shape), where=total != 0)
    return q * q


def _ratio_units(data: Pairable) -> _Floats:
    """``o_u`` for the ratio difference, from the pairs inside each unit, in blocks of units."""
    width = data.padded.shape[1]
    step = max(1, _BUDGET // (width * width))
    sums = np.empty(data.n_units)
    for start in range(0, data.n_units, step):
        codes = data.padded[start : start + step]
        values = data.domain[np.maximum(codes, 0)]
        delta = _ratio_delta(values[:, :, None], values[:, None, :])
        both = (codes[:, :, None] >= 0) & (codes[:, None, :] >= 0)
        sums[start : start + step] = np.where(both, delta, 0.0).sum(axis=(1, 2))
    return sums / (data.size - 1.0)


# Step of the trapezoid rule of :func:`_ratio_total`, in log t.
_STEP: Final = 1.0 / 6.0

# Below this share of the largest value, t would leave the floats (t reaches 50 / smallest).
_SMALLEST_RATIO: Final = 1e-290


def _ratio_nodes(domain: _Floats) -> _Floats:
    """Nodes ``t`` of the trapezoid rule in ``s = log t`` for :func:`_ratio_total`.

    The integrand in ``s`` is below 1e-18 of the integral for ``t < 1e-9`` (it grows as
    ``t**2``, and the values are at most 1) and for ``t > 50 / x_min`` (every pair's term
    carries ``exp(-t (c + k)) <= exp(-100)``); it is analytic in a strip about the real axis,
    so the rule's error falls as ``exp(-const / step)``: about 1e-12 at step 0.3, far below
    rounding (1e-15) at the step used, 1/6 (checked against brute force in the tests).

    Raises
    ------
    ValueError
        If a positive value is below 1e-290 of the largest.
    """
    smallest = float(domain[domain > 0][0])
    if smallest < _SMALLEST_RATIO:
        raise ValueError(
            "ratio level: the values span more than 290 orders of magnitude (smallest positive "
            f"{smallest:.3g} of the largest); rescale or round the smallest to 0"
        )
    nodes: _Floats = np.exp(np.arange(math.log(1e-9), math.log(50.0 / smallest) + _STEP, _STEP))
    return nodes


def _node_weights(t: _Floats, x: _Floats, weight: _Floats) -> tuple[_Floats, _Floats]:
    """``(e, x)``: the weights ``weight * exp(-t x)`` at nodes ``t`` (broadcast against ``x``)
    and ``x`` set to 0 where they underflowed (``x`` may be ``inf`` for a missing slot)."""
    with np.errstate(over="ignore"):
        e = weight * np.exp(-t * x)
    return e, np.where(e > 0, x, 0.0)


def _weighted_mean(e: _Floats, x: _Floats, axis: int) -> _Floats:
    total = e.sum(axis=axis, keepdims=True)
    result: _Floats = np.divide(
        (e * x).sum(axis=axis, keepdims=True), total, out=np.zeros_like(total), where=total > 0
    )
    return result


def _ratio_total(domain: _Floats, counts: _Floats) -> float:
    """``E = sum_{c,k} n_c n_k ((c - k) / (c + k))**2`` in O(V x nodes), without V x V pairs.

    For ``c, k >= 0`` not both 0, ``1 / (c + k)**2 = int_0^inf t exp(-t (c + k)) dt``, so

        E = int_0^inf t sum_{c,k} w_c w_k (c - k)**2 dt = int_0^inf 2 t W(t) S(t) dt

    with weights ``w_c = n_c exp(-t c)``, their total ``W`` and ``S = sum_c w_c (c - mu)**2``
    about their mean ``mu``: a positive integrand (no cancellation, however close the values),
    integrated over ``s = log t`` (``dt = t ds``) by the trapezoid rule (:func:`_ratio_nodes`),
    as ``2 W sum_c w_c (t (c - mu))**2``. ``domain`` is ascending in [0, 1] with at least two
    values.
    """
    nodes = _ratio_nodes(domain)
    step = max(1, _BUDGET // domain.size)
    parts = []
    for start in range(0, nodes.size, step):
        t = nodes[start : start + step, None]
        e, x = _node_weights(t, domain, counts)
        # t (x - mu): deviations first, then the (large) t, so near-equal values keep their
        # differences; every live term is then of order 1 whatever the magnitude of the values.
        z = t * (x - _weighted_mean(e, x, axis=1))
        parts.append(2.0 * e.sum(axis=1) * (e * z * z).sum(axis=1))
    return math.fsum(np.concatenate(parts).tolist()) * _STEP


def bootstrap_alphas(
    data: Pairable,
    level: Level,
    n_resamples: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> _Floats:
    """Alpha of ``n_resamples`` resamples of the pairable units; NaN for those without variation.

    Resample ``b`` draws ``U`` units with replacement (row ``b`` of
    ``default_rng(seed).integers(0, U, size=(n_resamples, U))``, drawn in blocks) and gives unit
    ``u`` the weight ``w_bu``, the times it was drawn; each disagreement is then a weighted sum
    over units. Shape (n_resamples,).

    ``progress``, if given, is called as ``progress(done, n_resamples)``: with 0 first, then after
    each block with the resamples done so far (last with ``done == n_resamples``); what it raises
    propagates. The evaluation layer's progress bar is one (``kagreport.evaluation._agreement``).
    """
    rng = np.random.default_rng(seed)
    units, width = data.padded.shape
    first = data.padded[:, 0]
    # A resample has no variation when every unit it holds has one same value throughout.
    constant = np.where(
        np.all((data.padded == first[:, None]) | (data.padded < 0), axis=1), first, -1
    )
    statistic = _resample_statistic(data, level)
    # Elements per resample of the largest temporary (the ratio level's largest does not grow
    # with the resamples: its exponentials are shared by the block).
    per_resample = (
        units if level == "ratio" else max(units * max(width, 1), data.domain.size, data.n_values)
    )
    step = max(1, min(n_resamples, _BUDGET // per_resample))
    alphas = np.empty(n_resamples)
    if progress is not None:
        progress(0, n_resamples)
    for start in range(0, n_resamples, step):
        count = min(step, n_resamples - start)
        draws = rng.integers(0, units, size=(count, units))
        weights = np.bincount(
            (np.arange(count)[:, None] * units + draws).ravel(), minlength=count * units
        )
        weights_f = weights.reshape(count, units).astype(np.float64)
        keys = constant[draws]
        flat = (keys.min(axis=1) == keys.max(axis=1)) & (keys[:, 0] >= 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            values = statistic(weights_f)
        values[flat] = math.nan
        alphas[start : start + count] = values
        if progress is not None:
            progress(start + count, n_resamples)
    return alphas


#: Fewest resamples, as a share of all, in which alpha must be defined for an interval: one
#: from a bootstrap where most resamples had no defined alpha would describe only the lucky ones.
MIN_DEFINED_SHARE: Final = 0.5


@dataclass(frozen=True)
class AlphaBootstrap:
    """The percentile bootstrap interval of alpha, and how many resamples define alpha.

    Attributes
    ----------
    interval : ConfidenceInterval
        The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (linear
        interpolation) of alpha over the resamples where it is defined (``level`` is the
        confidence, ``method`` ``"percentile-bootstrap"``; Efron and Tibshirani 1993,
        ch. 13). Both bounds are NaN when alpha itself is undefined, and when fewer than
        ``MIN_DEFINED_SHARE`` of the resamples define it.
    n_defined : int
        Resamples in which alpha is defined (0 when alpha itself is undefined).
    """

    interval: ConfidenceInterval[float]
    n_defined: int


def alpha_bootstrap_interval(
    data: Pairable,
    level: Level,
    n_resamples: int,
    seed: int,
    confidence: float,
    progress: Callable[[int, int], None] | None = None,
) -> AlphaBootstrap:
    """Percentile bootstrap interval of alpha over ``bootstrap_alphas``' resamples (to which
    ``progress`` goes; when alpha itself is undefined no resample is drawn, nor progress called).
    """
    undefined = ConfidenceInterval(math.nan, math.nan, float(confidence), "percentile-bootstrap")
    if math.isnan(alpha(data, level)):
        return AlphaBootstrap(undefined, 0)
    alphas = bootstrap_alphas(data, level, n_resamples, seed, progress)
    defined = alphas[~np.isnan(alphas)]
    if defined.size < MIN_DEFINED_SHARE * n_resamples:
        return AlphaBootstrap(undefined, int(defined.size))
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    interval = ConfidenceInterval(
        float(low), float(high), float(confidence), "percentile-bootstrap"
    )
    return AlphaBootstrap(interval, int(defined.size))


# Long (over 80 lines): one closure per level of measurement, sharing finish/value_counts.
def _resample_statistic(data: Pairable, level: Level) -> Callable[[_Floats], _Floats]:
    """A function from weights (resamples x units) to alpha per resample."""
    size = data.size

    def finish(weights: _Floats, observed: _Floats, expected: _Floats) -> _Floats:
        n = weights @ size
        result: _Floats = 1.0 - (n - 1.0) * observed / expected
        return result

    if level == "interval":
        fixed = _interval_units(data, data.value)
        mean = np.bincount(data.unit, weights=data.value, minlength=data.n_units) / size
        within = np.bincount(
            data.unit, weights=(data.value - mean[data.unit]) ** 2, minlength=data.n_units
        )

        def interval(weights: _Floats) -> _Floats:
            n = weights @ size
            grand = (weights @ (size * mean)) / n
            between = ((weights * size) * (mean[None, :] - grand[:, None]) ** 2).sum(axis=1)
            return finish(weights, weights @ fixed, 2.0 * n * (weights @ within + between))

        return interval

    pair_unit, pair_code, pair_count = _unit_value_pairs(data)
    n_distinct = data.domain.size

    def value_counts(weights: _Floats) -> _Floats:
        rows = weights.shape[0]
        index = (np.arange(rows)[:, None] * n_distinct + pair_code[None, :]).ravel()
        counts = np.bincount(
            index, weights=(weights[:, pair_unit] * pair_count).ravel(), minlength=rows * n_distinct
        )
        result: _Floats = counts.astype(np.float64).reshape(rows, n_distinct)
        return result

    if level == "nominal":
        fixed = _nominal_units(data)
        return lambda w: finish(w, w @ fixed, _nominal_total(value_counts(w)))
    if level == "ratio":
        fixed = _ratio_units(data)
        nodes = _ratio_nodes(data.domain)
        counts = _value_counts(data)
        # Missing slots get x = inf: weight exp(-inf) = 0.
        values = np.where(data.padded >= 0, data.domain[np.maximum(data.padded, 0)], np.inf)
        block = max(1, _BUDGET // max(values.size, data.domain.size))

        def ratio(weights: _Floats) -> _Floats:
            # As _ratio_total, with each unit's moments a_p = sum_i e_i z_i**p summed over the
            # resample (A_p = weights @ a_p); z = t (x - centre), the centre being the weighted
            # mean of all the data at that node, which keeps A2 - A1**2 / A0 (a variance)
            # free of cancellation.
            parts = np.zeros(weights.shape[0])
            for start in range(0, nodes.size, block):
                t = nodes[start : start + block]
                e_all, x_all = _node_weights(t[:, None], data.domain, counts)
                centre = _weighted_mean(e_all, x_all, axis=1)[:, :, None]
                e, x = _node_weights(t[:, None, None], values[None], np.ones(1))
                z = np.where(e > 0, t[:, None, None] * (x - centre), 0.0)
                a0 = weights @ e.sum(axis=2).T  # resamples x nodes
                a1 = weights @ (e * z).sum(axis=2).T
                a2 = weights @ (e * z * z).sum(axis=2).T
                spread = a2 - np.divide(a1 * a1, a0, out=np.zeros_like(a0), where=a0 > 0)
                parts += (2.0 * a0 * spread).sum(axis=1)
            return finish(weights, weights @ fixed, parts * _STEP)

        return ratio

    present = data.padded >= 0
    codes = np.maximum(data.padded, 0)

    def ordinal(weights: _Floats) -> _Floats:
        # The mid-ranks depend on the resample's value frequencies: recomputed per resample.
        counts = value_counts(weights)
        ranks = _ranks(counts)  # resamples x V
        n = counts.sum(axis=1)
        grand = (counts * ranks).sum(axis=1) / n
        expected = 2.0 * n * (counts * (ranks - grand[:, None]) ** 2).sum(axis=1)
        x = np.where(present, ranks[:, codes], 0.0)  # resamples x units x M
        mean = x.sum(axis=2) / size
        spread = (np.where(present, x - mean[:, :, None], 0.0) ** 2).sum(axis=2)
        observed = (weights * (2.0 * size * spread / (size - 1.0))).sum(axis=1)
        return finish(weights, observed, expected)

    return ordinal
