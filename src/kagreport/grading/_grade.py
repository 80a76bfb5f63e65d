"""``kag stats``: grade a result tree against its datasets file (:func:`grade`).

The tree is walked here; its scorable question folders go in chunks to the engine that
the options name (this machine's processes, or a Dask cluster), and the graded chunks are
merged in submission order into the report.

Source: kag ``src/subcommand/stats/mod.rs`` and ``KAG_STATS_SPEC.md``.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
from collections.abc import Mapping
from typing import Any

from kagreport._errors import InputError
from kagreport.grading._chunk import PendingChunk
from kagreport.grading._collect import Collector, ProgressCallback
from kagreport.grading._report import StatsReport, ranked_setups, setup_reports
from kagreport.grading.engine._options import EngineOptions
from kagreport.grading.engine._pool import ChunkRunner
from kagreport.grading.engine._rows import StoredRows
from kagreport.grading.engine._store import GradeStore
from kagreport.kag import Datasets, load_datasets
from kagreport.kag._tree import ResultTree, is_simulated, open_tree
from kagreport.kag._walk import iter_question_names, iter_result_files

# setup_reports: also imported from here by kagreport.runs.
__all__ = ["ProgressCallback", "grade", "setup_reports"]

logger = logging.getLogger("kagreport.grading")


def _check_keep_text(keep_text: bool | int) -> bool | int:
    """``keep_text`` as grade() uses it (a bool, or an int >= 1); InputError otherwise."""
    if not isinstance(keep_text, bool):
        try:
            limit = operator.index(keep_text)  # int, NumPy integers
        except TypeError:
            limit = 0
        if limit < 1:
            raise InputError(f"`keep_text` must be a bool or a positive int, not {keep_text!r}")
        keep_text = limit
    return keep_text


# Long (over 80 lines): the walk that submits chunks, and the report built from them.
def grade(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    keep_text: bool | int = False,
    engine: str | None = None,
    client: Any = None,
    store: GradeStore | str | os.PathLike[str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    options: EngineOptions | None = None,
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
    keep_text : bool or int, default False
        Also keep each graded file's response and error message in
        ``report.items.texts`` (``ItemTexts``), read in the same pass:
        True keeps them whole, a positive int keeps that many characters of each
        (the full response length is kept either way).
    options : EngineOptions, optional
        Where the files are read and graded (this machine's processes, or a Dask
        cluster), with how many workers, the grade store that spares a rerun the
        files it has graded, and the fsspec options of URLs. Default:
        ``EngineOptions()``. The report is the same whatever they are.
    workers, engine, client, store, storage_options
        Shorthands for the fields of ``options`` (``client`` is its ``scheduler``):
        each one given replaces its field (:meth:`EngineOptions.with_keywords`);
        ``grade(d, r, engine="dask", store="grades/")`` is
        ``grade(d, r, options=EngineOptions(engine="dask", store="grades/"))``.

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
        If the store is for another tree or prefix, in use, or damaged.
    MissingExtraError
        If the engine's, the store's or the URL's packages are not installed.
    InputError
        A ValueError too: if ``keep_text`` or an option is out of range.

    Notes
    -----
    Result files that do not parse are logged as warnings, skipped and
    listed in :attr:`StatsReport.unparsable_files`; kag counts them nowhere.
    """
    keep_text = _check_keep_text(keep_text)
    options = (options or EngineOptions()).with_keywords(
        workers=workers, engine=engine, scheduler=client, store=store,
        storage_options=storage_options,
    )  # fmt: skip
    grade_store = options.store
    storage = options.storage_options
    truth = datasets if isinstance(datasets, Datasets) else load_datasets(datasets, storage)
    tree = open_tree(results, storage)
    root = tree.root
    scorable = truth.scorable_questions
    logger.debug("ground truth: %d questions, %d scorable", len(truth), scorable)
    with grade_store.locked() if grade_store is not None else contextlib.nullcontext():
        # The store knows a local tree by its real path (``./r``, ``r/`` and the absolute
        # path are one tree; the same relative text from another folder is not).
        where = root if tree.remote else os.path.realpath(root)
        stored = grade_store.load(where, prefix, keep_text) if grade_store is not None else None
        collected = Collector(keep_text, stored, grade_store is not None, tree, prefix, progress)
        counts = _walk_and_grade(truth, tree, prefix, collected, keep_text, options, stored)
        if grade_store is not None:  # (add_kept imports NumPy: 0.1 s of a run without a store)
            kept = collected.add_kept()
            grade_store.save(where, prefix, keep_text, stored, kept, collected.new)
    if progress is not None:
        progress(collected.done)
    items = collected.items
    if stored is not None:
        items.sort()
    reports = ranked_setups(
        collected.group_ids, collected.group_sums, items.setups.names, items.datasets.names
    )
    if collected.unparsable:
        logger.info("%d result file(s) did not parse", len(collected.unparsable))
    return StatsReport(
        datasets=counts[0],
        scorable_questions=scorable,
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


def _walk_and_grade(
    truth: Datasets,
    tree: ResultTree,
    prefix: str,
    collected: Collector,
    keep_text: bool | int,
    options: EngineOptions,
    stored: StoredRows | None,
) -> tuple[int, int]:
    """Walk the tree, submit its scorable question folders in chunks; (datasets, skipped)."""
    items = collected.items
    runner: Any
    if options.engine == "dask":
        from kagreport.grading.engine._dask import DaskRunner

        runner = DaskRunner(
            options.scheduler, prefix, collected.merge, keep_text, tree=tree,
            workers=options.workers,
        )  # fmt: skip
    else:
        # With -vvvv, per-file traces come from the walk too: keep them in one process.
        workers = 1 if collected.trace else options.workers
        runner = ChunkRunner(workers, prefix, collected.merge, keep_text, tree=tree)
    with_store = collected.store
    seen_datasets = skipped = 0
    join, question_code = tree.join, items.questions.code
    no_questions: Mapping[str, Any] = {}
    try:
        chunk, limit = PendingChunk(with_store), runner.chunk_folders
        for dataset, folder, names in iter_question_names(tree):
            seen_datasets += 1
            runner.expect(len(names))
            entries = truth.questions.get(dataset, no_questions)
            dataset_code = None  # given when the dataset's first question is added
            for name in names:
                question = entries.get(name)
                if question is None or question.output is None:
                    continue  # unknown or free-form: nothing counted
                answer = question.output.answer
                path = join(folder, name)
                if answer is None:
                    skipped += sum(1 for _ in iter_result_files(path, prefix, tree=tree))
                    continue
                if dataset_code is None:
                    dataset_code = items.datasets.code(dataset)
                chunk.add(path, answer, dataset_code, question_code(name))
                if len(chunk.paths) >= limit:
                    runner.submit(_with_known(chunk, stored, collected))
                    chunk, limit = PendingChunk(with_store), runner.chunk_folders
        if chunk.paths:
            runner.submit(_with_known(chunk, stored, collected))
        runner.finish()
    finally:
        runner.close()
    return seen_datasets, skipped


def _with_known(
    chunk: PendingChunk, stored: StoredRows | None, collected: Collector
) -> PendingChunk:
    """``chunk`` with what the store holds for its folders (one array set per chunk)."""
    if chunk.store and stored is not None:
        chunk.known = stored.known(collected.keys(chunk))
    return chunk
