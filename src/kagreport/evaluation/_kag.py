"""Bridges from kag runs to evaluations: graded setups and free-form answers."""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation._report import AnswerEvaluation
from kagreport.grading import Outcome, StatsReport
from kagreport.grading._items import ItemTable
from kagreport.kag import Datasets, load_datasets
from kagreport.kag._records import read_result
from kagreport.kag._walk import QuestionDir, iter_question_dirs

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["answer_items_from_run", "dataset_order", "evaluation_from_stats"]

logger = logging.getLogger("kagreport.evaluation")

#: The identity of kag's grading rule, recorded as the "judge" of a graded setup.
KAG_RULE = {"kind": "kag_stats", "rule": "trim White_Space, ASCII case-insensitive", "version": 1}


# Over 80 lines only with its docstring (a public function's parameters, errors, sources).
def evaluation_from_stats(
    report: StatsReport,
    setup: str,
    *,
    answers: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> AnswerEvaluation:
    """One setup of a graded kag run as an :class:`AnswerEvaluation`.

    One item per graded result file, identified ``<dataset>/<question>``, with
    the metric ``correct`` in {0, 1}: error records score 0, as kag counts them
    in accuracy's denominator, so ``metrics["correct"]`` equals the setup's
    accuracy bit for bit (``correct / total``, one division, as kag computes it).
    Two setups of one run then compare with
    ``evaluation_from_stats(r, "a").compare(evaluation_from_stats(r, "b"))``.

    Items come in dataset order (``dataset_order``): datasets in the order
    of the datasets file, questions within a dataset by name, as kag sorts them;
    never in the order the file system lists the folders. The report's item
    table is indexed by setup once (cached with the table), so converting every
    setup of a run takes time linear in the table, not a scan per setup.

    Parameters
    ----------
    report : StatsReport
        From :func:`kagreport.grade`.
    setup : str
        The setup to convert.
    answers : bool
        Read each result file again for the response text (``answer``); with
        False the answers are empty strings (errors stay None).
    metadata : mapping, optional
        Extra report metadata; ``name`` defaults to the setup.

    Returns
    -------
    AnswerEvaluation
        Items carry ``latency`` (generation seconds), ``error`` (kag's error
        message when ``answers``), ``reference`` and ``question`` (from the
        datasets file) and per-item metadata: dataset, question, outcome,
        retrieval_secs, vertices, relationships, properties, context_bytes.

    Raises
    ------
    KeyError
        If the report has no such setup.
    """
    report[setup]  # KeyError naming the known setups
    table = report.items
    truth = report.ground_truth
    rows = _setup_rows(table, truth, setup)
    columns = [table.codes(name)[rows].tolist() for name in table.COLUMNS[1:]]
    datasets, questions = table.dataset_names, table.question_names
    items = []
    correct = errors = 0
    for d, q, code, gen, ret, vertices, relationships, properties, context in zip(
        *columns, strict=True
    ):
        dataset, question = datasets[d], questions[q]
        outcome = Outcome(code)
        correct += outcome is Outcome.CORRECT
        errors += outcome is Outcome.ERROR
        entry = truth.get(dataset, question) if truth is not None else None
        answer: str | None = None if outcome is Outcome.ERROR else ""
        error: str | None = "error record" if outcome is Outcome.ERROR else None
        if answers and table.results is not None:
            path = os.path.join(table.results, dataset, question, f"{table.prefix}{setup}.json")
            record = read_result(path)
            answer, error = record.result, record.error
        items.append(
            AnswerItem(
                identifier=f"{dataset}/{question}",
                question=entry.input if entry is not None else "",
                answer=answer,
                reference=entry.answer if entry is not None else None,
                scores={"correct": 1.0 if outcome is Outcome.CORRECT else 0.0},
                latency=None if gen < 0 else gen / 1e9,
                error=error,
                metadata={
                    "dataset": dataset,
                    "question": question,
                    "outcome": outcome.label,
                    "retrieval_secs": None if ret < 0 else ret / 1e9,
                    "vertices": None if vertices < 0 else vertices,
                    "relationships": None if relationships < 0 else relationships,
                    "properties": None if properties < 0 else properties,
                    "context_bytes": None if context < 0 else context,
                },
            )
        )
    return AnswerEvaluation(
        # kag's accuracy is correct / total in one division; a sum of 1/n terms can miss
        # it in the last bit.
        metrics={"correct": correct / len(items)} if items else {},
        items=tuple(items),
        judges={"kag": dict(KAG_RULE)},
        agreement={},
        usage={},
        errors={"system": errors},
        settings={"results": report.results, "prefix": report.prefix},
        metadata={"name": setup, **(metadata or {})},
    )


def dataset_order(
    datasets: Datasets | None, names: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``(dataset, question)`` pairs in dataset order.

    Datasets come in the order of the datasets file (those it does not know
    last, by name); questions within a dataset by name (byte order), the order
    kag gives them (its ``Datasets`` is a ``BTreeMap`` of ``BTreeMap``). The
    result does not depend on the order of ``names`` (a file-system listing).

    Parameters
    ----------
    datasets : Datasets or None
        The datasets file; None orders datasets by name.
    names : iterable of (str, str)

    Returns
    -------
    list of (str, str)
    """
    order = datasets.questions if datasets is not None else {}
    position = {name: i for i, name in enumerate(order)}
    unknown = len(position)
    return sorted(names, key=lambda pair: (position.get(pair[0], unknown), pair[0], pair[1]))


class _SetupIndex:
    """The rows of an item table grouped by setup, each group in dataset order."""

    __slots__ = ("order", "starts", "truth")

    def __init__(self, table: ItemTable, truth: Datasets | None) -> None:
        import numpy as np

        self.truth = truth
        ranked = dataset_order(truth, ((name, "") for name in table.dataset_names))
        dataset_rank = np.zeros(len(table.dataset_names), dtype=np.int64)
        codes = {name: code for code, name in enumerate(table.dataset_names)}
        dataset_rank[[codes[name] for name, _ in ranked]] = np.arange(len(ranked))
        by_name = sorted(range(len(table.question_names)), key=table.question_names.__getitem__)
        question_rank = np.zeros(len(table.question_names), dtype=np.int64)
        question_rank[by_name] = np.arange(len(by_name))
        setups = table.codes("setup")
        # One sort of the whole table: by setup, then dataset rank, then question rank.
        self.order = np.lexsort(
            (
                question_rank[table.codes("question")],
                dataset_rank[table.codes("dataset")],
                setups,
            )
        )
        counts = np.bincount(setups, minlength=len(table.setup_names))
        self.starts = np.concatenate(([0], np.cumsum(counts))).tolist()


_INDEXES: weakref.WeakKeyDictionary[ItemTable, _SetupIndex] = weakref.WeakKeyDictionary()
_INDEX_LOCK = threading.Lock()


def _setup_rows(table: ItemTable, truth: Datasets | None, setup: str) -> npt.NDArray[Any]:
    """Row numbers of ``setup`` in ``table``, in dataset order (empty if it has none)."""
    import numpy as np

    with _INDEX_LOCK:
        index = _INDEXES.get(table)
        if index is None or index.truth is not truth:
            index = _INDEXES[table] = _SetupIndex(table, truth)
    try:
        code = table.setup_names.index(setup)
    except ValueError:
        return np.zeros(0, dtype=np.intp)
    return index.order[index.starts[code] : index.starts[code + 1]]


# Over 80 lines only with its docstring (a public function's parameters, errors, sources).
def answer_items_from_run(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str],
    setup: str,
    *,
    prefix: str = "",
    questions: Literal["free-form", "mcq", "all"] = "free-form",
) -> list[AnswerItem]:
    """The answers of one setup of a kag run, ready for :func:`evaluate_answers`.

    Parameters
    ----------
    datasets : Datasets or path
        The datasets file.
    results : path
        The results root.
    setup : str
        Setup whose files (``<prefix><setup>.json``) are read.
    prefix : str
        File-name prefix of the run.
    questions : {"free-form", "mcq", "all"}
        Which questions to take; free-form ones have no reference.

    Returns
    -------
    list of AnswerItem
        In dataset order (``dataset_order``), not the file system's.
        ``identifier`` ``<dataset>/<question>``; ``answer`` = ``ok.result`` (None
        for an error record, whose message goes to ``error``); ``reference`` = the
        MCQ answer key or None; ``latency`` = generation seconds; ``metadata``
        holds ``context`` (the retrieved context, for judge prompts), ``options``
        (MCQ), ``dataset``, ``question``, ``model``. Files that do not parse are
        skipped with a warning.

    Raises
    ------
    DatasetsError, ResultTreeError
        As :func:`kagreport.grade`.
    """
    truth = datasets if isinstance(datasets, Datasets) else load_datasets(datasets)
    found = {
        (entry.dataset, entry.question): entry
        for entry in iter_question_dirs(results)
        if isinstance(entry, QuestionDir) and truth.get(entry.dataset, entry.question) is not None
    }
    items: list[AnswerItem] = []
    for key in dataset_order(truth, found):
        entry = found[key]
        question = truth.get(entry.dataset, entry.question)
        if question is None:  # pragma: no cover - kept out of found
            continue
        free = question.output is None
        if (questions == "free-form" and not free) or (questions == "mcq" and free):
            continue
        path = os.path.join(entry.path, f"{prefix}{setup}.json")
        if not os.path.isfile(path):
            continue
        try:
            record = read_result(path)
        except Exception as exc:  # a file that does not parse is skipped, as kag does
            logger.warning("skipping %s: %s", path, exc)
            continue
        meta: dict[str, Any] = {"dataset": entry.dataset, "question": entry.question}
        if record.context is not None:
            meta["context"] = record.context
        if record.model is not None:
            meta["model"] = record.model
        if question.output is not None:
            meta["options"] = dict(question.output.options)
        items.append(
            AnswerItem(
                identifier=f"{entry.dataset}/{entry.question}",
                question=question.input,
                answer=record.result,
                reference=question.answer,
                latency=None if record.generation_ns is None else record.generation_ns / 1e9,
                error=record.error,
                metadata=meta,
            )
        )
    return items
