"""A judge's mean corrected by human labels (PPI++): :class:`LabelCorrection`, computed
per labelled metric of an evaluation, and the words every view shows it in."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kagreport._errors import InputError
from kagreport._format import (
    difference,
    is_missing,
    is_proportion,
    percent,
    percent_interval,
    plural,
    score,
    score_interval,
)
from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation._labels import Labels

__all__ = [
    "CONFIDENCE",
    "LabelCorrection",
    "correction_cells",
    "correction_sentence",
    "is_proportion_correction",
    "label_corrections",
]

#: Coverage of the three intervals of a correction.
CONFIDENCE = 0.95
#: The column titles of a correction's row (:func:`correction_cells`) in a text table.
HEADER = ["METRIC", "LABELLED", "JUDGE [95% CI]", "HUMAN [95% CI]", "PPI++ [95% CI]", "SHIFT"]
#: The same titles in HTML (a notebook's display, the site's page).
TITLES = [
    "Metric",
    "Labelled items",
    "Judge alone [95%]",
    "Human labels alone [95%]",
    "PPI++ [95%]",
    "Shift (PPI++ \u2212 judge)",
]
#: What the three intervals are, in one line under a table.
METHOD_NOTE = (
    "judge: all scored items; human: the labelled ones; both a t interval on n - 1 df; "
    "PPI++ (Angelopoulos, Duchi and Zrnic 2023): judge scores corrected by the labels, "
    "normal interval; shift = PPI++ - judge"
)

_NAN_PAIR = (math.nan, math.nan)


@dataclass(frozen=True)
class LabelCorrection:
    """One metric's mean from a judge alone, from human labels alone, and from both (PPI++).

    Attributes
    ----------
    metric : str
        The judge metric the labels correct (the labels column of that name).
    judge_mean, judge_ci : float, (float, float)
        Mean of the judge's scores over every item it scored (labelled or not), with a t
        interval (sample SD, ddof 1; n - 1 degrees of freedom;
        :func:`kagreport.stats.clustered_mean` without clusters).
    human_mean, human_ci : float, (float, float)
        Mean of the human labels over the labelled items the judge scored, same interval.
    estimate, ci : float, (float, float)
        The PPI++ estimate of the human mean over every item the judge scored, and its
        normal interval (:func:`kagreport.stats.ppi_mean`, ``tuned=True``).
    lam : float
        PPI++'s weight of the judge's scores, in [0, 1] (0: the labels alone).
    n_labelled : int
        Labelled items the judge scored (the n of PPI).
    n_unlabelled : int
        Items the judge scored without a label (the N of PPI).
    n_left_out : int
        Labels on items the judge did not score (no answer, a failed judgement): unused.
    confidence : float
        Coverage of the three intervals (0.95).
    note : str
        Why the numbers are undefined (NaN), e.g. when failed judgements left fewer than 2
        labelled items; ``""`` when they are defined.

    Notes
    -----
    ``shift = estimate - judge_mean`` is how far the judge's bias moved the mean. It has
    no interval of its own; the views say whether ``judge_mean`` lies inside ``ci``.
    """

    metric: str
    judge_mean: float
    judge_ci: tuple[float, float]
    human_mean: float
    human_ci: tuple[float, float]
    estimate: float
    ci: tuple[float, float]
    lam: float
    n_labelled: int
    n_unlabelled: int
    n_left_out: int = 0
    confidence: float = CONFIDENCE
    note: str = ""

    @property
    def shift(self) -> float:
        """``estimate - judge_mean``: how much the labels moved the judge's mean."""
        return self.estimate - self.judge_mean

    def to_dict(self) -> dict[str, Any]:
        """The correction as plain values (the metric is its key in the report; NaN
        stays NaN: the report's JSON writes null)."""
        return {
            "judge_mean": float(self.judge_mean),
            "judge_ci": [float(x) for x in self.judge_ci],
            "human_mean": float(self.human_mean),
            "human_ci": [float(x) for x in self.human_ci],
            "estimate": float(self.estimate),
            "ci": [float(x) for x in self.ci],
            "shift": float(self.shift),
            "lam": float(self.lam),
            "n_labelled": int(self.n_labelled),
            "n_unlabelled": int(self.n_unlabelled),
            "n_left_out": int(self.n_left_out),
            "confidence": float(self.confidence),
            "method": "PPI++",
            "note": str(self.note),
        }

    @classmethod
    def from_dict(cls, metric: str, data: Mapping[str, Any]) -> LabelCorrection:
        """Rebuild from :meth:`to_dict` output (``shift`` and ``method`` are derived)."""

        def number(key: str) -> float:
            value = data.get(key)
            return math.nan if value is None else float(value)

        def pair(key: str) -> tuple[float, float]:
            low, high = data.get(key) or (None, None)
            return (
                math.nan if low is None else float(low),
                math.nan if high is None else float(high),
            )

        return cls(
            metric=metric,
            judge_mean=number("judge_mean"),
            judge_ci=pair("judge_ci"),
            human_mean=number("human_mean"),
            human_ci=pair("human_ci"),
            estimate=number("estimate"),
            ci=pair("ci"),
            lam=number("lam"),
            n_labelled=int(data.get("n_labelled") or 0),
            n_unlabelled=int(data.get("n_unlabelled") or 0),
            n_left_out=int(data.get("n_left_out") or 0),
            confidence=float(data.get("confidence") or CONFIDENCE),
            note=str(data.get("note") or ""),
        )


