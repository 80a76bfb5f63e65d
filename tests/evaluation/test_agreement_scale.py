"""Alpha at any number of distinct values and any magnitude, the vectorised bootstrap, and the
reasons recorded when alpha is undefined.

Independent references: the ``krippendorff`` package (coincidence matrices) on small tables, and
brute-force sums over every pair of values written out here.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kagreport._document import loads_document
from kagreport.evaluation import AnswerEvaluation, AnswerItem, evaluate_answers, krippendorff_alpha
from kagreport.evaluation._agreement import LEVELS, UNDEFINED, alpha_interval, compute_agreement
from kagreport.evaluation.judges import Judgement
from kagreport.stats._alpha import bootstrap_alphas, pairable

# --- against the krippendorff package -------------------------------------------------------------


@st.composite
def tables(draw: st.DrawFn) -> np.ndarray:
    n_coders = draw(st.integers(2, 5))
    n_units = draw(st.integers(1, 10))
    # Few distinct values (ties, as on a rating scale) or many (continuous scores).
    pool = draw(
        st.sampled_from(
            [
                [0.0, 1.0, 2.0, 3.0, 4.0],
                [0.5, 1.25, 3.0, 7.5],
                [0.0, 0.1, 0.2, 0.3, 0.7, 0.9, 1.0],
                list(np.round(np.linspace(0.01, 10.0, 60), 3)),
            ]
        )
    )
    cell = st.one_of(st.just(math.nan), st.sampled_from(pool))
    return np.array([[draw(cell) for _ in range(n_units)] for _ in range(n_coders)])


@settings(max_examples=300, deadline=None)
@given(tables(), st.sampled_from(LEVELS))
def test_every_level_matches_the_krippendorff_package(table: np.ndarray, level: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = compute_agreement(table, level, n_resamples=0)
    if ours.undefined is not None:
        assert math.isnan(ours.alpha)
        return
    expected = krippendorff.alpha(reliability_data=table, level_of_measurement=level)
    assert ours.alpha == pytest.approx(expected, rel=1e-12, abs=1e-12)


# --- against brute force, with thousands of distinct values ----------------------------------------


def _brute_force(table: np.ndarray, level: str) -> float:
    """Krippendorff (2011): D_o from the pairs inside each unit, D_e from every pair of the
    pairable values, each pair written out (no closed form, no coincidence matrix)."""

    def delta(c: np.ndarray, k: np.ndarray) -> np.ndarray:
        if level == "interval":
            return (c - k) ** 2
        total = c + k
        return (
            np.divide(c - k, total, out=np.zeros(np.broadcast(c, k).shape), where=total != 0) ** 2
        )

    units = [col[~np.isnan(col)] for col in table.T]
    units = [u for u in units if u.size >= 2]
    observed = math.fsum(float(delta(u[:, None], u[None, :]).sum()) / (u.size - 1) for u in units)
    values = np.concatenate(units)
    n = values.size
    expected = math.fsum(float(delta(v, values).sum()) for v in values)  # i == j adds 0
    return 1.0 - (observed / n) / (expected / (n * (n - 1)))


def _reward_models(n_items: int = 350, n_judges: int = 5, seed: int = 11) -> np.ndarray:
    """Continuous scores of ``n_judges`` reward models: a shared signal, noise, some missing."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 1.0, n_items)
    scores = (
        truth + rng.normal(0.0, 1.1, size=(n_judges, n_items)) + rng.normal(0, 0.5, (n_judges, 1))
    )
    scores = np.exp(scores / 3)  # positive, for the ratio level
    scores[rng.random(scores.shape) < 0.1] = np.nan
    return scores


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_continuous_scores_match_brute_force(level: str) -> None:
    # Before: krippendorff's (units, V, V) arrays did not fit, a ValueError (and, inside
    # evaluate_answers, NaN with only a log line).
    table = _reward_models()
    assert np.unique(table[~np.isnan(table)]).size > 1500
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = krippendorff_alpha(table, level)
    assert ours == pytest.approx(_brute_force(table, level), rel=1e-12)
    assert 0.2 < ours < 0.8


