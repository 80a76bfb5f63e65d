"""The columns of a graded kag tree as a run: :func:`stats_fields`, the body of
:meth:`kagreport.runs.Run.from_stats`.

Numbers come from the report's item table (no file is read again). Texts are lazy
(:class:`~kagreport.runs._texts.LazyTexts`): a row's response and error are read from its
result file when a view asks for them, its question text, options and answer key from the
datasets file the tree was graded against, looked up once per item.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from kagreport._errors import KagreportError
from kagreport.kag._tree import is_url
from kagreport.runs._columns import KAG_COSTS
from kagreport.runs._texts import LazyTexts

if TYPE_CHECKING:
    from kagreport.grading import StatsReport
    from kagreport.kag import Datasets
    from kagreport.kag._records import ResultRecord
    from kagreport.kag._tree import ResultTree

__all__ = ["stats_fields"]

logger = logging.getLogger("kagreport.runs")

Options = tuple[tuple[str, str], ...]

#: How ``kag stats`` graded the run (KAG_STATS_SPEC.md), said beside its numbers.
_CONVENTION = (
    "kag stats: one system per setup, an item per (dataset, question); a response is "
    "correct when, trimmed of Unicode white space, it equals the question's answer key up "
    "to ASCII case; an error record counts as incorrect"
)


def stats_fields(
    report: StatsReport, storage_options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The :class:`~kagreport.runs.Run` fields of a graded kag tree (see ``Run.from_stats``)."""
    table = report.items
    setup_codes = table.codes("setup").astype(np.int32)
    # Rank order of the report, not first appearance.
    remap = np.array(
        [report.setup_names.index(s) if s in report.setup_names else -1 for s in table.setup_names]
        or [0],
        dtype=np.int32,
    )
    system = remap[setup_codes] if len(setup_codes) else setup_codes
    dataset = table.codes("dataset").astype(np.int32)
    question = table.codes("question").astype(np.int32)
    outcome = table.codes("outcome").astype(np.int8)
    n = len(outcome)
    fields: dict[str, Any] = {
        "kind": "answers",
        "systems": tuple(report.setup_names),
        "dataset_names": tuple(table.dataset_names),
        "question_names": tuple(table.question_names),
        "system": system,
        "dataset": dataset,
        "question": question,
        "outcome": outcome,
        "metrics": {"correct": (outcome == 0).astype(np.float64)},
        "costs": {name: table.column(name) for name in KAG_COSTS},
        "metadata": _metadata(report),
    }
    texts = table.texts
    if texts is not None:  # graded with keep_text: what grading kept, in memory
        fields["responses"] = tuple(texts.responses)
        fields["errors"] = tuple(texts.errors)
    elif report.results is not None:
        files = _ResultFiles(report, report.setup_names, system, dataset, question)
        files.storage_options = dict(storage_options or {})
        fields["responses"] = LazyTexts(files.response, n)
        fields["errors"] = LazyTexts(files.error, n)
    truth = report.ground_truth
    if truth is not None:
        items = _Items(truth, table.dataset_names, table.question_names, dataset, question)
        fields["question_texts"] = LazyTexts(items.question_text, n)
        fields["options"] = LazyTexts(items.options, n)
        fields["references"] = LazyTexts(items.reference, n)
    return fields


def _metadata(report: StatsReport) -> dict[str, Any]:
    found: dict[str, Any] = {
        "source": "kag",
        "tool": "kag",
        "convention": _CONVENTION,
        "prefix": report.prefix,
        # What kag stats reports beside the setups (runs._metrics.kag_stats_json).
        "kag_stats": {
            "datasets": report.datasets,
            "scorable_questions": report.scorable_questions,
            "skipped_files": report.skipped_files,
        },
    }
    if report.simulated:
        found["simulated"] = True
    if report.unparsable_files:
        found["unparsable"] = _unparsable(report)
    return found


