"""The items an evaluation scores: answers (with references) and retrievals."""

from __future__ import annotations

import math
import numbers
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kagreport._document import jsonable

__all__ = ["AnswerItem", "RetrievalItem", "TextRepairWarning"]

_SURROGATE = re.compile("[\ud800-\udfff]")


class TextRepairWarning(UserWarning):
    """An item's text held lone UTF-16 surrogates, which were replaced by U+FFFD.

    Such text (half of an emoji, from a JSON escape like ``"\\ud83d"``) is valid JSON but
    cannot be written as UTF-8, so a report holding it could not be written at all.
    """


def _repaired(value: Any) -> tuple[Any, bool]:
    """``value`` with lone surrogates replaced by U+FFFD in every string (keys included),
    and whether anything changed; unchanged containers are returned as they are."""
    if isinstance(value, str):
        if value.isascii() or _SURROGATE.search(value) is None:
            return value, False
        return _SURROGATE.sub("\ufffd", value), True
    if isinstance(value, Mapping):
        pairs = [(_repaired(k), _repaired(v)) for k, v in value.items()]
        if not any(k[1] or v[1] for k, v in pairs):
            return value, False
        return {k[0]: v[0] for k, v in pairs}, True
    if isinstance(value, list | tuple):
        parts = [_repaired(v) for v in value]
        if not any(changed for _, changed in parts):
            return value, False
        return type(value)(v for v, _ in parts), True
    return value, False


def _repair_fields(item: AnswerItem | RetrievalItem, names: tuple[str, ...]) -> None:
    """Repair the text of ``item``'s fields in place (a frozen dataclass), with one
    :class:`TextRepairWarning` naming the item and the fields."""
    original = item.identifier  # before repair, as the user can find it
    repaired = []
    for name in names:
        value, changed = _repaired(getattr(item, name))
        if changed:
            object.__setattr__(item, name, value)
            repaired.append(name)
    if repaired:
        warnings.warn(
            f"item {original!r}: lone UTF-16 surrogates in {', '.join(repaired)} replaced "
            "by U+FFFD (text that cannot be written as UTF-8, such as half of an emoji)",
            TextRepairWarning,
            stacklevel=4,
        )


def _check_identifier(identifier: object) -> None:
    if not isinstance(identifier, str) or not identifier:
        raise ValueError(f"an item identifier must be a non-empty string, not {identifier!r}")


def _check_latency(latency: object) -> None:
    if latency is None:
        return
    if isinstance(latency, bool) or not isinstance(latency, numbers.Real):
        raise ValueError(f"latency must be seconds (a number) or None, not {latency!r}")
    try:
        finite = math.isfinite(latency)
    except OverflowError:
        finite = False
    if not finite or latency < 0:
        raise ValueError(f"latency must be finite and >= 0 seconds, not {latency!r}")


def _checked_scores(scores: object) -> dict[str, float]:
    if not isinstance(scores, Mapping):
        raise ValueError(f"scores must be a mapping of metric name to number, not {scores!r}")
    checked = {}
    for name, value in scores.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"a metric name must be a non-empty string, not {name!r}")
        number = None
        candidate: object = value
        if isinstance(candidate, bool):
            number = None  # True is not a score, though Python counts it as 1
        elif isinstance(candidate, numbers.Real):
            try:
                number = float(candidate)
            except OverflowError:
                number = None
        if number is None or not math.isfinite(number):
            raise ValueError(
                f"score {name!r} must be a finite number (leave it out when undefined), "
                f"not {value!r}"
            )
        checked[name] = number
    return checked