def _undefined(metric: str, n: int, big_n: int, left_out: int, why: str) -> LabelCorrection:
    nan = math.nan
    return LabelCorrection(
        metric, nan, _NAN_PAIR, nan, _NAN_PAIR, nan, _NAN_PAIR, nan, n, big_n, left_out, note=why
    )


def _correct(
    metric: str, items: Sequence[AnswerItem], labels: Mapping[str, float]
) -> LabelCorrection:
    """The correction of one metric from the items' judge scores and its labels."""
    from kagreport.stats import clustered_mean, ppi_mean

    human: list[float] = []
    judged: list[float] = []
    unlabelled: list[float] = []
    for item in items:
        value = item.scores.get(metric)
        if value is None or not math.isfinite(value):
            continue
        if item.identifier in labels:
            human.append(labels[item.identifier])
            judged.append(value)
        else:
            unlabelled.append(value)
    n, big_n = len(human), len(unlabelled)
    left_out = len(labels) - n
    if n < 2 or big_n < 1:
        why = (
            f"{plural(n, 'labelled item')} the judge scored; PPI++ needs at least 2"
            if n < 2
            else "the judge scored no item without a label"
        )
        return _undefined(metric, n, big_n, left_out, why)
    judge = clustered_mean(judged + unlabelled, confidence=CONFIDENCE)
    alone = clustered_mean(human, confidence=CONFIDENCE)
    ppi = ppi_mean(human, judged, unlabelled, confidence=CONFIDENCE, tuned=True)
    return LabelCorrection(
        metric=metric,
        judge_mean=judge.mean,
        judge_ci=judge.ci,
        human_mean=alone.mean,
        human_ci=alone.ci,
        estimate=ppi.estimate,
        ci=ppi.ci,
        lam=ppi.lam,
        n_labelled=n,
        n_unlabelled=big_n,
        n_left_out=left_out,
    )


def _check_scale(metric: str, items: Sequence[AnswerItem], labels: Labels) -> None:
    """Labels on the judge's scale: where every judge score of ``metric`` lies in [0, 1]
    (a proportion or a 0-1 score), a label outside it is refused, naming where it was read."""
    scores = [item.scores.get(metric) for item in items]
    defined = [v for v in scores if v is not None and math.isfinite(v)]
    if not defined or not all(0.0 <= v <= 1.0 for v in defined):
        return
    for identifier, value in labels.scores[metric].items():
        if not 0.0 <= value <= 1.0:
            where = labels.places.get(identifier, labels.source)
            raise InputError(
                f"{where}: {metric} {value:g} is outside [0, 1], the scale of the judge's "
                f"{metric} scores"
            )


def label_corrections(items: Sequence[AnswerItem], labels: Labels) -> dict[str, LabelCorrection]:
    """Metric -> its :class:`LabelCorrection`, for each metric the labels cover (in the
    labels' order): PPI++ over the items where the judge's metric is defined.

    Raises
    ------
    InputError
        If a label lies outside [0, 1] where every judge score of its metric lies inside.
    """
    for metric in labels.scores:
        _check_scale(metric, items, labels)
    return {metric: _correct(metric, items, by_item) for metric, by_item in labels.scores.items()}


def correction_cells(correction: LabelCorrection, proportion: bool) -> list[str]:
    """A correction's row under :data:`HEADER`: ``72.3% [68.3%, 76.1%]`` for a proportion
    (the shift in percentage points), ``0.725 [0.690, 0.760]`` for a score."""
    shown = percent_interval if proportion else score_interval
    c = correction
    return [
        c.metric,
        f"{c.n_labelled:,} of {c.n_labelled + c.n_unlabelled:,}",
        shown(c.judge_mean, *c.judge_ci),
        shown(c.human_mean, *c.human_ci),
        shown(c.estimate, *c.ci),
        difference(c.shift, proportion=proportion),
    ]


def correction_sentence(correction: LabelCorrection, proportion: bool) -> str:
    """One sentence: how much the judge's bias moved the metric's mean, e.g. ``the judge's
    bias moved the mean of exact_match by −3.1 pp, from 72.3% (judge alone) to 69.2%
    [65.0%, 73.4%] (PPI++, 95%, 40 labelled of 200 items); the judge alone lies outside
    that interval``; or why there is no correction."""
    c = correction
    if is_missing(c.estimate):
        return f"{c.metric}: no correction by the labels: {c.note or 'undefined'}"
    mean = percent if proportion else score
    shown = percent_interval if proportion else score_interval
    level = f"{100 * c.confidence:g}%"
    low, high = c.ci
    where = "within" if low <= c.judge_mean <= high else "outside"
    left_out = f"; {plural(c.n_left_out, 'label')} on unscored items unused" if c.n_left_out else ""
    return (
        f"the judge's bias moved the mean of {c.metric} by "
        f"{difference(c.shift, proportion=proportion)}, from {mean(c.judge_mean)} (judge "
        f"alone) to {shown(c.estimate, low, high)} (PPI++, {level}, {c.n_labelled:,} "
        f"labelled of {c.n_labelled + c.n_unlabelled:,} items{left_out}); the judge alone "
        f"lies {where} that interval"
    )


def is_proportion_correction(
    correction: LabelCorrection, items: Sequence[AnswerItem] | None = None
) -> bool:
    """Whether a correction shows in percent: the metric is a proportion by its name or
    its 0/1 judge scores (:func:`kagreport._format.is_proportion`)."""
    values = [item.scores.get(correction.metric) for item in items or ()]
    return is_proportion(correction.metric, values)
