"""The public surface of kagreport.stats: its names and its result types."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import kagreport.stats
from kagreport.evaluation._agreement import alpha_interval
from kagreport.stats import ConfidenceInterval, _alpha, bootstrap_mean_interval, wilson_interval
from kagreport.stats._alpha import AlphaBootstrap, alpha_bootstrap_interval, pairable


def test_all_is_complete() -> None:
    # Its order is checked by ruff (RUF022: constants, classes, then functions, each sorted).
    names = kagreport.stats.__all__
    public = {n for n in vars(kagreport.stats) if not n.startswith("_")} - {"annotations"}
    assert set(names) == public
    for name in names:
        assert getattr(kagreport.stats, name) is not None


def test_confidence_interval_is_a_frozen_record_that_unpacks() -> None:
    interval = ConfidenceInterval(0.25, 0.75, 0.9, "wilson")
    low, high = interval
    assert (low, high) == (0.25, 0.75)
    assert interval.defined
    assert interval == ConfidenceInterval(0.25, 0.75, 0.9, "wilson")
    assert interval != (0.25, 0.75)  # a record, not a tuple
    with pytest.raises(dataclasses.FrozenInstanceError):
        interval.low = 0.0  # type: ignore[misc]
    assert not ConfidenceInterval(math.nan, math.nan, 0.95, "percentile-bootstrap").defined


def test_intervals_record_their_level_and_method() -> None:
    # Ten equal differences: every resampled mean is 0.5, so both bounds are 0.5.
    boot = bootstrap_mean_interval([0.5] * 10, n_resamples=50, confidence=0.8)
    assert boot == ConfidenceInterval(0.5, 0.5, 0.8, "percentile-bootstrap")
    agreement = alpha_interval([[1, 2, 3, 4], [1, 2, 3, 3]], n_resamples=50, confidence=0.9)
    assert (agreement.level, agreement.method) == (0.9, "percentile-bootstrap")
    assert agreement.low <= agreement.high


def test_wilson_interval_is_an_array_valued_confidence_interval() -> None:
    from scipy.stats import binomtest

    k, n = np.array([81, 15, 0]), np.array([263, 148, 20])
    interval = wilson_interval(k, n, confidence=0.9)
    assert isinstance(interval, ConfidenceInterval)
    assert (interval.level, interval.method) == (0.9, "wilson")
    assert interval.low.shape == interval.high.shape == (3,)
    for i in range(3):
        ci = binomtest(int(k[i]), int(n[i])).proportion_ci(confidence_level=0.9, method="wilson")
        assert interval.low[i] == pytest.approx(ci.low, abs=1e-12)
        assert interval.high[i] == pytest.approx(ci.high, abs=1e-12)
    low, high = interval  # as the (low, high) tuple of arrays it was
    assert low is interval.low
    assert high is interval.high
    assert interval.defined
    assert not wilson_interval([1, 0], [2, 0]).defined  # a proportion of no trials: NaN


def test_alpha_bootstrap_reports_progress_to_a_callback(monkeypatch: pytest.MonkeyPatch) -> None:
    ratings = np.array([[1.0, 2.0, 3.0, 4.0, 2.0], [1.0, 2.0, 4.0, 4.0, 1.0]])
    data = pairable(ratings, "interval")
    plain = alpha_bootstrap_interval(data, "interval", 200, 3, 0.9)
    assert isinstance(plain, AlphaBootstrap)
    assert plain.interval.defined
    assert 100 <= plain.n_defined <= 200
    # One resample per block: a call before the first, then one per block, in order.
    monkeypatch.setattr(_alpha, "_BUDGET", 1)
    calls: list[tuple[int, int]] = []
    found = alpha_bootstrap_interval(
        data, "interval", 200, 3, 0.9, lambda done, total: calls.append((done, total))
    )
    assert calls == [(done, 200) for done in range(201)]
    assert found == plain  # neither the blocks nor the callback change the draws
    # No variation: alpha is undefined, no resample is drawn and nothing is reported.
    calls.clear()
    flat = pairable(np.full((2, 3), 2.0), "interval")
    undefined = alpha_bootstrap_interval(
        flat, "interval", 50, 0, 0.9, lambda done, total: calls.append((done, total))
    )
    assert calls == []
    assert undefined.n_defined == 0
    assert not undefined.interval.defined
