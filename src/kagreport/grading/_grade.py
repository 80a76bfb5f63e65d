"""``kag stats``: grade a result tree against its datasets file.

Source: kag ``src/subcommand/stats/mod.rs`` and ``KAG_STATS_SPEC.md``.
"""

from __future__ import annotations

import logging
import operator
import os
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kagreport._errors import ResultTreeError
from kagreport.grading._engine import ChunkRunner, GradedChunk, PendingChunk
from kagreport.grading._items import ItemTable, ItemTableBuilder, Outcome
from kagreport.grading._metrics import Metrics, RetrievalMetrics
from kagreport.grading._rule import grade_response
from kagreport.kag import (
    Datasets,
    QuestionDir,
    is_simulated,
    iter_question_dirs,
    iter_result_files,
    load_datasets,
)
from kagreport.kag._jsonfmt import dumps_pretty

__all__ = ["SetupReport", "StatsReport", "grade", "grade_response"]

logger = logging.getLogger("kagreport.grading")


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
        The tree was written by ``kagreport simulate`` (:func:`kagreport.kag.is_simulated`):
        its numbers are synthetic, and every chart of it says SIMULATED.
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

    def __getitem__(self, setup: str) -> SetupReport:
        for report in self.setups:
            if report.setup == setup:
                return report
        known = ", ".join(s.setup for s in self.setups) or "none"
        raise KeyError(f"no setup {setup!r} in this report (setups: {known})")

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
        from kagreport.grading._render import render_html

        return render_html(self)

    def to_text(self) -> str:
        """``kag stats`` table, with the dataset's own CTX_LEN on sub-rows (spec decision)."""
        from kagreport.grading._render import render_text

        return render_text(self)


ProgressCallback = Callable[[int], None]

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


def _check_keep_text(keep_text: bool | int) -> bool | int:
    """``keep_text`` as grade() uses it (a bool, or an int >= 1); ValueError otherwise."""
    if not isinstance(keep_text, bool):
        try:
            limit = operator.index(keep_text)  # int, NumPy integers
        except TypeError:
            limit = 0
        if limit < 1:
            raise ValueError(f"`keep_text` must be a bool or a positive int, not {keep_text!r}")
        keep_text = limit
    return keep_text


def _ranked_setups(
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


# Long (over 80 lines): merge() runs once per graded chunk, in order, and shares the item
# table and the group sums with the walk that submits the chunks.
def grade(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    keep_text: bool | int = False,
) -> StatsReport:
    """Grade a kag result tree as ``kag stats`` does.

    Parameters
    ----------
    datasets : Datasets or path
        The ground truth, or the path of the datasets file.
    results : path, default "."
        The results root: ``<results>/<dataset>/<question>/<prefix><setup>.json``.
    prefix : str, default ""
        The file-name prefix of the run to grade (``kag benchmark --prefix``).
    progress : callable, optional
        Called with the number of result files read so far, about every 1,000 files
        and once at the end.
    workers : int, optional
        Processes that read and decode result files. Default: the CPU count
        (at most 8); large trees only, and only where ``fork`` is safe (Linux,
        a single-threaded caller). ``1`` grades in this process. The report is
        the same whatever the value.
    keep_text : bool or int, default False
        Also keep each graded file's response and error message in
        ``report.items.texts`` (:class:`ItemTexts`), read in the same pass:
        True keeps them whole, a positive int keeps that many characters of each
        (the full response length is kept either way).

    Returns
    -------
    StatsReport

    Raises
    ------
    DatasetsError
        If the datasets file cannot be read or is invalid.
    ResultTreeError
        If the results root is missing, or a folder or file cannot be read.
    KagreportError
        If a worker process died (killed by a signal: the out-of-memory killer, say);
        the message names the signal.
    ValueError
        If ``workers`` or ``keep_text`` is out of range.

    Notes
    -----
    Result files that do not parse are logged as warnings, skipped and
    listed in :attr:`StatsReport.unparsable_files`; kag counts them nowhere.
    """
    keep_text = _check_keep_text(keep_text)
    truth = datasets if isinstance(datasets, Datasets) else load_datasets(datasets)
    root = os.fspath(results)
    logger.debug("ground truth: %d questions, %d scorable", len(truth), truth.scorable_questions)
    trace = logger.isEnabledFor(5)
    items = ItemTableBuilder(keep_text)
    group_ids: dict[tuple[int, int], int] = {}
    group_sums: list[list[int]] = []
    seen_datasets = 0
    skipped = 0
    unparsable: list[str] = []
    reasons: list[str] = []
    done = 0

    def merge(chunk: PendingChunk, graded: GradedChunk) -> None:
        nonlocal done
        for path, message, reason in graded.unparsable:
            logger.warning("failed to parse result file %s: %s", path, message)
            unparsable.append(path)
            reasons.append(reason)
        if graded.io_error is not None:
            path, message = graded.io_error
            raise ResultTreeError(message, path=path)
        setup_codes = [items.setups.code(name) for name in graded.setups]
        question_index, setup_index = graded.rows
        codes = (
            array("I", [setup_codes[s] for s in setup_index]),
            array("I", [chunk.datasets[q] for q in question_index]),
            array("I", [chunk.questions[q] for q in question_index]),
        )
        items.extend(codes, graded.columns, graded.texts)
        for (setup, dataset), sums in graded.sums.items():
            key = (setup_codes[setup], dataset)
            group = group_ids.get(key)
            if group is None:
                group = group_ids[key] = len(group_sums)
                group_sums.append(sums)
                continue
            into = group_sums[group]
            for k, value in enumerate(sums):
                into[k] += value
        if trace:
            names = items.setups.names, items.datasets.names, items.questions.names
            for s, d, q, o in zip(*codes, graded.columns[0], strict=True):
                logger.log(
                    5, "[%s/%s] setup %r graded as %s", names[1][d], names[2][q], names[0][s],
                    Outcome(o).label,
                )  # fmt: skip
        done += len(question_index) + len(graded.unparsable)
        if progress is not None:
            progress(done)

    # With -vvvv, per-file traces come from the walk too: keep them in one process, in order.
    runner = ChunkRunner(1 if trace else workers, prefix, merge, keep_text)
    try:
        chunk = PendingChunk()
        for entry in iter_question_dirs(root):
            if not isinstance(entry, QuestionDir):
                seen_datasets += 1
                continue
            question = truth.get(entry.dataset, entry.question)
            if question is None or question.output is None:
                continue  # unknown or free-form: nothing counted
            answer = question.output.answer
            if answer is None:
                skipped += sum(1 for _ in iter_result_files(entry.path, prefix))
                continue
            chunk.add(
                entry.path,
                answer,
                items.datasets.code(entry.dataset),
                items.questions.code(entry.question),
            )
            if chunk.full:
                runner.submit(chunk)
                chunk = PendingChunk()
        if chunk.paths:
            runner.submit(chunk)
        runner.finish()
    finally:
        runner.close()
    if progress is not None:
        progress(done)

    reports = _ranked_setups(group_ids, group_sums, items.setups.names, items.datasets.names)
    if unparsable:
        logger.info("%d result file(s) did not parse", len(unparsable))
    return StatsReport(
        datasets=seen_datasets,
        scorable_questions=truth.scorable_questions,
        skipped_files=skipped,
        setups=tuple(reports),
        items=items.build(results=root, prefix=prefix),
        unparsable_files=tuple(unparsable),
        results=root,
        prefix=prefix,
        ground_truth=truth,
        unparsable_reasons=tuple(reasons),
        simulated=is_simulated(root),
    )
