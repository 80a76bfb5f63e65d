"""The one item schema of the site: :class:`ItemRow`, a system's row of an item as its page
shows it, whatever tool wrote the run.

Jinja reads a row by field name (``r.response``); the page's inline JSON holds the rows as
arrays under the same :data:`ITEM_COLUMNS`, which ``assets/site.js`` reads by name.
Texts are cut to ``RESPONSE_LIMIT`` characters (PITFALLS.md B15); the full length of a
response is kept beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from kagreport._format import score
from kagreport.runs import Run
from kagreport.runs._columns import OUTCOMES
from kagreport.runs._costs import recorded_columns

__all__ = [
    "ITEM_COLUMNS",
    "OPTION_LIMIT",
    "QUESTION_LIMIT",
    "RESPONSE_LIMIT",
    "ItemRow",
    "item_columns",
    "item_rows",
]

#: Characters of a response, reference, explanation or error kept on a page.
RESPONSE_LIMIT = 2000
#: Characters of an MCQ option kept in the expected answer and the options list.
OPTION_LIMIT = 200
#: Characters of a question's text kept beside its id.
QUESTION_LIMIT = 1000


class ItemRow(NamedTuple):
    """One system's row of an item, as the site shows it.

    Attributes
    ----------
    system, dataset, question : str
        The item's identity (``dataset`` is ``""`` for a run without datasets).
    question_text : str or None
        The question or input text, cut to :data:`QUESTION_LIMIT`.
    options : list of [key, text] or None
        The item's multiple-choice options, each text cut to :data:`OPTION_LIMIT`.
    outcome : str
        ``correct``, ``incorrect``, ``error`` or ``unknown``.
    expected : str or None
        The gold answer: an option key with its text (``"b: Tcc"``), else the reference.
    response : str or None
    response_length : int or None
        Characters of the whole response.
    explanation, error : str or None
        How the row was scored; the system's error (only where there was one).
    scores : str
        Every metric defined on the row, ``name=value`` joined by ``; ``.
    generation_secs, retrieval_secs : float or None
        The row's costs in seconds (None where not recorded).
    """

    system: str
    dataset: str
    question: str
    question_text: str | None
    options: list[list[str]] | None
    outcome: str
    expected: str | None
    response: str | None
    response_length: int | None
    explanation: str | None
    error: str | None
    scores: str
    generation_secs: float | None
    retrieval_secs: float | None


#: The columns of an item table's inline JSON: the fields of :class:`ItemRow`.
ITEM_COLUMNS: tuple[str, ...] = ItemRow._fields


def cut(text: str | None, limit: int = RESPONSE_LIMIT) -> str | None:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    if text is None:
        return None
    return text[:limit] + ("…" if len(text) > limit else "")


def expected_answer(reference: str | None, options: Any) -> str | None:
    """The gold answer as a page shows it: an option key with its option's text."""
    if reference is None:
        return None
    option = dict(options or ()).get(reference)
    if option is None:
        return cut(reference)
    return f"{reference}: {cut(option, OPTION_LIMIT)}"


def _options(options: Any) -> list[list[str]] | None:
    """An item's options as ``[key, text]`` pairs, each text cut to :data:`OPTION_LIMIT`."""
    if not options:
        return None
    return [[key, cut(text, OPTION_LIMIT) or ""] for key, text in options]


def item_score(value: float) -> str:
    """One item's score of a metric: an integer in full (``1``, a 0/1 verdict or a rating),
    else a score with 3 decimals (``0.667``, :func:`kagreport._format.score`)."""
    value = float(value)
    return str(int(value)) if value.is_integer() else score(value)


def _seconds(column: npt.NDArray[np.float64] | None, row: int) -> float | None:
    """A time as the page data holds it: rounded to the digits the table shows
    (:func:`kagreport._format.quantity`: three significant ones), so that the first page,
    rendered in Python, and the others, rendered by the page's script, agree."""
    if column is None:
        return None
    value = float(column[row])
    if math.isnan(value) or value == 0:
        return None if math.isnan(value) else 0.0
    return round(value, max(0, 2 - math.floor(math.log10(abs(value)))))


def item_rows(
    run: Run,
    rows: Sequence[int] | npt.NDArray[np.intp],
    lengths: Sequence[int | None] | None = None,
) -> list[ItemRow]:
    """The :class:`ItemRow` of each of ``rows`` of ``run``, in that order.

    Texts are read from the run (a lazy column reads just these rows). ``lengths``: the
    length of each row's whole response, when the run's responses are already cut.
    """
    metrics = sorted(run.metrics)
    recorded = recorded_columns(run)  # a column no item recorded above 0 is unknown, "—"
    generation = run.costs.get("generation_secs") if "generation_secs" in recorded else None
    retrieval = run.costs.get("retrieval_secs") if "retrieval_secs" in recorded else None
    found = []
    for row in (int(r) for r in rows):
        code = int(run.outcome[row])
        options = None if run.options is None else run.options[row]
        reference = None if run.references is None else run.references[row]
        response = None if run.responses is None else run.responses[row]
        question_text = None if run.question_texts is None else run.question_texts[row]
        question_text = question_text.strip() if question_text else None
        scores = "; ".join(
            f"{m}={item_score(float(run.metrics[m][row]))}"
            for m in metrics
            if not math.isnan(float(run.metrics[m][row]))
        )
        found.append(
            ItemRow(
                system=run.systems[run.system[row]],
                dataset=run.dataset_names[run.dataset[row]],
                question=run.question_names[run.question[row]],
                question_text=cut(question_text.strip() if question_text else None, QUESTION_LIMIT)
                or None,
                options=None
                if not options
                else [[k, cut(v, OPTION_LIMIT) or ""] for k, v in options],
                outcome=OUTCOMES[code] if code >= 0 else "unknown",
                expected=expected_answer(reference, options),
                response=None if response is None else response[:RESPONSE_LIMIT],
                response_length=(
                    lengths[row]
                    if lengths is not None
                    else None
                    if response is None
                    else len(response)
                ),
                explanation=cut(None if run.explanations is None else run.explanations[row]),
                error=cut(None if run.errors is None else run.errors[row]),
                scores=scores,
                generation_secs=_seconds(generation, row),
                retrieval_secs=_seconds(retrieval, row),
            )
        )
    return found


#: Headings of the item table's columns, by column.
HEADINGS = {
    "dataset": "Dataset",
    "question": "Question",
    "outcome": "Outcome",
    "expected": "Expected",
    "response": "Response",
    "explanation": "Explanation",
    "error": "Error",
    "scores": "Scores",
    "generation_secs": "Generation (s)",
    "retrieval_secs": "Retrieval (s)",
}


def item_columns(run: Run) -> list[tuple[str, str]]:
    """The (column, heading) pairs an item table of ``run`` shows: what the run records
    (no empty column of responses for a run that kept none)."""
    shown = []
    if any(run.dataset_names):
        shown.append("dataset")
    shown.append("question")
    if len(run) and bool((run.outcome >= 0).any()):
        shown.append("outcome")
    if run.references is not None:
        shown.append("expected")
    if run.responses is not None:
        shown.append("response")
    if run.explanations is not None:
        shown.append("explanation")
    if run.errors is not None:
        shown.append("error")
    if set(run.metrics) - {"correct"}:
        shown.append("scores")
    recorded = recorded_columns(run)
    for name in ("generation_secs", "retrieval_secs"):
        if name in recorded:
            shown.append(name)
    return [(name, HEADINGS[name]) for name in shown]
