"""What ``kag stats`` computes: :class:`StatsReport` (its setups, ranked, each a
``SetupReport`` of :class:`Metrics`), from per-group sums (:func:`setup_reports`).

Source: kag ``src/subcommand/stats/mod.rs`` and ``KAG_STATS_SPEC.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kagreport._errors import MissingKeyError
from kagreport.grading._items import ItemTable
from kagreport.grading._metrics import Metrics, RetrievalMetrics
from kagreport.grading._render import render_html, render_text
from kagreport.kag import Datasets
from kagreport.kag._jsonfmt import dumps_pretty

__all__ = ["SetupReport", "StatsReport", "ranked_setups", "setup_reports"]


@dataclass(frozen=True, slots=True)
class SetupReport:
    """One setup's metrics, overall and per dataset (sorted by dataset name)."""

    setup: str
    overall: Metrics
    per_dataset: dict[str, Metrics]

    def to_dict(self) -> dict[str, Any]:
        """The kag JSON object: ``setup``, ``overall``, ``per_dataset``."""
        return {
            "setup": self.setup,
            "overall": self.overall.to_dict(),
            "per_dataset": {name: m.to_dict() for name, m in self.per_dataset.items()},
        }


@dataclass(frozen=True)
class StatsReport:
    """What ``kag stats`` computes, plus the per-item table kag throws away.

    Attributes
    ----------
    datasets : int
        Valid dataset folders in the result tree (known to the datasets file or not).
    scorable_questions : int
        MCQ entries with an answer in the datasets file.
    skipped_files : int
        Result files of MCQ questions without an answer.
    setups : tuple of SetupReport
        Ranked by accuracy descending (``None`` last), then setup name.
    items : ItemTable
        One row per graded result file.
    unparsable_files : tuple of str
        Result files that did not parse (kag warns and counts them nowhere).
    unparsable_reasons : tuple of str
        Why each of ``unparsable_files`` did not parse (the parser's message, with the
        line and column of a byte offset it names), in the same order; for the views,
        never part of the kag JSON or table.
    simulated : bool
        The tree was written by ``kagreport simulate`` (the ``SIMULATED.md`` notice at its root):
        its numbers are synthetic, and every chart of it says SIMULATED.
    files_read : int
        Result files read and decoded by this grade; with a grade store, the files
        that were new or changed (the others' rows came from the store).
    results : str or None
        The results root that was graded.
    prefix : str
        The file-name prefix that was graded.
    ground_truth : Datasets or None
        The datasets file it was graded against.
    """

    datasets: int
    scorable_questions: int
    skipped_files: int
    setups: tuple[SetupReport, ...]
    items: ItemTable = field(repr=False, compare=False)
    unparsable_files: tuple[str, ...] = ()
    results: str | None = None
    prefix: str = ""
    ground_truth: Datasets | None = field(default=None, repr=False, compare=False)
    unparsable_reasons: tuple[str, ...] = field(default=(), repr=False, compare=False)
    simulated: bool = field(default=False, repr=False, compare=False)
    files_read: int = field(default=0, repr=False, compare=False)

    def __getitem__(self, setup: str) -> SetupReport:
        for report in self.setups:
            if report.setup == setup:
                return report
        known = ", ".join(s.setup for s in self.setups) or "none"
        raise MissingKeyError(f"no setup {setup!r} in this report (setups: {known})")

    @property
    def setup_names(self) -> tuple[str, ...]:
        """Setup names in rank order."""
        return tuple(s.setup for s in self.setups)

    def to_dict(self) -> dict[str, Any]:
        """The kag JSON document as a dict, keys in kag's order."""
        return {
            "datasets": self.datasets,
            "scorable_questions": self.scorable_questions,
            "skipped_files": self.skipped_files,
            "setups": [s.to_dict() for s in self.setups],
        }

    def to_json(self) -> str:
        """``kag stats --format json`` output, byte for byte (with its trailing newline)."""
        return dumps_pretty(self.to_dict()) + "\n"

    def _repr_html_(self) -> str:
        return render_html(self)

    def to_text(self) -> str:
        """``kag stats`` table, with the dataset's own CTX_LEN on sub-rows (spec decision)."""
        return render_text(self)


# Sums kept per (setup, dataset) group, in this order (see GradedChunk.sums).
_CORRECT, _INCORRECT, _ERRORS, _GEN_NS, _GEN_N, _CTX, _RET_NS, _V, _R, _P, _RET_N = range(11)


def _freeze(sums: list[int]) -> Metrics:
    retrieval = None
    if sums[_RET_N]:
        retrieval = RetrievalMetrics(sums[_RET_NS], sums[_V], sums[_R], sums[_P], sums[_RET_N])
    return Metrics(
        sums[_CORRECT],
        sums[_INCORRECT],
        sums[_ERRORS],
        sums[_GEN_NS],
        sums[_GEN_N],
        sums[_CTX],
        retrieval,
    )


def ranked_setups(
    group_ids: Mapping[tuple[int, int], int],
    group_sums: Sequence[list[int]],
    setup_names: Sequence[str],
    dataset_names: Sequence[str],
) -> list[SetupReport]:
    """One report per setup with a graded file, ranked as kag ranks them."""
    by_setup: dict[str, dict[str, list[int]]] = {}
    for (setup_code, dataset_code), group in group_ids.items():
        sums = group_sums[group]
        if sums[_CORRECT] + sums[_INCORRECT] + sums[_ERRORS]:
            by_setup.setdefault(setup_names[setup_code], {})[dataset_names[dataset_code]] = sums
    return setup_reports(by_setup)


def setup_reports(by_setup: Mapping[str, Mapping[str, Sequence[int]]]) -> list[SetupReport]:
    """Setup reports from per-dataset sums, ranked as kag ranks them.

    ``by_setup[setup][dataset]`` holds the 11 sums in :class:`Metrics` order (correct,
    incorrect, errors, generation ns, generation samples, context bytes, retrieval ns,
    vertices, relationships, properties, retrieval samples); the overall row is their
    column sums. Ranking (kag's stats subcommand): by name, then stably by accuracy
    descending, None last.
    """
    reports = []
    for setup, per_dataset in by_setup.items():
        overall = [sum(column) for column in zip(*per_dataset.values(), strict=True)]
        reports.append(
            SetupReport(
                setup,
                _freeze(overall),
                {name: _freeze(list(per_dataset[name])) for name in sorted(per_dataset)},
            )
        )
    reports.sort(key=lambda r: r.setup)
    # Stable sort: accuracy descending, None last, ties keep name order.
    reports.sort(key=lambda r: -(r.overall.accuracy if r.overall.accuracy is not None else -1.0))
    return reports
