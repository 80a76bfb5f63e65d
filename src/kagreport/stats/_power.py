"""Power of a two-sided paired test under the normal approximation: the minimum detectable
effect at a sample size, the sample size that detects an effect, and the power itself.

One formula, three ways round (Cohen 1988, ch. 2; Chow, Shao and Wang 2008, section 3.1)::

    power(effect, variance, n) = Phi(|effect| / sqrt(variance / n) - z_{1 - alpha/2})
    minimum_detectable_effect  = (z_{1 - alpha/2} + z_{power}) * sqrt(variance / n)

``variance`` is the variance of one paired difference; for paired 0/1 outcomes under the
null of no difference it is the discordance rate (the share of items the two systems score
differently), the variance the exact McNemar and sign-flip tests condition on.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from kagreport._errors import InputError

__all__ = ["minimum_detectable_effect", "power", "required_sample_size"]

_NORMAL = NormalDist()


def _number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"`{name}` must be a number, not {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(f"`{name}` must be finite, not {value!r}")
    return number


def _probability(value: object, name: str) -> float:
    number = _number(value, name)
    if not 0.0 < number < 1.0:
        raise InputError(f"`{name}` must be in (0, 1), not {value!r}")
    return number


def _variance(value: object) -> float:
    number = _number(value, "variance")
    if number < 0.0:
        raise InputError(f"`variance` must be 0 or more, not {value!r}")
    return number


def _size(value: object) -> float:
    number = _number(value, "n")
    if number <= 0.0:
        raise InputError(f"`n` must be more than 0, not {value!r}")
    return number


def minimum_detectable_effect(
    variance: float, n: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest true mean difference a two-sided test at ``alpha`` detects with
    probability ``power`` at ``n`` pairs.

    Parameters
    ----------
    variance : float
        Variance of one paired difference, >= 0, in the metric's units squared (for
        paired 0/1 outcomes: the discordance rate, a fraction in [0, 1]).
    n : float
        Pairs, > 0.
    alpha : float, default 0.05
        Two-sided significance level, in (0, 1).
    power : float, default 0.8
        In (0, 1).

    Returns
    -------
    float
        ``(z_{1-alpha/2} + z_{power}) * sqrt(variance / n)``, in the metric's units
        (0 when ``variance`` is 0).

    Raises
    ------
    InputError
        If an argument is not a finite number in its range (the message names it).

    References
    ----------
    .. [1] J. Cohen (1988), *Statistical Power Analysis for the Behavioral Sciences*,
       2nd ed., ch. 2.
    .. [2] S.-C. Chow, J. Shao, H. Wang (2008), *Sample Size Calculations in Clinical
       Research*, 2nd ed., section 3.1.

    Examples
    --------
    >>> round(minimum_detectable_effect(0.1, 1000), 6)  # (1.959964 + 0.841621) * 0.01
    0.028016
    """
    variance, n = _variance(variance), _size(n)
    alpha, power = _probability(alpha, "alpha"), _probability(power, "power")
    z = -_NORMAL.inv_cdf(alpha / 2.0) + _NORMAL.inv_cdf(power)
    return z * math.sqrt(variance / n)


def power(effect: float, variance: float, n: float, *, alpha: float = 0.05) -> float:
    """The probability that a two-sided test at ``alpha`` rejects when the true mean
    difference is ``effect``, at ``n`` pairs (the far tail neglected).

    Parameters
    ----------
    effect : float
        True mean difference, in the metric's units (its sign does not matter).
    variance : float
        Variance of one paired difference, >= 0 (paired 0/1 outcomes: the discordance
        rate).
    n : float
        Pairs, > 0.
    alpha : float, default 0.05
        In (0, 1).

    Returns
    -------
    float
        ``Phi(|effect| / sqrt(variance / n) - z_{1-alpha/2})``, in (0, 1]. With
        ``variance`` 0: 1 for a non-zero effect, ``alpha / 2`` for none (the limit as the
        effect goes to 0).

    Raises
    ------
    InputError
        If an argument is not a finite number in its range (the message names it).

    References
    ----------
    .. [1] J. Cohen (1988), *Statistical Power Analysis for the Behavioral Sciences*,
       2nd ed., ch. 2.

    Examples
    --------
    >>> round(power(0.028016, 0.1, 1000), 4)
    0.8
    """
    effect = abs(_number(effect, "effect"))
    variance, n = _variance(variance), _size(n)
    alpha = _probability(alpha, "alpha")
    z = -_NORMAL.inv_cdf(alpha / 2.0)
    if variance == 0.0:
        return 1.0 if effect > 0.0 else alpha / 2.0
    return _NORMAL.cdf(effect / math.sqrt(variance / n) - z)


def required_sample_size(
    variance: float, effect: float, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """The smallest number of pairs at which a two-sided test at ``alpha`` detects
    ``effect`` with probability at least ``power``.

    Parameters
    ----------
    variance : float
        Variance of one paired difference, >= 0 (paired 0/1 outcomes: the discordance
        rate).
    effect : float
        The mean difference to detect, non-zero, in the metric's units.
    alpha : float, default 0.05
        In (0, 1).
    power : float, default 0.8
        In (0, 1).

    Returns
    -------
    int
        The smallest integer n >= 1 with :func:`power` ``(effect, variance, n) >= power``:
        ``ceil(variance * (z_{1-alpha/2} + z_{power})**2 / effect**2)``, checked one below
        against rounding; 1 when ``variance`` is 0.

    Raises
    ------
    InputError
        If an argument is not a finite number in its range, or ``effect`` is 0 (no
        sample size detects it).

    References
    ----------
    .. [1] S.-C. Chow, J. Shao, H. Wang (2008), *Sample Size Calculations in Clinical
       Research*, 2nd ed., section 3.1.

    Examples
    --------
    >>> required_sample_size(0.1, 0.028016)
    1000
    """
    variance = _variance(variance)
    effect = abs(_number(effect, "effect"))
    if effect == 0.0:
        raise InputError("`effect` must not be 0: no sample size detects no difference")
    alpha, target = _probability(alpha, "alpha"), _probability(power, "power")
    if variance == 0.0:
        return 1
    z = -_NORMAL.inv_cdf(alpha / 2.0) + _NORMAL.inv_cdf(target)
    n = max(1, math.ceil(variance * z * z / (effect * effect)))
    # The closed form can land one above the answer by rounding; the power decides.
    while n > 1 and _power_at(effect, variance, n - 1, alpha) >= target:
        n -= 1
    while _power_at(effect, variance, n, alpha) < target:
        n += 1
    return n


def _power_at(effect: float, variance: float, n: int, alpha: float) -> float:
    z = -_NORMAL.inv_cdf(alpha / 2.0)
    return _NORMAL.cdf(effect / math.sqrt(variance / n) - z)
