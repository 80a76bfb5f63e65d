"""The judge protocol: what a judge is, what it returns, and what it cost."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kagreport._errors import KagreportError
from kagreport.evaluation._items import AnswerItem

__all__ = [
    "BINARY_SCALE",
    "Judge",
    "JudgeFailure",
    "Judgement",
    "Usage",
    "declared_scale",
    "identity_hash",
    "range_scale",
    "rating_scale",
]

#: The scale of a score that is 1 (right) or 0 (wrong): two categories.
BINARY_SCALE = "nominal 0/1"


def rating_scale(top: int) -> str:
    """The scale of a rating from 1 to ``top`` (an ordinal level), e.g. ``"ordinal 1-5"``."""
    return f"ordinal 1-{top}"


def range_scale(low: float, high: float) -> str:
    """The scale of a number anywhere from ``low`` to ``high`` (an interval level), e.g.
    ``"interval 0..1"``."""
    return f"interval {low:g}..{high:g}"


@dataclass
class Usage:
    """What a judge's model calls cost (mutable; summed per judge by the evaluation).

    Attributes
    ----------
    responses : int
        Model responses received (cached ones included; a retried 429 is not a response).
    cached_responses : int
        Responses served from the cache (they add no tokens).
    input_tokens, output_tokens : int
        Summed over responses that were not cached and reported token counts.
    responses_without_token_counts : int
        Uncached responses whose server reported no usage.
    """

    responses: int = 0
    cached_responses: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    responses_without_token_counts: int = 0

    def add(self, other: Usage) -> None:
        """Add ``other``'s counts to these."""
        self.responses += other.responses
        self.cached_responses += other.cached_responses
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.responses_without_token_counts += other.responses_without_token_counts

    def to_dict(self) -> dict[str, int]:
        return {
            "responses": self.responses,
            "cached_responses": self.cached_responses,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "responses_without_token_counts": self.responses_without_token_counts,
        }


@dataclass(frozen=True)
class Judgement:
    """One judge's verdict on one item.

    Attributes
    ----------
    scores : Mapping[str, float]
        Criterion -> score in [0, 1] (or the judge's documented range). A judge
        with a single score uses its ``criteria[0]``.
    verdict : Any
        The raw verdict (model text, extracted option, parsed JSON), kept in the
        report when the evaluation keeps verdicts.
    usage : Usage
        What producing it cost.
    """

    scores: Mapping[str, float]
    verdict: Any = None
    usage: Usage = field(default_factory=Usage)


class JudgeFailure(KagreportError):
    """A judgement that could not be made (HTTP failure, unparsable verdict, ...).

    Counted in ``errors[judge]``; the evaluation goes on. ``verdict`` keeps
    the raw text when there was one; ``usage`` what the attempt cost; ``cause`` the reason
    without the item, the same text for every item that failed the same way (``"HTTP 429
    (Too Many Requests)"``), which the evaluation tallies in ``error_causes``; by default
    the message itself.
    """

    def __init__(
        self,
        message: str,
        *,
        verdict: Any = None,
        usage: Usage | None = None,
        cause: str | None = None,
    ) -> None:
        super().__init__(message)
        self.verdict = verdict
        self.usage = usage if usage is not None else Usage()
        self.cause = message if cause is None else cause


@runtime_checkable
class Judge(Protocol):
    """What :func:`evaluate_answers` needs of a judge.

    Attributes
    ----------
    name : str
        Unique within an evaluation; prefixes the judge's metric names.
    criteria : tuple of str
        The criteria it scores. One criterion gives the metric ``<name>``;
        several give ``<name>.<criterion>``. Judges sharing a criterion are
        compared by Krippendorff's alpha.
    identity : Mapping[str, Any]
        Everything that determines its verdicts (kind, model, endpoint, prompt
        hash, temperature, seed, scale, version); JSON-compatible.
    scales : Mapping[str, str], optional
        Criterion -> the scale it is scored on, as the judge asked or computed it:
        its level of measurement and its values, e.g. ``"nominal 0/1"`` (right or
        wrong), ``"interval 0..1"`` (token F1), ``"ordinal 1-5"`` (a 1-5 rating,
        whatever number it is stored as). Not required by the protocol, but
        Krippendorff's alpha compares only judges that declare the same criterion
        on the same scale (equal text); a judge that declares none is compared
        with no other (``declared_scale``).

    Notes
    -----
    ``judge(item)`` returns a ``Judgement`` or raises ``JudgeFailure``
    (any other exception is also counted as a failure). It may be called from
    several threads at once.
    """

    @property
    def name(self) -> str: ...

    @property
    def criteria(self) -> tuple[str, ...]: ...

    @property
    def identity(self) -> Mapping[str, Any]: ...

    def judge(self, item: AnswerItem) -> Judgement: ...


def declared_scale(judge: Judge, criterion: str) -> str | None:
    """The scale ``judge`` declares for ``criterion`` (its ``scales`` entry), or None when it
    declares none (no ``scales`` mapping, no entry, or not a non-empty string)."""
    scales = getattr(judge, "scales", None)
    if not isinstance(scales, Mapping):
        return None
    scale = scales.get(criterion)
    return scale if isinstance(scale, str) and scale else None


def identity_hash(value: Any) -> str:
    """SHA-256 of a JSON-compatible value in canonical form (sorted keys, no spaces)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
