"""The flipped items of a comparison side by side: both responses with their word-level
differences marked (computed here, at build time, with :mod:`difflib`), the question, the
expected answer, each system's score, explanation and costs of the item.

The segments are plain text; the comparison template wraps them in ``<del>`` and
``<ins>`` with Jinja's autoescape, so a response's markup stays text.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kagreport.site._items import (
    OPTION_LIMIT,
    QUESTION_LIMIT,
    RESPONSE_LIMIT,
    cut,
    expected_answer,
)

if TYPE_CHECKING:
    from kagreport.runs import FlippedItem, FlippedSide

__all__ = ["FLIP_COSTS", "FlipDetail", "FlipSide", "Segment", "flip_detail", "word_diff"]

#: A run of text and how it differs: ``"same"``, ``"del"`` (only in the first text) or
#: ``"ins"`` (only in the second).
Segment = tuple[str, str]

#: The per-item costs shown for each side: (cost column of the run model, label, whether one
#: item's value is a whole number: bytes, elements, tokens). The page shows each as a quantity
#: (:func:`kagreport._format.quantity`: a whole number in full), its unit in the label.
FLIP_COSTS = (
    ("generation_secs", "Generation (s)", False),
    ("retrieval_secs", "Retrieval (s)", False),
    ("context_bytes", "Context length (bytes)", True),
    ("vertices", "Vertices", True),
    ("relationships", "Relationships", True),
    ("properties", "Properties", True),
    ("input_tokens", "Input tokens", True),
    ("output_tokens", "Output tokens", True),
    ("cost_usd", "Cost (USD)", False),
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
    """One system's record of a flipped item.

    Attributes
    ----------
    setup : str
        The system.
    outcome : str
        ``correct``, ``incorrect``, ``error`` or ``unknown``.
    score : float
        The compared metric's value.
    segments : list of Segment
        The response with its differences from the other side's (empty without one),
        cut to ``RESPONSE_LIMIT`` characters.
    explanation, error : str or None
        How the row was scored; the system's error message.
    costs : list of (str, float or int or None)
        (label, value) of :data:`FLIP_COSTS` (an int for a whole-number cost); None where
        not recorded.
    """

    setup: str
    outcome: str
    score: float
    segments: list[Segment]
    explanation: str | None
    error: str | None
    costs: list[tuple[str, float | int | None]]


@dataclass(frozen=True)
class FlipDetail:
    """A flipped item: what was asked, what was expected, and both systems' records."""

    item: str
    question: str | None
    options: list[list[str]] | None
    expected: str | None
    baseline: FlipSide
    candidate: FlipSide

    @property
    def cost_rows(self) -> list[tuple[str, float | int | None, float | int | None]]:
        """(label, baseline's value, candidate's value) of the costs either system
        recorded for the item."""
        return [
            (label, b, c)
            for (label, b), (_, c) in zip(self.baseline.costs, self.candidate.costs, strict=True)
            if b is not None or c is not None
        ]


def _cost(value: float | None, whole: bool) -> float | int | None:
    # A whole-number cost (bytes, elements, tokens) as an int: 30 reads "30", not "30.0".
    return int(value) if whole and value is not None and float(value).is_integer() else value


def _side(side: FlippedSide, segments: list[Segment]) -> FlipSide:
    return FlipSide(
        side.system,
        side.outcome or "unknown",
        side.score,
        segments,
        cut(side.explanation),
        cut(side.error),
        [(label, _cost(side.costs.get(name), whole)) for name, label, whole in FLIP_COSTS],
    )


def flip_detail(item: FlippedItem) -> FlipDetail:
    """A flipped item of :func:`kagreport.runs.flipped_items` side by side: the word
    differences from the baseline's response to the candidate's, the question, its
    options and the gold answer as the item pages show them."""
    texts = [(side.response or "")[:RESPONSE_LIMIT] for side in (item.baseline, item.candidate)]
    left, right = word_diff(texts[0], texts[1])
    question = item.question_text.strip() if item.question_text else None
    options = item.options
    return FlipDetail(
        item.item,
        cut(question, QUESTION_LIMIT) if question else None,
        None if not options else [[k, cut(v, OPTION_LIMIT) or ""] for k, v in options],
        expected_answer(item.reference, options),
        _side(item.baseline, left if item.baseline.response is not None else []),
        _side(item.candidate, right if item.candidate.response is not None else []),
    )
