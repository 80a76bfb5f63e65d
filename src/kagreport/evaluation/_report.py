"""The evaluation reports: :class:`AnswerEvaluation` and :class:`RetrievalEvaluation`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from kagreport._document import Document, convert, jsonable
from kagreport._errors import DocumentError
from kagreport.evaluation._correction import LabelCorrection
from kagreport.evaluation._items import AnswerItem, RetrievalItem
from kagreport.stats._signflip import exact_mean

if TYPE_CHECKING:
    import numpy.typing as npt

    from kagreport.evaluation._comparison import EvaluationComparison

__all__ = ["AnswerEvaluation", "RetrievalEvaluation", "mean_scores"]

SCHEMA_VERSION = 1


def mean_scores(items: Sequence[AnswerItem] | Sequence[RetrievalItem]) -> dict[str, float]:
    """Metric -> mean over the items where it is defined, metrics in first-seen order."""
    values: dict[str, list[float]] = {}
    for item in items:
        for name, value in item.scores.items():
            values.setdefault(name, []).append(value)
    return {name: exact_mean(vs) for name, vs in values.items()}


def _nan_or(value: float | None) -> float:
    return math.nan if value is None else float(value)


# The documents' shapes, checked by kagreport._document.convert: every key optional (read as
# empty when absent or null, as older documents may lack one), null an undefined number.
_Number = float | None


class _AnswerItemShape(msgspec.Struct):
    identifier: str
    question: str = ""
    answer: str | None = None
    reference: str | None = None
    scores: dict[str, float] | None = None
    verdicts: dict[str, Any] | None = None
    latency: int | float | None = None
    error: str | None = None
    metadata: dict[str, Any] | None = None


class _RetrievalItemShape(msgspec.Struct):
    identifier: str
    question: str = ""
    retrieved: list[str] | None = None
    relevant: list[str] | None = None
    scores: dict[str, float] | None = None
    latency: int | float | None = None
    error: str | None = None
    metadata: dict[str, Any] | None = None


class _RetrievalShape(msgspec.Struct):
    metrics: dict[str, _Number] | None = None
    items: list[_RetrievalItemShape] | None = None
    errors: dict[str, int] | None = None
    settings: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


class _CorrectionShape(msgspec.Struct):
    judge_mean: _Number = None
    judge_ci: tuple[_Number, _Number] | None = None
    human_mean: _Number = None
    human_ci: tuple[_Number, _Number] | None = None
    estimate: _Number = None
    ci: tuple[_Number, _Number] | None = None
    lam: _Number = None
    n_labelled: int = 0
    n_unlabelled: int = 0
    n_left_out: int = 0
    confidence: float | None = None
    note: str | None = None


class _AnswerShape(_RetrievalShape):
    items: list[_AnswerItemShape] | None = None  # type: ignore[assignment]
    judges: dict[str, Any] | None = None
    agreement: dict[str, _Number] | None = None
    agreement_intervals: dict[str, tuple[_Number, _Number]] | None = None
    error_causes: dict[str, dict[str, int]] | None = None
    # Absent from documents written before kagreport recorded them.
    agreement_notes: dict[str, str] | None = None
    agreement_judges: dict[str, list[str]] | None = None
    usage: dict[str, dict[str, int]] | None = None
    label_corrections: dict[str, _CorrectionShape] | None = None


def _items(data: Mapping[str, Any], kind: Any, document: str) -> tuple[Any, ...]:
    """The items of a checked document, each built by ``kind.from_dict`` (whose own checks,
    an empty identifier or a negative latency, name the item's index)."""
    items = []
    for index, item in enumerate(data.get("items") or ()):
        try:
            items.append(kind.from_dict(item))
        except ValueError as exc:
            raise DocumentError(f"not a valid {document}: items[{index}]: {exc}") from None
    return tuple(items)


class _ReportMixin(Document):
    """What both evaluation reports share: shape, serialisation and comparison."""

    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    items: tuple[Any, ...]
    metrics: Mapping[str, float]
    errors: Mapping[str, int]
    metadata: Mapping[str, Any]

    @property
    def n_items(self) -> int:
        """Number of evaluated items."""
        return len(self.items)

    @property
    def coverage(self) -> dict[str, int]:
        """Metric name -> number of items where it is defined."""
        counts: dict[str, int] = {}
        for item in self.items:
            for name in item.scores:
                counts[name] = counts.get(name, 0) + 1
        return {name: counts.get(name, 0) for name in self.metrics}

    def per_item(self, metric: str) -> npt.NDArray[Any]:
        """One metric's per-item values in item order, NaN where undefined; shape (n_items,).

        Raises
        ------
        KeyError
            If the evaluation did not compute ``metric``.
        """
        import numpy as np

        if metric not in self.metrics:
            known = ", ".join(self.metrics) or "none"
            raise KeyError(f"this evaluation has no metric {metric!r} (metrics: {known})")
        return np.array([item.scores.get(metric, np.nan) for item in self.items], dtype=float)

    def __repr__(self) -> str:
        # The dataclass repr would print every item (megabytes for a large evaluation).
        name = self.metadata.get("name")
        label = f" {name!r}" if isinstance(name, str) else ""
        return (
            f"<{type(self).__name__}{label}: {self.n_items} items, "
            f"{len(self.metrics)} metrics, errors {dict(self.errors)}>"
        )

    def _repr_html_(self) -> str:
        from kagreport.evaluation._text import render_evaluation_html

        return render_evaluation_html(self)

    def compare(
        self,
        baseline: Any,
        *,
        n_resamples: int = 10000,
        seed: int = 0,
        shared_only: bool = False,
        metrics: Sequence[str] | None = None,
    ) -> EvaluationComparison:
        """Paired sign-flip test of this system against ``baseline`` over the same items.

        For each metric both report, over the items where both define it:
        d_i = self_i - baseline_i (rounding dust counted as 0), statistic mean(d);
        two-sided p-value exact over all sign assignments when 2^m <= n_resamples
        (m = non-zero differences), else exact by convolution when the differences lie
        on a small lattice (0/1, Likert or 1-10 scores), else from ``n_resamples``
        random assignments as (hits + 1) / (n + 1), each metric recording its
        ``method``; 95% bootstrap interval of the mean difference; Holm-adjusted
        p-values across the metrics under test (``metrics``; default
        ``primary_metrics``: for answers every metric but
        those of duplicate judges, for retrieval ``mrr``), recorded as the result's
        ``family`` (ANSWER_EVALUATION_SPEC.md). With ``shared_only``, items only one
        report holds are left out (and counted in the result's ``metadata``) instead of
        refused. Every result depends only on the set of pairs, not on the item order.

        Raises
        ------
        TypeError
            If ``baseline`` is not a report of the same kind.
        ValueError
            If the item identifiers differ (unless ``shared_only``), no metric is shared,
            or ``metrics`` names a metric both do not hold (the message lists those
            they do).
        """
        from kagreport.evaluation._compare import compare_items

        if type(baseline) is not type(self):
            raise TypeError(
                f"can only compare a {type(self).__name__} with another one, "
                f"not {type(baseline).__name__}"
            )
        kind = "answers" if isinstance(self, AnswerEvaluation) else "retrieval"
        # Both report classes have .items, .judges and .metadata (what compare_items reads).
        candidate: Any = self
        other: Any = baseline
        return compare_items(
            candidate,
            other,
            kind=kind,
            n_resamples=n_resamples,
            seed=seed,
            shared_only=shared_only,
            metrics=metrics,
        )


@dataclass(frozen=True, eq=False, repr=False)
class AnswerEvaluation(_ReportMixin):
    """The result of :func:`evaluate_answers` (ANSWER_EVALUATION_SPEC.md).

    Attributes
    ----------
    metrics : Mapping[str, float]
        Metric name -> mean over the items where it is defined (NaN if none).
    items : tuple of AnswerItem
        Per-item results, in dataset order.
    judges : Mapping[str, Any]
        Judge name -> identity (everything that determines its verdicts).
    agreement : Mapping[str, float]
        Judge criterion -> Krippendorff's alpha between the judges that score it on the
        same scale (their ``scales``); a criterion scored on several scales has one entry
        per scale, ``"<criterion> (<scale>)"``. NaN with fewer than two judges on that
        criterion and scale, judges that declare no scale, no pairable item or no variation
        (``agreement_notes`` says which).
    usage : Mapping[str, Mapping[str, int]]
        Judge name -> ``responses``, ``cached_responses``, ``input_tokens``,
        ``output_tokens``, ``responses_without_token_counts``.
    errors : Mapping[str, int]
        ``"system"`` (items without an answer), then failed judgements per judge.
    settings : Mapping[str, Any]
        The options the evaluation ran with.
    metadata : Mapping[str, Any]
        Free-form, JSON-compatible description from the caller.
    agreement_intervals : Mapping[str, tuple[float, float]]
        kagreport addition: criterion -> bootstrap 95% interval of alpha over items.
    agreement_notes : Mapping[str, str]
        kagreport addition: criterion -> why its alpha or its interval is missing (NaN), e.g.
        ``"one judge (j1)"``, ``"no item scored by two or more judges"`` or ``"no variation:
        ..."``; criteria with a defined alpha and interval have no note. Optional in documents
        (older ones have none).
    agreement_judges : Mapping[str, tuple of str]
        kagreport addition: criterion -> the metrics (one per judge) its alpha compares, in
        judge order. Optional in documents (older ones have none).
    error_causes : Mapping[str, Mapping[str, int]]
        kagreport addition: judge -> the causes of its errors (``JudgeFailure.cause``, such
        as ``"HTTP 429 (Too Many Requests)"``) -> how many judgements failed so, the five
        most common, most common first; judges without errors have no entry. Written only
        when there is one; optional in documents (older ones have none).
    label_corrections : Mapping[str, LabelCorrection]
        kagreport addition: metric -> its mean corrected by human labels (``labels=`` of
        :func:`evaluate_answers`): the judge-only and human-only means and the PPI++
        estimate, each with its 95% interval. Written only when labels were given.
    """

    SCHEMA: ClassVar[str] = "kagreport.AnswerEvaluation"

    metrics: Mapping[str, float]
    items: tuple[AnswerItem, ...]
    judges: Mapping[str, Any]
    agreement: Mapping[str, float]
    usage: Mapping[str, Mapping[str, int]]
    errors: Mapping[str, int]
    settings: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    agreement_intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    agreement_notes: Mapping[str, str] = field(default_factory=dict)
    agreement_judges: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error_causes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    label_corrections: Mapping[str, LabelCorrection] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))

    @property
    def failed_judges(self) -> tuple[str, ...]:
        """kagreport addition: the judges that failed on every item they judged, in judge
        order.

        Items without an answer are not judged (``errors["system"]``), so a judge failed
        everywhere when its ``errors`` count reaches the items with an answer; ``()`` when
        no item has one.
        """
        answered = sum(item.answer is not None for item in self.items)
        if not answered:
            return ()
        return tuple(j for j in self.judges if self.errors.get(j, 0) >= answered)

    def agreement_note(self, criterion: str) -> str:
        """Why ``criterion``'s alpha or its interval is missing, as shown to readers; ``""``
        when both are there.

        A NaN alpha reads ``"alpha undefined: <reason>"`` (from ``agreement_notes``; a report
        written before the reasons were recorded says ``"alpha undefined (reason not
        recorded)"``); a missing interval reads as its note, e.g. ``"no interval: ..."``.
        """
        alpha = self.agreement.get(criterion, math.nan)
        note = str(self.agreement_notes.get(criterion, ""))
        if math.isnan(alpha):
            return f"alpha undefined: {note}" if note else "alpha undefined (reason not recorded)"
        return note

    def to_dict(self) -> dict[str, Any]:
        """The full report as a mapping of plain values (undefined numbers stay NaN;
        :meth:`dumps` writes them as JSON ``null``)."""
        return {
            "schema": self.SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "metrics": {k: float(v) for k, v in self.metrics.items()},
            "judges": jsonable(self.judges),
            "agreement": {k: float(v) for k, v in self.agreement.items()},
            "agreement_intervals": {
                k: [float(lo), float(hi)] for k, (lo, hi) in self.agreement_intervals.items()
            },
            "agreement_notes": {str(k): str(v) for k, v in self.agreement_notes.items()},
            "agreement_judges": {str(k): list(v) for k, v in self.agreement_judges.items()},
            "usage": {k: dict(v) for k, v in self.usage.items()},
            "errors": dict(self.errors),
            # Only when a judge failed: a report without errors reads as it always did.
            **({"error_causes": self._causes()} if self.error_causes else {}),
            # Only with labels: a report without them reads as it always did.
            **(
                {"label_corrections": {k: c.to_dict() for k, c in self.label_corrections.items()}}
                if self.label_corrections
                else {}
            ),
            "settings": jsonable(self.settings),
            "metadata": jsonable(self.metadata),
            "items": [item.to_dict() for item in self.items],
        }

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> AnswerEvaluation:
        shape = convert(data, _AnswerShape, cls.__name__)
        return cls(
            metrics={k: _nan_or(v) for k, v in (shape.metrics or {}).items()},
            items=_items(data, AnswerItem, cls.__name__),
            judges=shape.judges or {},
            agreement={k: _nan_or(v) for k, v in (shape.agreement or {}).items()},
            usage=shape.usage or {},
            errors=shape.errors or {},
            settings=shape.settings or {},
            metadata=shape.metadata or {},
            agreement_intervals={
                k: (_nan_or(lo), _nan_or(hi))
                for k, (lo, hi) in (shape.agreement_intervals or {}).items()
            },
            agreement_notes=shape.agreement_notes or {},
            agreement_judges={k: tuple(v) for k, v in (shape.agreement_judges or {}).items()},
            error_causes=shape.error_causes or {},
            label_corrections={
                metric: LabelCorrection.from_dict(metric, msgspec.structs.asdict(c))
                for metric, c in (shape.label_corrections or {}).items()
            },
        )

    def _causes(self) -> dict[str, dict[str, int]]:
        return {
            str(judge): {str(cause): int(n) for cause, n in counted.items()}
            for judge, counted in self.error_causes.items()
        }

    def to_rows(self) -> list[dict[str, Any]]:
        """One flat row per item: identifier, answer, each metric, latency, error."""
        return [
            {
                "identifier": item.identifier,
                "answer": item.answer,
                **{name: item.scores.get(name) for name in self.metrics},
                "latency": item.latency,
                "error": item.error,
            }
            for item in self.items
        ]