@pytest.mark.parametrize("kind", ["near-equal", "wide", "zeros", "tiny"])
def test_ratio_level_matches_brute_force_on_awkward_values(kind: str) -> None:
    # The ratio level's expected disagreement is an integral taken numerically: check it where
    # that is hardest (values within 1e-6 of each other, eight decades apart, zeros, 1e-250).
    rng = np.random.default_rng(4)
    base = rng.random((4, 300))
    table = {
        "near-equal": 1.0 + 1e-6 * base,
        "wide": 10.0 ** (-8 * base),
        "zeros": np.where(base < 0.2, 0.0, base),
        "tiny": np.where(base < 0.5, 1e-250 * base, base),
    }[kind]
    table[rng.random(table.shape) < 0.15] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = krippendorff_alpha(table, "ratio")
    assert ours == pytest.approx(_brute_force(table, "ratio"), rel=1e-11)


def test_ordinal_and_nominal_with_many_distinct_values_match_the_package() -> None:
    # 120 units x 3 coders, about 250 distinct values: small enough for the package's
    # (units, V, V) arrays, far more values than a rating scale.
    table = np.round(_reward_models(120, 3, seed=5), 2)
    assert np.unique(table[~np.isnan(table)]).size > 100
    for level in ("nominal", "ordinal"):
        expected = krippendorff.alpha(reliability_data=table, level_of_measurement=level)
        assert krippendorff_alpha(table, level) == pytest.approx(expected, rel=1e-12)


def test_every_value_distinct_by_hand() -> None:
    # Coder 1 rates unit j as j, coder 2 as j + 2000 (j = 0..1999): n = 4000 values 0..3999.
    # D_o = (1/n) * sum_u 2 * 2000**2 / 1 = 2000 * 8e6 / 4000 = 4e6.
    # sum_{i != j} (v_i - v_j)**2 = 2 n * n (n**2 - 1) / 12, so D_e = n (n + 1) / 6.
    # alpha = 1 - 4e6 * 6 / (4000 * 4001) = 1 - 6000 / 4001 = -1999 / 4001.
    table = np.arange(4000.0).reshape(2, 2000)
    assert krippendorff_alpha(table) == pytest.approx(-1999 / 4001, rel=1e-13)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("factor", [1e-200, 1e160, 1e300])
