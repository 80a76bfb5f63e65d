"""``kag stats``: grade a result tree against its datasets file.

Source: kag ``src/subcommand/stats/mod.rs`` and ``KAG_STATS_SPEC.md``.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kagreport._errors import ResultTreeError
from kagreport.grading._engine import ChunkRunner, GradedChunk, PendingChunk
from kagreport.grading._items import ItemTable, ItemTableBuilder, Outcome
from kagreport.grading._metrics import Metrics, RetrievalMetrics
from kagreport.grading._rule import grade_response
from kagreport.grading._store import GradeStore, NewRows, StoredRows
from kagreport.kag import (
    Datasets,
    QuestionDir,
    is_simulated,
    iter_question_dirs,
    iter_result_files,
    load_datasets,
)
from kagreport.kag._jsonfmt import dumps_pretty
from kagreport.kag._tree import ResultTree, open_tree

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ENGINES", "SetupReport", "StatsReport", "grade", "grade_response"]

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


class _Collector:
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

        from kagreport.grading._shards import MEASURES

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


# Long (over 80 lines): the walk that submits chunks, and the report built from them.
def grade(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    keep_text: bool | int = False,
    engine: str = "local",
    client: Any = None,
    store: GradeStore | str | os.PathLike[str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> StatsReport:
    """Grade a kag result tree as ``kag stats`` does.

    Parameters
    ----------
    datasets : Datasets or path or URL
        The ground truth, or the path or fsspec URL of the datasets file.
    results : path or URL, default "."
        The results root: ``<results>/<dataset>/<question>/<prefix><setup>.json``;
        a local path, a ``file://`` URL or any fsspec URL (``s3://bucket/run``,
        ``gs://``, ``az://``: ``pip install 'kagreport[cloud]'``).
    prefix : str, default ""
        The file-name prefix of the run to grade (``kag benchmark --prefix``).
    progress : callable, optional
        Called with the number of result files done so far, about every chunk
        and once at the end.
    workers : int, optional
        Local engine: processes that read and decode result files. Default: the
        CPU count (at most 8); large local trees only, on Linux (forked from this
        process, or from a fork server when it has other threads: a Jupyter kernel).
        ``1`` grades in this process.
    keep_text : bool or int, default False
        Also keep each graded file's response and error message in
        ``report.items.texts`` (:class:`ItemTexts`), read in the same pass:
        True keeps them whole, a positive int keeps that many characters of each
        (the full response length is kept either way).
    engine : {"local", "dask"}, default "local"
        ``"dask"`` grades on a Dask cluster (``pip install 'kagreport[dask]'``):
        each task lists and reads a batch of question folders (over 1,000 files),
        workers return compact columns, the report is merged here.
    client : distributed.Client or str, optional
        With ``engine="dask"``: the client, or a scheduler address. Default: a
        ``LocalCluster`` on this machine, closed afterwards.
    store : GradeStore or path, optional
        Where graded files are kept between runs (a folder, made if missing; needs
        ``pip install 'kagreport[store]'``): a rerun reads only files that are new or
        changed. The report is the same as without it.
    storage_options : mapping, optional
        fsspec options for URLs (``endpoint_url``, ``anon``, ``profile``, ...).

    Returns
    -------
    StatsReport
        Items in (dataset, question, setup) name order.

    Raises
    ------
    DatasetsError
        If the datasets file cannot be read or is invalid.
    ResultTreeError
        If the results root is missing, or a folder or file cannot be read (an
        object that vanished since it was listed, credentials missing, ...).
    KagreportError
        If a worker process died (killed by a signal: the out-of-memory killer, say),
        or a Dask cluster lost its workers; the message says which.
    StoreError
        If ``store`` is for another tree or prefix, in use, or damaged.
    MissingExtraError
        If the engine's, the store's or the URL's packages are not installed.
    ValueError
        If ``workers``, ``keep_text`` or ``engine`` is out of range.

    Notes
    -----
    Result files that do not parse are logged as warnings, skipped and
    listed in :attr:`StatsReport.unparsable_files`; kag counts them nowhere.
    """
    keep_text = _check_keep_text(keep_text)
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {', '.join(map(repr, ENGINES))}, not {engine!r}")
    if isinstance(store, str | os.PathLike):
        store = GradeStore(store)
    truth = datasets if isinstance(datasets, Datasets) else load_datasets(datasets, storage_options)
    tree = open_tree(results, storage_options)
    root = tree.root
    logger.debug("ground truth: %d questions, %d scorable", len(truth), truth.scorable_questions)
    with store.locked() if store is not None else contextlib.nullcontext():
        # The store knows a local tree by its real path (``./r``, ``r/`` and the absolute
        # path are one tree; the same relative text from another folder is not).
        where = root if tree.remote else os.path.realpath(root)
        stored = store.load(where, prefix, keep_text) if store is not None else None
        collected = _Collector(keep_text, stored, store is not None, tree, prefix, progress)
        counts = _walk_and_grade(
            truth, tree, prefix, collected, keep_text, workers, engine, client, stored
        )
        kept = collected.add_kept()
        if store is not None:
            store.save(where, prefix, keep_text, stored, kept, collected.new)
    if progress is not None:
        progress(collected.done)
    items = collected.items
    if stored is not None:
        items.sort()
    reports = _ranked_setups(
        collected.group_ids, collected.group_sums, items.setups.names, items.datasets.names
    )
    if collected.unparsable:
        logger.info("%d result file(s) did not parse", len(collected.unparsable))
    return StatsReport(
        datasets=counts[0],
        scorable_questions=truth.scorable_questions,
        skipped_files=counts[1],
        setups=tuple(reports),
        items=items.build(results=root, prefix=prefix),
        unparsable_files=tuple(collected.unparsable),
        results=root,
        prefix=prefix,
        ground_truth=truth,
        unparsable_reasons=tuple(collected.reasons),
        simulated=is_simulated(root, tree),
        files_read=collected.read,
    )


#: The grading engines: this machine's processes, or a Dask cluster.
ENGINES = ("local", "dask")


def _walk_and_grade(
    truth: Datasets,
    tree: ResultTree,
    prefix: str,
    collected: _Collector,
    keep_text: bool | int,
    workers: int | None,
    engine: str,
    client: Any,
    stored: StoredRows | None,
) -> tuple[int, int]:
    """Walk the tree, submit its scorable question folders in chunks; (datasets, skipped)."""
    items = collected.items
    runner: Any
    if engine == "dask":
        from kagreport.grading._dask import DaskRunner

        runner = DaskRunner(client, prefix, collected.merge, keep_text, tree=tree)
    else:
        # With -vvvv, per-file traces come from the walk too: keep them in one process.
        runner = ChunkRunner(
            1 if collected.trace else workers, prefix, collected.merge, keep_text, tree=tree
        )
    with_store = collected.store
    seen_datasets = skipped = 0
    try:
        chunk = PendingChunk(with_store)
        for entry in iter_question_dirs(tree):
            if not isinstance(entry, QuestionDir):
                seen_datasets += 1
                continue
            question = truth.get(entry.dataset, entry.question)
            if question is None or question.output is None:
                continue  # unknown or free-form: nothing counted
            answer = question.output.answer
            if answer is None:
                skipped += sum(1 for _ in iter_result_files(entry.path, prefix, tree=tree))
                continue
            chunk.add(
                entry.path,
                answer,
                items.datasets.code(entry.dataset),
                items.questions.code(entry.question),
            )
            if len(chunk.paths) >= runner.chunk_folders:
                runner.submit(_with_known(chunk, stored, collected))
                chunk = PendingChunk(with_store)
        if chunk.paths:
            runner.submit(_with_known(chunk, stored, collected))
        runner.finish()
    finally:
        runner.close()
    return seen_datasets, skipped


def _with_known(
    chunk: PendingChunk, stored: StoredRows | None, collected: _Collector
) -> PendingChunk:
    """``chunk`` with what the store holds for its folders (one array set per chunk)."""
    if chunk.store and stored is not None:
        chunk.known = stored.known(collected.keys(chunk))
    return chunk
