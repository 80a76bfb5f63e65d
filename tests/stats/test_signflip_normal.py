"""sign_flip_test(fallback="normal"): the normal tail of the sign-flip sum, for large inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from kagreport.stats import sign_flip_test
from kagreport.stats._signflip import METHODS, NORMAL_MIN


def test_the_normal_p_value_is_the_normal_tail_of_the_sign_flip_sum() -> None:
    x = np.random.default_rng(3).normal(0.004, 1.0, 50_000)
    result = sign_flip_test(x, fallback="normal")
    assert result.method == "normal"
    assert "normal" in METHODS
    assert not result.exact
    assert result.n_resamples == 0
    assert result.n_nonzero == x.size
    z = x.sum() / math.sqrt((x * x).sum())
    assert result.p_value == pytest.approx(2 * norm.sf(abs(z)), rel=1e-9)


def test_it_agrees_with_monte_carlo_within_its_error() -> None:
    # Continuous differences (no lattice), just above the threshold; Monte Carlo's p from
    # 20,000 resamples has a standard error of sqrt(p (1 - p) / 20,000).
    rng = np.random.default_rng(11)
    for shift in (0.0, 0.01, 0.015):
        x = rng.normal(shift, 1.0, NORMAL_MIN + 1)
        normal = sign_flip_test(x, fallback="normal").p_value
        carlo = sign_flip_test(x, n_resamples=20_000, seed=5)
        assert carlo.method == "monte-carlo"
        se = math.sqrt(normal * (1 - normal) / 20_000)
        assert abs(carlo.p_value - normal) < 4 * se + 1e-4, (shift, normal, carlo.p_value)


def test_exact_methods_and_small_inputs_are_unchanged() -> None:
    zero_one = np.array([1.0] * 50_500 + [-1.0] * 49_500)
    assert sign_flip_test(zero_one, fallback="normal") == sign_flip_test(zero_one)
    small = np.random.default_rng(1).normal(size=500)
    assert sign_flip_test(small, fallback="normal").method == "monte-carlo"
    with pytest.raises(ValueError, match="fallback"):
        sign_flip_test(small, fallback="bootstrap")
