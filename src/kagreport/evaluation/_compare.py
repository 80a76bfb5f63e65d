"""Paired comparison of two evaluations: sign-flip test, bootstrap interval, Holm.

:func:`compare_items` pairs the items of two evaluations by identifier and, per
metric both report, tests whether the mean paired difference is zero with an
exact or Monte Carlo sign-flip (randomisation) test, gives a percentile
bootstrap interval of that mean, and adjusts the p-values across metrics with
Holm's step-down procedure. The result is an :class:`EvaluationComparison`,
serialisable like the evaluations themselves (ANSWER_EVALUATION_SPEC.md,
"compare" and "EvaluationComparison").

The building blocks are public too (in :mod:`kagreport.evaluation._signflip`, re-exported
here and from :mod:`kagreport.evaluation`): :func:`sign_flip_test`,
:func:`bootstrap_mean_interval`, :func:`holm_adjust` and :func:`paired_differences`.
Holm's family is the metrics under test (``metrics=``, default :func:`primary_metrics`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from kagreport._atomic import write_atomic
from kagreport._errors import DifferentItemsError
from kagreport.evaluation._serialize import (
    canonical,
    dumps_document,
    format_for,
    jsonable,
    loads_document,
    write_document,
)
from kagreport.evaluation._signflip import (
    DUST,
    METHODS,
    TOLERANCE,
    SignFlipResult,
    _check_confidence,
    _check_n_resamples,
    _check_seed,
    bootstrap_mean_interval,
    exact_mean,
    holm_adjust,
    paired_differences,
    sign_flip_test,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "DifferentItemsError",
    "EvaluationComparison",
    "MetricComparison",
    "SignFlipResult",
    "bootstrap_mean_interval",
    "compare_items",
    "compare_scores",
    "holm_adjust",
    "paired_differences",
    "primary_metrics",
    "sign_flip_test",
]

SCHEMA = "kagreport.EvaluationComparison"
SCHEMA_VERSION = 2
#: Versions :meth:`EvaluationComparison.from_dict` reads (1: before ``method`` and ``family``).
READABLE_VERSIONS = (1, 2)
KINDS = ("answers", "retrieval")

# --------------------------------------------------------------------------------------
# Result objects
# --------------------------------------------------------------------------------------


def _boolean(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"`{name}` must be true or false, not {value!r}")
    return value


def _float_or_nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _canonical_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _method_of(exact: bool) -> str:
    # Version-1 documents: exact meant enumerated, the only exact method then.
    return "exact-enumeration" if exact else "monte-carlo"


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
        Percentile bootstrap interval of ``mean_difference`` at the comparison's confidence.
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
        How the p-value was computed (:func:`sign_flip_test`): ``"exact-enumeration"``,
        ``"exact-lattice"``, ``"monte-carlo"``, or ``"none"`` when ``n_pairs`` is 0.
        Left empty, it is derived from ``exact`` as version-1 documents imply.

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
        ValueError
            If ``metric`` or a count is missing or not of its type.
        """
        for key in ("n_pairs", "n_resamples", "n_nonzero"):
            value = data.get(key)
            if key in data and (
                not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63
            ):
                raise ValueError(
                    f"not a metric comparison row: `{key}` must be a count (an integer >= 0), "
                    f"not {value!r}"
                )
        try:
            return cls(
                metric=str(data["metric"]),
                n_pairs=int(data["n_pairs"]),
                candidate_mean=_float_or_nan(data.get("candidate_mean")),
                baseline_mean=_float_or_nan(data.get("baseline_mean")),
                mean_difference=_float_or_nan(data.get("mean_difference")),
                ci_low=_float_or_nan(data.get("ci_low")),
                ci_high=_float_or_nan(data.get("ci_high")),
                p_value=_float_or_nan(data.get("p_value")),
                p_value_holm=_float_or_nan(data.get("p_value_holm")),
                exact=_boolean(data["exact"], "exact"),
                n_resamples=int(data["n_resamples"]),
                n_nonzero=int(data["n_nonzero"]),
                method=str(data.get("method") or ""),
            )
        except KeyError as exc:
            raise ValueError(f"not a metric comparison row: it lacks {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a metric comparison row: {exc}") from None

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
class EvaluationComparison:
    """A paired comparison of a candidate evaluation against a baseline.

    Built by :func:`compare_items` (``AnswerEvaluation.compare``). Equality is
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
        p-values only. Default (None): the metrics with a ``p_value_holm``.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the two kinds, a key of ``metrics`` differs
        from its comparison's ``metric``, or ``family`` names a metric not in ``metrics``.

    Notes
    -----
    Serialised documents carry ``"schema": "kagreport.EvaluationComparison"`` and
    ``"schema_version": 2`` (version 1, without ``family`` and the rows' ``method``,
    still reads: the family is then every metric with a Holm p-value, the method
    follows from ``exact``); ``metrics`` is written as a list of flat rows. JSON
    writes NaN as ``null``; TOML cannot hold null, so keys whose value is None
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

    def _repr_html_(self) -> str:
        from kagreport.evaluation._text import render_comparison_html

        return render_comparison_html(self)

    def to_rows(self) -> list[dict[str, Any]]:
        """One flat row per metric: ``candidate``, ``baseline``, then the metric's fields,
        then ``in_family`` (the metric is among those under test, Holm-adjusted together)
        and ``family`` (their names, comma-separated), so a table states its family."""
        family = tuple(self.family or ())
        names = ", ".join(family)
        return [
            {
                "candidate": self.candidate,
                "baseline": self.baseline,
                **c.to_dict(),
                "in_family": c.metric in family,
                "family": names,
            }
            for c in self.metrics.values()
        ]

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
    def from_dict(cls, data: Mapping[str, Any]) -> EvaluationComparison:
        """Rebuild from :meth:`to_dict` output (or a parsed file).

        Raises
        ------
        ValueError
            If the schema or its version is not this one, or a field is missing
            or malformed.
        """
        schema = data.get("schema")
        if schema != SCHEMA:
            raise ValueError(f"not a {SCHEMA} document (schema {schema!r})")
        version = data.get("schema_version")
        if isinstance(version, bool) or version not in READABLE_VERSIONS:
            raise ValueError(
                f"{SCHEMA} schema version {version!r} is not supported "
                f"(this kagreport reads versions {', '.join(map(str, READABLE_VERSIONS))})"
            )
        try:
            rows = data["metrics"]
            if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
                raise TypeError("`metrics` must be a list of rows (mappings)")
            metrics = [MetricComparison.from_dict(row) for row in rows]
            if len({c.metric for c in metrics}) != len(metrics):
                raise TypeError("`metrics` names a metric twice")
            n_items = data["n_items"]
            if not isinstance(n_items, int) or isinstance(n_items, bool) or n_items < 0:
                raise TypeError(f"`n_items` must be a count (an integer >= 0), not {n_items!r}")
            for key in ("judge_mismatch", "settings", "metadata"):
                if not isinstance(data.get(key) or {}, Mapping):
                    raise TypeError(f"`{key}` must be a mapping")
            mismatch = data.get("judge_mismatch") or {}
            if not all(isinstance(v, Mapping) for v in mismatch.values()):
                raise TypeError("`judge_mismatch` must map judge names to mappings")
            family = data.get("family")
            if version == 1:
                family = None  # every metric with a Holm p-value, as version 1 adjusted
            elif not isinstance(family, list) or not all(isinstance(f, str) for f in family):
                raise TypeError("`family` must be a list of metric names")
            return cls(
                kind=str(data["kind"]),
                candidate=str(data["candidate"]),
                baseline=str(data["baseline"]),
                metrics={c.metric: c for c in metrics},
                n_items=n_items,
                judge_mismatch={str(k): dict(v) for k, v in mismatch.items()},
                settings=dict(data.get("settings") or {}),
                metadata=dict(data.get("metadata") or {}),
                family=None if family is None else tuple(family),
            )
        except KeyError as exc:
            raise ValueError(f"malformed {SCHEMA} document: it lacks {exc}") from None
        except TypeError as exc:
            raise ValueError(f"malformed {SCHEMA} document: {exc}") from None

    def dumps(self, format: str = "json") -> str:
        """Serialise to ``"json"``, ``"jsonl"`` (a header line, then one line per
        metric), ``"yaml"`` or ``"toml"``.

        Raises
        ------
        ValueError
            For an unknown format.
        """
        return dumps_document(self.to_dict(), format_for("", format), items_key="metrics")

    def write(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Write atomically; the format defaults to the path's suffix.

        Raises
        ------
        ValueError
            For an unknown format or suffix.
        OSError
            If the file cannot be written (an existing file is left intact).
        """
        fmt = format_for(path, format)
        if fmt == "jsonl":
            # write_document has no items_key: metric rows would not get lines of their own.
            write_atomic(path, self.dumps("jsonl"))
        else:
            write_document(self.to_dict(), path, fmt)

    @classmethod
    def read(cls, path: str | os.PathLike[str], format: str | None = None) -> EvaluationComparison:
        """Read a comparison written by :meth:`write` (JSON, JSONL, YAML or TOML).

        Raises
        ------
        ValueError
            If the file does not parse, or is not a comparison of this schema version.
        OSError
            If the file cannot be read.
        """
        fmt = format_for(path, format)
        with open(path, encoding="utf-8-sig") as file:
            text = file.read()
        return cls.from_dict(loads_document(text, fmt, items_key="metrics"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvaluationComparison):
            return NotImplemented
        return bool(canonical(self.to_dict()) == canonical(other.to_dict()))

    __hash__ = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------
# compare_items
# --------------------------------------------------------------------------------------


class _ScoredItem(Protocol):
    @property
    def identifier(self) -> str: ...

    @property
    def scores(self) -> Mapping[str, float]: ...


class _Evaluation(Protocol):
    @property
    def items(self) -> Sequence[_ScoredItem]: ...

    @property
    def judges(self) -> Mapping[str, Any]: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...


def _label(evaluation: _Evaluation, given: str | None, default: str) -> str:
    if given is not None:
        return given
    name = evaluation.metadata.get("name")
    return name if isinstance(name, str) and name else default


def _identifier_index(items: Sequence[_ScoredItem], which: str) -> dict[str, int]:
    index: dict[str, int] = {}
    for position, item in enumerate(items):
        if item.identifier in index:
            raise ValueError(f"the {which} holds item {item.identifier!r} twice")
        index[item.identifier] = position
    return index


def _few(identifiers: set[str]) -> str:
    shown = sorted(identifiers)[:5]
    more = f" and {len(identifiers) - 5} more" if len(identifiers) > 5 else ""
    return ", ".join(repr(i) for i in shown) + more


def _metric_names(items: Sequence[_ScoredItem]) -> set[str]:
    names: set[str] = set()
    for item in items:
        names.update(item.scores)
    return names


def _column(items: Sequence[_ScoredItem], metric: str) -> np.ndarray[Any, Any]:
    return np.fromiter(
        (item.scores.get(metric, math.nan) for item in items), dtype=np.float64, count=len(items)
    )


def _check_settings(kind: str, n_resamples: int, seed: int, confidence: float) -> tuple[int, int]:
    """Validate the comparison settings; return ``(n_resamples, seed)`` checked."""
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {', '.join(KINDS)}, not {kind!r}")
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    _check_confidence(confidence)
    return n_resamples, seed


#: The default family of a retrieval comparison (see :func:`compare_scores`).
RETRIEVAL_PRIMARY = "mrr"


def _family(kind: str, shared: Sequence[str], metrics: Sequence[str] | None) -> list[str]:
    """The metrics under test: ``metrics`` checked against ``shared``, or the default."""
    if metrics is None:
        if kind == "retrieval" and RETRIEVAL_PRIMARY in shared:
            return [RETRIEVAL_PRIMARY]
        return list(shared)
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise ValueError(f"`metrics` must be a list of metric names, not {metrics!r}")
    named = sorted(set(metrics))
    if not named:
        raise ValueError(
            f"`metrics` names no metric; the metrics both hold are: {', '.join(shared)}"
        )
    unknown = [m for m in named if m not in shared]
    if unknown:
        raise ValueError(
            f"`metrics` names {', '.join(map(repr, unknown))}, which the two do not both "
            f"hold; the metrics both hold are: {', '.join(shared)}"
        )
    return named


def _judge_of(metric: str, judges: Sequence[str]) -> str | None:
    # Metric names are <judge> or <judge>.<criterion> (ANSWER_EVALUATION_SPEC.md).
    for name in sorted(judges, key=len, reverse=True):
        if metric == name or metric.startswith(name + "."):
            return name
    return None


def primary_metrics(
    candidate: _Evaluation, baseline: _Evaluation, shared: Sequence[str], kind: str
) -> list[str]:
    """The default family of :func:`compare_items`: the metrics it tests unless told.

    Answers: every shared metric except those of a *duplicate* judge, one that has the
    same identity as a judge of smaller name in both evaluations (the same judge
    configured twice scores every item alike: its metric is the same hypothesis
    again, and counting it would double the Holm-adjusted p-values for nothing).
    Retrieval: ``mrr`` alone when shared (the one metric every retrieval evaluation
    reports whatever its cut-offs; recall@k, precision@k, hit@k, complete@k and
    ndcg@k at several k are many views of one ranking, and adjusting over all of
    them, 21 by default, would make the headline test needlessly weak), else every
    shared metric. Name the metrics under test with ``metrics=`` to test others.
    """
    if kind == "retrieval":
        return _family(kind, shared, None)
    judges = sorted(set(candidate.judges) & set(baseline.judges))
    first: dict[tuple[Any, Any], str] = {}
    duplicate: set[str] = set()
    for name in judges:
        key = (
            json.dumps(canonical(candidate.judges[name]), sort_keys=True, default=str),
            json.dumps(canonical(baseline.judges[name]), sort_keys=True, default=str),
        )
        if key in first:
            duplicate.add(name)
        else:
            first[key] = name
    kept = [m for m in shared if _judge_of(m, judges) not in duplicate]
    return kept or list(shared)


def compare_items(
    candidate: _Evaluation,
    baseline: _Evaluation,
    *,
    kind: str,
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
    candidate_label: str | None = None,
    baseline_label: str | None = None,
    shared_only: bool = False,
    metrics: Sequence[str] | None = None,
) -> EvaluationComparison:
    """Paired comparison of two evaluations of the same items, metric by metric.

    Parameters
    ----------
    candidate, baseline : evaluation
        Objects with ``items`` (a sequence of items with ``identifier`` and
        ``scores``, metric -> float, absent where undefined), ``judges`` (judge
        name -> identity, possibly empty) and ``metadata`` (a mapping), such as
        :class:`AnswerEvaluation` or :class:`RetrievalEvaluation`.
    kind : {"answers", "retrieval"}
        The kind of evaluations compared (recorded in the result).
    n_resamples : int, default 10000
        Budget of the sign-flip test and number of bootstrap resamples.
    seed : int, default 0
        Seed of both the test and the bootstrap (each starts its own generator).
    confidence : float, default 0.95
        Coverage of the bootstrap interval, in (0, 1).
    candidate_label, baseline_label : str, optional
        Labels; default ``metadata["name"]`` when it is a non-empty string, else
        ``"candidate"`` / ``"baseline"``.
    shared_only : bool, default False
        Compare on the items both evaluations hold and leave the others out, instead of
        refusing evaluations whose items differ (e.g. a result file that did not parse for
        one system). The counts left out are recorded in the result's ``metadata``
        (``items_only_in_candidate``, ``items_only_in_baseline``).
    metrics : sequence of str, optional
        The metrics under test: Holm's adjustment runs over these (the result's
        ``family``); the other shared metrics are reported with unadjusted p-values.
        Default: :func:`primary_metrics`.

    Returns
    -------
    EvaluationComparison
        Per shared metric, over the n_pairs items where both define it:
        d_i = candidate_i - baseline_i, both means, mean(d), its bootstrap
        interval, the sign-flip p-value (:func:`sign_flip_test`, with its ``method``)
        and the Holm adjustment across the family (:func:`holm_adjust`). Metrics
        without any pair get NaN means and p-values and are left out of the adjustment.

    Raises
    ------
    ValueError
        If the identifier sets differ (the message names up to five) and not
        ``shared_only``, they share no item, an evaluation holds an identifier twice,
        no metric is shared (a metric is shared when some item of each evaluation has
        it), ``metrics`` names one that is not shared (the message lists those that
        are), ``kind`` is unknown, or a resampling argument is invalid.

    Notes
    -----
    Judges both evaluations name but with different identities are not refused
    (the spec's decision) but recorded in ``judge_mismatch``.
    """
    _check_settings(kind, n_resamples, seed, confidence)
    candidate_items = list(candidate.items)
    baseline_items = list(baseline.items)
    candidate_index = _identifier_index(candidate_items, "candidate")
    baseline_index = _identifier_index(baseline_items, "baseline")
    only_candidate = set(candidate_index) - set(baseline_index)
    only_baseline = set(baseline_index) - set(candidate_index)
    metadata: dict[str, Any] = {}
    if shared_only:
        if len(only_candidate) == len(candidate_items):
            raise ValueError("the two evaluations share no item")
        candidate_items = [i for i in candidate_items if i.identifier in baseline_index]
        metadata = {
            "items_only_in_candidate": len(only_candidate),
            "items_only_in_baseline": len(only_baseline),
        }
    elif only_candidate or only_baseline:
        parts = []
        if only_candidate:
            parts.append(f"only in the candidate: {_few(only_candidate)}")
        if only_baseline:
            parts.append(f"only in the baseline: {_few(only_baseline)}")
        raise DifferentItemsError(
            "the two evaluations hold different items (compare on the shared ones with "
            "shared_only=True); " + "; ".join(parts),
            only_candidate=len(only_candidate),
            only_baseline=len(only_baseline),
        )
    # Baseline items in the candidate's order, so row i of every column is one pair.
    paired_baseline = [baseline_items[baseline_index[item.identifier]] for item in candidate_items]

    shared = sorted(_metric_names(candidate_items) & _metric_names(baseline_items))
    if not shared:
        raise ValueError("the two evaluations share no metric")

    mismatch: dict[str, dict[str, Any]] = {}
    for name in sorted(set(candidate.judges) & set(baseline.judges)):
        mine, theirs = candidate.judges[name], baseline.judges[name]
        if canonical(mine) != canonical(theirs):
            mismatch[name] = {"candidate": jsonable(mine), "baseline": jsonable(theirs)}

    family = (
        primary_metrics(candidate, baseline, shared, kind)
        if metrics is None
        else _family(kind, shared, metrics)
    )
    return compare_scores(
        {metric: _column(candidate_items, metric) for metric in shared},
        {metric: _column(paired_baseline, metric) for metric in shared},
        kind=kind,
        metrics=family,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        candidate_label=_label(candidate, candidate_label, "candidate"),
        baseline_label=_label(baseline, baseline_label, "baseline"),
        judge_mismatch=mismatch,
        metadata=metadata,
    )


def compare_scores(
    candidate: Mapping[str, npt.ArrayLike],
    baseline: Mapping[str, npt.ArrayLike],
    *,
    kind: str = "answers",
    n_resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
    candidate_label: str = "candidate",
    baseline_label: str = "baseline",
    judge_mismatch: Mapping[str, Mapping[str, Any]] | None = None,
    metadata: Mapping[str, Any] | None = None,
    metrics: Sequence[str] | None = None,
) -> EvaluationComparison:
    """Paired comparison of two systems from aligned per-item scores, metric by metric.

    The array form of :func:`compare_items`, for callers that already hold the
    scores in columns (a graded kag run, a DataFrame): no item objects are built.

    Parameters
    ----------
    candidate, baseline : mapping of str to array_like, each of shape (n,)
        Metric name -> per-item scores. Row ``i`` of every array is the same item
        in both systems; NaN where a metric is undefined for an item (infinities are
        refused). The metrics compared are those both mappings hold.
    kind : {"answers", "retrieval"}, default "answers"
        The kind of evaluations compared (recorded in the result).
    n_resamples, seed, confidence
        As :func:`compare_items`.
    candidate_label, baseline_label : str
        Labels recorded in the result.
    judge_mismatch : mapping, optional
        Recorded as :attr:`EvaluationComparison.judge_mismatch`.
    metadata : mapping, optional
        Recorded as :attr:`EvaluationComparison.metadata` (JSON-compatible).
    metrics : sequence of str, optional
        The metrics under test (Holm's family). Default: ``mrr`` alone for retrieval
        when shared (see :func:`primary_metrics`), else every shared metric (the
        arrays carry no judge identities to tell duplicates by).

    Returns
    -------
    EvaluationComparison
        As :func:`compare_items`, with ``n_items = n``. Per metric, d_i = c_i - b_i
        with rounding dust set to 0 (:func:`paired_differences`: within 1e-12 of the
        larger score, a tie); the means are summed exactly (``math.fsum``). The
        sign-flip test and the bootstrap see the differences in sorted order, so the
        result does not depend on the order of the rows.

    Raises
    ------
    ValueError
        If an array is not one-dimensional or not numeric, holds an infinity, the
        arrays differ in length, differences overflow, no metric is shared, ``metrics``
        names one that is not shared, ``kind`` is unknown, or a resampling argument is
        invalid.
    """
    n_resamples, seed = _check_settings(kind, n_resamples, seed, confidence)
    shared = sorted(set(candidate) & set(baseline))
    if not shared:
        raise ValueError("the two systems share no metric")
    columns: dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}
    n_items: int | None = None
    for metric in shared:
        pair = []
        for which, scores in (("candidate", candidate), ("baseline", baseline)):
            try:
                values = np.asarray(scores[metric], dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"the {which}'s scores of {metric!r} are not numbers") from None
            if values.ndim != 1:
                raise ValueError(
                    f"the {which}'s scores of {metric!r} must be one-dimensional, "
                    f"not of shape {values.shape}"
                )
            if np.isinf(values).any():
                raise ValueError(f"the {which}'s scores of {metric!r} hold an infinity")
            if n_items is None:
                n_items = values.size
            elif values.size != n_items:
                raise ValueError(
                    f"the {which}'s scores of {metric!r} hold {values.size} items, not {n_items}"
                )
            pair.append(values)
        columns[metric] = (pair[0], pair[1])

    family = _family(kind, shared, metrics)
    rows: dict[str, dict[str, Any]] = {}
    for metric in shared:
        c, b = columns[metric]
        both = ~(np.isnan(c) | np.isnan(b))
        c, b = c[both], b[both]
        if c.size == 0:
            rows[metric] = {
                "metric": metric, "n_pairs": 0, "candidate_mean": math.nan,
                "baseline_mean": math.nan, "mean_difference": math.nan, "ci_low": math.nan,
                "ci_high": math.nan, "p_value": math.nan, "exact": False, "n_resamples": 0,
                "n_nonzero": 0, "method": "none",
            }  # fmt: skip
            continue
        try:
            d = paired_differences(c, b)
        except ValueError:
            raise ValueError(
                f"the differences of {metric!r} overflow (scores near ±1.8e308)"
            ) from None
        test = sign_flip_test(d, n_resamples=n_resamples, seed=seed)
        low, high = bootstrap_mean_interval(
            d, n_resamples=n_resamples, seed=seed, confidence=confidence
        )
        rows[metric] = {
            "metric": metric, "n_pairs": int(d.size), "candidate_mean": exact_mean(c),
            "baseline_mean": exact_mean(b), "mean_difference": test.statistic, "ci_low": low,
            "ci_high": high, "p_value": test.p_value, "exact": test.exact,
            "n_resamples": test.n_resamples, "n_nonzero": test.n_nonzero, "method": test.method,
        }  # fmt: skip

    # A metric without pairs is no hypothesis tested (Holm would skip its NaN anyway).
    family = [m for m in family if rows[m]["n_pairs"] > 0]
    adjusted = dict(zip(family, holm_adjust([rows[m]["p_value"] for m in family]), strict=True))
    results = {
        metric: MetricComparison(**rows[metric], p_value_holm=adjusted.get(metric, math.nan))
        for metric in shared
    }
    return EvaluationComparison(
        kind=kind,
        candidate=candidate_label,
        baseline=baseline_label,
        metrics=results,
        n_items=n_items or 0,
        judge_mismatch=dict(judge_mismatch or {}),
        settings={
            "n_resamples": n_resamples,
            "seed": seed,
            "confidence": float(confidence),
            "tolerance": TOLERANCE,
            "test": "paired sign-flip, two-sided",
            "interval": "percentile bootstrap",
            "adjustment": "holm",
            "dust": DUST,
        },
        metadata=dict(metadata or {}),
        family=tuple(family),
    )
