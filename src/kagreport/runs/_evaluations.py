"""The columns of a run from evaluations of the same items: :func:`evaluation_fields`,
the body of :meth:`kagreport.runs.Run.from_evaluations`.

One pass over the items fills every column; an item's dataset and question come from the
kag bridge's metadata (else ``("", identifier)``), its costs from the metadata keys it
records (:data:`ITEM_COSTS`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._document import jsonable
from kagreport._errors import KagreportError
from kagreport._format import plural
from kagreport.runs._columns import KAG_COSTS

if TYPE_CHECKING:
    from kagreport.evaluation import AnswerEvaluation, RetrievalEvaluation

__all__ = ["ITEM_COSTS", "evaluation_fields"]

#: Per-item costs taken from an item's metadata when it records them (the kag bridge
#: records the retrieval ones; other sources tokens, money).
ITEM_COSTS = (*KAG_COSTS[1:], "input_tokens", "output_tokens", "cost_usd")


# Over 80 lines: one pass over the items fills every column (a split would pass them all).
def evaluation_fields(
    evaluations: Sequence[AnswerEvaluation | RetrievalEvaluation],
    labels: Sequence[str] | None,
    metadata: Mapping[str, Any] | None,
    *,
    same_items: bool,
) -> dict[str, Any]:
    """The run fields of :meth:`Run.from_evaluations` (its docstring has the parameters)."""
    kind, names = _check_evaluations(evaluations, labels, same_items=same_items)
    datasets: dict[str, int] = {}
    questions: dict[str, int] = {}
    metric_names = sorted({m for e in evaluations for m in e.metrics})
    rows: list[tuple[int, int, int, int]] = []
    values: dict[str, list[float]] = {m: [] for m in metric_names}
    latency: list[float] = []
    item_costs: dict[str, list[float]] = {c: [] for c in ITEM_COSTS}
    recorded: set[str] = set()  # the costs some item's metadata names (None: unknown)
    question_texts: list[str | None] = []
    responses: list[str | None] = []
    references: list[str | None] = []
    explanations: list[str | None] = []
    errors: list[str | None] = []
    for s, evaluation in enumerate(evaluations):
        for item in evaluation.items:
            dataset, question = _identity(item)
            d = datasets.setdefault(dataset, len(datasets))
            q = questions.setdefault(question, len(questions))
            correct = item.scores.get("correct")
            outcome = (
                2
                if item.error is not None
                else -1
                if correct is None or math.isnan(correct)
                else 0
                if correct == 1
                else 1
            )
            rows.append((s, d, q, outcome))
            for m in metric_names:
                values[m].append(item.scores.get(m, math.nan))
            latency.append(math.nan if item.latency is None else item.latency)
            for name, column in item_costs.items():
                column.append(_number(item.metadata.get(name)))
            recorded.update(name for name in ITEM_COSTS if name in item.metadata)
            question_texts.append(getattr(item, "question", None) or None)
            responses.append(getattr(item, "answer", None))
            references.append(getattr(item, "reference", None))
            explanations.append(_verdicts(getattr(item, "verdicts", None)))
            errors.append(item.error)
    codes = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return dict(
        kind=kind,
        systems=tuple(names),
        dataset_names=tuple(datasets),
        question_names=tuple(questions),
        system=codes[:, 0].astype(np.int32),
        dataset=codes[:, 1].astype(np.int32),
        question=codes[:, 2].astype(np.int32),
        outcome=codes[:, 3].astype(np.int8),
        metrics={m: np.array(v, dtype=np.float64) for m, v in values.items()},
        costs={
            "generation_secs": np.array(latency, dtype=np.float64),
            **{
                name: np.array(column, dtype=np.float64)
                for name, column in item_costs.items()
                if name in recorded
            },
        },
        question_texts=tuple(question_texts),
        responses=tuple(responses),
        references=tuple(references),
        explanations=tuple(explanations) if any(explanations) else None,
        errors=tuple(errors),
        metadata={"source": "evaluations", **(metadata or {})},
    )


def _verdicts(verdicts: Mapping[str, Any] | None) -> str | None:
    """The judges' verdicts of an item as one text (kept when the evaluation asked for
    them): a lone judge's verdict as it is, several as ``judge: verdict`` lines; a parsed
    verdict as JSON."""
    if not verdicts:
        return None
    texts = {
        judge: v if isinstance(v, str) else json.dumps(jsonable(v), ensure_ascii=False)
        for judge, v in verdicts.items()
    }
    if len(texts) == 1:
        return next(iter(texts.values()))
    return "\n".join(f"{judge}: {text}" for judge, text in texts.items())


def _number(value: Any) -> float:
    """A cost from item metadata as a float; NaN when absent or not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    number = float(value)
    return number if math.isfinite(number) else math.nan


def _name(evaluation: Any, index: int) -> str:
    name = evaluation.metadata.get("name")
    return name if isinstance(name, str) and name else f"system-{index + 1}"


def _identity(item: Any) -> tuple[str, str]:
    """(dataset, question) of an item: the kag bridge's metadata, else ("", identifier)."""
    dataset, question = item.metadata.get("dataset"), item.metadata.get("question")
    if (
        isinstance(dataset, str)
        and isinstance(question, str)
        and item.identifier == f"{dataset}/{question}"
    ):
        return dataset, question
    return "", item.identifier


def _identifiers(evaluation: Any, name: str) -> list[str]:
    seen: set[str] = set()
    for item in evaluation.items:
        if item.identifier in seen:
            raise KagreportError(f"{name} holds item {item.identifier!r} twice")
        seen.add(item.identifier)
    return [item.identifier for item in evaluation.items]


def _check_evaluations(
    evaluations: Sequence[AnswerEvaluation | RetrievalEvaluation],
    labels: Sequence[str] | None,
    *,
    same_items: bool,
) -> tuple[str, list[str]]:
    """The kind and the system names of :meth:`Run.from_evaluations`' evaluations, checked
    (one kind, unique labels, the same items); the errors it documents."""
    from kagreport.evaluation import AnswerEvaluation, DifferentItemsError

    if not evaluations:
        raise KagreportError("a run needs at least one evaluation")
    kinds = {"answers" if isinstance(e, AnswerEvaluation) else "retrieval" for e in evaluations}
    if len(kinds) > 1:
        raise KagreportError("a run's evaluations must all be answer or all retrieval evaluations")
    if labels is not None and len(labels) != len(evaluations):
        raise KagreportError(
            f"{plural(len(labels), 'label')} for {plural(len(evaluations), 'evaluation')}"
        )
    names = list(labels) if labels is not None else [_name(e, i) for i, e in enumerate(evaluations)]
    if len(set(names)) != len(names):
        raise KagreportError(f"system labels repeat: {', '.join(names)}; pass labels=")
    first = _identifiers(evaluations[0], names[0])
    for evaluation, name in zip(evaluations[1:], names[1:], strict=True):
        other = _identifiers(evaluation, name)
        if same_items and set(other) != set(first):
            only_c, only_b = set(other) - set(first), set(first) - set(other)
            raise DifferentItemsError(
                f"{name} and {names[0]} do not hold the same items "
                f"({len(only_c)} only in {name}, {len(only_b)} only in {names[0]})",
                only_candidate=len(only_c),
                only_baseline=len(only_b),
            )
    return kinds.pop(), names