@dataclass(frozen=True, eq=False, repr=False)
class RetrievalEvaluation(_ReportMixin):
    """The result of :func:`evaluate_retrieval`: ranked-retrieval metrics per item.

    Attributes
    ----------
    metrics : Mapping[str, float]
        ``recall@k``, ``precision@k``, ``hit@k``, ``complete@k``, ``ndcg@k``, ``mrr``
        -> mean over the items where defined (items with relevant ids).
    items : tuple of RetrievalItem
        Per-item results, in dataset order.
    errors : Mapping[str, int]
        ``"system"``: items whose retrieval failed (``error`` set).
    settings : Mapping[str, Any]
        The options (``ks``).
    metadata : Mapping[str, Any]
        Free-form, JSON-compatible description from the caller.
    """

    SCHEMA: ClassVar[str] = "kagreport.RetrievalEvaluation"

    metrics: Mapping[str, float]
    items: tuple[RetrievalItem, ...]
    errors: Mapping[str, int]
    settings: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))

    @property
    def judges(self) -> Mapping[str, Any]:
        """Retrieval metrics need no judge: always empty."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The full report as a mapping of plain values (undefined numbers stay NaN;
        :meth:`dumps` writes them as JSON ``null``)."""
        return {
            "schema": self.SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "metrics": {k: float(v) for k, v in self.metrics.items()},
            "errors": dict(self.errors),
            "settings": jsonable(self.settings),
            "metadata": jsonable(self.metadata),
            "items": [item.to_dict() for item in self.items],
        }

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> RetrievalEvaluation:
        shape = convert(data, _RetrievalShape, cls.__name__)
        return cls(
            metrics={k: _nan_or(v) for k, v in (shape.metrics or {}).items()},
            items=_items(data, RetrievalItem, cls.__name__),
            errors=shape.errors or {},
            settings=shape.settings or {},
            metadata=shape.metadata or {},
        )

    def to_rows(self) -> list[dict[str, Any]]:
        """One flat row per item: identifier, retrieved, relevant, each metric, latency, error."""
        return [
            {
                "identifier": item.identifier,
                "retrieved": list(item.retrieved),
                "relevant": list(item.relevant),
                **{name: item.scores.get(name) for name in self.metrics},
                "latency": item.latency,
                "error": item.error,
            }
            for item in self.items
        ]