def test_extreme_scales_give_the_same_alpha_without_warnings(level: str, factor: float) -> None:
    table = np.round(_reward_models(60, 4, seed=3), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = compute_agreement(table, level, n_resamples=200, seed=1)
        scaled = compute_agreement(table * factor, level, n_resamples=200, seed=1)
    for a, b in [(plain.alpha, scaled.alpha), (plain.low, scaled.low), (plain.high, scaled.high)]:
        assert b == pytest.approx(a, rel=1e-9)


# --- the bootstrap ---------------------------------------------------------------------------------


def _looped_bootstrap(table: np.ndarray, level: str, n_resamples: int, seed: int) -> np.ndarray:
    """The unit bootstrap one resample at a time with the krippendorff package (the previous
    implementation's method): the same draws, NaN where a resample has one value only."""
    keep = (~np.isnan(table)).sum(axis=0) >= 2
    sub = table[:, keep]
    draws = np.random.default_rng(seed).integers(0, sub.shape[1], size=(n_resamples, sub.shape[1]))
    out = np.full(n_resamples, np.nan)
    for b, draw in enumerate(draws):
        resample = sub[:, draw]
        if np.unique(resample[~np.isnan(resample)]).size >= 2:
            out[b] = krippendorff.alpha(reliability_data=resample, level_of_measurement=level)
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_vectorised_bootstrap_equals_the_resample_loop(level: str) -> None:
    rng = np.random.default_rng(2)
    table = rng.integers(1, 6, size=(4, 25)).astype(float)
    table[:, :3] = 2.0  # constant units: some resamples of few units have no variation
    table[rng.random(table.shape) < 0.3] = np.nan
    data = pairable(table, level)  # type: ignore[arg-type]
    ours = bootstrap_alphas(data, level, 300, seed=9)  # type: ignore[arg-type]
    expected = _looped_bootstrap(table, level, 300, seed=9)
    assert np.array_equal(np.isnan(ours), np.isnan(expected))
    assert ours[~np.isnan(ours)] == pytest.approx(expected[~np.isnan(expected)], rel=1e-11)
    defined = expected[~np.isnan(expected)]
    low, high = alpha_interval(table, level, n_resamples=300, seed=9)
    assert (low, high) == pytest.approx(tuple(np.quantile(defined, [0.025, 0.975])), rel=1e-11)


def test_bootstrap_of_300_units_on_a_100_point_scale_takes_seconds() -> None:
    # Before: 22 s here (311 s reported) for 1000 krippendorff.alpha calls on 101 values.
    rng = np.random.default_rng(0)
    truth = rng.uniform(0, 100, 300)
    table = np.clip(np.round(truth + rng.normal(0, 12, size=(4, 300))), 0, 100)
    for level in LEVELS:
        start = time.perf_counter()
        low, high = alpha_interval(table, level, n_resamples=1000, seed=0)
        elapsed = time.perf_counter() - start
        print(f"{level}: {elapsed:.3f} s")
        assert elapsed < 15.0  # about 0.1 s (ratio 0.3 s) unloaded; generous for a busy CI
        assert low < krippendorff_alpha(table, level) < high


def test_bootstrap_of_continuous_scores() -> None:
    table = _reward_models()
    start = time.perf_counter()
    result = compute_agreement(table, "interval", n_resamples=1000)
    print(f"350 x 5 continuous, 1000 resamples: {time.perf_counter() - start:.3f} s")
    assert result.low < result.alpha < result.high
    assert result.n_defined_resamples == result.n_resamples == 1000


def test_progress_is_shown_on_request_only(capsys: pytest.CaptureFixture[str]) -> None:
    table = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 4.0, 4.0]])
    alpha_interval(table, n_resamples=50, progress=True)
    assert "agreement bootstrap" in capsys.readouterr().err
    alpha_interval(table, n_resamples=50, progress=False)
    alpha_interval(table, n_resamples=50)  # default: on a terminal only (pytest captures)
    assert capsys.readouterr().err == ""


# --- why alpha is undefined ------------------------------------------------------------------------

UNDEFINED_CASES: dict[str, tuple[Sequence[Sequence[float | None]], str]] = {
    "no coder": ([], "no_coder"),
    "one coder": ([[1, 2, 3]], "one_coder"),
    "nobody rated": ([[None, None], [None, None]], "no_rating"),
    "one coder rated": ([[1, 2, 3], [None, None, None]], "one_coder_rated"),
    "no pairable unit": ([[1, None, 3], [None, 2, None]], "no_pairable_unit"),
    "no variation": ([[2, 2, 5], [2, 2, None]], "no_variation"),
}


@pytest.mark.parametrize("case", UNDEFINED_CASES)
@pytest.mark.parametrize("level", LEVELS)
def test_the_reason_is_recorded(case: str, level: str) -> None:
    table, code = UNDEFINED_CASES[case]
    result = compute_agreement(table, level, n_resamples=20)
    assert math.isnan(result.alpha)
    assert result.undefined == code
    assert result.reason == UNDEFINED[code]
    assert (result.n_resamples, result.n_defined_resamples) == (0, 0)


def test_a_defined_alpha_has_no_reason() -> None:
    result = compute_agreement([[1, 2, 3], [1, 2, 4]], n_resamples=20)
    assert result.undefined is None
    assert result.reason is None
    assert result.n_resamples == 20


