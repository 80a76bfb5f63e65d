"""Every comparison's interval and verdict agree (issue #28): one family per comparison
object, one adjusted p-value per hypothesis, and the interval drawn beside it excludes 0
exactly when that adjusted p-value is below 0.05.

Walks every comparison of the bundled examples (the MMLU-Pro philosophy kag run, the
simulated kag run, one run per format fixture) and every comparison page of the shared
site, and checks the agreement from the numbers they carry. Before issue #28 the site's
pages drew a 95% bootstrap interval beside a p-value Holm-adjusted across the run, and
these checks failed (e.g. a 95% interval excluding 0 beside "not significant").
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from kagreport import read_run
from kagreport.examples import mmlu_pro_philosophy, simulated_kag_run
from kagreport.grading import grade
from kagreport.runs import VERDICTS, Run, compare_setups

DATA = Path(__file__).parent.parent / "data" / "sources"
SOURCES = [
    DATA / "lm-eval" / "lm-eval-0.4.13" / "output",
    DATA / "helm" / "real" / "tiny25",
    DATA / "promptfoo" / "real" / "results.json",
    DATA / "openai-evals" / "evals-3.0.1" / "records",
    DATA / "inspect" / "inspect-0.3.285",
]


def _runs() -> list[tuple[str, Run]]:
    runs = []
    for example in (mmlu_pro_philosophy(), simulated_kag_run()):
        runs.append((example.name, Run.from_stats(grade(example.datasets, example.results))))
    runs += [(path.parent.name, read_run(path)) for path in SOURCES]
    return runs


def _agree(low: float, high: float, p_holm: float, verdict: str, margin: float) -> None:
    excludes = low > 0 or high < 0
    assert excludes == (p_holm < 0.05), (low, high, p_holm)
    assert verdict in VERDICTS
    assert (verdict in ("better", "worse")) == excludes
    if verdict == "better":
        assert low > 0
    if verdict == "worse":
        assert high < 0
    inside = -margin <= low and high <= margin
    assert (verdict == "equivalent") == (inside and not excludes)


@pytest.mark.parametrize("pairs", ["baseline", "all-pairs"])
def test_every_example_comparison(pairs: str) -> None:
    checked = rejected = kept = 0
    for name, run in _runs():
        found = compare_setups(run, pairs=pairs, metrics=list(run.metrics))  # type: ignore[arg-type]
        for c in found:
            for metric, m in c.comparison.metrics.items():
                v = c.verdicts[metric]
                # One adjusted p per hypothesis: the comparison's is the verdict's.
                assert (m.p_value_holm, m.ci_low, m.ci_high) == (v.p_value, v.low, v.high) or (
                    math.isnan(v.difference)
                )
                if m.n_pairs == 0 or math.isnan(m.mean_difference):
                    assert v.verdict == "inconclusive"
                    continue
                assert c.p_values_family[metric] == m.p_value_holm
                assert 0.95 <= v.level < 1.0
                _agree(m.ci_low, m.ci_high, m.p_value_holm, v.verdict, found.margin)
                if v.verdict == "inconclusive":
                    assert v.mde is not None
                    assert v.n_needed is not None
                    assert "needs about" in v.sentence(proportion=True), name
                checked += 1
                rejected += v.verdict in ("better", "worse")
                kept += v.verdict not in ("better", "worse")
    assert checked > 20
    assert rejected
    assert kept


def test_the_margin_is_configurable() -> None:
    example = mmlu_pro_philosophy()
    run = Run.from_stats(grade(example.datasets, example.results))
    wide = compare_setups(run, pairs="all-pairs", margin=0.5)
    narrow = compare_setups(run, pairs="all-pairs")
    # Not rejected and inside ±50 points: equivalent; inside ±1 point: never here.
    verdicts = [c.verdicts["correct"].verdict for c in wide]
    assert "equivalent" in verdicts
    assert "equivalent" not in [c.verdicts["correct"].verdict for c in narrow]
    assert wide.margin == 0.5


def _documents(site: Path) -> list[dict[str, Any]]:
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((site / "data/comparisons").glob("*.json"))
    ]


def test_every_comparison_page_of_the_site(site: Path) -> None:
    documents = _documents(site)
    assert len(documents) >= 5
    for document in documents:
        assert document["settings"]["interval"].startswith("test-based")
        for row in document["metrics"]:
            if row["n_pairs"] == 0 or row["mean_difference"] is None:
                continue
            # One adjusted p per hypothesis: the comparison's p_value_holm is the run's.
            assert row["p_value_holm"] == document["metadata"]["p_value_holm_across_run"]
            low, high, p = row["ci_low"], row["ci_high"], row["p_value_holm"]
            assert (low > 0 or high < 0) == (p < 0.05)
    # Each page states the verdict its numbers imply.
    pages = sorted((site / "comparisons").glob("*.html"))
    assert len(pages) == len(documents)
    for path in pages:
        html = path.read_text(encoding="utf-8")
        data = html.split('href="../data/comparisons/', 1)[1].split('"', 1)[0]
        document = json.loads((site / "data/comparisons" / data).read_text(encoding="utf-8"))
        row = next(r for r in document["metrics"] if r["n_pairs"])
        verdict = html.split('class="verdict-sentence" data-key="verdict" data-value="', 1)[1]
        verdict = verdict.split('"', 1)[0]
        _agree(row["ci_low"], row["ci_high"], row["p_value_holm"], verdict, 0.01)
        assert "Holm-adjusted 95%" in html
