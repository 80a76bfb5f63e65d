"""EEE's own conversions of lm-eval, Inspect and HELM runs read (every-eval-ever 0.3.0).

The files are EEE's output, unchanged (tests/data/sources/eee/SOURCE.md). Expected
per-sample values are computed here with plain loops over the JSONL lines; headline
numbers are the ones EEE's aggregates state (also in the fixture's expected.txt).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from kagreport.runs import Run
from kagreport.sources import read_run

CONVERTED = Path(__file__).parent.parent / "data" / "sources" / "eee" / "converted"
HELM = CONVERTED / "helm" / "data" / "tiny25_qa" / "tiny25" / "scripted"
TRIALS = HELM / "c0d18036-1db2-43e9-8c05-55db2b5246f9.json"  # 3 train trials
PERTURBED = HELM / "42412c53-ad13-4816-8a1c-2b4a24cfa447.json"  # data_augmentation=robustness

#: The metric name kagreport gives each result id: the metric_id, unless two results of
#: one evaluation share it (Inspect's match:accuracy and includes:accuracy), or the result
#: id where a line points to a result the aggregate does not hold (lm-eval's acc_norm).
NAMES = {
    "helm": {
        "exact_match:test": "exact-match",
        "quasi_exact_match:test": "helm.quasi_exact_match",
        "f1_score:test": "f1",
    },
    "inspect": {
        "match:accuracy": "match:accuracy",
        "includes:accuracy": "includes:accuracy",
        "overlap:mean": "inspect_ai.mean",
        "choice:accuracy": "accuracy",
    },
    "lm-eval": {"acc": "accuracy", "acc_norm": "acc_norm"},
}


def _expected(tool: str) -> dict[tuple[str, str, str, str], float]:
    """(model, dataset, sample, metric) -> mean of the sample's scored lines."""
    scores: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for aggregate in sorted((CONVERTED / tool).glob("data/*/*/*/*.json")):
        suffix = " [mild_mix]" if aggregate == PERTURBED else ""
        samples = aggregate.with_name(f"{aggregate.stem}_samples.jsonl")
        for text in samples.read_text(encoding="utf-8").split("\n"):
            if not text:
                continue
            line = json.loads(text)
            result = line["evaluation_result_id"]
            if line["error"] is not None and result is None:  # Inspect's failed sample
                continue
            if tool == "lm-eval" and "mc_science" in str(aggregate) and result == "acc_norm":
                metric = "lm-evaluation-harness.acc_norm"  # this aggregate holds the result
            else:
                metric = NAMES[tool][result]
            key = (line["model_id"], line["evaluation_name"] + suffix, line["sample_id"], metric)
            scores[key].append(line["evaluation"]["score"])
    return {key: sum(values) / len(values) for key, values in scores.items()}


def _read(run: Run) -> dict[tuple[str, str, str, str], float]:
    found = {}
    for row in range(len(run)):
        for metric, values in run.metrics.items():
            if metric != "correct" and not math.isnan(values[row]):
                key = (
                    run.systems[run.system[row]],
                    run.dataset_names[run.dataset[row]],
                    run.question_names[run.question[row]],
                    metric,
                )
                found[key] = float(values[row])
    return found


def _mean(run: Run, dataset: str, metric: str) -> float:
    values = [
        float(run.metrics[metric][r])
        for r in range(len(run))
        if run.dataset_names[run.dataset[r]] == dataset and not math.isnan(run.metrics[metric][r])
    ]
    return sum(values) / len(values)


@pytest.mark.parametrize("tool", ["helm", "lm-eval", "inspect"])
def test_eees_conversions_read_sample_by_sample(tool: str) -> None:
    run = read_run(CONVERTED / tool)
    expected = _expected(tool)
    assert _read(run) == pytest.approx(expected)
    assert len(expected) > 10


def test_a_helm_run_with_perturbations_reads() -> None:
    run = read_run(CONVERTED / "helm")
    assert run.systems == ("tiny25/scripted",)
    # The perturbation run repeats the instances of the run with trials: its own dataset.
    assert sorted(run.dataset_names) == ["tiny25_qa", "tiny25_qa [mild_mix]"]
    assert len(run) == 12
    # Each instance of the perturbation run: the original and the perturbed variant.
    assert {a["repeats"] for a in run.metadata["aggregates"]} == {3, 2}
    headline = {Path(a["aggregate"]).name: a["scores"] for a in run.metadata["aggregates"]}
    # EEE's aggregates as EEE states them (SOURCE.md's expected.txt).
    assert headline[TRIALS.name]["exact_match:test"] == 0.7222222222222222
    stated = headline[PERTURBED.name]
    assert stated["exact_match:test"] == 0.8333333333333334
    assert stated["exact_match:test:mild_mix"] == 0.6666666666666666
    assert stated["exact_match:test:robustness"] == 0.6666666666666666
    assert stated["exact_match:test:fairness"] == 0.8333333333333334
    # The perturbation run's lines agree with EEE's headline over all its instances.
    assert _mean(run, "tiny25_qa [mild_mix]", "exact-match") == pytest.approx(0.8333333333333334)


def test_inspect_epochs_and_lm_eval_headlines_are_eees() -> None:
    inspect = read_run(CONVERTED / "inspect")
    # Epochs are repeats of a sample (mean, as Inspect's default reducer); the failed
    # sample q7 holds no score, as Inspect leaves it out.
    assert _mean(inspect, "tiny_qa", "match:accuracy") == pytest.approx(0.7777777777777777)
    assert _mean(inspect, "tiny_qa", "includes:accuracy") == pytest.approx(0.8333333333333334)
    assert _mean(inspect, "tiny_qa", "inspect_ai.mean") == pytest.approx(0.8869055555555555)
    assert _mean(inspect, "tiny_mc", "accuracy") == pytest.approx(0.8)
    q7 = inspect.question_names.index("q7")
    assert [int(inspect.outcome[r]) for r in range(len(inspect)) if inspect.question[r] == q7] == [
        2
    ]
    lm_eval = read_run(CONVERTED / "lm-eval")
    assert _mean(lm_eval, "tiny25_mc_science", "accuracy") == pytest.approx(0.3333333333333333)
    assert _mean(lm_eval, "tiny25_mc_science", "lm-evaluation-harness.acc_norm") == (
        pytest.approx(0.16666666666666666)
    )
    group = next(a for a in lm_eval.metadata["aggregates"] if "tiny25/" in a["evaluation_id"])
    assert group["scores"] == {"acc": 0.2727272727272727}