@dataclass
class Fixed:
    """A judge returning given scores per item identifier (None: no score)."""

    name: str
    scores: Mapping[str, float | None]
    criteria: tuple[str, ...] = ("quality",)
    identity: Mapping[str, Any] = field(default_factory=lambda: {"kind": "fixed"})
    blocking: bool = False

    @property
    def scales(self) -> dict[str, str]:
        return dict.fromkeys(self.criteria, "interval")  # every criterion on one scale

    def judge(self, item: AnswerItem) -> Judgement:
        value = self.scores[item.identifier]
        return Judgement({} if value is None else {self.criteria[0]: value})


def _judges(columns: Mapping[str, Sequence[float | None]], criterion: str) -> list[Fixed]:
    return [
        Fixed(f"{name}-{criterion}", {f"q{i}": v for i, v in enumerate(values)}, (criterion,))
        for name, values in columns.items()
    ]


@pytest.fixture(scope="module")
def noted() -> AnswerEvaluation:
    items = [AnswerItem(f"q{i}", "?", "a") for i in range(4)]
    judges = [
        *_judges({"a": [1, 2, 3, 4], "b": [1, 2, 3, 3]}, "fine"),
        *_judges({"a": [1, 2, 3, 4]}, "alone"),
        *_judges({"a": [1, None, 3, None], "b": [None, 2, None, 4]}, "apart"),
        *_judges({"a": [3, 3, 3, 3], "b": [3, 3, 3, 3]}, "flat"),
        *_judges({"a": [1, None, None, None], "b": [2, None, None, None]}, "thin"),
    ]
    return evaluate_answers(items, judges, agreement_resamples=200)


def test_evaluation_records_why_alpha_is_missing(noted: AnswerEvaluation) -> None:
    assert noted.agreement["fine"] == pytest.approx(
        krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 3]])
    )
    assert dict(noted.agreement_notes) == {
        "alone": "one judge (a-alone)",
        "apart": "no item scored by two or more judges",
        "flat": "no variation: every score on the items scored by two or more judges is the "
        "same value",
    }
    assert noted.agreement_note("fine") == ""
    assert noted.agreement_note("alone") == "alpha undefined: one judge (a-alone)"
    # One item rated 1 and 2: n = 2, D_o = (1/2) * 2 * 1 / 1 = 1, D_e = 2 * 1 / (2 * 1) = 1, so
    # alpha = 0; every resample draws that item and has variation: an interval, no note.
    assert noted.agreement["thin"] == pytest.approx(0.0, abs=1e-12)
    assert noted.agreement_intervals["thin"] == pytest.approx((0.0, 0.0), abs=1e-12)


def test_interval_note_when_most_resamples_are_undefined() -> None:
    # Two items, each scored alike by both judges: a resample that draws one item twice has one
    # value only (probability 1/2), so with 3 resamples about half are undefined; seeds where
    # fewer than half are defined leave a note.
    items = [AnswerItem("q0", "?", "a"), AnswerItem("q1", "?", "a")]
    judges = _judges({"a": [1, 2], "b": [1, 2]}, "x")
    notes = set()
    for seed in range(10):
        report = evaluate_answers(items, judges, agreement_resamples=3, seed=seed)
        notes.add(report.agreement_notes.get("x", ""))
    assert "" in notes
    assert any(
        n.startswith("no interval: only ")
        and n.endswith(" of 3 bootstrap resamples have variation (fewer than half)")
        for n in notes
    )


def test_a_refused_level_is_a_note_not_only_a_log_line() -> None:
    items = [AnswerItem(f"q{i}", "?", "a") for i in range(3)]
    judges = _judges({"a": [-1, 2, 3], "b": [1, 2, 3]}, "x")
    report = evaluate_answers(items, judges, agreement_level="ratio", agreement_resamples=0)
    assert math.isnan(report.agreement["x"])
    assert report.agreement_notes["x"] == (
        "not computed: ratio level needs non-negative values; found -1.0"
    )


