"""The result of a paired comparison: :class:`MetricComparison`, :class:`EvaluationComparison`.

What ``AnswerEvaluation.compare`` returns, serialisable like the evaluations themselves
(ANSWER_EVALUATION_SPEC.md, "compare" and "EvaluationComparison"): the document's schema
and versions, its checks on reading, and equality.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import msgspec

from kagreport._document import Document, convert, jsonable
from kagreport._errors import DocumentError
from kagreport.stats._signflip import METHODS

if TYPE_CHECKING:
    from kagreport.evaluation._verdicts import MetricVerdict

__all__ = ["EvaluationComparison", "MetricComparison"]

SCHEMA = "kagreport.EvaluationComparison"
SCHEMA_VERSION = 3
#: Versions ``EvaluationComparison.from_dict`` reads (1: before ``method`` and ``family``;
#: 2: before the rows' ``variance``).
READABLE_VERSIONS = (1, 2, 3)
KINDS = ("answers", "retrieval")

# --------------------------------------------------------------------------------------
# Result objects
# --------------------------------------------------------------------------------------


def _float_or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _canonical_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _method_of(exact: bool) -> str:
    # Version-1 documents: exact meant enumerated, the only exact method then.
    return "exact-enumeration" if exact else "monte-carlo"


# The document's shapes, checked by kagreport._document.convert; null is an undefined number.
_Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class _RowShape(msgspec.Struct):
    metric: str
    n_pairs: _Count
    exact: bool
    n_resamples: _Count
    n_nonzero: _Count
    candidate_mean: float | None = None
    baseline_mean: float | None = None
    mean_difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    p_value_holm: float | None = None
    method: str | None = None  # absent from version 1
    variance: float | None = None  # absent from versions 1 and 2


class _ComparisonShape(msgspec.Struct):
    kind: str
    candidate: str
    baseline: str
    n_items: _Count
    metrics: list[_RowShape]
    judge_mismatch: dict[str, dict[str, Any]] | None = None
    settings: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    family: list[str] | None = None  # absent from version 1


def _row(shape: _RowShape) -> MetricComparison:
    return MetricComparison(
        metric=shape.metric,
        n_pairs=shape.n_pairs,
        candidate_mean=_float_or_nan(shape.candidate_mean),
        baseline_mean=_float_or_nan(shape.baseline_mean),
        mean_difference=_float_or_nan(shape.mean_difference),
        ci_low=_float_or_nan(shape.ci_low),
        ci_high=_float_or_nan(shape.ci_high),
        p_value=_float_or_nan(shape.p_value),
        p_value_holm=_float_or_nan(shape.p_value_holm),
        exact=shape.exact,
        n_resamples=shape.n_resamples,
        n_nonzero=shape.n_nonzero,
        method=shape.method or "",
        variance=_float_or_nan(shape.variance),
    )


@dataclass(frozen=True, eq=False)
class MetricComparison:
    """The paired comparison of one metric.

    Equality is NaN-aware (NaN equals NaN), so a comparison read back from a file
    equals the one written.

    Attributes
    ----------
    metric : str
        Metric name.
    n_pairs : int
        Items where both evaluations define the metric.
    candidate_mean, baseline_mean : float
        Means over those ``n_pairs`` items (NaN when there are none); in the metric's units.
    mean_difference : float
        Mean of candidate - baseline over those items (the test statistic).
    ci_low, ci_high : float
        Percentile bootstrap interval of ``mean_difference`` at the comparison's confidence
        (the spec's field; ``settings["interval"]`` names it). It is not adjusted for the
        family, so the views draw :meth:`EvaluationComparison.verdicts`' interval beside a
        p-value instead. In a comparison of a run (:func:`kagreport.runs.compare_setups`)
        it is that adjusted interval already.
    p_value : float
        Two-sided sign-flip p-value (NaN when ``n_pairs`` is 0).
    p_value_holm : float
        ``p_value`` adjusted by Holm across the comparison's ``family`` (the metrics under
        test); NaN for a metric outside the family (reported, not tested).
    exact : bool
        Whether the p-value is exact (``method`` is not ``"monte-carlo"``).
    n_resamples : int
        Sign assignments evaluated one by one: ``2**n_nonzero`` for
        ``"exact-enumeration"``, those drawn for ``"monte-carlo"``, 0 for
        ``"exact-lattice"`` and when ``n_pairs`` is 0.
    n_nonzero : int
        Pairs with a non-zero difference (the only ones the test flips).
    method : str
        How the p-value was computed (``sign_flip_test``): ``"exact-enumeration"``,
        ``"exact-lattice"``, ``"monte-carlo"``, or ``"none"`` when ``n_pairs`` is 0.
        Left empty, it is derived from ``exact`` as version-1 documents imply.
    variance : float
        Mean squared paired difference, sum(d_i**2) / n_pairs: the variance of the
        differences under the sign-flip null, which the verdict's interval and power
        use (:class:`~kagreport.evaluation.MetricVerdict`). NaN with no pair, and in
        documents written before version 3 (the verdict then derives it).

    Raises
    ------
    ValueError
        If ``method`` is unknown or disagrees with ``exact``.
    """

    metric: str
    n_pairs: int
    candidate_mean: float
    baseline_mean: float
    mean_difference: float
    ci_low: float
    ci_high: float
    p_value: float
    p_value_holm: float
    exact: bool
    n_resamples: int
    n_nonzero: int
    method: str = ""
    variance: float = math.nan

    def __post_init__(self) -> None:
        method = self.method
        if method == "":
            method = "none" if self.n_pairs == 0 else _method_of(self.exact)
            object.__setattr__(self, "method", method)
        if method not in (*METHODS, "none"):
            raise ValueError(
                f"`method` must be one of {', '.join((*METHODS, 'none'))}, not {method!r}"
            )
        if method != "none" and self.exact != (method != "monte-carlo"):
            raise ValueError(f"`exact` is {self.exact} but `method` is {method!r}")

    def to_dict(self) -> dict[str, Any]:
        """A flat mapping of the fields, in declaration order (NaN kept as NaN)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricComparison:
        """Rebuild from :meth:`to_dict` output; a missing or None float reads as NaN.

        Raises
        ------
        DocumentError
            A ValueError: if ``metric``, ``exact`` or a count is missing or not of its
            type (the message names the field), or ``method`` is unknown.
        """
        shape = convert(data, _RowShape, "metric comparison row")
        try:
            return _row(shape)
        except ValueError as exc:
            raise DocumentError(f"not a valid metric comparison row: {exc}") from None

    def _key(self) -> tuple[Any, ...]:
        return tuple(
            _canonical_float(v) if isinstance(v, float) else v
            for v in (getattr(self, f.name) for f in fields(self))
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetricComparison):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True, eq=False)
class EvaluationComparison(Document):
    """A paired comparison of a candidate evaluation against a baseline.

    Built by ``AnswerEvaluation.compare``. Equality is
    NaN-aware, so ``EvaluationComparison.read(path) == x`` after ``x.write(path)``.

    Attributes
    ----------
    kind : str
        ``"answers"`` or ``"retrieval"``: the kind of evaluations compared.
    candidate, baseline : str
        Labels of the two evaluations (the candidate is the one whose differences
        are positive when it scores higher).
    metrics : Mapping[str, MetricComparison]
        Metric name -> its comparison, in sorted metric order.
    n_items : int
        Paired items (both evaluations hold the same identifiers).
    judge_mismatch : Mapping[str, Mapping[str, Any]]
        Judge name -> ``{"candidate": identity, "baseline": identity}`` for judges
        both evaluations used under different identities (then part of a
        difference is the judges'); empty when there is none.
    settings : Mapping[str, Any]
        ``n_resamples``, ``seed``, ``confidence``, ``tolerance`` and the names of the
        test, interval and adjustment used.
    metadata : Mapping[str, Any]
        Free-form JSON-compatible description (default empty).
    family : tuple of str
        The metrics under test, in sorted order: the hypotheses Holm's adjustment runs
        over (``p_value_holm``); the other metrics are reported with their unadjusted
        p-values only. Default (None): the metrics with a ``p_value_holm``. A metric
        equal on every item to one of the family is that hypothesis again: it is not in
        the family, ``settings["same_as"]`` maps it to the family's metric, and it
        carries that metric's p-values.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the two kinds, a key of ``metrics`` differs
        from its comparison's ``metric``, or ``family`` names a metric not in ``metrics``.

    Notes
    -----
    Serialised documents carry ``"schema": "kagreport.EvaluationComparison"`` and
    ``"schema_version": 3`` (version 2, without the rows' ``variance``, still reads, as
    does version 1, without ``family`` and the rows' ``method``: the family is then every
    metric with a Holm p-value, the method follows from ``exact``); ``metrics`` is
    written as a list of flat rows. JSON writes NaN as ``null``; TOML cannot hold null, so
    keys whose value is None
    (in ``metadata`` or a judge identity) are omitted there and read back absent.
    """

    kind: str
    candidate: str
    baseline: str
    metrics: Mapping[str, MetricComparison]
    n_items: int
    judge_mismatch: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    family: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"`kind` must be one of {', '.join(KINDS)}, not {self.kind!r}")
        for name, comparison in self.metrics.items():
            if name != comparison.metric:
                raise ValueError(f"metrics[{name!r}] holds metric {comparison.metric!r}")
        object.__setattr__(self, "metrics", {k: self.metrics[k] for k in sorted(self.metrics)})
        if self.family is None:
            family = [k for k, c in self.metrics.items() if not math.isnan(c.p_value_holm)]
        else:
            family = [str(name) for name in self.family]
            unknown = sorted(set(family) - set(self.metrics))
            if unknown:
                raise ValueError(
                    f"`family` names {', '.join(map(repr, unknown))}, not among the metrics"
                )
        object.__setattr__(self, "family", tuple(sorted(set(family))))

    def significant(self, alpha: float = 0.05) -> tuple[str, ...]:
        """Metrics whose Holm-adjusted p-value is below ``alpha``, in sorted order.

        Raises
        ------
        ValueError
            If ``alpha`` is not in (0, 1].
        """
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha <= 1:
            raise ValueError(f"`alpha` must be in (0, 1], not {alpha!r}")
        # NaN < alpha is False: metrics without pairs are never significant.
        return tuple(name for name, c in self.metrics.items() if c.p_value_holm < alpha)

    def verdicts(
        self, *, margin: float | None = None, alpha: float | None = None
    ) -> dict[str, MetricVerdict]:
        """Metric -> better / worse / equivalent / inconclusive, with the interval every
        view draws beside a p-value: at the family's adjusted level.

        ``ci_low``/``ci_high`` is the spec's 95% bootstrap interval, which is adjusted for
        no family and can exclude 0 beside a Holm p-value above 0.05. A verdict's interval
        (:attr:`MetricVerdict.ci`) is test-based at the level Holm tested the metric at
        (:func:`kagreport.stats.interval_from_test` at Holm's level for the hypothesis,
        the construction :func:`kagreport.runs.compare_setups` uses), so it excludes 0
        exactly when ``p_value_holm < alpha``; :attr:`MetricVerdict.label` names it
        (``"Holm-adjusted 95%"``). A metric outside the family is judged alone on its
        unadjusted p-value (``"unadjusted 95%"``).

        Parameters
        ----------
        margin : float, optional
            The practical margin of ``"equivalent"``, in the metric's units; default
            ``settings["margin"]`` (a run's comparison), else 0.01 (one point).
        alpha : float, optional
            The family-wise error rate; default ``settings["family_alpha"]``, else 0.05.

        Raises
        ------
        ValueError
            If ``alpha`` is not in (0, 1) or ``margin`` is not a finite number >= 0.
        """
        from kagreport.evaluation._verdicts import comparison_verdicts

        return comparison_verdicts(self, margin=margin, alpha=alpha)

    def _repr_html_(self) -> str:
        from kagreport.evaluation._text import render_comparison_html

        return render_comparison_html(self)

    def to_rows(self) -> list[dict[str, Any]]:
        """One flat row per metric: ``candidate``, ``baseline``, then the metric's fields,
        then ``in_family`` (the metric is among those under test, Holm-adjusted together,
        or equal to one of them), ``family`` (their names, comma-separated), so a table
        states its family, and ``same_as`` when some metric is another one again."""
        family = tuple(self.family or ())
        same = self.same_as
        names = ", ".join(family)
        return [
            {
                "candidate": self.candidate,
                "baseline": self.baseline,
                **c.to_dict(),
                "in_family": c.metric in family or c.metric in same,
                "family": names,
                **({"same_as": same.get(c.metric)} if same else {}),
            }
            for c in self.metrics.values()
        ]

    @property
    def same_as(self) -> dict[str, str]:
        """Metric -> the metric of the family it equals on every item (tested once,
        reported with that metric's p-values); empty when no two metrics are equal."""
        same = self.settings.get("same_as") or {}
        return {str(k): str(v) for k, v in same.items()} if isinstance(same, Mapping) else {}

    # The Document base: dumps, write, read, from_dict (through _from_checked) and equality.
    SCHEMA: ClassVar[str] = SCHEMA
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    READABLE_VERSIONS: ClassVar[tuple[int, ...]] = READABLE_VERSIONS
    ITEMS_KEY: ClassVar[str] = "metrics"  # one JSONL line per metric
    NOUN: ClassVar[str] = "document"

    def to_dict(self) -> dict[str, Any]:
        """The comparison as a JSON-compatible mapping (NaN kept), schema-versioned."""
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "n_items": self.n_items,
            "settings": jsonable(self.settings),
            "judge_mismatch": jsonable(self.judge_mismatch),
            "metadata": jsonable(self.metadata),
            "family": list(self.family or ()),
            "metrics": [c.to_dict() for c in self.metrics.values()],
        }

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> EvaluationComparison:
        name = cls.__name__
        shape = convert(data, _ComparisonShape, name)
        if data[cls.VERSION_KEY] == 1:
            shape.family = None  # every metric with a Holm p-value, as version 1 adjusted
        elif shape.family is None:
            raise DocumentError(f"not a valid {name}: family: missing")
        metrics: dict[str, MetricComparison] = {}
        for index, row in enumerate(shape.metrics):
            if row.metric in metrics:
                raise DocumentError(
                    f"not a valid {name}: metrics[{index}]: names a metric twice ({row.metric!r})"
                )
            try:
                metrics[row.metric] = _row(row)
            except ValueError as exc:
                raise DocumentError(f"not a valid {name}: metrics[{index}]: {exc}") from None
        try:
            return cls(
                kind=shape.kind,
                candidate=shape.candidate,
                baseline=shape.baseline,
                metrics=metrics,
                n_items=shape.n_items,
                judge_mismatch=shape.judge_mismatch or {},
                settings=shape.settings or {},
                metadata=shape.metadata or {},
                family=None if shape.family is None else tuple(shape.family),
            )
        except ValueError as exc:
            raise DocumentError(f"not a valid {name}: {exc}") from None
