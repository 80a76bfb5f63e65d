"""Merging graded chunks, in submission order, into what the report is built from: the item
table, the sums of each (setup, dataset) group and the files that did not parse; with a
grade store, also the stored rows still live and the rows read now (:class:`Collector`).
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kagreport._errors import ResultTreeError
from kagreport.grading._chunk import GradedChunk, PendingChunk
from kagreport.grading._items import ItemTableBuilder, Outcome
from kagreport.grading.engine._rows import MEASURES, NewRows, StoredRows
from kagreport.kag._tree import ResultTree

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Collector", "ProgressCallback"]

logger = logging.getLogger("kagreport.grading")

#: Called with the number of result files done so far.
ProgressCallback = Callable[[int], None]


class Collector:
    """Merges graded chunks, in order, into the item table, the group sums and the
    unparsable list; with a store, also what the store keeps and what it gets."""

    def __init__(
        self,
        keep_text: bool | int,
        stored: StoredRows | None,
        store: bool,
        tree: ResultTree,
        prefix: str,
        progress: ProgressCallback | None,
    ) -> None:
        self.items = ItemTableBuilder(keep_text)
        self.tree = tree
        self.prefix = prefix
        self.group_ids: dict[tuple[int, int], int] = {}
        self.group_sums: list[list[int]] = []
        self.unparsable: list[str] = []
        self.reasons: list[str] = []
        self.done = 0
        self.read = 0
        self.stored = stored
        self.store = store
        self.kept: list[npt.NDArray[np.int64]] = []
        self.new = NewRows(texts=([], array("q"), []) if keep_text is not False else None)
        self.trace = logger.isEnabledFor(5)
        self.progress = progress

    def add_sums(self, setup_code: int, dataset: int, sums: list[int]) -> None:
        key = (setup_code, dataset)
        group = self.group_ids.get(key)
        if group is None:
            self.group_ids[key] = len(self.group_sums)
            self.group_sums.append(list(sums))
            return
        into = self.group_sums[group]
        for k, value in enumerate(sums):
            into[k] += value

    def merge(self, chunk: PendingChunk, graded: GradedChunk) -> None:
        unparsable = list(graded.unparsable)
        kept_rows = None
        if graded.kept is not None and self.stored is not None and graded.io_error is None:
            kept_rows = self._kept(chunk, graded.kept)
            self.kept.append(kept_rows)
            # Stored files that did not parse still do not: said again, in path order.
            for i in kept_rows[~self.stored.parsed[kept_rows]].tolist():
                message, reason = self.stored.message[i]
                unparsable.append((self._path(i), message, reason))
            unparsable.sort()
        for path, message, reason in unparsable:
            logger.warning("failed to parse result file %s: %s", path, message)
            self.unparsable.append(path)
            self.reasons.append(reason)
        if graded.io_error is not None:
            path, message = graded.io_error
            raise ResultTreeError(message, path=path)
        items = self.items
        setup_codes = [items.setups.code(name) for name in graded.setups]
        question_index, setup_index = graded.rows
        codes = (
            array("I", [setup_codes[s] for s in setup_index]),
            array("I", [chunk.datasets[q] for q in question_index]),
            array("I", [chunk.questions[q] for q in question_index]),
        )
        items.extend(codes, graded.columns, graded.texts)
        for (setup, dataset), sums in graded.sums.items():
            self.add_sums(setup_codes[setup], dataset, sums)
        if self.store:
            self._record_new(chunk, graded)
        if self.trace:
            names = items.setups.names, items.datasets.names, items.questions.names
            for s, d, q, o in zip(*codes, graded.columns[0], strict=True):
                logger.log(
                    5, "[%s/%s] setup %r graded as %s", names[1][d], names[2][q], names[0][s],
                    Outcome(o).label,
                )  # fmt: skip
        read = len(question_index) + len(graded.unparsable)
        self.read += read
        self.done += read + (0 if kept_rows is None else len(kept_rows))
        if self.progress is not None:
            self.progress(self.done)

    def _kept(self, chunk: PendingChunk, masks: list[bytes | None]) -> npt.NDArray[np.int64]:
        import numpy as np

        assert self.stored is not None
        rows, _ = self.stored.known_rows(self.keys(chunk))
        flags = np.frombuffer(b"".join(m for m in masks if m is not None), dtype=np.uint8)
        return rows[flags.astype(bool)] if len(rows) else rows

    def keys(self, chunk: PendingChunk) -> list[tuple[str, str, str]]:
        """(dataset, question, answer) of each folder of ``chunk``."""
        datasets, questions = self.items.datasets.names, self.items.questions.names
        return [
            (datasets[d], questions[q], a)
            for d, q, a in zip(chunk.datasets, chunk.questions, chunk.answers, strict=True)
        ]

    def _path(self, row: int) -> str:
        """The file of a stored row, as the walk names it."""
        assert self.stored is not None
        stored, join = self.stored, self.tree.join
        folder = join(
            join(self.tree.root, stored.dataset_names[stored.dataset[row]]),
            stored.question_names[stored.question[row]],
        )
        return join(folder, f"{self.prefix}{stored.setup_names[stored.setup[row]]}.json")

    def _record_new(self, chunk: PendingChunk, graded: GradedChunk) -> None:
        new = self.new
        datasets, questions = self.items.datasets.names, self.items.questions.names
        folders = graded.rows[0]
        base = len(new)
        # Column by column (one pass each), not row by row: this is per file read.
        new.dataset.extend([datasets[chunk.datasets[q]] for q in folders])
        new.question.extend([questions[chunk.questions[q]] for q in folders])
        new.setup.extend([graded.setups[s] for s in graded.rows[1]])
        new.answer.extend([chunk.answers[q] for q in folders])
        new.identity.extend(graded.identities or array("q"))
        new.parsed.extend(array("B", [1]) * len(folders))
        new.outcome.extend(graded.columns[0])
        for measure, values in zip(new.measures, graded.columns[1:], strict=True):
            measure.extend(values)
        for row, exact in (graded.exact or {}).items():
            new.exact[base + row] = exact
        if new.texts is not None and graded.texts is not None:
            new.texts[0].extend(graded.texts[0])
            new.texts[1].extend(graded.texts[1])
            new.texts[2].extend(graded.texts[2])
        for (_, message, reason), (q, setup, identity) in zip(
            graded.unparsable, graded.unparsable_keys or [], strict=True
        ):
            new.message[len(new)] = (message, reason)
            new.dataset.append(datasets[chunk.datasets[q]])
            new.question.append(questions[chunk.questions[q]])
            new.setup.append(setup)
            new.answer.append(chunk.answers[q])
            new.identity.append(identity)
            new.parsed.append(0)
            new.outcome.append(255)
            for column in new.measures:
                column.append(-1)
            if new.texts is not None:
                new.texts[0].append(None)
                new.texts[1].append(-1)
                new.texts[2].append(None)

    def add_kept(self) -> npt.NDArray[np.int64]:
        """Append the stored rows that were kept (parsed ones) and add their sums."""
        import numpy as np

        stored = self.stored
        kept = np.concatenate(self.kept) if self.kept else np.zeros(0, dtype=np.int64)
        if stored is None or not len(kept):
            return kept
        rows = kept[stored.parsed[kept]]
        items = self.items
        setups = np.array([items.setups.code(n) for n in stored.setup_names], dtype=np.int64)
        datasets = np.array([items.datasets.code(n) for n in stored.dataset_names], dtype=np.int64)
        questions = np.array(
            [items.questions.code(n) for n in stored.question_names], dtype=np.int64
        )
        codes = (
            setups[stored.setup[rows]],
            datasets[stored.dataset[rows]],
            questions[stored.question[rows]],
        )
        measures = [stored.measures[m][rows] for m in MEASURES]
        texts = None
        if stored.texts is not None and items.keep_text:
            positions = rows.tolist()
            texts = (
                [stored.texts[0][i] for i in positions],
                stored.texts[1][rows].tolist(),
                [stored.texts[2][i] for i in positions],
            )
        items.extend_arrays(codes, [stored.outcome[rows], *measures], texts)
        exact = {i: stored.exact[r] for i, r in enumerate(rows.tolist()) if r in stored.exact}
        for (setup, dataset), sums in _group_sums(
            codes[0], codes[1], stored.outcome[rows], measures, exact
        ).items():
            self.add_sums(setup, dataset, sums)
        return kept


def _group_sums(
    setups: npt.NDArray[np.int64],
    datasets: npt.NDArray[np.int64],
    outcome: npt.NDArray[np.uint8],
    measures: Sequence[npt.NDArray[np.int64]],
    exact: Mapping[int, tuple[int, ...]],
) -> dict[tuple[int, int], list[int]]:
    """The 11 sums of each (setup, dataset) group of stored rows, exactly (Python ints
    where int64 could overflow, and each clamped value replaced by its exact one)."""
    import numpy as np

    gen, ret, vertices, relationships, properties, context = measures
    answered = outcome < 2
    retrieved = answered & (ret >= 0)
    parts = (
        outcome == 0,
        outcome == 1,
        outcome == 2,
        np.where(answered, gen, 0),
        answered,
        np.where(answered, context, 0),
        np.where(retrieved, ret, 0),
        np.where(retrieved, vertices, 0),
        np.where(retrieved, relationships, 0),
        np.where(retrieved, properties, 0),
        retrieved,
    )
    key = setups * (int(datasets.max(initial=0)) + 1) + datasets
    groups, inverse = np.unique(key, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(len(groups)))
    sums = []
    for part in parts:
        values = part.astype(np.int64)[order]
        # int64 is exact unless the column's total could pass 2**63.
        if float(np.abs(values).sum(dtype=np.float64)) < 2.0**62:
            sums.append(np.add.reduceat(values, starts).tolist() if len(values) else [])
        else:
            sums.append([int(sum(v)) for v in np.split(values.astype(object), starts[1:])])
    out = {}
    width = int(datasets.max(initial=0)) + 1
    for g, group in enumerate(groups.tolist()):
        out[(group // width, group % width)] = [int(column[g]) for column in sums]
    clamp = np.iinfo(np.int64).max
    for row, values in exact.items():  # the exact value in place of the clamped one
        group_sums = out[(int(setups[row]), int(datasets[row]))]
        gen_ns, ret_ns, v, r, p, ctx = values
        for k, value, clamped in (
            (3, gen_ns, gen[row]), (5, ctx, context[row]), (6, ret_ns, ret[row]),
            (7, v, vertices[row]), (8, r, relationships[row]), (9, p, properties[row]),
        ):  # fmt: skip
            if value > clamp and (k in (3, 5) or ret_ns >= 0):
                group_sums[k] += value - int(clamped)
    return out
