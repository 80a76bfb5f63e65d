"""The example runs shipped with kagreport (package data).

- :func:`mmlu_pro_philosophy`: REAL data. 499 philosophy questions of MMLU-Pro
  and the predictions of 6 models published by the MMLU-Pro authors
  (TIGER-AI-Lab/MMLU-Pro; dataset MIT, repository Apache-2.0), converted to a
  kag datasets file and result tree by ``examples/build_mmlu_pro_philosophy.py``.
- :func:`llmbar_natural`: REAL data. Published verdicts of 65 LLM-judge configurations on
  100 LLMBar Natural items (princeton-nlp/LLMBar, MIT), as an ``AnswerEvaluation``.
- :func:`fast_graphrag_2wiki`: REAL data. Retrievals of 4 systems on 51 2WikiMultihopQA
  questions (circlemind-ai/fast-graphrag, MIT), as ``RetrievalEvaluation``s.
- :func:`inspect_popularity`: REAL data. Two Inspect AI eval logs of the ``popularity``
  task (UKGovernmentBEIS/inspect_ai, MIT), copied unchanged.
- :func:`kagreport.kag.simulate_run`: SIMULATED data, generated on demand.
- :func:`simulated_rag`: SIMULATED data, generated on demand: retrieval and answers of the
  same questions per setup (for retrieval against answer, which no real example records).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from kagreport.evaluation import (
    AnswerEvaluation,
    AnswerItem,
    Judgement,
    RetrievalEvaluation,
    RetrievalItem,
    evaluate_answers,
    evaluate_retrieval,
)
from kagreport.examples._simulated_rag import (
    SIMULATED_RAG_ATTRIBUTION,
    SimulatedRagSetup,
    simulated_rag,
)

__all__ = [
    "FAST_GRAPHRAG_ATTRIBUTION",
    "INSPECT_ATTRIBUTION",
    "LLMBAR_ATTRIBUTION",
    "MMLU_PRO_ATTRIBUTION",
    "SIMULATED_RAG_ATTRIBUTION",
    "ExampleRun",
    "InspectLogs",
    "PublishedVerdicts",
    "SimulatedRagSetup",
    "fast_graphrag_2wiki",
    "inspect_popularity",
    "llmbar_natural",
    "llmbar_published_statistics",
    "mmlu_pro_philosophy",
    "simulated_rag",
]


@dataclass(frozen=True, slots=True)
class ExampleRun:
    """A bundled kag run.

    Attributes
    ----------
    name : str
        Display name.
    datasets : Path
        The datasets file.
    results : Path
        The results root.
    attribution : str
        Source and licence; show it wherever the data is shown.
    """

    name: str
    datasets: Path
    results: Path
    attribution: str


MMLU_PRO_ATTRIBUTION = (
    "MMLU-Pro philosophy: 499 questions and the predictions of 6 models (5-shot CoT runs "
    "published by the MMLU-Pro authors), TIGER-AI-Lab/MMLU-Pro, "
    "eval_results/model_outputs_*_5shots.zip; dataset MIT, repository Apache-2.0."
)


def mmlu_pro_philosophy() -> ExampleRun:
    """The real MMLU-Pro philosophy run, as a kag datasets file and result tree.

    One setup per model; option keys ``a``, ``b``, ...; a prediction the
    authors could not parse is an ``ok`` record whose result is empty (graded
    incorrect); a question a model has no output for has no result file.

    Raises
    ------
    FileNotFoundError
        If the package data is missing (a broken install).
    """
    root = Path(str(files("kagreport.examples"))) / "mmlu-pro-philosophy"
    datasets = root / "datasets.json"
    if not datasets.is_file():
        raise FileNotFoundError(f"the bundled example is missing: {datasets}")
    return ExampleRun("MMLU-Pro philosophy", datasets, root / "results", MMLU_PRO_ATTRIBUTION)


def _data(name: str) -> Path:
    return Path(str(files("kagreport.examples"))) / name


LLMBAR_ATTRIBUTION = (
    "LLMBar Natural: 100 items judged by 65 LLM-judge configurations, published by the "
    "LLMBar authors (princeton-nlp/LLMBar; Zeng et al., ICLR 2024); MIT licence."
)
FAST_GRAPHRAG_ATTRIBUTION = (
    "fast-graphrag 2WikiMultihopQA benchmark: retrievals of vdb, lightrag, nano and graph on "
    "51 questions (circlemind-ai/fast-graphrag, benchmarks/); MIT licence."
)


@dataclass(frozen=True)
class PublishedVerdicts:
    """A judge that replays published verdicts (no model is called).

    ``verdicts`` maps item identifier -> criterion -> score; an item or a
    criterion it lacks is undefined for this judge.
    """

    name: str
    verdicts: Mapping[str, Mapping[str, float]]
    criteria: tuple[str, ...]
    identity: Mapping[str, Any]
    blocking = False

    def judge(self, item: AnswerItem) -> Judgement:
        scores = self.verdicts.get(item.identifier, {})
        return Judgement(dict(scores), verdict=dict(scores))


def llmbar_natural(*, agreement_resamples: int = 1000) -> AnswerEvaluation:
    """The LLMBar Natural verdicts as an :class:`AnswerEvaluation` (REAL data).

    Items: the 100 items (``reference`` = the gold winner, ``"1"`` or ``"2"``).
    Judges: the 65 configurations (``<model>/<strategy>``), each with criteria
    ``swap_false`` and ``swap_true`` = 1 when the winner it picked (outputs in the
    original or the swapped order, mapped back by the authors) is the gold one,
    else 0 (a missing verdict is a wrong pick, as in the authors' counts); rating
    strategies also give ``score_1`` and ``score_2``, their 1-10 ratings of the two
    outputs mapped to [0, 1] as (x - 1) / 9. Metrics are
    therefore the published accuracies, e.g. ``"GPT-4/CoT.swap_false"``; agreement
    is Krippendorff's alpha (interval) between the judges per criterion.

    Source: princeton-nlp/LLMBar (MIT); see :data:`LLMBAR_ATTRIBUTION`.
    """
    with open(_data("llmbar-natural") / "llmbar_natural_judgments.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    judges: dict[str, dict[str, dict[str, float]]] = {}
    criteria: dict[str, list[str]] = {}
    for column in rows[0]:
        if ":" not in column:
            continue
        judge, field = column.split(":", 1)
        criterion = {"winner_swapFalse": "swap_false", "winner_swapTrue": "swap_true"}.get(
            field, field
        )
        criteria.setdefault(judge, []).append(criterion)
        for row in rows:
            value = row[column].strip()
            if criterion in ("swap_false", "swap_true"):
                # No valid winner counts as a wrong pick, as in the authors' accuracy
                # (correct / 100), so the published counts are the metric sums.
                score = float(value == row["label"])
            elif not value:
                continue
            else:
                score = (float(value) - 1.0) / 9.0
            judges.setdefault(judge, {}).setdefault(row["item"], {})[criterion] = score
    items = [
        AnswerItem(
            identifier=row["item"],
            question=f"LLMBar Natural item {row['item']}",
            answer="(pair of outputs)",
            reference=row["label"],
        )
        for row in rows
    ]
    replayers = [
        PublishedVerdicts(
            name=judge,
            verdicts=judges.get(judge, {}),
            criteria=tuple(criteria[judge]),
            identity={
                "kind": "published",
                "source": "princeton-nlp/LLMBar",
                "model": judge.split("/")[0],
                "strategy": judge.split("/", 1)[1],
            },
        )
        for judge in criteria
    ]
    return evaluate_answers(
        items,
        replayers,
        agreement_resamples=agreement_resamples,
        metadata={"name": "LLMBar Natural", "attribution": LLMBAR_ATTRIBUTION},
    )


def llmbar_published_statistics() -> dict[str, Any]:
    """The LLMBar authors' published per-judge statistics, as shipped (REAL data)."""
    with open(_data("llmbar-natural") / "published_statistics.json", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


_FAST_GRAPHRAG_FILES = {
    "vdb": "vdb/2wikimultihopqa_51.json",
    "lightrag": "lightrag/2wikimultihopqa_51_local.json",
    "nano": "nano/2wikimultihopqa_51_local.json",
    "graph": "graph/2wikimultihopqa_51.json",
}


def fast_graphrag_2wiki(ks: tuple[int, ...] = (1, 2, 5, 8)) -> dict[str, RetrievalEvaluation]:
    """The four fast-graphrag systems' retrievals as :class:`RetrievalEvaluation` s (REAL data).

    Items are identified by question text (the same 51 questions for every
    system, so the evaluations compare pairwise); ``retrieved`` = the ranked
    evidence titles (up to 8), ``relevant`` = the gold titles. ``complete@8`` is
    the published "perfect retrieval" rate.

    Source: circlemind-ai/fast-graphrag (MIT); see :data:`FAST_GRAPHRAG_ATTRIBUTION`.
    """
    out = {}
    for system, relative in _FAST_GRAPHRAG_FILES.items():
        with open(_data("fast-graphrag-2wiki") / "results" / relative, encoding="utf-8") as f:
            rows = json.load(f)
        items = [
            RetrievalItem(
                identifier=row["question"],
                question=row["question"],
                retrieved=tuple(row["evidence"]),
                relevant=tuple(row["ground_truth"]),
            )
            for row in rows
        ]
        out[system] = evaluate_retrieval(
            items,
            ks=ks,
            metadata={"name": system, "attribution": FAST_GRAPHRAG_ATTRIBUTION},
        )
    return out


INSPECT_ATTRIBUTION = (
    "Inspect AI popularity logs: openai/gpt-4o-mini (10 samples) and "
    "azureai/Meta-Llama-3-1-405B-Instruct-jqf (2 samples x 2 epochs), from the test data of "
    "UKGovernmentBEIS/inspect_ai at commit 499e615; MIT licence, (c) 2024 UK AI Security Institute."
)


@dataclass(frozen=True, slots=True)
class InspectLogs:
    """Bundled Inspect AI eval logs.

    Attributes
    ----------
    name : str
        Display name.
    logs : tuple[Path, ...]
        The log files (``.eval``), one system each.
    attribution : str
        Source and licence; show it wherever the data is shown.
    """

    name: str
    logs: tuple[Path, ...]
    attribution: str


def inspect_popularity() -> InspectLogs:
    """Two real Inspect AI logs of the ``popularity`` task (scorer ``match``).

    ``logs[0]``: openai/gpt-4o-mini, samples 1-10, one epoch; ``logs[1]``:
    azureai/Meta-Llama-3-1-405B-Instruct-jqf, samples 1 and 2, two epochs reduced
    by mean. Samples 1 and 2 are shared. Read them with :func:`kagreport.read_run`.

    Raises
    ------
    FileNotFoundError
        If the package data is missing (a broken install).
    """
    root = _data("inspect-popularity")
    logs = (
        root / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
        root / "log_streaming.eval",
    )
    for log in logs:
        if not log.is_file():
            raise FileNotFoundError(f"the bundled example is missing: {log}")
    return InspectLogs("Inspect AI popularity", logs, INSPECT_ATTRIBUTION)