def test_notes_survive_serialisation_and_old_documents_load(noted: AnswerEvaluation) -> None:
    for fmt in ("json", "yaml", "toml"):
        again = AnswerEvaluation.from_dict(loads_document(noted.dumps(fmt), fmt))
        assert again == noted
        assert again.agreement_notes == noted.agreement_notes
    old = noted.to_dict()
    del old["agreement_notes"]  # written before the notes existed
    legacy = AnswerEvaluation.from_dict(old)
    assert legacy.agreement_notes == {}
    assert legacy.agreement_note("alone") == "alpha undefined (reason not recorded)"
    bad = noted.to_dict() | {"agreement_notes": {"x": 1}}
    with pytest.raises(ValueError, match=r"agreement_notes\.x: expected a string, got 1"):
        AnswerEvaluation.from_dict(bad)


def test_notes_in_text_and_html(noted: AnswerEvaluation) -> None:
    from kagreport.evaluation._text import render_evaluation

    text = render_evaluation(noted)
    assert "alone: alpha undefined: one judge (a-alone)" in text
    assert "apart: alpha undefined: no item scored by two or more judges" in text
    assert "fine:" not in text
    html = noted._repr_html_()
    assert "<th>note</th>" in html
    assert "<td>alpha undefined: one judge (a-alone)</td>" in html
    assert '"agreement_notes": {' in noted.dumps("json")


def test_notes_on_the_site_evaluation_page(noted: AnswerEvaluation, tmp_path: Any) -> None:
    from kagreport.site import SiteConfig, build_site

    source = tmp_path / "noted.json"
    noted.write(source)
    out = tmp_path / "site"
    build_site(SiteConfig(title="t", evaluations=(source,)), out, execute_notebooks=False)
    page = (out / "evaluations/noted.html").read_text(encoding="utf-8")
    table = page[page.index('id="agreement-table"') :]
    table = table[: table.index("</table>")]
    assert "<th>Note</th>" in table
    assert '<td class="agreement-note">alpha undefined: one judge (a-alone)</td>' in table
    assert "alpha undefined: no variation: every score on the items" in table
    data = (out / "data/evaluations/noted.json").read_text(encoding="utf-8")
    assert '"agreement_notes"' in data


def test_evaluation_of_continuous_reward_model_scores_has_an_alpha() -> None:
    # Before: NaN with only a log line ("1587 distinct values over 350 pairable units").
    table = _reward_models()
    items = [AnswerItem(f"q{i}", "?", "a") for i in range(table.shape[1])]
    columns = {
        f"rm{j}": [None if math.isnan(v) else float(v) for v in row] for j, row in enumerate(table)
    }
    report = evaluate_answers(items, _judges(columns, "reward"))
    assert report.agreement["reward"] == pytest.approx(_brute_force(table, "interval"), rel=1e-12)
    low, high = report.agreement_intervals["reward"]
    assert low < report.agreement["reward"] < high
    assert report.agreement_notes == {}


def test_a_hundred_thousand_distinct_values_in_bounded_memory() -> None:
    import tracemalloc

    table = _reward_models(20000, 5, seed=8)  # about 90,000 distinct values
    tracemalloc.start()
    try:
        for level in LEVELS:
            assert -1.0 < krippendorff_alpha(table, level) < 1.0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # A values x values matrix would be 65 GB; the blocks stay under 16 MB each.
    assert peak < 200 * 2**20


def test_ratio_values_beyond_the_float_range_are_refused() -> None:
    with pytest.raises(ValueError, match="span more than 290 orders of magnitude"):
        krippendorff_alpha([[1e-300, 1.0, 0.5], [1e-300, 1.0, 0.4]], "ratio")
