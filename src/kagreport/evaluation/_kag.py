"""Bridges from kag runs to evaluations: graded setups and free-form answers."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any, Literal

from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation._report import AnswerEvaluation, mean_scores
from kagreport.grading import Outcome, StatsReport
from kagreport.kag import Datasets, QuestionDir, iter_question_dirs, load_datasets, read_result

__all__ = ["answer_items_from_run", "evaluation_from_stats"]

logger = logging.getLogger("kagreport.evaluation")

#: The identity of kag's grading rule, recorded as the "judge" of a graded setup.
KAG_RULE = {"kind": "kag_stats", "rule": "trim White_Space, ASCII case-insensitive", "version": 1}


def evaluation_from_stats(
    report: StatsReport,
    setup: str,
    *,
    answers: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> AnswerEvaluation:
    """One setup of a graded kag run as an :class:`AnswerEvaluation`.

    One item per graded result file, identified ``<dataset>/<question>``, with
    the metric ``correct`` in {0, 1}: error records score 0, as kag counts them
    in accuracy's denominator, so ``metrics["correct"]`` equals the setup's
    accuracy. Two setups of one run then compare with
    ``evaluation_from_stats(r, "a").compare(evaluation_from_stats(r, "b"))``.

    Parameters
    ----------
    report : StatsReport
        From :func:`kagreport.grade`.
    setup : str
        The setup to convert.
    answers : bool
        Read each result file again for the response text (``answer``); with
        False the answers are empty strings (errors stay None).
    metadata : mapping, optional
        Extra report metadata; ``name`` defaults to the setup.

    Returns
    -------
    AnswerEvaluation
        Items carry ``latency`` (generation seconds), ``error`` (kag's error
        message when ``answers``), ``reference`` and ``question`` (from the
        datasets file) and per-item metadata: dataset, question, outcome,
        retrieval_secs, vertices, relationships, properties, context_bytes.

    Raises
    ------
    KeyError
        If the report has no such setup.
    """
    report[setup]  # KeyError naming the known setups
    table = report.items
    truth = report.ground_truth
    rows = [row for row in table if row.setup == setup]
    items = []
    for row in rows:
        entry = truth.get(row.dataset, row.question) if truth is not None else None
        answer: str | None = None if row.outcome is Outcome.ERROR else ""
        error: str | None = "error record" if row.outcome is Outcome.ERROR else None
        if answers and table.results is not None:
            record = read_result(table.path(row))
            answer, error = record.result, record.error
        items.append(
            AnswerItem(
                identifier=f"{row.dataset}/{row.question}",
                question=entry.input if entry is not None else "",
                answer=answer,
                reference=entry.answer if entry is not None else None,
                scores={"correct": 1.0 if row.outcome is Outcome.CORRECT else 0.0},
                latency=row.generation_secs,
                error=error,
                metadata={
                    "dataset": row.dataset,
                    "question": row.question,
                    "outcome": row.outcome.label,
                    "retrieval_secs": row.retrieval_secs,
                    "vertices": row.vertices,
                    "relationships": row.relationships,
                    "properties": row.properties,
                    "context_bytes": row.context_bytes,
                },
            )
        )
    return AnswerEvaluation(
        metrics=mean_scores(items),
        items=tuple(items),
        judges={"kag": dict(KAG_RULE)},
        agreement={},
        usage={},
        errors={"system": sum(row.outcome is Outcome.ERROR for row in rows)},
        settings={"results": report.results, "prefix": report.prefix},
        metadata={"name": setup, **(metadata or {})},
    )


def answer_items_from_run(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str],
    setup: str,
    *,
    prefix: str = "",
    questions: Literal["free-form", "mcq", "all"] = "free-form",
) -> list[AnswerItem]:
    """The answers of one setup of a kag run, ready for :func:`evaluate_answers`.

    Parameters
    ----------
    datasets : Datasets or path
        The datasets file.
    results : path
        The results root.
    setup : str
        Setup whose files (``<prefix><setup>.json``) are read.
    prefix : str
        File-name prefix of the run.
    questions : {"free-form", "mcq", "all"}
        Which questions to take; free-form ones have no reference.

    Returns
    -------
    list of AnswerItem
        ``identifier`` ``<dataset>/<question>``; ``answer`` = ``ok.result`` (None
        for an error record, whose message goes to ``error``); ``reference`` = the
        MCQ answer key or None; ``latency`` = generation seconds; ``metadata``
        holds ``context`` (the retrieved context, for judge prompts), ``options``
        (MCQ), ``dataset``, ``question``, ``model``. Files that do not parse are
        skipped with a warning.

    Raises
    ------
    DatasetsError, ResultTreeError
        As :func:`kagreport.grade`.
    """
    truth = datasets if isinstance(datasets, Datasets) else load_datasets(datasets)
    items: list[AnswerItem] = []
    for entry in iter_question_dirs(results):
        if not isinstance(entry, QuestionDir):
            continue
        question = truth.get(entry.dataset, entry.question)
        if question is None:
            continue
        free = question.output is None
        if (questions == "free-form" and not free) or (questions == "mcq" and free):
            continue
        path = os.path.join(entry.path, f"{prefix}{setup}.json")
        if not os.path.isfile(path):
            continue
        try:
            record = read_result(path)
        except Exception as exc:  # a file that does not parse is skipped, as kag does
            logger.warning("skipping %s: %s", path, exc)
            continue
        meta: dict[str, Any] = {"dataset": entry.dataset, "question": entry.question}
        if record.context is not None:
            meta["context"] = record.context
        if record.model is not None:
            meta["model"] = record.model
        if question.output is not None:
            meta["options"] = dict(question.output.options)
        items.append(
            AnswerItem(
                identifier=f"{entry.dataset}/{entry.question}",
                question=question.input,
                answer=record.result,
                reference=question.answer,
                latency=None if record.generation_ns is None else record.generation_ns / 1e9,
                error=record.error,
                metadata=meta,
            )
        )
    return items
