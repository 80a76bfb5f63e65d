"""The flipped items of a comparison side by side: both responses with their word-level
differences marked (computed here, at build time, with :mod:`difflib`), the question, the
expected answer and each setup's costs of the item.

The segments are plain text; the comparison template wraps them in ``<del>`` and
``<ins>`` with Jinja's autoescape, so a response's markup stays text.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kagreport.runs import OUTCOMES

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["FLIP_COSTS", "FlipDetail", "FlipSide", "Segment", "flip_details", "word_diff"]

#: A run of text and how it differs: ``"same"``, ``"del"`` (only in the first text) or
#: ``"ins"`` (only in the second).
Segment = tuple[str, str]

#: The per-item costs shown for each side: (cost column of the run model, label, decimals).
FLIP_COSTS = (
    ("generation_secs", "Generation (s)", 3),
    ("retrieval_secs", "Retrieval (s)", 3),
    ("context_bytes", "Context length (bytes)", 0),
    ("vertices", "Vertices", 0),
    ("relationships", "Relationships", 0),
    ("properties", "Properties", 0),
)

# Words and the whitespace between them, both kept, so the segments join back to the text.
_TOKENS = re.compile(r"\s+|\S+")


def _merge(segments: list[Segment], kind: str, text: str) -> None:
    if not text:
        return
    if segments and segments[-1][0] == kind:
        segments[-1] = (kind, segments[-1][1] + text)
    else:
        segments.append((kind, text))


def word_diff(first: str, second: str) -> tuple[list[Segment], list[Segment]]:
    """The word-level differences of two texts.

    Parameters
    ----------
    first, second : str
        The texts (the baseline's response and the candidate's).

    Returns
    -------
    (list of Segment, list of Segment)
        ``first`` as segments ``"same"`` and ``"del"`` (words not in ``second``), and
        ``second`` as ``"same"`` and ``"ins"`` (words not in ``first``); each list's texts
        join back to its text. Whitespace between two changed words is part of the change.
    """
    a, b = _TOKENS.findall(first), _TOKENS.findall(second)
    # autojunk off: a long response's frequent words ("the") must still match.
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            _merge(left, "same", "".join(a[i1:i2]))
            _merge(right, "same", "".join(b[j1:j2]))
        else:  # replace, delete or insert
            _merge(left, "del", "".join(a[i1:i2]))
            _merge(right, "ins", "".join(b[j1:j2]))
    return left, right


@dataclass(frozen=True)
class FlipSide:
    """One setup's record of a flipped item.

    Attributes
    ----------
    setup, outcome : str
    segments : list of Segment
        The response with its differences from the other side's (empty without one).
    error : str or None
        The error message of an error record.
    costs : list of (str, float or None, int)
        (label, value, decimals) of :data:`FLIP_COSTS`; None where not recorded.
    """

    setup: str
    outcome: str
    segments: list[Segment]
    error: str | None
    costs: list[tuple[str, float | None, int]]


@dataclass(frozen=True)
class FlipDetail:
    """A flipped item: what was asked, what was expected, and both setups' records."""

    item: str
    question: str | None
    expected: str | None
    baseline: FlipSide
    candidate: FlipSide

    @property
    def cost_rows(self) -> list[tuple[str, float | None, float | None, int]]:
        """(label, baseline's value, candidate's value, decimals) of the costs either
        setup recorded for the item."""
        return [
            (label, b, c, digits)
            for (label, b, digits), (_, c, _) in zip(
                self.baseline.costs, self.candidate.costs, strict=True
            )
            if b is not None or c is not None
        ]


def _value(run: Run, name: str, row: int) -> float | None:
    column = run.costs.get(name)
    if column is None:
        return None
    value = float(column[row])
    return None if math.isnan(value) else value


def flip_details(
    run: Run,
    candidate: str,
    baseline: str,
    items: Sequence[str],
    question: Callable[[str, str], str | None],
    expected: Callable[[str, str], str | None],
) -> list[FlipDetail]:
    """The side-by-side records of ``items`` (``"dataset/question"`` labels of
    :meth:`kagreport.runs.Run.item_label`) of ``candidate`` and ``baseline``.

    Parameters
    ----------
    run : Run
        The run model (responses kept, as the site grades with ``keep_text``).
    candidate, baseline : str
        Setup names.
    items : sequence of str
        The flipped items, in the order shown.
    question, expected : callable
        ``question(dataset, question)`` and ``expected(dataset, question)``: the
        question's text and its expected answer as the setup pages show them.

    Returns
    -------
    list of FlipDetail
        One per item both setups hold, in the order of ``items``.
    """
    rows: dict[str, dict[str, int]] = {}
    for setup in (candidate, baseline):
        found, _ = run.rows_of(setup)
        rows[setup] = {run.item_label(r): r for r in found.tolist()}
    responses, errors = run.responses, run.errors
    details = []
    for item in items:
        c, b = rows[candidate].get(item), rows[baseline].get(item)
        if c is None or b is None:
            continue
        texts = [responses[r] if responses is not None else None for r in (b, c)]
        left, right = word_diff(texts[0] or "", texts[1] or "")
        dataset = run.dataset_names[run.dataset[c]]
        name = run.question_names[run.question[c]]
        sides = []
        for setup, row, segments in ((baseline, b, left), (candidate, c, right)):
            code = int(run.outcome[row])
            sides.append(
                FlipSide(
                    setup,
                    OUTCOMES[code] if code >= 0 else "unknown",
                    segments,
                    errors[row] if errors is not None else None,
                    [(label, _value(run, name, row), d) for name, label, d in FLIP_COSTS],
                )
            )
        details.append(
            FlipDetail(
                item,
                question(dataset, name),
                expected(dataset, name),
                sides[0],
                sides[1],
            )
        )
    return details
