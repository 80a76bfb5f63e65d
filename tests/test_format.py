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
    percent_interval,
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
    # An interval's bound below 0 (PPI, a t interval of few items): a real minus sign.
    assert percent(-0.08) == "\u22128.0%"
    assert percent(-0.0004) == "0.0%"  # rounds to zero: no sign
    assert percent_interval(0.02, -0.03, 0.07) == "2.0% [\u22123.0%, 7.0%]"
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


# One convention per kind of number (issue #26 item 5). Expected strings are written out by
# hand from the convention in the module docstring, not produced by the code under test.
@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0412, "0.0412"),
        (1.23, "1.23"),
        (12.345, "12.3"),
        (1104.991, "1,105"),  # mean context bytes: no "1104.991"
        (9.996, "10.0"),  # rounds up a digit: still three significant digits
        (99.95, "100"),
        (123456.7, "123,457"),  # the integer part in full
        (0.000123, "0.000123"),
        (0, "0"),
        (0.0, "0"),
        (1105, "1,105"),
        (-3.21, "\u22123.21"),
        (math.nan, MISSING),
    ],
)
def test_quantities_have_three_significant_digits_and_full_integers(
    value: float, shown: str
) -> None:
    assert _format.quantity(value) == shown


def test_scores_and_differences_have_one_style_per_kind() -> None:
    assert _format.score(0.72549) == "0.725"
    assert _format.score(-0.04) == "\u22120.040"
    assert _format.score_interval(0.725, 0.69, 0.76) == "0.725 [0.690, 0.760]"
    # The two rows of issue #26 item 5, as they now read side by side.
    assert _format.difference_interval(-0.106, -0.146, -0.066, proportion=True) == (
        "\u221210.6 pp [\u221214.6, \u22126.6]"
    )
    assert _format.difference_interval(-0.25, -0.5, 0.0, proportion=False) == (
        "\u22120.250 [\u22120.500, 0.000]"
    )
    assert _format.difference(0.25, proportion=False) == "+0.250"
    assert _format.difference(0.0, proportion=True) == "0.0 pp"


def test_a_metric_reads_as_its_kind() -> None:
    # "Mean match 0.8000" for a 0/1 metric was issue #26's example: a proportion is a percentage.
    assert _format.metric("match", 0.8, [1, 1, 1, 1, 0]) == "80.0%"
    assert _format.metric("hit@5", 0.5) == "50.0%"  # the metric before "@" decides
    assert _format.metric("mrr", 0.72549, [0.5, 1.0, 0.33]) == "0.725"
    assert _format.metric_interval("accuracy", 0.723, 0.683, 0.761) == "72.3% [68.3%, 76.1%]"
    assert _format.metric_interval("f1", 0.5, 0.25, 0.75, [0.5, 0.25]) == "0.500 [0.250, 0.750]"


@pytest.mark.parametrize(
    ("n", "noun", "many", "shown"),
    [
        (1, "judge", None, "1 judge"),
        (0, "judge", None, "0 judges"),
        (2, "judge", None, "2 judges"),
        (1234, "item", None, "1,234 items"),
        (1, "entry", "entries", "1 entry"),
        (3, "entry", "entries", "3 entries"),
    ],
)
def test_plurals_are_right(n: int, noun: str, many: str | None, shown: str) -> None:
    assert _format.plural(n, noun, many) == shown
    assert _format.count(n) == shown.split()[0]
