"""The items an evaluation scores: answers (with references) and retrievals."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kagreport.evaluation._serialize import jsonable

__all__ = ["AnswerItem", "RetrievalItem"]


def _check_identifier(identifier: object) -> None:
    if not isinstance(identifier, str) or not identifier:
        raise ValueError(f"an item identifier must be a non-empty string, not {identifier!r}")


def _check_latency(latency: object) -> None:
    if latency is None:
        return
    if isinstance(latency, bool) or not isinstance(latency, int | float):
        raise ValueError(f"latency must be seconds (a number) or None, not {latency!r}")
    if not math.isfinite(latency) or latency < 0:
        raise ValueError(f"latency must be finite and >= 0 seconds, not {latency!r}")


def _check_scores(scores: Mapping[str, float]) -> None:
    for name, value in scores.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ValueError(
                f"score {name!r} must be a finite number (leave it out when undefined), "
                f"not {value!r}"
            )


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
        _check_latency(self.latency)
        _check_scores(self.scores)

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
            scores={k: float(v) for k, v in (data.get("scores") or {}).items()},
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
        _check_latency(self.latency)
        _check_scores(self.scores)
        object.__setattr__(self, "retrieved", tuple(self.retrieved))
        object.__setattr__(self, "relevant", tuple(self.relevant))

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
            scores={k: float(v) for k, v in (data.get("scores") or {}).items()},
            latency=data.get("latency"),
            error=data.get("error"),
            metadata=dict(data.get("metadata") or {}),
        )
