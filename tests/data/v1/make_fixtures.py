"""Write the stored version-1 documents of tests/data/v1 (README.md says with which code).

    PYTHONPATH=<old kagreport>/src python tests/data/v1/make_fixtures.py tests/data/v1 current
    PYTHONPATH=<kagreport at ac5b468>/src python tests/data/v1/make_fixtures.py tests/data/v1 v1

``current`` writes the AnswerEvaluation, RetrievalEvaluation, EvaluationComparison (schema
version 2) and run documents; ``v1`` writes the version-1 EvaluationComparison, with the
code from before version 2. Every document is small and made from the bundled examples.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import kagreport.examples as examples
from kagreport.evaluation import AnswerItem, RetrievalItem, evaluate_answers, evaluate_retrieval

DATA = Path(examples.__file__).parent


def retrieval() -> dict[str, Any]:
    """Two fast-graphrag systems on the first 8 questions by text, at k = 1 and 5."""
    found = {}
    chosen: list[str] = []
    for system in ("vdb", "lightrag"):
        path = DATA / "fast-graphrag-2wiki" / "results" / examples._FAST_GRAPHRAG_FILES[system]
        rows = json.loads(path.read_text(encoding="utf-8"))
        chosen = chosen or sorted(row["question"] for row in rows)[:8]
        rows = sorted(
            (row for row in rows if row["question"] in chosen), key=lambda r: r["question"]
        )
        items = [
            RetrievalItem(
                identifier=row["question"],
                question=row["question"],
                retrieved=tuple(row["evidence"]),
                relevant=tuple(row["ground_truth"]),
            )
            for row in rows
        ]
        found[system] = evaluate_retrieval(items, ks=(1, 5), metadata={"name": system})
    return found


def answers() -> Any:
    """LLMBar Natural's first 8 items, judged by 3 published judges (replayed)."""
    path = DATA / "llmbar-natural" / "llmbar_natural_judgments.csv"
    with open(path, encoding="utf-8") as file:
        rows = list(csv.DictReader(file))[:8]
    names = ["GPT-4/CoT", "GPT-4/Metrics", "ChatGPT-0301/CoT"]
    judges = []
    for name in names:
        verdicts = {
            row["item"]: {
                "swap_false": float(row[f"{name}:winner_swapFalse"].strip() == row["label"]),
                "swap_true": float(row[f"{name}:winner_swapTrue"].strip() == row["label"]),
            }
            for row in rows
        }
        identity = {"kind": "published", "source": "princeton-nlp/LLMBar", "judge": name}
        judges.append(
            examples.PublishedVerdicts(
                name=name,
                verdicts=verdicts,
                criteria=("swap_false", "swap_true"),
                identity=identity,
            )
        )
    items = [
        AnswerItem(
            identifier=row["item"],
            question=f"LLMBar Natural item {row['item']}",
            answer="(pair of outputs)",
            reference=row["label"],
        )
        for row in rows
    ]
    return evaluate_answers(
        items, judges, agreement_resamples=50, metadata={"name": "LLMBar Natural, 8 items"}
    )


def kag_run() -> Any:
    """The MMLU-Pro philosophy run cut to 3 questions of 3 setups, graded (a kag tree)."""
    from kagreport.grading import grade

    source = examples.mmlu_pro_philosophy().datasets.parent
    datasets = json.loads((source / "datasets.json").read_text(encoding="utf-8"))
    questions = sorted(datasets["mmlu-pro-philosophy"])[:3]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        subset = {"mmlu-pro-philosophy": {q: datasets["mmlu-pro-philosophy"][q] for q in questions}}
        (root / "datasets.json").write_text(json.dumps(subset), encoding="utf-8")
        for question in questions:
            here = source / "results" / "mmlu-pro-philosophy" / question
            there = root / "results" / "mmlu-pro-philosophy" / question
            there.mkdir(parents=True)
            for result in sorted(here.iterdir())[:3]:
                shutil.copy(result, there / result.name)
        report = grade(root / "datasets.json", root / "results", workers=1, keep_text=True)
    from kagreport.runs import Run

    run = Run.from_stats(report)
    return run


def main(out: Path, which: str) -> None:
    evaluations = retrieval()
    vdb, lightrag = evaluations["vdb"], evaluations["lightrag"]
    if which == "v1":
        lightrag.compare(vdb, n_resamples=1000).write(out / "comparison-v1.json")
        return
    answers().write(out / "answer-evaluation.json")
    for suffix in ("jsonl", "yaml", "toml"):
        answers().write(out / f"answer-evaluation.{suffix}")
    vdb.write(out / "retrieval-evaluation.json")
    comparison = lightrag.compare(vdb, n_resamples=1000)
    comparison.write(out / "comparison-v2.json")
    comparison.write(out / "comparison-v2.jsonl")
    from kagreport.runs import Run

    Run.from_evaluations([vdb, lightrag]).write(out / "run-retrieval.json")
    kag_run().write(out / "run-kag.json")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
