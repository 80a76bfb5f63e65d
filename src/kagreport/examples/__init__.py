"""The example runs shipped with kagreport (package data).

- :func:`mmlu_pro_philosophy`: REAL data. 499 philosophy questions of MMLU-Pro
  and the predictions of 6 models published by the MMLU-Pro authors
  (TIGER-AI-Lab/MMLU-Pro; dataset MIT, repository Apache-2.0), converted to a
  kag datasets file and result tree by ``examples/build_mmlu_pro_philosophy.py``, shipped
  as one archive unpacked into a per-user cache folder on first use.
- :func:`llmbar_natural`: REAL data. Published verdicts of 65 LLM-judge configurations on
  100 LLMBar Natural items (princeton-nlp/LLMBar, MIT), as an ``AnswerEvaluation``.
- :func:`fast_graphrag_2wiki`: REAL data. Retrievals of 4 systems on 51 2WikiMultihopQA
  questions (circlemind-ai/fast-graphrag, MIT), as ``RetrievalEvaluation`` objects.
- :func:`inspect_popularity`: REAL data. Two Inspect AI eval logs of the ``popularity``
  task (UKGovernmentBEIS/inspect_ai, MIT), copied unchanged.
- :func:`simulated_kag_run`: SIMULATED data, a kag tree generated on demand
  (:func:`kagreport.kag.simulate_run`).
- :func:`simulated_rag`: SIMULATED data, generated on demand: retrieval and answers of the
  same questions per setup (for retrieval against answer, which no real example records).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from kagreport._errors import KagreportError
from kagreport.evaluation import (
    AnswerEvaluation,
    AnswerItem,
    RetrievalEvaluation,
    RetrievalItem,
    evaluate_answers,
    evaluate_retrieval,
)
from kagreport.evaluation.judges import Judgement
from kagreport.examples import _archive, _attribution
from kagreport.examples._simulated_rag import (
    SimulatedRagSetup,
    simulated_rag,
)

__all__ = [
    "ExampleRun",
    "InspectLogs",
    "PublishedVerdicts",
    "SimulatedRagSetup",
    "fast_graphrag_2wiki",
    "inspect_popularity",
    "llmbar_natural",
    "llmbar_published_statistics",
    "mmlu_pro_philosophy",
    "simulated_kag_run",
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


# Made by examples/pack_mmlu_pro_philosophy.py from examples/mmlu-pro-philosophy/.
_MMLU_PRO_ARCHIVE = "mmlu-pro-philosophy.tar.xz"


def mmlu_pro_philosophy() -> ExampleRun:
    """The real MMLU-Pro philosophy run, as a kag datasets file and result tree.

    One setup per model; option keys ``a``, ``b``, ...; a prediction the
    authors could not parse is an ``ok`` record whose result is empty (graded
    incorrect); a question a model has no output for has no result file.

    The package ships the run as one archive (with its ``README.md``, source and licence,
    beside it); the first call unpacks it (2,988 files, about half a second) into
    ``$KAGREPORT_CACHE``, else ``$XDG_CACHE_HOME/kagreport``, else ``~/.cache/kagreport``,
    in a folder named after the archive's hash; later calls read that folder.

    Raises
    ------
    KagreportError
        If the archive is missing or damaged (a broken install), or the cache folder
        cannot be written (the message names it and ``KAGREPORT_CACHE``).
    """
    archive = _data("mmlu-pro-philosophy") / _MMLU_PRO_ARCHIVE
    root = _archive.unpacked(archive, "mmlu-pro-philosophy")
    datasets = root / "datasets.json"
    if not datasets.is_file():
        raise KagreportError(
            f"the unpacked example {root} is incomplete (no datasets.json); delete that folder "
            "and it is unpacked again",
            path=root,
        )
    return ExampleRun(
        "MMLU-Pro philosophy", datasets, root / "results", _attribution.MMLU_PRO_ATTRIBUTION
    )


#: The attribution of :func:`simulated_kag_run`.


def simulated_kag_run() -> ExampleRun:
    """A SIMULATED kag run (:func:`kagreport.kag.simulate_run`, seed 0: the same bytes every
    time) with costs (retrieval time, context length, graph elements), written into a new
    temporary folder removed when the process exits. 3 datasets of 40 scorable questions.
    """
    import atexit
    import shutil
    import tempfile

    from kagreport.kag import simulate_run

    folder = Path(tempfile.mkdtemp(prefix="kagreport-simulated-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    # Small enough to keep `make demo` fast; enough items for intervals to mean something.
    # No damaged file: a build of the bundled examples warns about nothing.
    written = simulate_run(
        folder, questions=40, datasets=3, vector_dim=8, seed=0, unparsable_files=0
    )
    return ExampleRun(
        "SIMULATED KAG run",
        Path(written.datasets_path),
        Path(written.results_path),
        _attribution.SIMULATED_KAG_ATTRIBUTION,
    )


def _data(name: str) -> Path:
    return Path(str(files("kagreport.examples"))) / name


@dataclass(frozen=True)
class PublishedVerdicts:
    """A judge that replays published verdicts (no model is called).

    ``verdicts`` maps item identifier -> criterion -> score; an item or a
    criterion it lacks is undefined for this judge. ``scales`` maps criterion ->
    the scale the verdicts were given on (``"nominal 0/1"``, ``"ordinal 1-10"``).
    """

    name: str
    verdicts: Mapping[str, Mapping[str, float]]
    criteria: tuple[str, ...]
    identity: Mapping[str, Any]
    scales: Mapping[str, str] = field(default_factory=dict)
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

    Source: princeton-nlp/LLMBar (MIT); see the ``attribution`` in its metadata.
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
            # A pick is right or wrong; a rating is from 1 to 10 (stored as (x - 1) / 9).
            scales={
                c: "nominal 0/1" if c in ("swap_false", "swap_true") else "ordinal 1-10"
                for c in criteria[judge]
            },
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
        metadata={"name": "LLMBar Natural", "attribution": _attribution.LLMBAR_ATTRIBUTION},
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

    Source: circlemind-ai/fast-graphrag (MIT); see the ``attribution`` in its metadata.
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
            metadata={"name": system, "attribution": _attribution.FAST_GRAPHRAG_ATTRIBUTION},
        )
    return out


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

    Notes
    -----
    Path-like: the folder that holds the logs, so ``read_run(inspect_popularity())``
    reads them as one run of two systems.
    """

    name: str
    logs: tuple[Path, ...]
    attribution: str

    def __fspath__(self) -> str:
        return str(self.logs[0].parent)


def inspect_popularity() -> InspectLogs:
    """Two real Inspect AI logs of the ``popularity`` task (scorer ``match``).

    ``logs[0]``: openai/gpt-4o-mini, samples 1-10, one epoch; ``logs[1]``:
    azureai/Meta-Llama-3-1-405B-Instruct-jqf, samples 1 and 2, two epochs reduced
    by mean. Samples 1 and 2 are shared. ``kagreport.read_run(inspect_popularity())`` reads
    both as one run (the logs' folder); ``read_run(logs[0])`` one of them.

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
    return InspectLogs("Inspect AI popularity", logs, _attribution.INSPECT_ATTRIBUTION)
