"""The one formatter of numbers, percentages, p-values and missing values (issue #12 item 6)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from kagreport import _format
from kagreport._format import (
    MISSING,
    fixed,
    interval,
    is_missing,
    json_safe,
    number,
    p_value,
    percent,
    significant,
)


@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf, np.float32("nan")])
def test_every_kind_marks_an_undefined_value_with_one_dash(value: object) -> None:
    assert is_missing(value)
    for shown in (fixed(value), number(value), significant(value), percent(value), p_value(value)):
        assert shown == MISSING == "—"
    assert interval(value, 0.1, 0.2) == MISSING


@pytest.mark.parametrize("value", [0, 1, True, np.int64(3), 0.0, np.float64(0.5)])
def test_defined_values_are_not_missing(value: object) -> None:
    assert not is_missing(value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.5, "0.5000"),
        (0.03125, "0.0312"),  # 1/32, rounded half to even by Python's format
        (1e-4, "0.0001"),  # the threshold itself keeps 4 decimals
        (2 / 2**20, "1.91e-06"),  # 2 / 1,048,576 = 1.907e-6: an exact p, never "0.0000"
        (0.0, "0.00e+00"),
        (1.0, "1.0000"),
    ],
)
def test_p_values_have_one_style(value: float, shown: str) -> None:
    assert p_value(value) == shown


def test_numbers_percentages_and_intervals() -> None:
    assert fixed(0.725, 3) == "0.725"
    assert fixed(2, 2) == "2.00"  # fixed decimals whatever the type
    assert number(12345, grouping=True) == "12,345"
    assert number(np.int64(7)) == "7"
    assert number(1234.5, 1, grouping=True) == "1,234.5"
    assert number(np.bool_(True)) == "yes"
    assert number(False) == "no"
    assert number("n/a") == "n/a"
    assert significant(0.72549) == "0.725"
    assert significant(1234.0, 2) == "1.2e+03"
    assert significant(12) == "12"
    assert percent(0.723) == "72.3%"
    assert percent(1, 0) == "100%"
    assert interval(0.5, 0.25, 0.75, 2) == "0.50 [0.25, 0.75]"
    assert interval(0.5, math.nan, 0.75, 2) == "0.50"


def test_json_safe_turns_non_finite_numbers_into_null() -> None:
    value = {1: (math.nan, np.float64(0.5), [math.inf, {"x": -math.inf}]), "s": "nan"}
    safe = json_safe(value)
    assert safe == {"1": [None, 0.5, [None, {"x": None}]], "s": "nan"}
    assert type(safe["1"][1]) is float
    json.dumps(safe, allow_nan=False)  # strict JSON holds it


def test_views_share_the_formatter() -> None:
    # The text tables, LaTeX, widgets and the site format p-values through one function.
    from kagreport.frames import _latex
    from kagreport.site import _templates
    from kagreport.widgets import _compare

    assert _templates.fmt_p(2 / 2**20) == p_value(2 / 2**20) == "1.91e-06"
    assert _templates.fmt_pct(None) == MISSING
    assert _compare.p_value is _format.p_value
    assert _latex.p_value is _format.p_value
    assert _latex.latex_escape(MISSING) == "---"  # an em dash in LaTeX


@pytest.mark.parametrize(
    ("name", "values", "expected"),
    [
        ("correct", [], True),  # by name, with no values
        ("accuracy", [0.25, 0.5], True),  # a mean of proportions is one
        ("gpt-4 judge", [1, 0, None, math.nan, True, np.bool_(False)], True),  # 0/1 verdicts
        ("gpt-4 judge", [1, 0, 0.5], False),  # a half point is a score, not a verdict
        ("score", [7.0, 3.0], False),
        ("latency", [], False),  # no defined value: the name decides
        ("judge", [None, math.nan], False),
        ("judge", ["yes"], False),
    ],
)
def test_is_proportion(name: str, values: list[object], expected: bool) -> None:
    assert _format.is_proportion(name, values) is expected
