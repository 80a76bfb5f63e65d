"""Power, minimum detectable effect and sample size (kagreport.stats._power).

Oracles: scipy.stats.norm (an independent implementation of the normal quantiles and CDF)
and the textbook constant (z_0.975 + z_0.8)**2 = 7.849 (Chow, Shao and Wang 2008, 3.1).
"""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from kagreport import KagreportError
from kagreport.stats import minimum_detectable_effect, power, required_sample_size


def test_the_textbook_constant() -> None:
    # Chow, Shao and Wang (2008), section 3.1: n = (z_{a/2} + z_b)^2 sigma^2 / delta^2 with
    # (1.96 + 0.84)^2 = 7.849 at alpha 0.05, power 0.8; sigma^2 = 1, delta = 0.5 -> 31.4 -> 32.
    assert required_sample_size(1.0, 0.5) == 32
    assert minimum_detectable_effect(1.0, 7.849) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize(
    ("variance", "n", "alpha", "target"),
    [(0.1, 1000, 0.05, 0.8), (0.02, 250, 0.01, 0.9), (0.3, 37, 0.1, 0.5), (2.5, 10, 0.05, 0.95)],
)
def test_against_scipy(variance: float, n: int, alpha: float, target: float) -> None:
    z = norm.ppf(1 - alpha / 2) + norm.ppf(target)
    mde = minimum_detectable_effect(variance, n, alpha=alpha, power=target)
    assert mde == pytest.approx(z * math.sqrt(variance / n), rel=1e-12)
    # The MDE has exactly the target power (the far tail neglected).
    effect = 0.01 + mde
    expected = norm.cdf(effect / math.sqrt(variance / n) - norm.ppf(1 - alpha / 2))
    assert power(effect, variance, n, alpha=alpha) == pytest.approx(expected, rel=1e-12)
    assert power(-effect, variance, n, alpha=alpha) == power(effect, variance, n, alpha=alpha)
    # The smallest n reaching the target, by brute force over scipy's power.
    needed = required_sample_size(variance, effect, alpha=alpha, power=target)

    def scipy_power(m: int) -> float:
        return float(norm.cdf(effect / math.sqrt(variance / m) - norm.ppf(1 - alpha / 2)))

    assert scipy_power(needed) >= target
    assert needed == 1 or scipy_power(needed - 1) < target


def test_the_discordance_rate_as_variance() -> None:
    # Paired 0/1 outcomes: 10% of 2,000 items discordant -> MDE 2.8016 * sqrt(0.1 / 2000).
    assert minimum_detectable_effect(0.1, 2000) == pytest.approx(0.0198101, abs=1e-7)
    # Detecting a 1-point difference at that discordance rate: 7.849 * 0.1 / 0.0001 = 7849.
    assert required_sample_size(0.1, 0.01) == 7849


def test_zero_variance() -> None:
    assert minimum_detectable_effect(0.0, 10) == 0.0
    assert power(0.1, 0.0, 10) == 1.0
    assert power(0.0, 0.0, 10) == 0.025
    assert required_sample_size(0.0, 0.1) == 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: minimum_detectable_effect(-1.0, 10), "`variance` must be 0 or more"),
        (lambda: minimum_detectable_effect(1.0, 0), "`n` must be more than 0"),
        (lambda: minimum_detectable_effect(1.0, 10, alpha=1.0), r"`alpha` must be in \(0, 1\)"),
        (lambda: minimum_detectable_effect(1.0, 10, power=0.0), r"`power` must be in \(0, 1\)"),
        (lambda: power(math.nan, 1.0, 10), "`effect` must be finite"),
        (lambda: power(0.1, 1.0, True), "`n` must be a number"),
        (lambda: required_sample_size(1.0, 0.0), "`effect` must not be 0"),
        (lambda: required_sample_size("1", 0.1), "`variance` must be a number"),  # type: ignore[arg-type]
    ],
)
def test_each_message(call: object, message: str) -> None:
    with pytest.raises(KagreportError, match=message):
        call()  # type: ignore[operator]
