"""``kag stats``: grade a result tree against its datasets file.

Source: kag ``src/subcommand/stats/mod.rs`` and ``KAG_STATS_SPEC.md``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kagreport._errors import ResultTreeError
from kagreport.grading._items import ItemTable, ItemTableBuilder, Outcome
from kagreport.grading._metrics import Metrics, RetrievalMetrics
from kagreport.kag import (
    Datasets,
    QuestionDir,
    decode_result,
    iter_question_dirs,
    iter_result_files,
    load_datasets,
    read_bytes,
)
from kagreport.kag._jsonfmt import dumps_pretty

__all__ = ["SetupReport", "StatsReport", "grade", "grade_response"]

logger = logging.getLogger("kagreport.grading")

#: Unicode White_Space, the characters Rust's ``str::trim`` removes.
#: (Python's ``str.strip()`` also removes U+001C..U+001F, which kag keeps.)
WHITE_SPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def grade_response(response: str, answer: str) -> bool:
    """Whether a response selects ``answer`` under kag's rule.

    The response is trimmed of Unicode White_Space at both ends (Rust
    ``str::trim``) and compared with the answer key, untrimmed, ignoring
    ASCII case only (Rust ``eq_ignore_ascii_case``): ``" b\\n"`` selects
    ``"B"``; ``"B."``, ``"Answer: B"`` and a full-width ``"Ｂ"`` do not.
    """
    trimmed = response.strip(WHITE_SPACE)
    if len(trimmed) != len(answer):
        return False
    if trimmed == answer:
        return True
    # bytes.lower() folds ASCII letters only, like eq_ignore_ascii_case.
    return (
        trimmed.encode("utf-8", "surrogatepass").lower()
        == answer.encode("utf-8", "surrogatepass").lower()
    )


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
    results : str or None
        The results root that was graded.
    prefix : str
        The file-name prefix that was graded.
    """

    datasets: int
    scorable_questions: int
    skipped_files: int
    setups: tuple[SetupReport, ...]
    items: ItemTable = field(repr=False, compare=False)
    unparsable_files: tuple[str, ...] = ()
    results: str | None = None
    prefix: str = ""

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

    def to_text(self) -> str:
        """``kag stats`` table, with the dataset's own CTX_LEN on sub-rows (spec decision)."""
        from kagreport.grading._render import render_text

        return render_text(self)


class _Totals:
    """Mutable sums of one (setup, dataset) group while walking."""

    __slots__ = (
        "contexts",
        "correct",
        "errors",
        "gen_ns",
        "gen_samples",
        "incorrect",
        "properties",
        "relationships",
        "ret_ns",
        "ret_samples",
        "vertices",
    )

    def __init__(self) -> None:
        self.correct = self.incorrect = self.errors = 0
        self.gen_ns = self.gen_samples = self.contexts = 0
        self.ret_ns = self.vertices = self.relationships = self.properties = self.ret_samples = 0

    def add(self, other: _Totals) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def freeze(self) -> Metrics:
        retrieval = None
        if self.ret_samples:
            retrieval = RetrievalMetrics(
                self.ret_ns, self.vertices, self.relationships, self.properties, self.ret_samples
            )
        return Metrics(
            self.correct,
            self.incorrect,
            self.errors,
            self.gen_ns,
            self.gen_samples,
            self.contexts,
            retrieval,
        )


ProgressCallback = Callable[[int], None]


def grade(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    progress: ProgressCallback | None = None,
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
        Called with the number of result files read so far, every 1,000 files
        and once at the end.

    Returns
    -------
    StatsReport

    Raises
    ------
    DatasetsError
        If the datasets file cannot be read or is invalid.
    ResultTreeError
        If the results root is missing, or a folder or file cannot be read.

    Notes
    -----
    Result files that do not parse are logged as warnings, skipped and
    listed in :attr:`StatsReport.unparsable_files`; kag counts them nowhere.
    """
    truth = datasets if isinstance(datasets, Datasets) else load_datasets(datasets)
    root = os.fspath(results)
    trace = logger.isEnabledFor(5)
    groups: dict[tuple[str, str], _Totals] = {}
    items = ItemTableBuilder()
    seen_datasets = 0
    skipped = 0
    unparsable: list[str] = []
    files_read = 0

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
        dataset = entry.dataset
        for result_file in iter_result_files(entry.path, prefix):
            path = result_file.path
            try:
                data = read_bytes(path)
            except OSError as exc:
                raise ResultTreeError(
                    f"cannot read the result file {path}: {exc.strerror or exc}", path=path
                ) from None
            files_read += 1
            if progress is not None and files_read % 1000 == 0:
                progress(files_read)
            try:
                record = decode_result(data)
            except ValueError as exc:
                logger.warning("failed to parse result file %s: %s", path, exc)
                unparsable.append(path)
                continue
            setup = result_file.setup
            totals = groups.get((setup, dataset))
            if totals is None:
                totals = groups[(setup, dataset)] = _Totals()
            retrieval = record.retrieval
            if record.result is None:
                outcome = Outcome.ERROR
                totals.errors += 1
                items.append(setup, dataset, entry.question, outcome, *(None,) * 6)
            else:
                outcome = (
                    Outcome.CORRECT if grade_response(record.result, answer) else Outcome.INCORRECT
                )
                if outcome is Outcome.CORRECT:
                    totals.correct += 1
                else:
                    totals.incorrect += 1
                gen_ns = record.generation_ns or 0
                context = record.context_bytes or 0
                totals.gen_ns += gen_ns
                totals.gen_samples += 1
                totals.contexts += context
                if retrieval is not None:
                    totals.ret_ns += retrieval.time_ns
                    totals.vertices += retrieval.vertices
                    totals.relationships += retrieval.relationships
                    totals.properties += retrieval.properties
                    totals.ret_samples += 1
                    items.append(
                        setup,
                        dataset,
                        entry.question,
                        outcome,
                        gen_ns,
                        retrieval.time_ns,
                        retrieval.vertices,
                        retrieval.relationships,
                        retrieval.properties,
                        context,
                    )
                else:
                    items.append(
                        setup,
                        dataset,
                        entry.question,
                        outcome,
                        gen_ns,
                        None,
                        None,
                        None,
                        None,
                        context,
                    )
            if trace:
                logger.log(
                    5,
                    "[%s/%s] setup %r graded as %s",
                    dataset,
                    entry.question,
                    setup,
                    outcome.label,
                )
    if progress is not None:
        progress(files_read)

    by_setup: dict[str, dict[str, _Totals]] = {}
    for (setup, dataset), totals in groups.items():
        by_setup.setdefault(setup, {})[dataset] = totals
    reports = []
    for setup, per_dataset in by_setup.items():
        overall = _Totals()
        for totals in per_dataset.values():
            overall.add(totals)
        reports.append(
            SetupReport(
                setup,
                overall.freeze(),
                {name: per_dataset[name].freeze() for name in sorted(per_dataset)},
            )
        )
    reports.sort(key=lambda r: r.setup)
    # Stable sort: accuracy descending, None last, ties keep name order.
    reports.sort(key=lambda r: -(r.overall.accuracy if r.overall.accuracy is not None else -1.0))
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
    )
