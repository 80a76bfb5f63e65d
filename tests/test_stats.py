"""The public surface of kagreport.stats: its names and its result types."""

from __future__ import annotations

import dataclasses
import math

import pytest

import kagreport.stats
from kagreport.evaluation import alpha_interval
from kagreport.stats import ConfidenceInterval, bootstrap_mean_interval


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
