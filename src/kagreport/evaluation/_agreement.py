"""Agreement between judges: Krippendorff's alpha, a bootstrap interval and a pairwise table.

This module checks the ratings and puts them on numbers (missing values, labels and the order of a
scale), decides the cases where alpha is undefined (NaN, where libraries disagree, with the reason
in ``UNDEFINED``) and adds a bootstrap interval and per-pair values. The arithmetic, without a
coincidence matrix so that any number of distinct values works, is in
``kagreport.stats._alpha``; the tests check it against the ``krippendorff`` package and
against brute-force pair sums.

Reference: Krippendorff, K. (2011). *Computing Krippendorff's Alpha-Reliability*. University of
Pennsylvania ScholarlyCommons, asc_papers/43. Alpha is ``1 - D_o / D_e``, the observed over the
expected disagreement, both taken from the coincidence matrix of the pairable values (values in
units that at least two coders rated) with the difference function of the level of measurement
(nominal, ordinal, interval or ratio, section E of the paper).
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from kagreport._optional import optional
from kagreport.evaluation._ratings import (
    Rating,
    ReliabilityData,
    _check_order,
    _label_positions,
    _number_positions,
    _read_table,
)
from kagreport.stats import ConfidenceInterval, _alpha

__all__ = [
    "LEVELS",
    "UNDEFINED",
    "Agreement",
    "alpha_interval",
    "compute_agreement",
    "krippendorff_alpha",
    "pairwise_agreement",
]

#: The levels of measurement accepted by the functions of this module.
LEVELS: Final[tuple[str, ...]] = ("nominal", "ordinal", "interval", "ratio")

_Level: TypeAlias = Literal["nominal", "ordinal", "interval", "ratio"]
_BY_NAME: Final[dict[str, _Level]] = {
    "nominal": "nominal",
    "ordinal": "ordinal",
    "interval": "interval",
    "ratio": "ratio",
}

#: Why alpha can be undefined (NaN): :attr:`Agreement.undefined` -> a sentence saying so.
UNDEFINED: Final[Mapping[str, str]] = {
    "no_coder": "no coder",
    "one_coder": "one coder",
    "no_rating": "no rating at all",
    "one_coder_rated": "only one coder gave any rating",
    "no_pairable_unit": "no unit with two or more ratings",
    "no_variation": "no variation: every rating in the units with two or more ratings is the same "
    "value",
}


@dataclass(frozen=True)
class _Prepared:
    """Ratings as numbers on the scale of the level, NaN where missing.

    ``positions`` has shape (coders, units). Labels have become codes (nominal) or ranks 1..K in
    ``value_order`` (other levels); numbers keep their value except at ordinal level with a
    ``value_order``, where they become ranks too.
    """

    positions: npt.NDArray[np.float64]
    level: _Level


@dataclass(frozen=True)
class Agreement:
    """Krippendorff's alpha with its bootstrap interval and the amount of data behind it.

    Attributes
    ----------
    alpha : float
        Krippendorff's alpha; NaN when undefined (see :func:`krippendorff_alpha`).
    low, high : float
        Percentile bootstrap interval over units (resampled units); NaN when it was not
        requested or is undefined.
    level : str
        Level of measurement: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.
    confidence : float
        Coverage the interval was computed for, in (0, 1).
    n_coders : int
        Rows of the reliability data.
    n_units : int
        Columns of the reliability data.
    n_pairable_units : int
        Units rated by at least two coders (the others drop out of alpha).
    n_pairable_values : int
        Ratings in the pairable units: Krippendorff's ``n``, the total of the coincidence matrix.
    undefined : str or None
        Why ``alpha`` is NaN, a key of ``UNDEFINED`` (``"one_coder"``, ``"no_pairable_unit"``,
        ``"no_variation"``, ...); None when alpha is defined.
    n_resamples : int
        Bootstrap resamples drawn (0 when the interval was skipped or alpha is undefined).
    n_defined_resamples : int
        Resamples with a defined alpha (the others have no variation); below half of
        ``n_resamples`` the interval is NaN.
    """

    alpha: float
    low: float
    high: float
    level: str
    confidence: float
    n_coders: int
    n_units: int
    n_pairable_units: int
    n_pairable_values: int
    undefined: str | None = None
    n_resamples: int = 0
    n_defined_resamples: int = 0

    @property
    def reason(self) -> str | None:
        """Why alpha is undefined, as a sentence (``UNDEFINED``); None when it is defined."""
        return None if self.undefined is None else UNDEFINED[self.undefined]


def krippendorff_alpha(
    reliability_data: ReliabilityData,
    level: str = "interval",
    *,
    value_order: Sequence[Hashable] | None = None,
) -> float:
    """Krippendorff's alpha of a coders x units table of ratings.

    Parameters
    ----------
    reliability_data : array_like or sequence of sequences, shape (coders, units)
        ``reliability_data[i][j]`` is coder ``i``'s rating of unit ``j``: a number, a label
        (``str``), or ``None``/NaN when missing. Numbers and labels cannot be mixed. Booleans count
        as the numbers 0 and 1. Strings are labels taken literally; in a NumPy string array NaN has
        already become the text ``"nan"``, which is refused (pass a list or an object array).
    level : {"interval", "nominal", "ordinal", "ratio"}
        Level of measurement, which chooses the difference function.
    value_order : sequence of hashable, optional
        The scale, lowest value first, without repeats. Required for labels at every level but
        nominal: label ``k`` of the order (counting from 1) stands for the number ``k``, so the
        interval and ratio levels assume equally spaced labels (interval alpha is the same for any
        equally spaced numbering, e.g. 1..K or [0, 1]). With numbers it declares the domain: at
        ordinal (and nominal) level the numbers are ranked by their position in it; at interval and
        ratio level the numbers keep their values and it must be ascending. Labels are never
        sorted in its absence.

    Returns
    -------
    float
        Alpha, at most 1: 1 is perfect agreement, 0 agreement at chance level, below 0
        systematic disagreement. NaN when alpha is
        undefined: fewer than two coders, no unit rated by two or more coders, or no variation at
        all among the pairable ratings (expected disagreement 0). Libraries disagree there
        (krippendorff 0.9.0 raises ValueError or returns NaN with a RuntimeWarning); this function
        returns NaN without a warning, and :attr:`AnswerEvaluation.agreement
        <kagreport.evaluation.AnswerEvaluation.agreement>` says which case it is
        (:attr:`Agreement.undefined`). Units rated by fewer than two coders drop out.

    Raises
    ------
    ValueError
        If the data is not 2-D, mixes numbers and labels, holds an infinite number, uses labels at
        a level other than nominal without ``value_order`` (the message names the labels seen),
        holds a value missing from ``value_order`` (named), has a negative value at ratio level or
        positive values more than 290 orders of magnitude apart there; if ``level`` is unknown
        or ``value_order`` has repeats or missing values.
    TypeError
        If a rating is neither a number, a string nor ``None``.

    Notes
    -----
    Alpha = 1 - D_o / D_e with the difference functions of Krippendorff (2011), sections A-E,
    computed from sums over pairs of pairable values rather than a values x values coincidence
    matrix: time O(n log n) for n pairable values at the
    nominal, ordinal and interval levels, and memory O(n) at every level, whatever the number of
    distinct values; the ratio level's expected disagreement is a one-dimensional integral taken
    numerically to rounding error (time O(V) per node, some 250 nodes, V distinct values).
    Extreme magnitudes (1e-200 or 1e300) are rescaled first and give the same alpha.
    The ordinal difference depends only on the order of the values and their frequencies, which
    is why labels can stand in for their ranks there (ordinal alpha is interval alpha on the
    mid-ranks of the pairable values).

    References
    ----------
    .. [1] Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. University of
       Pennsylvania ScholarlyCommons, asc_papers/43.
    """
    prepared = _prepare(reliability_data, level, value_order)
    return _alpha.alpha(_alpha.pairable(prepared.positions, prepared.level), prepared.level)


def alpha_interval(
    reliability_data: ReliabilityData,
    level: str = "interval",
    *,
    value_order: Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    progress: bool | None = None,
) -> ConfidenceInterval[float]:
    """Percentile bootstrap interval of Krippendorff's alpha, resampling units.

    Parameters
    ----------
    reliability_data, level, value_order
        As for :func:`krippendorff_alpha`.
    n_resamples : int
        Bootstrap resamples, at least 1.
    seed : int
        Seed of ``numpy.random.default_rng``; the same seed gives the same interval.
    confidence : float
        Coverage of the interval, in (0, 1).
    progress : bool, optional
        A progress bar on stderr; default: on a terminal, once the work has taken a second.

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high``: the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
        quantiles (linear interpolation) of alpha over the resamples where it is defined, both
        NaN when alpha itself is undefined or fewer than half of the resamples define it;
        ``level`` is ``confidence``, ``method`` ``"percentile-bootstrap"``.

    Raises
    ------
    ValueError
        As :func:`krippendorff_alpha`, or if ``n_resamples < 1`` or ``confidence`` is not in
        (0, 1).
    TypeError
        As :func:`krippendorff_alpha`.

    Notes
    -----
    Each resample draws, with replacement, as many units as there are pairable units, from the
    pairable units only (the others contribute nothing to alpha), and recomputes alpha.
    Resampling units rather than Krippendorff's own bootstrap of pairable values keeps each
    unit's ratings together; resamples with no variation are dropped. A resample is a weight per
    unit (the times it was drawn), so blocks of resamples are computed at once with matrix
    products (``bootstrap_alphas``): time O(resamples x n) at the
    nominal, ordinal and interval levels (well under a second for 1000 resamples of 300 units x 4
    coders, any number of distinct values) and O(resamples x V**2) at the ratio level, memory
    bounded by blocks.

    References
    ----------
    .. [1] Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. University of
       Pennsylvania ScholarlyCommons, asc_papers/43.
    .. [2] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman &
       Hall (the percentile interval).
    """
    _check_resampling(n_resamples, confidence, minimum=1)
    prepared = _prepare(reliability_data, level, value_order)
    data = _alpha.pairable(prepared.positions, prepared.level)
    return _bootstrap(data, prepared.level, n_resamples, seed, confidence, progress).interval


class _ProgressBar:
    """A tqdm bar on stderr fed by ``kagreport.stats.bootstrap_alphas``' progress calls,
    opened at the first (``delay``: seconds of work before it shows)."""

    def __init__(self, delay: float) -> None:
        self._delay = delay
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            with optional("tqdm"):
                from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc="agreement bootstrap",
                unit="resample",
                file=sys.stderr,
                leave=False,
                delay=self._delay,
            )
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _bootstrap(
    data: _alpha.Pairable,
    level: _Level,
    n_resamples: int,
    seed: int,
    confidence: float,
    progress: bool | None,
) -> _alpha.AlphaBootstrap:
    """The alpha bootstrap with a progress bar: always when ``progress``, never when False, and
    by default on a terminal only once the work has taken a second (short work shows nothing)."""
    if progress is False or (progress is None and not sys.stderr.isatty()):
        return _alpha.alpha_bootstrap_interval(data, level, n_resamples, seed, confidence)
    bar = _ProgressBar(delay=0.0 if progress else 1.0)
    try:
        return _alpha.alpha_bootstrap_interval(data, level, n_resamples, seed, confidence, bar)
    finally:
        bar.close()


def compute_agreement(
    reliability_data: ReliabilityData,
    level: str = "interval",
    *,
    value_order: Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    progress: bool | None = None,
) -> Agreement:
    """Alpha, its bootstrap interval and the counts a report should state alongside it.

    Parameters
    ----------
    reliability_data, level, value_order
        As for :func:`krippendorff_alpha`.
    n_resamples : int
        Bootstrap resamples for the interval; 0 skips the interval (``low`` and ``high`` NaN).
    seed, confidence, progress
        As for :func:`alpha_interval`.

    Returns
    -------
    Agreement
        The same alpha as :func:`krippendorff_alpha` and interval as :func:`alpha_interval`, with
        the reason (``undefined``) when alpha is NaN.

    Raises
    ------
    ValueError, TypeError
        As :func:`alpha_interval` (``n_resamples`` may also be 0).
    """
    _check_resampling(n_resamples, confidence, minimum=0)
    prepared = _prepare(reliability_data, level, value_order)
    data = _alpha.pairable(prepared.positions, prepared.level)
    alpha = _alpha.alpha(data, prepared.level)
    undefined = _undefined(prepared, data)
    low, high, defined = math.nan, math.nan, 0
    if n_resamples > 0 and undefined is None:
        found = _bootstrap(data, prepared.level, n_resamples, seed, confidence, progress)
        low, high, defined = found.interval.low, found.interval.high, found.n_defined
    n_coders, n_units = prepared.positions.shape
    return Agreement(
        alpha=alpha,
        low=low,
        high=high,
        level=prepared.level,
        confidence=confidence,
        n_coders=n_coders,
        n_units=n_units,
        n_pairable_units=data.n_units,
        n_pairable_values=data.n_values,
        undefined=undefined,
        n_resamples=n_resamples if undefined is None else 0,
        n_defined_resamples=defined,
    )


def pairwise_agreement(
    ratings: Mapping[str, Sequence[Rating]],
    level: str = "interval",
    *,
    value_order: Sequence[Hashable] | None = None,
) -> dict[tuple[str, str], float]:
    """Krippendorff's alpha for each pair of coders (for example judges) on the same units.

    Parameters
    ----------
    ratings : Mapping[str, Sequence[float | str | None]]
        Coder name -> its ratings, one per unit (the same units, in the same order, for every
        coder), ``None`` or NaN where missing.
    level, value_order
        As for :func:`krippendorff_alpha`; the labels are checked once, over all coders.

    Returns
    -------
    dict[tuple[str, str], float]
        ``(a, b)`` -> alpha of the two-coder table, for every pair with ``a`` before ``b`` in the
        mapping's order (``(b, a)`` is not repeated: alpha is symmetric). NaN for a pair with no
        unit both rated, or no variation in the units both rated. Empty for fewer than two coders.

    Raises
    ------
    ValueError
        If the coders rated different numbers of units, or as :func:`krippendorff_alpha`.
    TypeError
        As :func:`krippendorff_alpha`.
    """
    names = list(ratings)
    lengths = {name: len(ratings[name]) for name in names}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"every coder must rate the same units; ratings per coder: {lengths}")
    rows = [ratings[name] for name in names]
    prepared = _prepare(rows, level, value_order)
    return {
        (names[a], names[b]): _alpha.alpha(
            _alpha.pairable(prepared.positions[[a, b]], prepared.level), prepared.level
        )
        for a, b in itertools.combinations(range(len(names)), 2)
    }


def _check_level(level: str) -> _Level:
    if level not in _BY_NAME:
        raise ValueError(f"`level` must be one of {', '.join(map(repr, LEVELS))}, not {level!r}")
    return _BY_NAME[level]


def _check_resampling(n_resamples: int, confidence: float, *, minimum: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < minimum:
        raise ValueError(f"`n_resamples` must be an integer >= {minimum}, not {n_resamples!r}")
    if isinstance(confidence, bool) or not 0.0 < confidence < 1.0:
        raise ValueError(f"`confidence` must be in (0, 1), not {confidence!r}")


def _prepare(
    reliability_data: ReliabilityData, level: str, value_order: Sequence[Hashable] | None
) -> _Prepared:
    """Validate the table and put every rating on a numeric scale."""
    checked = _check_level(level)
    order = None if value_order is None else _check_order(value_order)
    numeric, labels = _read_table(reliability_data)
    if labels is not None:
        positions = _label_positions(labels, checked, order)
    else:
        assert numeric is not None
        positions = _number_positions(numeric, checked, order)
    if checked == "ratio" and bool((positions < 0).any()):
        # Krippendorff's ratio difference ((c - k) / (c + k))**2 presumes an absolute zero; with
        # mixed signs c + k can vanish and the package then treats the pair as agreeing.
        negative = float(positions[positions < 0][0])
        raise ValueError(f"ratio level needs non-negative values; found {negative!r}")
    return _Prepared(positions=positions, level=checked)


def _undefined(prepared: _Prepared, data: _alpha.Pairable) -> str | None:
    """The code of the reason alpha is undefined (a key of ``UNDEFINED``), or None."""
    n_coders = prepared.positions.shape[0]
    if n_coders < 2:
        return "no_coder" if n_coders == 0 else "one_coder"
    rating_coders = int((~np.isnan(prepared.positions)).any(axis=1).sum())
    if rating_coders < 2:
        return "no_rating" if rating_coders == 0 else "one_coder_rated"
    if data.n_units == 0:
        return "no_pairable_unit"
    if data.domain.size < 2:
        return "no_variation"
    return None