def _check_text(name: str, value: object, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string{' or None' if optional else ''}, not {value!r}")


def _check_mapping(name: str, value: object) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping, not {value!r}")


# The fields whose text is repaired (metric names are checked elsewhere: scores keys).
_ANSWER_TEXT = (
    "identifier", "question", "answer", "reference", "verdicts", "error", "metadata", "scores",
)  # fmt: skip
_RETRIEVAL_TEXT = ("identifier", "question", "retrieved", "relevant", "error", "metadata", "scores")


@dataclass(frozen=True)
class AnswerItem:
    """One question answered by the system under evaluation.

    Attributes
    ----------
    identifier : str
        Unique within an evaluation; pairs items when two evaluations are compared.
    question : str
        The question (or task) text.
    answer : str or None
        The system's answer; ``None`` when it gave none (counted in ``errors["system"]``;
        judges do not score it).
    reference : str or None
        The reference answer, or ``None`` when there is none.
    scores : Mapping[str, float]
        Metric name -> score; a metric is absent where it is undefined (never NaN).
    verdicts : Mapping[str, Any]
        Judge name -> raw verdict text or parsed object (kept only on request).
    latency : float or None
        Seconds the system took to answer.
    error : str or None
        The system's error message, if it failed.
    metadata : Mapping[str, Any]
        JSON-compatible extras (for example ``{"context": <retrieved text>}``, which
        the LLM judge's templates can use).

    Raises
    ------
    ValueError
        On an empty identifier, a negative or non-finite latency, or a non-finite score.

    Warns
    -----
    TextRepairWarning
        When a text (any field, metadata and verdicts included) holds lone UTF-16
        surrogates, which cannot be written as UTF-8: each becomes U+FFFD (what an LLM
        judge's prompt shows in their place anyway), so the report can be written.
    """

    identifier: str
    question: str
    answer: str | None
    reference: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)
    verdicts: Mapping[str, Any] = field(default_factory=dict)
    latency: float | None = None
    error: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_identifier(self.identifier)
        _check_text("question", self.question, optional=False)
        for name in ("answer", "reference", "error"):
            _check_text(name, getattr(self, name))
        _check_latency(self.latency)
        _check_mapping("verdicts", self.verdicts)
        _check_mapping("metadata", self.metadata)
        object.__setattr__(self, "scores", _checked_scores(self.scores))
        _repair_fields(self, _ANSWER_TEXT)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible mapping (``None`` where a value is absent)."""
        return {
            "identifier": self.identifier,
            "question": self.question,
            "answer": self.answer,
            "reference": self.reference,
            "scores": dict(self.scores),
            "verdicts": jsonable(self.verdicts),
            "latency": self.latency,
            "error": self.error,
            "metadata": jsonable(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerItem:
        """Rebuild from :meth:`to_dict` output (missing optional keys read as absent)."""
        return cls(
            identifier=data["identifier"],
            question=data.get("question", ""),
            answer=data.get("answer"),
            reference=data.get("reference"),
            scores=data.get("scores") or {},
            verdicts=dict(data.get("verdicts") or {}),
            latency=data.get("latency"),
            error=data.get("error"),
            metadata=dict(data.get("metadata") or {}),
        )


@dataclass(frozen=True)
class RetrievalItem:
    """One query answered by a retriever.

    Attributes
    ----------
    identifier : str
        Unique within an evaluation; pairs items when two evaluations are compared.
    question : str
        The query text.
    retrieved : tuple of str
        Retrieved document ids, best first.
    relevant : tuple of str
        The relevant (gold) document ids, in no particular order.
    scores : Mapping[str, float]
        Metric name (``recall@5``, ``mrr``, ...) -> score; absent where undefined.
    latency : float or None
        Seconds the retrieval took.
    error : str or None
        The retriever's error message, if it failed.
    metadata : Mapping[str, Any]
        JSON-compatible extras.

    Raises
    ------
    ValueError
        On an empty identifier, a negative or non-finite latency, or a non-finite score.

    Warns
    -----
    TextRepairWarning
        As :class:`AnswerItem`: lone UTF-16 surrogates in any text become U+FFFD.
    """

    identifier: str
    question: str
    retrieved: tuple[str, ...]
    relevant: tuple[str, ...]
    scores: Mapping[str, float] = field(default_factory=dict)
    latency: float | None = None
    error: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_identifier(self.identifier)
        _check_text("question", self.question, optional=False)
        _check_text("error", self.error)
        _check_latency(self.latency)
        _check_mapping("metadata", self.metadata)
        for name in ("retrieved", "relevant"):
            ids = getattr(self, name)
            if isinstance(ids, str) or not all(isinstance(i, str) for i in ids):
                raise ValueError(f"{name} must be a sequence of string ids, not {ids!r}")
            object.__setattr__(self, name, tuple(ids))
        object.__setattr__(self, "scores", _checked_scores(self.scores))
        _repair_fields(self, _RETRIEVAL_TEXT)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible mapping (``None`` where a value is absent)."""
        return {
            "identifier": self.identifier,
            "question": self.question,
            "retrieved": list(self.retrieved),
            "relevant": list(self.relevant),
            "scores": dict(self.scores),
            "latency": self.latency,
            "error": self.error,
            "metadata": jsonable(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetrievalItem:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            identifier=data["identifier"],
            question=data.get("question", ""),
            retrieved=tuple(data.get("retrieved") or ()),
            relevant=tuple(data.get("relevant") or ()),
            scores=data.get("scores") or {},
            latency=data.get("latency"),
            error=data.get("error"),
            metadata=dict(data.get("metadata") or {}),
        )