def _unparsable(report: StatsReport) -> list[list[str]]:
    """[file, reason] of each result file that did not parse: the file relative to the
    results root with ``/`` (as UTF-8 text: a name that is not UTF-8 shows U+FFFD), sorted."""
    import os

    root = report.results
    reasons = report.unparsable_reasons or ("",) * len(report.unparsable_files)
    found = []
    for path, reason in zip(report.unparsable_files, reasons, strict=True):
        shown = path
        if root is not None and not is_url(root):
            shown = os.path.relpath(path, root)
        elif root is not None and path.startswith(root.rstrip("/") + "/"):
            shown = path[len(root.rstrip("/")) + 1 :]
        shown = os.fsencode(shown).decode("utf-8", "replace").replace(os.sep, "/")
        reason = reason.encode("utf-8", "replace").decode("utf-8")
        found.append([shown, reason or "did not parse"])
    return sorted(found)


class _Items:
    """Each row's question text, options and answer key, from the datasets file."""

    def __init__(
        self,
        truth: Datasets,
        dataset_names: tuple[str, ...],
        question_names: tuple[str, ...],
        dataset: npt.NDArray[np.int32],
        question: npt.NDArray[np.int32],
    ) -> None:
        self.truth, self.dataset_names, self.question_names = truth, dataset_names, question_names
        self.dataset, self.question = dataset, question

    def _entry(self, row: int) -> Any:
        return self.truth.get(
            self.dataset_names[self.dataset[row]], self.question_names[self.question[row]]
        )

    def question_text(self, row: int) -> str | None:
        entry = self._entry(row)
        return None if entry is None else entry.input

    def options(self, row: int) -> Options | None:
        entry = self._entry(row)
        if entry is None or entry.output is None or not entry.output.options:
            return None
        return tuple(entry.output.options.items())

    def reference(self, row: int) -> str | None:
        entry = self._entry(row)
        answer = None if entry is None else entry.answer
        return None if answer is None else str(answer)


class _ResultFiles:
    """Each row's result file, read when its response or error is first asked for."""

    def __init__(
        self,
        report: StatsReport,
        setup_names: tuple[str, ...],
        setup: npt.NDArray[np.int32],
        dataset: npt.NDArray[np.int32],
        question: npt.NDArray[np.int32],
    ) -> None:
        table = report.items
        assert report.results is not None
        self.root, self.prefix = report.results, report.prefix
        self.setup_names, self.dataset_names = setup_names, table.dataset_names
        self.question_names = table.question_names
        self.setup, self.dataset, self.question = setup, dataset, question
        self.storage_options: dict[str, Any] = {}
        self._tree: ResultTree | None = None
        self._last: tuple[int, ResultRecord | str] = (-1, "")
        self._warned = False

    def _record(self, row: int) -> ResultRecord | str:
        """The row's decoded file, or why it cannot be read."""
        if self._last[0] == row:  # the response and the error of a row: one read
            return self._last[1]
        from kagreport.kag._records import decode_result
        from kagreport.kag._tree import open_tree

        if self._tree is None:
            self._tree = open_tree(self.root, self.storage_options)
        tree = self._tree
        path = tree.join(
            tree.join(
                tree.join(self.root, self.dataset_names[self.dataset[row]]),
                self.question_names[self.question[row]],
            ),
            f"{self.prefix}{self.setup_names[self.setup[row]]}.json",
        )
        record: ResultRecord | str
        try:
            record = decode_result(tree.read(path))
        except (OSError, ValueError, KagreportError) as exc:
            # Changed or removed since it was graded: no response, and the error says why.
            if not self._warned:
                self._warned = True
                logger.warning("cannot read the result file %s again: %s", path, exc)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            record = f"(cannot read the result file again: {reason})"
        self._last = (row, record)
        return record

    def response(self, row: int) -> str | None:
        record = self._record(row)
        return None if isinstance(record, str) else record.result

    def error(self, row: int) -> str | None:
        record = self._record(row)
        return record if isinstance(record, str) else record.error
